"""The exact Laplace sampler against closed forms and OpenDP, and Mironov's attack on textbook float Laplace.

Reference values are computed here, independently of dpclust_lib.noise: the discrete Laplace pmf
Pr[Z = z] = (1 - a) / (1 + a) a^|z| with a = exp(-1/t), its moments, the rounding of the inputs to
the grid (Python's round on exact Fractions) and numpy's own ``Generator.laplace``. Statistical
tests use a fixed seed and family-wise alpha = 0.001 (Bonferroni), as in test_privacy.py.
"""

import doctest
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpclust_lib import noise
from dpclust_lib.audit.floating import mironov_attack, reachable_outputs
from dpclust_lib.noise import (
    NOISE_KINDS,
    laplace_noise_grid,
    laplace_release,
    sample_discrete_laplace,
    saturate,
    saturation_bound,
)

from .conftest import bonferroni

ALPHA = 1e-3
SCALES = [0.5, 1.0, 3.7, 100.0]  # in grid units


def _pmf(z, t):
    """Closed-form discrete Laplace pmf with Pr[Z = z] proportional to exp(-|z| / t)."""
    a = math.exp(-1.0 / t)
    return (1 - a) / (1 + a) * a ** np.abs(z)


def _moments(t):
    """Closed-form E[Z^2] and E[Z^4]: sum_{z>=1} z^2 a^z = a(1+a)/(1-a)^3, z^4: a(1+11a+11a^2+a^3)/(1-a)^5."""
    a = math.exp(-1.0 / t)
    c = 2 * (1 - a) / (1 + a)
    return c * a * (1 + a) / (1 - a) ** 3, c * a * (1 + 11 * a + 11 * a**2 + a**3) / (1 - a) ** 5


def _binned(z, t, min_expected=20):
    """Observed and expected counts over the integers |z| <= K, the two tails merged into end bins."""
    n = z.size
    k = 0
    while n * _pmf(k + 1, t) >= min_expected:
        k += 1
    inner = np.arange(-k, k + 1)
    tail = (1 - _pmf(np.arange(-k, k + 1), t).sum()) / 2
    expected = np.concatenate([[tail], _pmf(inner, t), [tail]]) * n
    observed = np.concatenate([[np.sum(z < -k)], [np.sum(z == v) for v in inner], [np.sum(z > k)]])
    return observed, expected


# --------------------------------------------------------------------------- the exact sampler


@pytest.mark.parametrize("t", SCALES)
def test_discrete_laplace_pmf_matches_closed_form(t):
    z = sample_discrete_laplace(t, 100_000, np.random.default_rng(11))
    observed, expected = _binned(z, t)
    assert stats.chisquare(observed, expected).pvalue > bonferroni(ALPHA, len(SCALES))


@pytest.mark.parametrize("t", SCALES)
def test_discrete_laplace_mean_zero_and_closed_form_variance(t):
    n = 100_000
    z = sample_discrete_laplace(t, n, np.random.default_rng(12)).astype(float)
    var, fourth = _moments(t)
    a = math.exp(-1.0 / t)
    assert var == pytest.approx(2 * a / (1 - a) ** 2)  # the brief's closed form, two derivations agree
    level = stats.norm.isf(bonferroni(ALPHA, 2 * len(SCALES)) / 2)
    assert abs(z.mean()) / math.sqrt(var / n) < level
    assert abs(np.mean(z**2) - var) / math.sqrt((fourth - var**2) / n) < level


@pytest.mark.parametrize("t", SCALES)
def test_small_releases_draw_the_closed_form_pmf(t):
    # Small releases take the few-calls path (every random word of a candidate drawn up front); 400 of them
    # give 100,000 draws of the same pmf as the step-by-step path above.
    rng = np.random.default_rng(14)
    z = np.concatenate([sample_discrete_laplace(t, 250, rng) for _ in range(400)])
    observed, expected = _binned(z, t)
    assert stats.chisquare(observed, expected).pvalue > bonferroni(ALPHA, len(SCALES))


def test_factorial_digits_of_one_integer_are_the_bernoulli_one_over_k_draws():
    # Exact enumeration over every W in {0..7!-1}: step k (= 2..7) is the first failure of W's chain for
    # 7! (1/(k-1)! - 1/k!) integers (Pr[A_2 = .. = A_{k-1} = 1, A_k = 0] with A_j ~ Bernoulli(1/j)), and the
    # digits are independent: every pattern of zero digits has the product probability.
    zero = noise._ZERO_DIGIT
    n = math.factorial(7)
    assert zero.shape == (n, 6)
    failed = ~zero
    first = np.where(failed.any(axis=1), failed.argmax(axis=1) + 2, 0)
    for k in range(2, 8):
        assert np.sum(first == k) == n * (Fraction(1, math.factorial(k - 1)) - Fraction(1, math.factorial(k)))
    assert np.sum(first == 0) == 1  # the chain survives all six steps for W = 0 only: 7! / 7!
    patterns, counts = np.unique(zero, axis=0, return_counts=True)
    for pattern, count in zip(patterns, counts):
        p = math.prod(Fraction(1, k) if z else Fraction(k - 1, k) for k, z in zip(range(2, 8), pattern))
        assert count == n * p


def _exp_chain_from(start, gamma):
    """Pr[CKS20 Algorithm 1 returns 1 | its steps 1..start-1 succeeded], summed in closed form."""
    total, reach = 0.0, 1.0
    for k in range(start, start + 60):
        if k % 2 == 1:
            total += reach * (1 - gamma / k)
        reach *= gamma / k
    return total


@pytest.mark.parametrize("start", [1, 8])
@pytest.mark.parametrize("gamma", [Fraction(1, 3), Fraction(1)])
def test_algorithm_1_continued_from_any_step_has_the_closed_form_probability(start, gamma):
    # The few-calls path continues the (rare) chains that survive its block at step 8 with these loops.
    n = 200_000
    rng = np.random.default_rng(15)
    if gamma == 1:
        hits = noise._bernoulli_exp1(n, rng, start=max(start, 2)).sum()
    else:
        num = np.full(n, gamma.numerator, dtype=np.int64)
        hits = noise._bernoulli_exp_fraction(num, gamma.denominator, rng, start=start).sum()
    p = _exp_chain_from(max(start, 2) if gamma == 1 else start, float(gamma))
    if start == 1:
        assert p == pytest.approx(math.exp(-float(gamma)))  # the series is e^-gamma from the first step
    assert stats.binomtest(int(hits), n, p).pvalue > bonferroni(ALPHA, 4)


@pytest.mark.parametrize("n", [10_000, pytest.param(50_000, marks=pytest.mark.slow)])  # make test; its full size
def test_discrete_laplace_matches_opendp_two_sample(n):
    dp = pytest.importorskip("opendp.prelude", reason="opendp is not installed: no independent reference sampler")
    dp.enable_features("contrib")
    t = 3.7
    geometric = dp.m.make_geometric(dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int), scale=t)
    theirs = np.asarray(geometric([0] * n))  # OpenDP's exact discrete Laplace (OS randomness, no seed)
    ours = sample_discrete_laplace(t, n, np.random.default_rng(13))
    edges = np.concatenate([[-np.inf], np.arange(-12, 13) + 0.5, [np.inf]])
    table = np.array([np.histogram(ours, edges)[0], np.histogram(theirs, edges)[0]])
    assert stats.chi2_contingency(table).pvalue > ALPHA


def test_discrete_laplace_is_seeded_and_uses_only_the_generator():
    a = sample_discrete_laplace(Fraction(7, 3), (40, 5), np.random.default_rng(5))
    b = sample_discrete_laplace(Fraction(7, 3), (40, 5), np.random.default_rng(5))
    c = sample_discrete_laplace(Fraction(7, 3), (40, 5), np.random.default_rng(6))
    assert a.shape == (40, 5) and a.dtype == np.int64
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_large_scales_are_rounded_up_never_down():
    ratio = Fraction(2**70 + 1, 3 * 2**68)  # parts beyond 2^56
    limited = noise._limit_up(ratio)
    assert limited >= ratio and limited.numerator <= 2**56 and limited.denominator <= 2**56
    assert limited - ratio < ratio * 2**-40
    assert noise._limit_up(Fraction(7, 3)) == Fraction(7, 3)


def test_rare_overflow_path_is_exact():
    t, s = 2**56 - 5, 3
    u, v = np.array([5, 2], dtype=np.int64), np.array([200, 1], dtype=np.int64)
    np.testing.assert_array_equal(noise._floor_div(u, v, t, s), [(5 + t * 200) // s, (2 + t) // s])


# --------------------------------------------------------------------------- the release


def test_release_is_on_the_grid_and_seeded():
    value = np.array([[0.3, -2.0, 1e6], [7.25, 0.0, -1e-9]])
    noisy, scale, gamma = laplace_release(value, 2.0, 0.5, np.random.default_rng(3))
    again = laplace_release(value, 2.0, 0.5, np.random.default_rng(3))[0]
    assert noisy.shape == value.shape
    assert noisy.view(np.int64).tolist() == again.view(np.int64).tolist()  # bit for bit
    assert math.frexp(gamma)[0] == 0.5  # a power of two
    assert gamma == laplace_noise_grid(2.0, 0.5, dim=value.size)
    for y in noisy.ravel():
        assert (Fraction(float(y)) / Fraction(gamma)).denominator == 1  # exactly a multiple of gamma
    assert np.all(np.abs(noisy - value) < 60 * scale)


def _cdf(k, t):
    """Closed-form Pr[Z <= k] of the discrete Laplace with scale t (k an integer array)."""
    a_plus = np.exp(-np.abs(k + (k >= 0)) / t)  # a^(k+1) for k >= 0, a^|k| for k < 0
    return np.where(k >= 0, 1 - a_plus / (1 + math.exp(-1 / t)), a_plus / (1 + math.exp(-1 / t)))


def test_release_noise_is_discrete_laplace_with_the_returned_scale():
    """On the grid scales of a release (about 2^20 steps, a reduced rational), against the closed-form cdf."""
    n = 100_000
    noisy, scale, gamma = laplace_release(np.zeros(n), 0.7 * n, 1.3 * n, np.random.default_rng(14))
    z, t = noisy / gamma, scale / gamma
    edges = np.round(t * np.array([-4, -2, -1, -0.5, -0.25, -0.1, 0, 0.1, 0.25, 0.5, 1, 2, 4])).astype(np.int64)
    probabilities = np.diff(np.concatenate([[0.0], _cdf(edges, t), [1.0]]))
    observed = np.bincount(np.searchsorted(edges, z, side="left"), minlength=edges.size + 1)
    assert stats.chisquare(observed, probabilities * n).pvalue > ALPHA


@pytest.mark.parametrize("sensitivity, epsilon, dim", [(1.0, 1.0, 1), (1.0, 0.1, 1), (0.7, 3.0, 4), (5.0, 1e-3, 100)])
def test_accounted_scale_covers_sensitivity_plus_rounding(sensitivity, epsilon, dim):
    noisy, scale, gamma = laplace_release(np.zeros(dim), sensitivity, epsilon, np.random.default_rng(0))
    needed = (Fraction(sensitivity) + dim * Fraction(gamma)) / Fraction(epsilon)
    assert Fraction(scale) >= needed * (1 - Fraction(1, 2**52))  # the returned float is the nearest double
    assert scale <= (sensitivity / epsilon) * (1 + 2.0**-9)  # and the rounding costs at most 2^-10 more noise
    assert scale / gamma >= 2**20  # a fine grid: many steps per unit of scale


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 5.0])
def test_exact_pmf_ratio_of_neighbouring_releases_is_at_most_e_eps(epsilon):
    """x = 0 and x' = 1 (sensitivity 1): enumerate the closed-form pmf over the grid around both."""
    _, scale, gamma = laplace_release(0.0, 1.0, epsilon, np.random.default_rng(0))
    tau = Fraction(scale) / Fraction(gamma)  # the discrete Laplace scale in grid units
    b0, b1 = round(Fraction(0.0) / Fraction(gamma)), round(Fraction(1.0) / Fraction(gamma))
    k = np.arange(b0 - 5000, b1 + 5000)
    log_ratio = (np.abs(k - b1) - np.abs(k - b0)) / float(tau)  # log pmf(k | x) - log pmf(k | x'); same normaliser
    worst = int(k[np.argmax(np.abs(log_ratio))])
    exact = Fraction(abs(abs(worst - b1) - abs(worst - b0))) / tau
    assert exact <= Fraction(epsilon)
    assert np.max(np.abs(log_ratio)) <= epsilon * (1 + 1e-12)


def test_rounding_slack_is_accounted_for_any_neighbouring_pair():
    """Any x, x' with |x - x'| <= sensitivity: grid points within gamma/2 differ by <= sensitivity/gamma + 1."""
    rng = np.random.default_rng(9)
    sensitivity, epsilon = 0.7, 1.3
    _, scale, gamma = laplace_release(0.0, sensitivity, epsilon, rng)
    tau = Fraction(scale) / Fraction(gamma)
    for x in rng.normal(0, 10, 50):
        x_prime = float(x) + float(rng.uniform(-sensitivity, sensitivity))
        shift = abs(round(Fraction(float(x)) / Fraction(gamma)) - round(Fraction(x_prime) / Fraction(gamma)))
        assert Fraction(shift) / tau <= Fraction(epsilon)
    assert Fraction(math.floor(Fraction(sensitivity) / Fraction(gamma)) + 1) / tau <= Fraction(epsilon)


def test_value_is_rounded_to_the_nearest_grid_point():
    """The draws do not depend on the value, so with one seed the releases differ by the rounded values."""
    gamma = laplace_noise_grid(1.0, 1.0, dim=5)
    value = np.array([0.0, 0.4, 0.6, -0.6, 1e3 + 0.49]) * gamma
    base = laplace_release(np.zeros(5), 1.0, 1.0, np.random.default_rng(4))[0]
    noisy = laplace_release(value, 1.0, 1.0, np.random.default_rng(4))[0]
    np.testing.assert_array_equal(noisy - base, np.array([0, 0, 1, -1, 1000]) * gamma)


def test_float_noise_is_todays_textbook_release():
    value = np.array([0.3, -2.0, 1e6])
    noisy, scale, gamma = laplace_release(value, 2.0, 0.5, np.random.default_rng(21), noise="float")
    expected = value + np.random.default_rng(21).laplace(0.0, 2.0 / 0.5, size=value.shape)
    assert noisy.view(np.int64).tolist() == expected.view(np.int64).tolist()
    assert scale == 4.0 and gamma is None


def test_scalar_release_keeps_a_zero_dimensional_shape():
    noisy, _, _ = laplace_release(2.5, 1.0, 1.0, np.random.default_rng(0))
    assert noisy.shape == ()


# --------------------------------------------------------------------------- bad input

SECRET = 7.123456789e20  # a value that must never appear in an error message


def _message(exc_type, fn, *args, **kwargs):
    with pytest.raises(exc_type) as info:
        fn(*args, **kwargs)
    text = str(info.value)
    assert "7.123456789" not in text and "7123456789" not in text
    return text


def test_errors_name_the_parameter_and_never_echo_the_value():
    rng = np.random.default_rng(0)
    assert "value" in _message(ValueError, laplace_release, [1.0, np.inf, SECRET], 1.0, 1.0, rng)
    assert "value" in _message(ValueError, laplace_release, [1.0, np.nan, SECRET], 1.0, 1.0, rng)
    text = _message(ValueError, laplace_release, [1.0], 1.0, 1e30, rng)  # a public refusal: epsilon, not the value
    assert "epsilon" in text and "grid" in text
    text = _message(ValueError, laplace_release, [1.0], 1.0, 1.0, rng, noise="secret-kind-7.123456789")
    assert "noise" in text and all(kind in text for kind in NOISE_KINDS) and "secret" not in text
    assert "sensitivity" in _message(ValueError, laplace_release, [1.0], -SECRET, 1.0, rng)
    assert "epsilon" in _message(ValueError, laplace_release, [1.0], 1.0, float("nan"), rng)
    assert "epsilon" in _message(TypeError, laplace_release, [1.0], 1.0, True, rng)
    assert "rng" in _message(TypeError, laplace_release, [1.0], 1.0, 1.0, 0)
    assert "value" in _message(TypeError, laplace_release, "7.123456789", 1.0, 1.0, rng)
    assert "scale" in _message(ValueError, sample_discrete_laplace, -SECRET, 3, rng)
    assert "gamma" in _message(ValueError, mironov_attack, [0.0], 1.0, 1.0, noise="exact")
    assert "x_prime" in _message(ValueError, mironov_attack, [0.0], np.inf, 1.0)


# --------------------------------------------------------------------------- Mironov's attack


def test_mironov_attack_finds_distinguishing_outputs_of_textbook_float_laplace():
    outputs = laplace_release(np.zeros(10_000), 1.0, 1.0, np.random.default_rng(2012), noise="float")[0]
    assert reachable_outputs(outputs[:2000], 0.0, 1.0).all()  # every output is reachable from its own input
    share = mironov_attack(outputs, 1.0, 1.0, noise="float")
    assert share > 0.1  # a positive share names x = 0 with certainty (Mironov 2012); measured ~0.82


def test_mironov_attack_finds_nothing_against_the_exact_release():
    rng = np.random.default_rng(2012)
    releases = [laplace_release(0.0, 1.0, 1.0, rng) for _ in range(2000)]
    outputs = np.array([r[0] for r in releases])
    _, scale, gamma = releases[0]
    assert mironov_attack(outputs, 1.0, scale, noise="exact", gamma=gamma) == 0.0
    # The attack does see outputs off the grid of the other input's release.
    assert mironov_attack(outputs + gamma / 2, 1.0, scale, noise="exact", gamma=gamma) == 1.0


def test_docstring_examples():
    assert doctest.testmod(noise, optionflags=doctest.ELLIPSIS).failed == 0


# --------------------------------------------------------------------------- saturation (the release never refuses)


def test_a_value_past_the_grid_saturates_at_a_public_bound():
    """A value beyond 2^52 grid steps is released as the bound plus noise: no exception, and the noise is centred on
    the bound, exactly as for a value equal to the bound (the same draws from the same seed)."""
    gamma = laplace_noise_grid(1.0, 1.0)
    bound = saturation_bound(gamma)
    assert bound == 2.0**52 * gamma == 2.0**32
    for value in (bound * 1.5, 1e300):  # a non-finite answer is refused: the query, not the data, is at fault
        above = laplace_release([value, -value], 1.0, 1.0, np.random.default_rng(5))[0]
        at = laplace_release([bound, -bound], 1.0, 1.0, np.random.default_rng(5))[0]
        np.testing.assert_array_equal(above, at)


def test_saturation_keeps_the_accounted_ratio_exactly():
    """The clamped release of two neighbouring answers, one past the bound: its probability ratio is the discrete
    Laplace one of the clamped answers, whose distance is at most the answers' (clamping is 1-Lipschitz)."""
    gamma = laplace_noise_grid(1.0, 1.0)
    bound = saturation_bound(gamma)
    a, b = np.array([bound - 0.5]), np.array([bound + 0.5])
    assert abs(float(saturate(b, gamma)[0] - saturate(a, gamma)[0])) <= 1.0


def test_the_huge_grid_saturates_the_output_too():
    noisy, _, gamma = laplace_release(np.full(1000, 1.7e308), 1e307, 1.0, np.random.default_rng(0))
    assert gamma >= 2.0**960 and np.all(np.isfinite(noisy)) and np.all(np.abs(noisy) <= saturation_bound(gamma))

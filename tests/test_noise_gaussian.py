"""The exact discrete Gaussian sampler against its closed form and OpenDP, its release, and (epsilon, delta) accounting.

Reference values are computed here, independently of dpclust_lib.noise: the discrete Gaussian pmf
Pr[Z = z] = exp(-z^2 / (2 sigma^2)) / S with S the normalising sum over all integers (summed with math.fsum
out to 60 sigma, where the terms fall below 10^-700 of the largest), its variance, OpenDP's own discrete
Gaussian (``make_gaussian`` on integers, OS randomness, no seed) and OpenDP's zCDP to (epsilon, delta)
conversion. Statistical tests use fixed seeds and a family-wise alpha = 0.001 (Bonferroni), as test_noise.py.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpclust_lib import noise
from dpclust_lib.accounting import BudgetAccountant, BudgetExceededError, PrivacyLedger, dp_to_zcdp, zcdp_to_dp
from dpclust_lib.noise import gaussian_noise_grid, gaussian_release, sample_discrete_gaussian

from .conftest import bonferroni

ALPHA = 1e-3
VARIANCES = [Fraction(1, 4), Fraction(1), Fraction(9, 4), Fraction(10), Fraction(400)]


def _pmf(z, sigma2):
    """The closed-form pmf, normalised by the exact sum over |z| <= 60 sigma (the rest is below 1e-700)."""
    s2 = float(sigma2)
    reach = int(60 * math.sqrt(s2)) + 2
    total = math.fsum(math.exp(-(v * v) / (2 * s2)) for v in range(-reach, reach + 1))
    return np.exp(-(np.asarray(z, dtype=float) ** 2) / (2 * s2)) / total


def _binned(z, sigma2, min_expected=20):
    """Observed and expected counts over |z| <= K, the two tails merged into end bins."""
    n = z.size
    k = 0
    while n * _pmf(k + 1, sigma2) >= min_expected:
        k += 1
    inner = np.arange(-k, k + 1)
    tail = (1 - _pmf(inner, sigma2).sum()) / 2
    expected = np.concatenate([[tail], _pmf(inner, sigma2), [tail]]) * n
    observed = np.concatenate([[np.sum(z < -k)], [np.sum(z == v) for v in inner], [np.sum(z > k)]])
    keep = expected > 0  # tiny sigma: the tails may be empty in exact arithmetic, and so must the draws be
    assert observed[~keep].sum() == 0
    return observed[keep], expected[keep]


@pytest.mark.parametrize("sigma2", VARIANCES, ids=str)
def test_discrete_gaussian_pmf_matches_closed_form(sigma2):
    z = sample_discrete_gaussian(sigma2, 20_000, np.random.default_rng(int(sigma2 * 4)))
    observed, expected = _binned(z, sigma2)
    assert stats.chisquare(observed, expected).pvalue > bonferroni(ALPHA, len(VARIANCES))


@pytest.mark.parametrize("sigma2", [Fraction(1, 4), Fraction(10)], ids=str)
def test_discrete_gaussian_variance_is_the_closed_form_one(sigma2):
    """Below sigma = 1 the discrete Gaussian's variance is well under sigma^2: the exact sum says by how much."""
    s2 = float(sigma2)
    reach = int(60 * math.sqrt(s2)) + 2
    support = np.arange(-reach, reach + 1)
    var = float(np.sum(support**2 * _pmf(support, sigma2)))
    n = 40_000
    z = sample_discrete_gaussian(sigma2, n, np.random.default_rng(3))
    fourth = float(np.sum(support**4 * _pmf(support, sigma2)))
    se = math.sqrt((fourth - var**2) / n)
    assert abs(float(np.mean(z.astype(float) ** 2)) - var) < 4.5 * se
    if sigma2 < 1:
        assert var < 0.9 * s2  # so the test above tells the discrete variance from sigma^2


@pytest.mark.parametrize("n", [10_000, pytest.param(50_000, marks=pytest.mark.slow)])
def test_discrete_gaussian_matches_opendp_two_sample(n):
    dp = pytest.importorskip("opendp.prelude", reason="opendp is not installed: no independent reference sampler")
    dp.enable_features("contrib")
    sigma = 3.7
    gaussian = dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=int), scale=sigma)
    theirs = np.asarray(gaussian([0] * n))  # OpenDP's exact discrete Gaussian
    ours = sample_discrete_gaussian(sigma**2, n, np.random.default_rng(17))
    edges = np.concatenate([[-np.inf], np.arange(-11, 12) + 0.5, [np.inf]])
    table = np.array([np.histogram(ours, edges)[0], np.histogram(theirs, edges)[0]])
    assert stats.chi2_contingency(table).pvalue > ALPHA


def test_discrete_gaussian_is_seeded_and_reads_only_the_generator():
    a = sample_discrete_gaussian(Fraction(7, 3), (40, 5), np.random.default_rng(5))
    b = sample_discrete_gaussian(Fraction(7, 3), (40, 5), np.random.default_rng(5))
    c = sample_discrete_gaussian(Fraction(7, 3), (40, 5), np.random.default_rng(6))
    assert a.shape == (40, 5) and a.dtype == np.int64
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_bernoulli_of_a_large_rational_is_exact_on_its_tie_path():
    """Bernoulli(rem / den) from 63-bit words, for a denominator past int64; a tie with the first 63 digits (forced
    here by a generator that repeats them) goes on with the next digits."""
    den = 3 * 2**80
    rem = 2**80  # 1/3: binary 0.0101...
    digits = (rem << 63) // den

    class Tied:
        """A stand-in Generator whose first word equals the first 63 digits, then draws from a real one."""

        def __init__(self):
            self.first, self.rng = True, np.random.default_rng(0)

        def integers(self, low, high, size=None):
            if self.first:
                self.first = False
                return digits
            return self.rng.integers(low, high, size)

    hits = sum(noise._bernoulli_rational_tie(rem, den, np.random.default_rng(s)) for s in range(3000))
    assert stats.binomtest(int(hits), 3000, 1 / 3).pvalue > ALPHA
    assert isinstance(noise._bernoulli_rational_tie(rem, den, Tied()), bool)


def test_bernoulli_exp_of_rationals_beyond_one_has_the_closed_form_probability():
    """exp(-(whole + rem / den)) for gamma = 2.25 with a denominator past int64."""
    den = 4 * 2**70
    n = 40_000
    hits = noise._bernoulli_exp_rational(np.full(n, 2), [2**70] * n, den, np.random.default_rng(9)).sum()
    assert stats.binomtest(int(hits), n, math.exp(-2.25)).pvalue > ALPHA


# --------------------------------------------------------------------------- the release


def test_gaussian_release_is_on_the_grid_seeded_and_accounted():
    value = np.array([0.3, -2.0, 5.5])
    a, sigma, gamma = gaussian_release(value, 1.0, 0.5, np.random.default_rng(1))
    b, _, _ = gaussian_release(value, 1.0, 0.5, np.random.default_rng(1))
    np.testing.assert_array_equal(a, b)
    assert np.all(a / gamma == np.round(a / gamma))
    assert gamma == gaussian_noise_grid(1.0, 0.5, 3)
    # The accounted rho covers the rounding: (sensitivity + ceil(sqrt(d)) gamma)^2 / (2 sigma^2) <= rho, exactly.
    _, variance, _ = noise._gaussian_grid(1.0, 0.5, 3)
    shifted = Fraction(1) + 2 * Fraction(gamma)
    assert shifted**2 / (2 * variance * Fraction(gamma) ** 2) <= Fraction(0.5)
    assert sigma == pytest.approx(1.0, rel=1e-5)  # and wastes at most a rounding's worth


def test_gaussian_release_noise_has_the_returned_sigma():
    value = np.zeros(20_000)
    noisy, sigma, gamma = gaussian_release(value, 2.0, 0.125, np.random.default_rng(4))
    assert sigma == pytest.approx(4.0, rel=2.0**-10)  # the rounding's share, at most 2^-10
    assert stats.kstest(noisy, "norm", args=(0, sigma)).pvalue > ALPHA  # 2^20 grid steps a sigma: continuous


def test_gaussian_release_never_refuses_a_huge_value():
    noisy, _, gamma = gaussian_release(np.array([1e300, -np.float64(1e300)]), 1.0, 0.5, np.random.default_rng(0))
    bound = noise.saturation_bound(gamma)
    assert np.all(np.abs(noisy) < 2 * bound)


# --------------------------------------------------------------------------- (epsilon, delta) accounting


@pytest.mark.parametrize("rho", [0.005, 0.03125, 0.5, 2.0])
def test_zcdp_conversion_matches_opendp_and_is_never_below_it(rho):
    dp = pytest.importorskip("opendp.prelude", reason="opendp is not installed: no independent conversion")
    dp.enable_features("contrib")
    space = dp.atom_domain(T=int), dp.absolute_distance(T=int)
    meas = space >> dp.m.then_gaussian(1.0 / math.sqrt(2 * rho))
    theirs_rho = meas.map(1)
    assert theirs_rho == pytest.approx(rho)
    theirs, _ = dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(meas), 1e-6).map(1)
    ours = zcdp_to_dp(theirs_rho, 1e-6)
    assert theirs <= ours <= theirs * (1 + 1e-6)
    assert ours <= theirs_rho + 2 * math.sqrt(theirs_rho * math.log(1e6))  # never worse than the simple bound


def test_dp_to_zcdp_is_the_largest_rho_within_the_budget():
    rho = dp_to_zcdp(1.0, 1e-6)
    assert zcdp_to_dp(rho, 1e-6) <= 1.0 < zcdp_to_dp(rho * (1 + 1e-9), 1e-6)


def test_ledger_keeps_pure_epsilon_and_composes_deltas_exactly():
    pure = PrivacyLedger(1.0)
    pure.spend(0.5, "a")
    with pytest.raises(BudgetExceededError, match="delta"):
        pure.spend(0.1, "b", delta=1e-9)  # a pure-epsilon ledger refuses any delta
    assert pure.entries == [("a", 0.5)] and pure.delta_spent == 0.0
    approx = BudgetAccountant(2.0, delta=1e-6)
    approx.spend(1.0, "fit 1", delta=5e-7)
    approx.spend(0.5, "fit 2", delta=5e-7)
    assert approx.delta_spent == 1e-6 and approx.spent == 1.5
    with pytest.raises(BudgetExceededError, match="delta"):
        approx.spend(0.1, "fit 3", delta=1e-12)
    assert len(approx.entries) == len(approx.deltas) == 2  # the refused spend is not recorded
    with pytest.raises(ValueError, match="delta"):
        PrivacyLedger(1.0, delta=1.0)

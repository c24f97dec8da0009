"""Laplace noise without floating-point leaks, and the attack that motivates it.

Textbook floating-point Laplace, ``value + rng.laplace(0, b)``, is not differentially private:
the set of doubles reachable from f(D) + Lap(b) differs from the set reachable from f(D') + Lap(b),
so some outputs name the input with certainty (Mironov, "On significance of the least significant
bits for differential privacy", CCS 2012). :func:`dpclust_lib.audit.floating.mironov_attack` measures
that share exactly.

The default here (``noise="exact"``) follows the design OpenDP uses for float data (its
``make_laplace`` on floats: round the input to a grid of spacing 2^k, add 2^k times discrete
Laplace noise), but draws every random bit from the caller's ``numpy.random.Generator`` so that a
seeded run stays bit-for-bit reproducible (OpenDP's samplers read a CSPRNG seeded by the operating
system and take no seed). Discrete Laplace noise is sampled exactly, with integer arithmetic only,
by Algorithms 1 and 2 of Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential
Privacy", NeurIPS 2020.

Accounting (:func:`laplace_release`): the exact answer x (d entries) is rounded to the grid gamma*Z,
which moves each entry by at most gamma/2, so the L1 sensitivity of the rounded answer is at most
sensitivity + d*gamma. The discrete Laplace scale is (sensitivity + d*gamma) / epsilon, computed as
an exact rational, so the released distribution is epsilon-DP exactly as accounted. The grid is
gamma = the largest power of two <= min(sensitivity 2^-10 / d, sensitivity 2^-20 / epsilon): the noise
then spans at least 2^20 grid steps per unit of scale (it is a Laplace distribution to within a
relative 2^-20 in every quantile), and the extra noise d*gamma/sensitivity is at most 2^-10.

The discrete Gaussian (:func:`sample_discrete_gaussian`, CKS20 Algorithm 3) is sampled exactly from the same
discrete Laplace and Bernoulli(exp(-gamma)) samplers, and :func:`gaussian_release` releases on the same
power-of-two grid under rho-zCDP (CKS20 Theorem 4: rho = sensitivity^2 / (2 sigma^2) for an L2 sensitivity),
the grid's rounding included; :mod:`dpclust_lib.accounting` converts rho to (epsilon, delta).

``noise="float"`` keeps the textbook release, drawn exactly as before, so old results can be
reproduced by name.

The local randomisers' coins (:mod:`dpclust_lib.mechanisms`) are exact too: each probability is a
double rounded in the direction that keeps the stated epsilon, bounded against e^epsilon with
:func:`exp_interval` (the ``decimal`` module's correctly rounded exp, widened by one unit in its
40th digit), and :func:`sample_bernoulli` draws Bernoulli of that double exactly by comparing
uniform integers with its binary digits, as OpenDP samples a Bernoulli of a float.
"""

from __future__ import annotations

import decimal
import functools
import math
import numbers
import sys
from fractions import Fraction

import numpy as np

from .validation import check_finite_values, check_positive, is_os_generator

__all__ = [
    "NOISE_KINDS",
    "GRID_BITS",
    "laplace_noise_grid",
    "sample_discrete_laplace",
    "laplace_release",
    "saturation_bound",
    "saturate",
    "exp_interval",
    "double_at_most",
    "double_at_least",
    "bernoulli_digits",
    "bernoulli_from_digits",
    "sample_bernoulli",
    "sample_discrete_gaussian",
    "gaussian_noise_grid",
    "gaussian_release",
]

NOISE_KINDS = ("exact", "float")
# The grid is at least 2^GRID_BITS times finer than the noise scale, and the rounding of all entries
# together adds at most 2^-ROUNDING_BITS of the sensitivity (so at most that relative extra noise).
GRID_BITS = 20
ROUNDING_BITS = 10
# |value / gamma| must stay below 2^52, so that grid index + noise (|noise| << 2^52) is an integer
# that a double holds exactly and gamma * index is an exact double.
MAX_GRID_INDEX = 2**52
# Numerator and denominator of a scale in grid units stay <= 2^56: then U + t*V (Algorithm 2) fits in
# int64 unless V >= 127, an event of probability e^-127 that is handled in Python integers.
_MAX_PART = 2**56
# Largest discrete Laplace scale accepted (grid units); its draws stay far inside int64.
MAX_DISCRETE_SCALE = 2**52
_SAFE_V = (2**63 - 1) // _MAX_PART - 1  # U + t*V < 2^63 for every V <= _SAFE_V
# Below this grid spacing no int64 grid index times gamma overflows a double.
_NO_OVERFLOW_GAMMA = 2.0**960


# ---------------------------------------------------------------------------
# Input checks (messages name the parameter and never show its value: it may be a record's)
# ---------------------------------------------------------------------------


def _check_rng(rng):
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got a {type(rng).__name__}")
    return rng


def check_noise_kind(noise):
    """``noise``, refused unless one of :data:`NOISE_KINDS` (the message lists them)."""
    if not isinstance(noise, str) or noise not in NOISE_KINDS:
        raise ValueError(f"noise must be one of {NOISE_KINDS}")
    return noise


def _check_size(size):
    """``size`` as a shape tuple, refused (naming it) unless a non-negative integer or a tuple of them."""
    shape = (size,) if isinstance(size, numbers.Integral) else tuple(size)
    if not all(isinstance(s, numbers.Integral) and not isinstance(s, bool) and s >= 0 for s in shape):
        raise ValueError(f"size must be a non-negative integer or a tuple of them, got size={size!r}")
    return tuple(int(s) for s in shape)


def _scale_fraction(scale):
    """A scale > 0 as an exact Fraction (a float's Fraction is its exact binary value)."""
    if isinstance(scale, Fraction):
        if scale <= 0:
            raise ValueError("scale must be > 0")
        return scale
    return Fraction(check_positive(scale, "scale", show_value=False))


def _limit_up(ratio, bound=_MAX_PART):
    """A rational >= ``ratio`` whose numerator and denominator are <= ``bound`` (``ratio`` itself if it fits).

    More noise never hurts privacy, so a rational too large for int64 arithmetic is replaced by the
    next multiple of 1/den above it, den = min(denominator, bound // (ceil(ratio) + 1)): larger by less
    than 1/den, i.e. by a relative (ceil(ratio) + 1) / (ratio * bound) ~ 2^-55 for the grid scales of
    :func:`laplace_release` (ratio >= 2^20, parts often beyond 2^56 because epsilon's binary fraction is long).
    """
    if ratio.numerator <= bound and ratio.denominator <= bound:
        return ratio
    ceiling = math.ceil(ratio)
    if ceiling >= bound:
        raise ValueError("scale is too large for the exact sampler")
    den = min(ratio.denominator, bound // (ceiling + 1))
    return Fraction(math.ceil(ratio * den), den)  # numerator <= ceiling * den < bound


# ---------------------------------------------------------------------------
# Exact samplers (Canonne, Kamath & Steinke 2020), vectorised over numpy arrays
# ---------------------------------------------------------------------------


def _algorithm_1(step, n, start):
    """CKS20 Algorithm 1's n chains from step ``start`` on: accept iff the first failing step is odd.

    ``step(rows, k)`` draws A_k for the chains ``rows`` still going (an index array; None at step ``start``,
    where every chain is: its draws need no gather and its failures no scatter).
    """
    if not n:
        return np.zeros(0, dtype=bool)
    a = step(None, start)
    out = ~a if start % 2 == 1 else np.zeros(n, dtype=bool)  # the chains whose first failure is at step start
    idx = np.flatnonzero(a)
    k = start + 1
    while idx.size:
        a = step(idx, k)
        out[idx[~a]] = k % 2 == 1
        idx = idx[a]
        k += 1
    return out


def _bernoulli_exp_fraction(num, den, rng, start=1):
    """Bernoulli(exp(-num/den)) for every entry of ``num`` (1-D int64 array, 0 <= num <= den), exactly.

    CKS20 Algorithm 1 for gamma = num/den in [0, 1]: draw A_k ~ Bernoulli(gamma/k) for k = 1, 2, ...
    until the first A_k = 0; return 1 iff that k is odd. Bernoulli(num/(den*k)) is drawn as the AND
    of Bernoulli(num/den) = [integers(0, den) < num] and Bernoulli(1/k) = [integers(0, k) == 0], which
    never forms den*k (no int64 overflow). ``start`` > 1 continues chains whose steps 1..start-1 all
    succeeded (drawn by :func:`_candidates_in_few_calls`).
    """

    def step(rows, k):
        size = num.size if rows is None else rows.size
        a = rng.integers(0, den, size) < (num if rows is None else num[rows])
        if k > 1:  # Bernoulli(1/1) is always 1
            a &= rng.integers(0, k, size) == 0
        return a

    return _algorithm_1(step, num.size, start)


def _bernoulli_exp1(n, rng, start=2):
    """n draws of Bernoulli(e^-1): CKS20 Algorithm 1 with gamma = 1 (A_k ~ Bernoulli(1/k), A_1 = 1), from step
    ``start`` on (every earlier step succeeded)."""
    return _algorithm_1(lambda rows, k: rng.integers(0, k, n if rows is None else rows.size) == 0, n, start)


def _geometric_exp1(n, rng):
    """V with Pr[V = v] = (1 - e^-1) e^-v: the number of Bernoulli(e^-1) successes before a failure."""
    success = _bernoulli_exp1(n, rng)  # the first trial of every entry
    v = success.astype(np.int64)
    idx = np.flatnonzero(success)
    while idx.size:
        success = _bernoulli_exp1(idx.size, rng)
        idx = idx[success]
        v[idx] += 1
    return v


def _first_failure(a):
    """Per row of the boolean block ``a`` (the last axis is the steps): whether some step failed, and the first."""
    failed = ~a
    return failed.any(axis=-1), failed.argmax(axis=-1)


# A small release (the common case: a count, a centre) is dominated by the number of numpy calls, not by the
# random words: its candidates take three calls to ``rng.integers``, each with one upper bound (numpy's fast
# path). The Bernoulli(1/k) draws of steps k = 2..7 of an Algorithm 1 chain come from one uniform integer W on
# {0..7!-1}: its digits in the factorial number system, W = d_2 1! + d_3 2! + ... + d_7 6! with d_k in {0..k-1},
# are independent and uniform (the map is a bijection onto the product of the digits' ranges), so [d_k = 0]
# is Bernoulli(1/k). The rare longer chains (probability 1/7! per chain, e^-6 per geometric) go on with the
# loops above. Beyond _BLOCK_MAX_SIZE entries the wasted words cost more than the calls save.
_STEPS = 6  # Bernoulli(1/k) steps k = 2..7 per uniform integer
_W_RANGE = math.factorial(_STEPS + 1)
_ZERO_DIGIT = np.stack(
    [(np.arange(_W_RANGE) // math.factorial(k - 1)) % k == 0 for k in range(2, _STEPS + 2)], axis=1
)  # _ZERO_DIGIT[w, k - 2]: d_k(w) = 0
_TRIALS = 6  # Bernoulli(e^-1) trials per candidate's V
_BLOCK_MAX_SIZE = 512


def _candidates_in_few_calls(m, t, rng):
    """U, its acceptance, V and the sign of m candidates of CKS20 Algorithm 2 (see :func:`_discrete_laplace_flat`).

    Draws: U and the uniforms on {0..t-1} of steps 1..7 of its acceptance chain; one W for that chain's
    Bernoulli(1/k) and one per Bernoulli(e^-1) trial of V (A_1 = 1 there, steps k = 2..7); the sign. Draws
    after a chain's first failure are ignored, which leaves every outcome's distribution unchanged.
    """
    x = rng.integers(0, t, (m, _STEPS + 2))
    w = rng.integers(0, _W_RANGE, (m, _TRIALS))
    sign_and_w = rng.integers(0, 2 * _W_RANGE, m)  # a bijection onto {0, 1} x {0..7!-1}: independent parts
    u = x[:, 0]
    chain = x[:, 1:] < u[:, None]  # step k's [integers(0, t) < U], k = 1..7
    chain[:, 1:] &= _ZERO_DIGIT[sign_and_w >> 1]
    ended, first = _first_failure(chain)
    keep = ended & (first % 2 == 0)  # the first failure at step first + 1: accept iff that is odd
    if not ended.all():
        keep[~ended] = _bernoulli_exp_fraction(u[~ended], t, rng, start=_STEPS + 2)
    ended, first = _first_failure(_ZERO_DIGIT[w])
    trial = ended & (first % 2 == 1)  # a trial's first failure at step first + 2: success iff odd
    if not ended.all():
        trial[~ended] = _bernoulli_exp1(int((~ended).sum()), rng, start=_STEPS + 2)
    stopped, v = _first_failure(trial)  # V = the successes before the first failed trial
    if not stopped.all():
        v[~stopped] = _TRIALS + _geometric_exp1(int((~stopped).sum()), rng)
    return u, keep, v, (sign_and_w & 1) == 1


def _candidates_in_loops(m, t, rng):
    """The same as :func:`_candidates_in_few_calls`, one step at a time (large releases)."""
    u = rng.integers(0, t, m)
    keep = _bernoulli_exp_fraction(u, t, rng)
    v = np.zeros(m, dtype=np.int64)
    v[keep] = _geometric_exp1(int(keep.sum()), rng)
    return u, keep, v, rng.integers(0, 2, m) == 1


def _floor_div(u, v, t, s):
    """floor((u + t v) / s) as int64 entries; the (e^-127-rare) rows where t v could overflow int64 are
    computed in Python integers."""
    if not v.size or v.max() <= _SAFE_V:
        return (u + t * v) // s
    big = v > _SAFE_V
    y = np.empty(u.shape, dtype=np.int64)
    y[~big] = (u[~big] + t * v[~big]) // s
    for i in np.flatnonzero(big):
        exact = (int(u[i]) + t * int(v[i])) // s
        if exact >= 2**63:
            raise OverflowError("a discrete Laplace draw exceeds int64 (probability below e^-127)")
        y[i] = exact
    return y


def _discrete_laplace_flat(n, t, s, rng):
    """n draws with Pr[Z = z] proportional to exp(-|z| s / t): CKS20 Algorithm 2, vectorised.

    Each candidate: U ~ uniform{0..t-1}; keep it with probability exp(-U/t); V ~ Geometric(1 - e^-1);
    X = U + t V (so Pr[X = x] is proportional to exp(-x/t)); Y = floor(X / s); a sign B ~ Bernoulli(1/2);
    reject (B = 1, Y = 0) so that zero is not counted twice; Z = (1 - 2B) Y. Candidates are i.i.d. and
    about 1 - 1/e of them are accepted, so each round draws 7/4 of the draws still missing (plus 8): one
    round almost always suffices. The first accepted candidates, in order, are the draws (rejection
    sampling: which candidates are accepted says nothing about the accepted values).
    """
    out = np.empty(n, dtype=np.int64)
    filled = 0
    while filled < n:
        need = n - filled
        m = need + need * 3 // 4 + 8
        candidates = _candidates_in_few_calls if m <= _BLOCK_MAX_SIZE else _candidates_in_loops
        u, keep, v, negative = candidates(m, t, rng)
        y = _floor_div(u[keep], v[keep], t, s)
        negative = negative[keep]
        z = np.where(negative, -y, y)[~(negative & (y == 0))][:need]
        out[filled : filled + z.size] = z
        filled += z.size
    return out


def sample_discrete_laplace(scale, size, rng):
    """Exact discrete Laplace draws: Pr[Z = z] proportional to exp(-|z| / scale), z an integer.

    Uses integer arithmetic only (Canonne, Kamath & Steinke, NeurIPS 2020, Algorithms 1 and 2) and
    draws every random bit from ``rng``, so a seeded Generator gives the same draws on every machine.

    Parameters
    ----------
    scale : float, int or fractions.Fraction
        The scale, > 0 and <= 2^52. A float is taken at its exact binary value. A scale whose
        numerator or denominator exceeds 2^56 is replaced by a slightly *larger* rational with parts
        <= 2^56 (more noise, never less).
    size : int or tuple of int
        Output shape.
    rng : numpy.random.Generator
        The only source of randomness.

    Returns
    -------
    ndarray of int64, of shape ``size``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> z = sample_discrete_laplace(2.5, 5, rng)
    >>> z.dtype, z.shape
    (dtype('int64'), (5,))
    >>> np.array_equal(z, sample_discrete_laplace(2.5, 5, np.random.default_rng(0)))
    True
    """
    _check_rng(rng)
    ratio = _scale_fraction(scale)
    if ratio > MAX_DISCRETE_SCALE:
        raise ValueError("scale must be <= 2^52 for the exact discrete Laplace sampler")
    ratio = _limit_up(ratio)
    shape = _check_size(size)
    n = math.prod(shape)
    return _discrete_laplace_flat(n, ratio.numerator, ratio.denominator, rng).reshape(shape)


# ---------------------------------------------------------------------------
# The release
# ---------------------------------------------------------------------------


def laplace_noise_grid(sensitivity, epsilon, dim=1):
    """The grid spacing gamma (a power of two) of the exact release of a ``dim``-entry answer.

    gamma is the largest power of two <= min(sensitivity * 2^-10 / dim, sensitivity * 2^-20 / epsilon):
    the noise scale is then >= 2^20 grid steps, and rounding costs at most a relative 2^-10 of extra
    noise (the accounted sensitivity grows from sensitivity to sensitivity + dim * gamma). The grid
    does not shrink with dim faster than that, so a release of many entries (a histogram of thousands
    of cells) keeps its grid indices far below 2^52.

    Parameters
    ----------
    sensitivity : float
        L1 sensitivity of the whole answer, > 0.
    epsilon : float
        Privacy parameter, > 0.
    dim : int
        Number of entries released together, >= 1.

    Returns
    -------
    float, a power of two.

    Examples
    --------
    >>> laplace_noise_grid(1.0, 1.0) == 2.0**-20
    True
    >>> laplace_noise_grid(1.0, 0.1, dim=4) == 2.0**-17
    True
    >>> laplace_noise_grid(1.0, 1.0, dim=10_000) == 2.0**-24
    True
    """
    sensitivity = check_positive(sensitivity, "sensitivity", show_value=False)
    epsilon = check_positive(epsilon, "epsilon", show_value=False)
    if isinstance(dim, (bool, np.bool_)) or not isinstance(dim, numbers.Integral) or dim < 1:
        raise ValueError("dim must be an integer >= 1")
    # q = sensitivity 2^-20 / max(dim 2^-10, epsilon) = m 2^e with m in [0.5, 1): gamma = 2^(e - 1) <= q
    _, exponent = math.frexp(sensitivity / max(math.ldexp(float(dim), -ROUNDING_BITS), epsilon))
    gamma = math.ldexp(1.0, exponent - 1 - GRID_BITS)
    if gamma == 0.0:
        raise ValueError("sensitivity is too small for the noise grid (the grid spacing underflows)")
    return gamma


def _grid_scale(sensitivity, epsilon, gamma, dim):
    """Exact discrete Laplace scale in grid units, (sensitivity + dim*gamma) / (epsilon*gamma), rounded up."""
    exact = (Fraction(sensitivity) + dim * Fraction(gamma)) / (Fraction(epsilon) * Fraction(gamma))
    if exact > MAX_DISCRETE_SCALE:  # only when dim / epsilon > 2^31
        raise ValueError("epsilon is too small for the exact sampler: the noise would exceed 2^52 grid steps")
    return _limit_up(exact)


def _release_rng(rng):
    """A generator for one release, seeded by exactly one raw 64-bit word of ``rng``.

    The rejection sampler reads a data-independent but variable number of draws, and numpy's
    bounded integers read the half word that ``rng`` may hold from an earlier draw; drawing them
    from a child keeps the caller's stream at a position that depends on the number of releases
    only, as with textbook noise (the coupling audit relies on that, see dpclust_lib.audit.coupling).
    """
    if is_os_generator(rng):  # a 64-bit seed would stand in for the 256-bit key: draw from the stream itself
        return rng
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(int(rng.bit_generator.random_raw()))))


@functools.lru_cache(maxsize=1024)
def _release_grid(sensitivity, epsilon, dim):
    """gamma, the exact grid scale (a Fraction) and gamma times it as a float, for one kind of release.

    Estimators repeat the same (sensitivity, epsilon, dim) for every iteration and every run, and the
    exact rational arithmetic costs more than a small release's noise: it is computed once.
    """
    gamma = laplace_noise_grid(sensitivity, epsilon, dim)
    if saturation_bound(gamma) < sensitivity:  # public inputs only: one record's contribution would saturate
        raise ValueError(
            "epsilon is too large for the exact release: its grid (gamma <= sensitivity 2^-20 / epsilon) saturates "
            "below one sensitivity (2^52 grid steps); lower epsilon or rescale the query"
        )
    ratio = _grid_scale(sensitivity, epsilon, gamma, dim)
    return gamma, ratio, float(ratio * Fraction(gamma))


def saturation_bound(gamma):
    """The largest |value| the exact release keeps: 2^52 gamma, or the largest grid point below the largest double.

    A public function of gamma (so of the sensitivity, epsilon and the number of entries, never of the data).
    Below it the grid index |value / gamma| < 2^52 is exact in a double and in int64; a value beyond it is
    clamped to it (:func:`saturate`).

    Examples
    --------
    >>> saturation_bound(2.0**-30) == 2.0**22
    True
    """
    if gamma < _NO_OVERFLOW_GAMMA:
        return MAX_GRID_INDEX * gamma
    return math.floor(sys.float_info.max / gamma) * gamma  # exact: a whole multiple of a power of two


def saturate(arr, gamma):
    """``arr`` clamped to [-B, B], B = :func:`saturation_bound`, and rounded to the grid gamma*Z: the centre that the
    exact release adds its noise to.

    Clamping each entry to a public interval is 1-Lipschitz in every coordinate, so the clamped answer's L1
    sensitivity is at most the answer's: the release of the clamped answer is epsilon-DP exactly as accounted, and
    no value, however large, makes the release refuse (an exception that depended on the answer would itself be an
    unaccounted release). ±inf saturate like any large value.

    Examples
    --------
    >>> saturate(np.array([0.3, 5e6, -np.inf]), 2.0**-30).tolist() == [round(0.3 * 2**30) / 2**30, 2.0**22, -(2.0**22)]
    True
    """
    bound = saturation_bound(gamma)
    return np.rint(np.clip(arr, -bound, bound) / gamma) * gamma  # exact division: gamma is a power of two


def _exact_release(arr, sensitivity, epsilon, rng):
    gamma, ratio, scale = _release_grid(sensitivity, epsilon, max(arr.size, 1))
    base = (saturate(arr, gamma) / gamma).astype(np.int64)  # |base| <= 2^52: exact
    noise = _discrete_laplace_flat(arr.size, ratio.numerator, ratio.denominator, _release_rng(rng))
    k = base + noise.reshape(arr.shape)
    # The DP release is the integer k; the double is a deterministic function of it (post-processing), exact for
    # |k| <= 2^53 and otherwise the nearest double, still on the grid. Nothing below can leak like Mironov's attack.
    if gamma < _NO_OVERFLOW_GAMMA:  # |k| < 2^63, so |k| gamma < 2^1023: finite
        return k.astype(float) * gamma, scale, gamma
    # A huge grid: k gamma may pass the largest double. The release saturates there too (post-processing of k).
    top = saturation_bound(gamma)
    return np.clip(k.astype(float), -top / gamma, top / gamma) * gamma, scale, gamma


def laplace_release(value, sensitivity, epsilon, rng, noise="exact"):
    """Release ``value`` under epsilon-DP with Laplace-type noise.

    Parameters
    ----------
    value : float or array_like
        The exact answer(s); finite. With ``"exact"``, an entry beyond :func:`saturation_bound` (2^52 grid
        steps) is clamped to it before the noise is added (:func:`saturate`): the release never refuses a
        value, and the accounting holds as stated.
    sensitivity : float
        L1 sensitivity of the whole answer (all entries together), > 0.
    epsilon : float
        Privacy parameter, > 0.
    rng : numpy.random.Generator
        The only source of randomness (the estimator's Generator).
    noise : {"exact", "float"}
        ``"exact"`` (default): round to the grid gamma*Z (:func:`laplace_noise_grid`) and add gamma
        times exact discrete Laplace noise of scale (sensitivity + d*gamma) / (epsilon*gamma), d the
        number of entries: epsilon-DP exactly, outputs on the grid. ``"float"``: the textbook
        ``value + rng.laplace(0.0, sensitivity / epsilon, size)``, with the same draws as before
        (its low-order bits leak, see :func:`dpclust_lib.audit.floating.mironov_attack`).

    Returns
    -------
    noisy : ndarray of float, of the shape of ``value``
    scale : float
        The Laplace scale actually used (``sensitivity / epsilon`` for ``"float"``;
        gamma * the exact grid scale, rounded to the nearest double, for ``"exact"``).
    gamma : float or None
        The grid spacing (``None`` for ``"float"``).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> noisy, scale, gamma = laplace_release([0.3, 2.0], 1.0, 1.0, rng)
    >>> gamma == 2.0**-20, scale == 1.0 + 2 * 2.0**-20
    (True, True)
    >>> bool(np.all(noisy / gamma == np.round(noisy / gamma)))
    True
    >>> a = laplace_release(0.3, 1.0, 1.0, np.random.default_rng(1), noise="float")[0]
    >>> bool(a == 0.3 + np.random.default_rng(1).laplace(0.0, 1.0, size=()))
    True
    """
    check_noise_kind(noise)
    _check_rng(rng)
    arr = check_finite_values(value)
    sensitivity = check_positive(sensitivity, "sensitivity", show_value=False)
    epsilon = check_positive(epsilon, "epsilon", show_value=False)
    return _release_checked(arr, sensitivity, epsilon, rng, noise)


def _release_checked(arr, sensitivity, epsilon, rng, noise):
    """:func:`laplace_release` of arguments already checked: a finite float array, two floats > 0, a
    Generator and a noise kind (:func:`dpclust_lib.mechanisms.laplace_mechanism` checks them once)."""
    if noise == "exact":
        return _exact_release(arr, sensitivity, epsilon, rng)
    scale = sensitivity / epsilon
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError("the Laplace scale sensitivity / epsilon is not a finite number > 0")
    with np.errstate(over="ignore"):  # checked just below
        noisy = arr + rng.laplace(0.0, scale, size=arr.shape)
    if not np.all(np.isfinite(noisy)):
        raise ValueError("value + noise overflows to inf: value is too close to the largest float")
    return noisy, scale, None


# ---------------------------------------------------------------------------
# Exact Bernoulli draws of a double, and the rational bounds that choose the double
# ---------------------------------------------------------------------------

_EXP_DIGITS = 40  # e^x to 40 significant digits: far below the 2^-53 spacing of the doubles chosen from it
_UNIFORM_BITS = 53  # a double in [0.5, 1) is m / 2^53 with m an integer
_TAIL_BITS = 62  # the smallest positive probability drawn is 2^-62


@functools.lru_cache(maxsize=1024)
def exp_interval(x):
    """(lower, upper): exact rationals with lower <= e^x <= upper, for a float ``x``.

    ``decimal`` computes e^x correctly rounded to 40 significant digits (its documented
    contract), so the true value lies strictly between that result's two neighbours at 40 digits;
    the float ``x`` is taken at its exact binary value.

    Parameters
    ----------
    x : float
        Finite, |x| <= 10^6.

    Returns
    -------
    tuple of two fractions.Fraction

    Examples
    --------
    >>> lower, upper = exp_interval(1.0)
    >>> float(lower) == float(upper) == math.e, float(upper - lower) < 1e-38
    (True, True)
    """
    if isinstance(x, bool) or not isinstance(x, numbers.Real) or not math.isfinite(x) or abs(x) > 1e6:
        raise ValueError("x must be a finite real number with |x| <= 10^6")
    context = decimal.Context(prec=_EXP_DIGITS, Emax=10**7, Emin=-(10**7))
    value = context.exp(decimal.Decimal(float(x)))
    return Fraction(context.next_minus(value)), Fraction(context.next_plus(value))


def double_at_most(value):
    """The largest double <= ``value`` (a Fraction or a number), found without rounding error.

    Examples
    --------
    >>> double_at_most(Fraction(1, 3)) < Fraction(1, 3) < double_at_least(Fraction(1, 3))
    True
    >>> double_at_most(Fraction(1, 2))
    0.5
    """
    value = Fraction(value)
    out = float(value)  # int / int is correctly rounded: within half a spacing of value
    return math.nextafter(out, -math.inf) if Fraction(out) > value else out


def double_at_least(value):
    """The smallest double >= ``value`` (a Fraction or a number), found without rounding error.

    Examples
    --------
    >>> double_at_least(Fraction(1, 2))
    0.5
    """
    value = Fraction(value)
    out = float(value)
    return math.nextafter(out, math.inf) if Fraction(out) < value else out


def bernoulli_digits(p):
    """(m, t) with p = m 2^-53 2^-t exactly: m an integer below 2^53 + 1, t >= 0; vectorised over p in [0, 1].

    Examples
    --------
    >>> m, t = bernoulli_digits(np.array([0.75, 0.3, 1.0, 0.0]))
    >>> [Fraction(int(a), 2**53) / 2 ** int(b) for a, b in zip(m, t)] == [Fraction(v) for v in (0.75, 0.3, 1.0, 0.0)]
    True
    """
    prob = np.asarray(p, dtype=float)
    fraction, exponent = np.frexp(prob)  # p = fraction 2^exponent, fraction in [1/2, 1) (0 for p = 0)
    one = prob >= 1.0
    m = np.where(one, 2**_UNIFORM_BITS, np.ldexp(fraction, _UNIFORM_BITS)).astype(np.uint64)  # exact: 53 bits
    t = np.where(one | (prob <= 0.0), 0, -exponent).astype(np.int64)
    return m, t


def sample_bernoulli(p, rng, size=None):
    """Exact Bernoulli draws: True with probability exactly ``p``, the rational value of each double.

    A double p in [0, 1] is m 2^-53 2^-t with m <= 2^53 an integer and t >= 0 (:func:`bernoulli_digits`),
    so Bernoulli(p) is [a uniform 53-bit integer < m] AND [t further uniform bits all zero]. Both
    come from raw 64-bit words of ``rng``'s bit generator: the top 53 bits of a word against m, its
    other 11 bits for the first 11 of the t zeros, and one more word only for the rare draws with
    t > 11 that are still undecided. ``rng.random() < p``, by contrast, realises p rounded up to a
    multiple of 2^-53. Vectorised; reproducible from the seed.

    Parameters
    ----------
    p : float or array_like of float
        Probabilities in [0, 1]; inside (0, 1) at least 2^-62 (the local mechanisms keep 2^-40).
    rng : numpy.random.Generator
        The only source of randomness.
    size : int, tuple of int or None, default None
        The shape of the draws, to which ``p`` broadcasts (None: the shape of ``p``). A few
        probabilities broadcast over many draws are decomposed once.

    Returns
    -------
    bool or ndarray of bool

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> draws = sample_bernoulli(0.3, rng, size=100_000)
    >>> draws.dtype, round(float(draws.mean()), 2)
    (dtype('bool'), 0.3)
    >>> sample_bernoulli([0.0, 1.0], rng).tolist()
    [False, True]
    """
    _check_rng(rng)
    prob = np.asarray(p, dtype=float)
    if not np.all((prob >= 0.0) & (prob <= 1.0)):
        raise ValueError("p must hold probabilities in [0, 1]")
    if np.any((prob > 0.0) & (prob < 2.0**-_TAIL_BITS)):
        raise ValueError("p must be 0 or at least 2^-62")
    shape = prob.shape if size is None else ((int(size),) if isinstance(size, numbers.Integral) else tuple(size))
    m, t = bernoulli_digits(prob)
    out = bernoulli_from_digits(m, t, rng, shape)
    return bool(out) if out.ndim == 0 else out


def bernoulli_from_digits(m, t, rng, shape=None):
    """:func:`sample_bernoulli` of the probabilities m 2^-53 2^-t (from :func:`bernoulli_digits`).

    ``m`` and ``t`` broadcast to ``shape`` (None: their own shape); a few probabilities over many
    draws cost no more than one.

    Examples
    --------
    >>> m, t = bernoulli_digits(np.array([0.0, 1.0]))
    >>> bernoulli_from_digits(m, t, np.random.default_rng(0)).tolist()
    [False, True]
    """
    shape = np.broadcast_shapes(np.shape(m), np.shape(t)) if shape is None else shape
    word = rng.bit_generator.random_raw(math.prod(shape)).reshape(shape)
    low = 64 - _UNIFORM_BITS  # the 11 bits under the top 53
    out = (word >> np.uint64(low)) < m
    if np.any(t > 0):
        shift = np.uint64(low) - np.minimum(t, low).astype(np.uint64)
        out &= ((word & np.uint64(2**low - 1)) >> shift) == 0
    if np.any(t > low):  # the rare draws still undecided: the remaining t - 11 zeros from one more word each
        deep = out & np.broadcast_to(t > low, shape)
        more = rng.bit_generator.random_raw(int(deep.sum()))
        out[deep] = (more >> (np.uint64(64) - (np.broadcast_to(t, shape)[deep] - low).astype(np.uint64))) == 0
    return out


# ---------------------------------------------------------------------------
# The discrete Gaussian (Canonne, Kamath & Steinke 2020, Algorithm 3) and its release
# ---------------------------------------------------------------------------

_WORD = 63  # bits of one uniform integer compared against a probability's binary digits
# sigma^2 of a release in grid units stays below this: its draws (a few sigma) stay far inside int64.
MAX_GAUSSIAN_VARIANCE = 2**96


def _variance_fraction(sigma2):
    """sigma^2 > 0 as an exact Fraction (a float is taken at its exact binary value)."""
    if isinstance(sigma2, Fraction):
        if sigma2 <= 0:
            raise ValueError("sigma2 must be > 0")
        return sigma2
    return Fraction(check_positive(sigma2, "sigma2", show_value=False))


def _bernoulli_rational_tie(rem, den, rng):
    """Bernoulli(rem / den) for Python integers 0 <= rem < den, from 63-bit words: a draw whose first word tied."""
    while True:
        digits, rem = divmod(rem << _WORD, den)
        word = int(rng.integers(0, 2**_WORD))
        if word != digits:
            return word < digits


def _bernoulli_exp_rational(whole, rem, den, rng):
    """Bernoulli(exp(-(whole + rem / den))) per entry, exactly; ``whole`` an int64 array, ``rem`` a list of Python
    integers 0 <= rem < den (one common ``den``, any size).

    CKS20 Algorithm 1 beyond gamma = 1: ``whole`` draws of Bernoulli(e^-1) must all succeed, then one draw of
    Bernoulli(exp(-rem / den)), by Algorithm 1's chain: A_k = Bernoulli(rem / den) AND Bernoulli(1 / k). Bernoulli of
    a rational of any size compares a uniform 63-bit integer W with the first 63 binary digits Q of rem / den: W < Q
    is a success, W > Q a failure, and the tie (probability 2^-63) goes on with the next digits.
    """
    n = whole.size
    alive = np.ones(n, dtype=bool)
    for j in range(1, int(whole.max(initial=0)) + 1):
        rows = np.flatnonzero(alive & (whole >= j))
        alive[rows] = _bernoulli_exp1(rows.size, rng, start=2)  # A_1 = 1 when gamma = 1
    digits = np.array([(r << _WORD) // den for r in rem], dtype=np.int64)  # < 2^63: rem < den

    def step(rows, k):
        size = n if rows is None else rows.size
        q = digits if rows is None else digits[rows]
        word = rng.integers(0, 2**_WORD, size)
        a = word < q
        for i in np.flatnonzero(word == q):  # probability 2^-63 each
            row = i if rows is None else rows[i]
            a[i] = _bernoulli_rational_tie((rem[row] << _WORD) - int(q[i]) * den, den, rng)
        if k > 1:
            a &= rng.integers(0, k, size) == 0
        return a

    return alive & _algorithm_1(step, n, 1)


def _discrete_gaussian_flat(n, sigma2, rng):
    """n draws with Pr[Z = z] proportional to exp(-z^2 / (2 sigma2)): CKS20 Algorithm 3, vectorised.

    t = floor(sigma) + 1; each candidate Y is discrete Laplace with Pr proportional to exp(-|y| / t), kept with
    probability exp(-(|Y| - sigma2 / t)^2 / (2 sigma2)). With sigma2 = a / b that exponent is
    (b t |Y| - a)^2 / (2 a b t^2), computed in Python integers. The first accepted candidates, in order, are the
    draws. About 1 - 1/e or more of the candidates are accepted (CKS20 Section 5.3), so each round draws 7/4 of
    the draws missing (plus 8).
    """
    a, b = sigma2.numerator, sigma2.denominator
    t = math.isqrt(a // b) + 1  # floor(sqrt(a / b)) = isqrt(floor(a / b))
    den = 2 * a * b * t * t
    out = np.empty(n, dtype=np.int64)
    filled = 0
    while filled < n:
        need = n - filled
        m = need + need * 3 // 4 + 8
        y = _discrete_laplace_flat(m, t, 1, rng)
        parts = [divmod((b * t * abs(int(v)) - a) ** 2, den) for v in y]
        whole = np.array([w for w, _ in parts], dtype=np.int64)
        keep = _bernoulli_exp_rational(whole, [r for _, r in parts], den, rng)
        z = y[keep][:need]
        out[filled : filled + z.size] = z
        filled += z.size
    return out


def sample_discrete_gaussian(sigma2, size, rng):
    """Exact discrete Gaussian draws: Pr[Z = z] proportional to exp(-z^2 / (2 sigma2)), z an integer.

    Canonne, Kamath & Steinke, NeurIPS 2020, Algorithm 3, on the exact discrete Laplace and
    Bernoulli(exp(-gamma)) samplers of this module: integer and rational arithmetic only, every random bit
    from ``rng``, so a seeded Generator gives the same draws on every machine.

    Parameters
    ----------
    sigma2 : float, int or fractions.Fraction
        The variance parameter sigma^2 (> 0, at most 2^96); a float is taken at its exact binary value.
    size : int or tuple of int
        Output shape.
    rng : numpy.random.Generator
        The only source of randomness.

    Returns
    -------
    ndarray of int64, of shape ``size``.

    Examples
    --------
    >>> z = sample_discrete_gaussian(Fraction(9, 4), 5, np.random.default_rng(0))
    >>> z.dtype, z.shape
    (dtype('int64'), (5,))
    >>> np.array_equal(z, sample_discrete_gaussian(Fraction(9, 4), 5, np.random.default_rng(0)))
    True
    """
    _check_rng(rng)
    variance = _variance_fraction(sigma2)
    if variance > MAX_GAUSSIAN_VARIANCE:
        raise ValueError("sigma2 must be <= 2^96 for the exact discrete Gaussian sampler")
    shape = _check_size(size)
    return _discrete_gaussian_flat(math.prod(shape), variance, rng).reshape(shape)


def _ceil_sqrt(n):
    """The smallest integer >= sqrt(n), for an integer n >= 0."""
    root = math.isqrt(n)
    return root if root * root == n else root + 1


def gaussian_noise_grid(sensitivity, rho, dim=1):
    """The grid spacing gamma (a power of two) of the exact Gaussian release of a ``dim``-entry answer.

    gamma is the largest power of two <= min(sensitivity 2^-10 / ceil(sqrt(dim)), sigma 2^-20) with
    sigma = sensitivity / sqrt(2 rho), the nominal noise: the noise spans at least 2^20 grid steps, and rounding
    every entry to the grid moves the answer by at most ceil(sqrt(dim)) gamma / 2 in L2, at most a relative 2^-11 of the
    sensitivity (accounted, see :func:`gaussian_release`).

    Examples
    --------
    >>> gaussian_noise_grid(1.0, 0.5) == 2.0**-20
    True
    >>> gaussian_noise_grid(1.0, 0.5, dim=10**8) == 2.0**-24
    True
    """
    sensitivity = check_positive(sensitivity, "sensitivity", show_value=False)
    rho = check_positive(rho, "rho", show_value=False)
    if isinstance(dim, (bool, np.bool_)) or not isinstance(dim, numbers.Integral) or dim < 1:
        raise ValueError("dim must be an integer >= 1")
    sigma = sensitivity / math.sqrt(2.0 * rho)
    limit = min(sensitivity / _ceil_sqrt(int(dim)) * 2.0**-ROUNDING_BITS, sigma * 2.0**-GRID_BITS)
    _, exponent = math.frexp(limit)  # limit = m 2^e, m in [0.5, 1): 2^(e - 1) <= limit
    gamma = math.ldexp(1.0, exponent - 1)
    if gamma == 0.0 or not math.isfinite(limit):
        raise ValueError("sensitivity and rho give no usable noise grid (the grid spacing underflows or overflows)")
    return gamma


@functools.lru_cache(maxsize=1024)
def _gaussian_grid(sensitivity, rho, dim):
    """gamma, sigma^2 in grid units (an integer, as a Fraction) and the real sigma, for one kind of release.

    sigma^2 = ceil((sensitivity + ceil(sqrt(dim)) gamma)^2 / (2 rho gamma^2)) in grid units, exactly: rounding up
    only adds noise, so the release is rho-zCDP for the sensitivity of the rounded answer.
    """
    gamma = gaussian_noise_grid(sensitivity, rho, dim)
    if saturation_bound(gamma) < sensitivity:
        raise ValueError("rho is too large for the exact release: its grid saturates below one sensitivity")
    shifted = Fraction(sensitivity) + _ceil_sqrt(dim) * Fraction(gamma)
    variance = Fraction(math.ceil(shifted**2 / (2 * Fraction(rho) * Fraction(gamma) ** 2)))
    if variance > MAX_GAUSSIAN_VARIANCE:
        raise ValueError("rho is too small for the exact sampler: the noise would exceed 2^48 grid steps")
    return gamma, variance, math.sqrt(float(variance)) * gamma


def gaussian_release(value, sensitivity, rho, rng):
    """Release ``value`` under rho-zCDP with exact discrete Gaussian noise on a power-of-two grid.

    The answer is clamped and rounded to the grid gamma Z (:func:`gaussian_noise_grid`, :func:`saturate`), and
    gamma times a discrete Gaussian of variance sigma^2 (grid units) is added. Rounding moves each of the d
    entries by at most gamma / 2, so the L2 sensitivity of the rounded answer is at most
    sensitivity + ceil(sqrt(d)) gamma, and sigma^2 is that squared over 2 rho gamma^2, rounded up to an integer:
    rho-zCDP exactly (CKS20 Theorem 4), with :func:`dpclust_lib.accounting.zcdp_to_dp` for (epsilon, delta).

    Parameters
    ----------
    value : float or array_like
        The exact answer(s); finite.
    sensitivity : float
        L2 sensitivity of the whole answer (all entries together), > 0.
    rho : float
        The zCDP parameter of this release, > 0.
    rng : numpy.random.Generator
        The only source of randomness.

    Returns
    -------
    noisy : ndarray of float, of the shape of ``value``
    sigma : float
        The standard deviation parameter of the noise (gamma sqrt(sigma^2 in grid units)).
    gamma : float
        The grid spacing.

    Examples
    --------
    >>> noisy, sigma, gamma = gaussian_release([0.3, 2.0], 1.0, 0.5, np.random.default_rng(0))
    >>> gamma == 2.0**-20, round(sigma, 4)
    (True, 1.0)
    >>> bool(np.all(noisy / gamma == np.round(noisy / gamma)))
    True
    """
    _check_rng(rng)
    arr = check_finite_values(value)
    sensitivity = check_positive(sensitivity, "sensitivity", show_value=False)
    rho = check_positive(rho, "rho", show_value=False)
    gamma, variance, sigma = _gaussian_grid(sensitivity, rho, max(arr.size, 1))
    base = (saturate(arr, gamma) / gamma).astype(np.int64)
    noise = _discrete_gaussian_flat(arr.size, variance, _release_rng(rng))
    k = base + noise.reshape(arr.shape)  # |k| < 2^52 + 2^60: exact in int64; its double is post-processing
    return k.astype(float) * gamma, sigma, gamma

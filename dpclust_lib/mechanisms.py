"""Privacy mechanisms: the Laplace mechanism (central DP) and the local randomisers.

The budget they spend is accounted in :mod:`dpclust_lib.accounting`.

Central model
    :func:`laplace_mechanism` -- the Laplace mechanism (exact discrete noise on a
    power-of-two grid by default, the textbook floating-point noise by name).

Local model (each user randomises their own value)
    :func:`grr_perturb` -- k-ary (generalised) randomized response, GRR;
    :func:`ue_perturb` with :func:`sue_pq` / :func:`oue_pq` -- unary encoding;
    :func:`hamming_rr_perturb` -- the Hamming-distance randomized response of
    Peng et al. (2021), Eq. 4, generalised to attributes of unequal domain size.

Conventions: categories are coded ``0 .. k-1``; a transition matrix ``P`` has
one row per true input and one column per output, ``P[x, y] = Pr[M(x) = y]``,
so every row sums to one.

Exact coins: each probability a local sampler realises is a double, rounded from
the closed form in the direction that keeps the stated epsilon (against exact
rational bounds on e^epsilon, :func:`dpclust_lib.noise.exp_interval`), and it is
drawn exactly (:func:`dpclust_lib.noise.sample_bernoulli`: uniform integers
compared with its binary digits), as OpenDP samples a Bernoulli of a float. So
every report's worst-case ratio is at most e^epsilon exactly, and below it by a
relative 2^-52 at most. A uniform among the other values is an exact uniform
integer. (``rng.random() < p`` realised p rounded up to a multiple of 2^-53: an
error in epsilon near 1e-15 at epsilon ~ 1, up to 1e-4 near the cap below.)

Numerical limits (fail closed): every probability a local sampler realises, and
its complement, must be at least ``MIN_PROBABILITY`` = 2^-40, where a double
still resolves it to a relative 2^-52. That caps epsilon at ln(2^40 - k + 1) ~ 27.7
for k-ary GRR and the Hamming-distance RR (per attribute, max k), ln(2^40 - 1) ~ 27.7
for OUE and 2 ln(2^40 - 1) ~ 55.5 for SUE; a larger epsilon raises ValueError naming it.
Dense matrices are built up to ``MAX_DENSE_CELLS`` rows (4096).

Floating point: the Laplace mechanism draws exact discrete Laplace noise on a
power-of-two grid by default (:mod:`dpclust_lib.noise`), so its outputs do not
leak through their low-order bits as textbook floating-point Laplace does
(Mironov, CCS 2012); ``noise="float"`` gives the textbook release by name. The
local samplers draw exact Bernoulli coins of probabilities kept at least
``MIN_PROBABILITY`` apart from 0 and 1 (below).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import numbers
from fractions import Fraction

import numpy as np

from .noise import (
    NOISE_KINDS,
    _release_checked,
    check_noise_kind,
    double_at_least,
    double_at_most,
    exp_interval,
    sample_bernoulli,
    saturate,
)
from .validation import (
    check_categorical,
    check_domain_sizes,
    check_epsilon,
    check_finite_values,
    check_int,
    check_positive,
    check_random_state,
)

__all__ = [
    "NOISE_KINDS",
    "MIN_PROBABILITY",
    "MAX_DENSE_CELLS",
    "laplace_scale",
    "laplace_mechanism",
    "observe_laplace",
    "grr_probabilities",
    "grr_matrix",
    "grr_perturb",
    "unary_encode",
    "sue_pq",
    "oue_pq",
    "ue_epsilon",
    "ue_perturb",
    "hamming_rr_distance_pmf",
    "hamming_rr_matrix",
    "hamming_rr_perturb",
]


# Smallest probability (and complement) a local sampler is asked to realise; see the module docstring.
MIN_PROBABILITY = 2.0**-40
# Largest side of a dense transition matrix (4096^2 doubles = 128 MiB).
MAX_DENSE_CELLS = 4096


# ---------------------------------------------------------------------------
# Central DP: the Laplace mechanism
# ---------------------------------------------------------------------------

# The audit (dpclust_lib.audit) couples two runs of an estimator by watching every Laplace
# release; ``None`` (the default) means nobody watches.
_LAPLACE_OBSERVER = contextvars.ContextVar("laplace_observer", default=None)


@contextlib.contextmanager
def observe_laplace(observer):
    """Route every :func:`laplace_mechanism` release through ``observer`` (for audits).

    The noise is drawn in any case, so the random stream of the run is the same
    with or without an observer.

    Parameters
    ----------
    observer : callable(value, scale, noisy) -> array_like
        Called once per release inside the ``with`` block, with the exact value
        (ndarray; with the default ``noise="exact"``, the value as rounded to the
        noise grid), the Laplace scale actually used and the noisy release just
        drawn; it returns the release to use instead (same shape).

    Yields
    ------
    None
        The previous observer (usually none) is restored on leaving the block.

    Examples
    --------
    An observer that records each release and forces it to the exact value (the
    coupling audit forces it to another run's release instead):

    >>> seen = []
    >>> def exact(value, scale, noisy):
    ...     seen.append((value.tolist(), round(scale, 4)))
    ...     return value
    >>> with observe_laplace(exact):
    ...     laplace_mechanism([3.0, 0.5], sensitivity=1.0, epsilon=0.5, random_state=0).tolist()
    [3.0, 0.5]
    >>> seen  # one release: the value and the scale, sensitivity / epsilon (and the grid's rounding)
    [([3.0, 0.5], 2.0)]

    The noise was drawn all the same, so the caller's stream moves on as without an observer:

    >>> rng_a, rng_b = np.random.default_rng(0), np.random.default_rng(0)
    >>> with observe_laplace(exact):
    ...     _ = laplace_mechanism(3.0, 1.0, 0.5, random_state=rng_a)
    >>> _ = laplace_mechanism(3.0, 1.0, 0.5, random_state=rng_b)
    >>> bool(rng_a.random() == rng_b.random())
    True
    """
    token = _LAPLACE_OBSERVER.set(observer)
    try:
        yield
    finally:
        _LAPLACE_OBSERVER.reset(token)


def laplace_scale(sensitivity, epsilon):
    """The scale b = sensitivity / epsilon of the Laplace mechanism.

    Parameters
    ----------
    sensitivity : float
        L1 sensitivity of the query, > 0.
    epsilon : float
        Privacy parameter, > 0.

    Returns
    -------
    float
        The scale b, before any rounding to a noise grid (:func:`laplace_mechanism`
        with ``noise="exact"`` adds the grid's rounding to the sensitivity).

    Raises
    ------
    ValueError
        When an argument is not a finite number > 0, or b is not (it overflows to
        inf, or underflows to 0, which would release the exact value).

    Examples
    --------
    >>> laplace_scale(2.0, 0.5)
    4.0
    >>> laplace_scale(1e-300, 1e300)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: the Laplace scale sensitivity / epsilon ... not a finite number > 0; ...
    """
    sensitivity = check_positive(sensitivity, "sensitivity")
    epsilon = check_epsilon(epsilon)
    scale = sensitivity / epsilon
    if not (np.isfinite(scale) and scale > 0):
        raise ValueError(
            f"the Laplace scale sensitivity / epsilon = {sensitivity!r} / {epsilon!r} is {scale!r}, not a finite "
            "number > 0; rescale the query so that sensitivity and epsilon are of moderate size"
        )
    return scale


def laplace_mechanism(value, sensitivity, epsilon, random_state=None, *, noise="exact"):
    """Release ``value`` with Laplace noise of scale ``sensitivity / epsilon``, independently per entry.

    Every central release of the library goes through here.

    Parameters
    ----------
    value : float or array_like
        The exact query answer(s). With an array, ``sensitivity`` is the L1
        sensitivity of the whole vector (Dwork & Roth, Def. 3.3).
    sensitivity : float
        L1 sensitivity, > 0.
    epsilon : float
        Privacy parameter, > 0.
    random_state : None, int, SeedSequence, numpy Generator or "os", default=None
        The only source of randomness; a seed gives the same release bit for bit.
    noise : {"exact", "float"}, default="exact"
        ``"exact"``: the answer rounded to a power-of-two grid plus exact discrete Laplace noise
        (:func:`dpclust_lib.noise.laplace_release`), epsilon-DP exactly as accounted, the grid's
        rounding included. ``"float"``: the textbook ``value + rng.laplace(0, b)`` of the papers,
        whose low-order bits leak (Mironov, CCS 2012; :func:`dpclust_lib.audit.floating.mironov_attack`).

    Returns
    -------
    float or ndarray of the same shape as ``value``.

    Examples
    --------
    >>> from dpclust_lib.mechanisms import laplace_mechanism
    >>> a = laplace_mechanism([10.0, 3.0], sensitivity=1.0, epsilon=0.5, random_state=0)
    >>> b = laplace_mechanism([10.0, 3.0], sensitivity=1.0, epsilon=0.5, random_state=0)
    >>> a.shape, bool((a == b).all())
    ((2,), True)
    """
    laplace_scale(sensitivity, epsilon)  # the same checks and messages for both kinds of noise
    rng = check_random_state(random_state)
    arr = check_finite_values(value)
    noisy, scale, gamma = _release_checked(arr, float(sensitivity), float(epsilon), rng, check_noise_kind(noise))
    observer = _LAPLACE_OBSERVER.get()
    if observer is not None:
        # The audit couples the noise, which is added to the answer as rounded to the grid.
        centre = arr if gamma is None else saturate(arr, gamma)
        noisy = np.asarray(observer(centre, scale, noisy), dtype=float)
    return float(noisy) if noisy.ndim == 0 else noisy


# ---------------------------------------------------------------------------
# Local DP: k-ary randomized response
# ---------------------------------------------------------------------------


def _check_probabilities(mechanism, epsilon, largest, probabilities):
    """Refuse an epsilon at which a probability the sampler realises (``{name: value}``, complements
    included) falls below MIN_PROBABILITY; ``largest`` is the mechanism's epsilon cap, for the message."""
    for name, value in probabilities.items():
        if not value >= MIN_PROBABILITY:
            raise ValueError(
                f"epsilon={epsilon!r} is outside the numerically safe range of {mechanism} (epsilon <= "
                f"{largest:.4g}): the probability {name} = {value:.3g} is below 2^-40, which the sampler "
                "cannot realise faithfully (see mechanisms.MIN_PROBABILITY)"
            )


def grr_probabilities(k, epsilon):
    """(p, q) of k-ary randomized response: keep the true value with p, report
    each other value with q = (1 - p) / (k - 1); p / q = e^epsilon.

    :func:`grr_perturb` draws one exact coin (:func:`dpclust_lib.noise.sample_bernoulli`)
    for the rarer of "keep" and "move": a double rounded from its closed form,
    e^eps / (e^eps + k - 1) down or (k - 1) / (e^eps + k - 1) up, against exact
    rational bounds on e^eps (:func:`dpclust_lib.noise.exp_interval`). The realised
    p / q is then at most e^epsilon exactly and below it by a relative 2^-52 at
    most; the (p, q) returned are the realised values rounded to doubles.
    Numerically safe range: q >= 2^-40, i.e.
    epsilon <= ln(2^40 - k + 1) (about 27.7; k <= 2^32);
    outside it ValueError names ``epsilon``.

    Parameters
    ----------
    k : int
        Domain size, 2 <= k <= 2^32.
    epsilon : float
        Privacy parameter, > 0 and within the safe range above.

    Returns
    -------
    p, q : float
        Probability of reporting the true value, and of reporting one given other value.

    Examples
    --------
    With k = 4 and epsilon = ln 3, p = e^eps / (e^eps + k - 1) = 3 / 6:

    >>> import math
    >>> p, q = grr_probabilities(4, math.log(3))
    >>> round(p, 12), round(q, 12), round(p / q, 12)
    (0.5, 0.166666666667, 3.0)
    >>> grr_probabilities(4, 30.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: epsilon=30.0 is outside the numerically safe range of 4-ary randomized response (epsilon <= 27.73): ...
    """
    # k <= 2^32 keeps p >= 1/k far above 2^-40, so only epsilon can leave the safe range.
    k = check_int(k, "k", minimum=2, maximum=2**32)
    eps = check_epsilon(epsilon)
    largest = math.log(2.0**40 - k + 1)
    if eps > 1e6:  # far outside the safe range: refused without computing e^eps
        _check_probabilities(f"{k}-ary randomized response", eps, largest, {"q": 0.0})
    coin, heads_keep = _grr_coin(k, eps)
    p, q = (coin, (1.0 - coin) / (k - 1)) if heads_keep else (1.0 - coin, coin / (k - 1))
    _check_probabilities(f"{k}-ary randomized response", eps, largest, {"p": p, "q": q, "1 - p": (k - 1) * q})
    return p, q


@functools.lru_cache(maxsize=4096)
def _grr_coin(k, eps):
    """(probability of heads, heads means keep): the exact coin of k-ary randomized response.

    The coin is the rarer outcome, so that its double keeps full relative precision (a keep
    probability near 1 would leave the move probability, near e^-eps, only 2^-53 absolute);
    it is rounded in the direction that keeps p / q <= e^eps (``lower`` <= e^eps).
    """
    lower, _ = exp_interval(eps)
    if lower >= k - 1:  # keeping is the likelier outcome: the coin is the move, rounded up
        return double_at_least(Fraction(k - 1) / (lower + k - 1)), False
    return double_at_most(lower / (lower + k - 1)), True


def grr_matrix(k, epsilon):
    """The k x k transition matrix of GRR (row = input, column = output); k <= MAX_DENSE_CELLS.

    Parameters
    ----------
    k : int
        Domain size, 2 <= k <= ``MAX_DENSE_CELLS``.
    epsilon : float
        Privacy parameter (the range of :func:`grr_probabilities`).

    Returns
    -------
    ndarray of shape (k, k)
        ``P[x, y] = Pr[M(x) = y]``: p on the diagonal, q elsewhere; every row sums to one.

    Examples
    --------
    With k = 3 and epsilon = ln 2, p = 2 / 4 and q = 1 / 4:

    >>> import math
    >>> P = grr_matrix(3, math.log(2))
    >>> P.round(12).tolist()
    [[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]]
    >>> P.sum(axis=1).round(12).tolist()
    [1.0, 1.0, 1.0]
    """
    k = check_int(k, "k", minimum=2, maximum=MAX_DENSE_CELLS)
    p, q = grr_probabilities(k, epsilon)
    return np.full((k, k), q) + np.eye(k) * (p - q)


def _check_codes(values, k, name="values"):
    arr = check_categorical(np.asarray(values).reshape(-1, 1) if np.ndim(values) == 1 else values, [k], name=name)
    return arr[:, 0]


def grr_perturb(values, k, epsilon, random_state=None):
    """Perturb each value in {0..k-1} with k-ary randomized response.

    Parameters
    ----------
    values : array_like of shape (n,)
        Integer category codes in 0 .. k - 1, one per user.
    k : int
        Domain size, >= 2.
    epsilon : float
        Privacy parameter (the range of :func:`grr_probabilities`).
    random_state : None, int, SeedSequence, numpy Generator or "os", default=None
        The source of randomness.

    Returns
    -------
    ndarray of int64, shape (n,)
        The reports: the true value with probability p, else one of the k - 1 others,
        uniformly.

    Examples
    --------
    Ten thousand users who all hold 0, k = 4, epsilon = ln 3: about half report
    the truth (p = 1/2), the rest spread over the three other codes (q = 1/6 each):

    >>> import math
    >>> reports = grr_perturb(np.zeros(10_000, dtype=int), 4, math.log(3), random_state=0)
    >>> reports.shape, sorted(set(reports.tolist()))
    ((10000,), [0, 1, 2, 3])
    >>> round(float(np.mean(reports == 0)), 2)
    0.5
    """
    grr_probabilities(k, epsilon)  # the parameter checks and the safe range
    if np.ndim(values) != 1:
        raise ValueError(f"values must be a 1-D array of category codes, got shape {np.shape(values)}")
    x = _check_codes(values, k)
    rng = check_random_state(random_state)
    coin, heads_keep = _grr_coin(int(k), float(epsilon))
    heads = sample_bernoulli(coin, rng, size=x.shape[0])  # exact (see grr_probabilities)
    keep = heads if heads_keep else ~heads
    # A uniformly drawn *other* value: draw from k-1 slots and skip over x.
    other = rng.integers(0, k - 1, size=x.shape[0])
    other = other + (other >= x)
    return np.where(keep, x, other)


# ---------------------------------------------------------------------------
# Local DP: unary encoding (SUE = basic RAPPOR, OUE = optimised)
# ---------------------------------------------------------------------------

# Largest n * k of a unary-encoded batch: the sampler holds ~17 bytes per bit (uniforms, thresholds, bits).
MAX_REPORT_BITS = 2**24


def _check_report_bits(n, k):
    if n * k > MAX_REPORT_BITS:
        raise ValueError(
            f"values has {n} entries and k={k}: {n * k} report bits exceed the cap of {MAX_REPORT_BITS} "
            "(mechanisms.MAX_REPORT_BITS); perturb the users in chunks"
        )


def unary_encode(values, k):
    """One-hot encode codes {0..k-1} into an (n, k) uint8 array (n * k <= MAX_REPORT_BITS).

    Parameters
    ----------
    values : array_like of shape (n,)
        Integer category codes in 0 .. k - 1.
    k : int
        Domain size, >= 2.

    Returns
    -------
    ndarray of uint8, shape (n, k)
        Row i has a single 1, in column ``values[i]``.

    Examples
    --------
    >>> unary_encode([0, 2, 1], 3).tolist()
    [[1, 0, 0], [0, 0, 1], [0, 1, 0]]
    """
    k = check_int(k, "k", minimum=2)
    if np.ndim(values) != 1:
        raise ValueError(f"values must be a 1-D array of category codes, got shape {np.shape(values)}")
    _check_report_bits(np.shape(values)[0], k)
    x = _check_codes(values, k)
    out = np.zeros((x.shape[0], k), dtype=np.uint8)
    out[np.arange(x.shape[0]), x] = 1
    return out


def sue_pq(epsilon):
    """Symmetric unary encoding: p = e^{eps/2} / (e^{eps/2} + 1), q = 1 - p.

    p is the largest double at most that and q the smallest double at least 1 - p (both
    bounded with exact rationals), so a report's worst-case ratio p(1 - q) / ((1 - p) q) is
    at most e^epsilon exactly; p + q is 1 to within 2^-53.
    Numerically safe range: q >= 2^-40, i.e. epsilon <= 2 ln(2^40 - 1) (about 55.5).

    Parameters
    ----------
    epsilon : float
        Privacy parameter of a whole report, > 0 and within the safe range above.

    Returns
    -------
    p, q : float
        Probability that the report's bit is 1 where the encoded bit is 1, and where it is 0.

    Examples
    --------
    With epsilon = 2 ln 3, e^{eps/2} = 3, so p = 3/4 and q = 1/4:

    >>> import math
    >>> p, q = sue_pq(2 * math.log(3))
    >>> round(p, 12), round(q, 12)
    (0.75, 0.25)
    """
    eps = check_epsilon(epsilon)
    largest = 2 * math.log(2.0**40 - 1)
    if eps > 1e6:
        _check_probabilities("symmetric unary encoding", eps, largest, {"q = 1 - p": 0.0})
    lower, _ = exp_interval(eps / 2.0)
    p = double_at_most(lower / (1 + lower))
    q = double_at_least(1 / (1 + lower))
    _check_probabilities("symmetric unary encoding", eps, largest, {"q = 1 - p": q})
    return p, q


def oue_pq(epsilon):
    """Optimised unary encoding (Wang et al., USENIX Security 2017): p = 1/2, q = 1/(e^eps + 1).

    q is the smallest double at least 1 / (e^eps + 1) (bounded with exact rationals), so a
    report's worst-case ratio (1 - q) / q is at most e^epsilon exactly. Numerically safe range:
    q >= 2^-40, i.e. epsilon <= ln(2^40 - 1) (about 27.7).

    Parameters
    ----------
    epsilon : float
        Privacy parameter of a whole report, > 0 and within the safe range above.

    Returns
    -------
    p, q : float
        Probability that the report's bit is 1 where the encoded bit is 1 (always 1/2), and
        where it is 0.

    Examples
    --------
    With epsilon = ln 3, q = 1 / (3 + 1):

    >>> import math
    >>> p, q = oue_pq(math.log(3))
    >>> p, round(q, 12)
    (0.5, 0.25)
    """
    eps = check_epsilon(epsilon)
    largest = math.log(2.0**40 - 1)
    if eps > 1e6:
        _check_probabilities("optimised unary encoding", eps, largest, {"q": 0.0})
    lower, _ = exp_interval(eps)
    q = double_at_least(1 / (1 + lower))
    if not q < 0.5:  # e^epsilon is 1 in doubles: the report would carry nothing
        raise ValueError(
            f"epsilon={eps!r} is too small for optimised unary encoding: q = 1 / (1 + e^epsilon) rounds to 1/2 "
            "in double precision; epsilon must be at least about 1e-15"
        )
    _check_probabilities("optimised unary encoding", eps, largest, {"q": q})
    return 0.5, q


def _check_pq(p, q):
    for name, v in (("p", p), ("q", q)):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
            raise TypeError(f"{name} must be a real number, got {name}={v!r}")
        if not (MIN_PROBABILITY <= float(v) <= 1.0 - MIN_PROBABILITY):
            raise ValueError(f"{name} must lie in [2^-40, 1 - 2^-40] (the sampler's safe range), got {name}={v!r}")
    if not float(p) > float(q):
        raise ValueError(f"p must exceed q for the report to carry information, got p={p!r}, q={q!r}")
    return float(p), float(q)


def ue_epsilon(p, q):
    """The LDP level of unary encoding with (p, q): ln[p(1-q) / ((1-p) q)].

    Two inputs differ in two bits, one of which goes 1->0 and one 0->1, so the
    worst-case ratio of a whole report is p(1-q) / ((1-p) q).

    Parameters
    ----------
    p, q : float
        Bit probabilities, each in [2^-40, 1 - 2^-40], with p > q.

    Returns
    -------
    float
        The epsilon of a whole report.

    Examples
    --------
    OUE's p = 1/2 and q = 1/4 give ln[(1/2)(3/4) / ((1/2)(1/4))] = ln 3, and SUE's
    pair gives back the epsilon it was made for:

    >>> import math
    >>> math.isclose(ue_epsilon(0.5, 0.25), math.log(3))
    True
    >>> round(ue_epsilon(*sue_pq(1.0)), 12)
    1.0
    """
    p, q = _check_pq(p, q)
    return float(np.log(p * (1 - q) / ((1 - p) * q)))


def ue_perturb(bits, p, q, random_state=None):
    """Flip each bit independently: Pr[b' = 1] = p if b = 1, q if b = 0, exactly (the doubles' values).

    Parameters
    ----------
    bits : array_like of 0/1 integers, shape (n, k)
        One encoded report per user (e.g. from :func:`unary_encode`); n * k <= MAX_REPORT_BITS.
    p, q : float
        Bit probabilities, each in [2^-40, 1 - 2^-40], with p > q (e.g. from :func:`sue_pq`
        or :func:`oue_pq`).
    random_state : None, int, SeedSequence, numpy Generator or "os", default=None
        The source of randomness.

    Returns
    -------
    ndarray of uint8, shape (n, k)
        The perturbed reports.

    Examples
    --------
    A hundred thousand users who all hold 0, OUE at epsilon = ln 3 (p = 1/2, q = 1/4):
    the share of ones is about p in column 0 and about q elsewhere.

    >>> bits = unary_encode(np.zeros(100_000, dtype=int), 3)
    >>> reports = ue_perturb(bits, 0.5, 0.25, random_state=0)
    >>> reports.shape, str(reports.dtype)
    ((100000, 3), 'uint8')
    >>> reports.mean(axis=0).round(2).tolist()
    [0.5, 0.25, 0.25]
    """
    p, q = _check_pq(p, q)
    b = np.asarray(bits)
    if b.ndim != 2 or b.size == 0:
        raise ValueError(f"bits must be a non-empty 2-D 0/1 array (users x bits), got shape {b.shape}")
    if b.dtype.kind not in "biu" or np.any((b != 0) & (b != 1)):
        raise ValueError("bits must hold only 0 and 1")
    _check_report_bits(*b.shape)
    rng = check_random_state(random_state)
    out = sample_bernoulli(q, rng, size=b.shape)  # exact coins: q for every bit, then p where the bit is 1
    ones = b == 1
    out[ones] = sample_bernoulli(p, rng, size=int(np.count_nonzero(ones)))
    return out.astype(np.uint8)


# ---------------------------------------------------------------------------
# Local d-privacy: the Hamming-distance randomized response (Peng et al. 2021)
# ---------------------------------------------------------------------------


def hamming_rr_distance_pmf(m, k, epsilon):
    """Eq. 4 of Peng et al.: Pr[d(X, Y) = z] for z = 0..m, equal domains of size k.

    Pr[z] = e^{eps (m - z)} C(m, z) (k - 1)^z / sum_j e^{eps j} C(m, j) (k - 1)^{m - j}.

    Computed in logs (e^{eps m} overflows for large m * eps). The mechanism is m
    k-ary randomized responses, so it has their numerically safe range:
    epsilon <= ln(2^40 - k + 1); m <= 10^6.

    Parameters
    ----------
    m : int
        Number of attributes, 1 <= m <= 10^6.
    k : int
        Domain size of every attribute, >= 2.
    epsilon : float
        Privacy parameter per unit of Hamming distance.

    Returns
    -------
    ndarray of shape (m + 1,)
        Pr[d(X, Y) = z] for z = 0 .. m; it sums to one.

    Examples
    --------
    The distance is Binomial(m, 1 - p) with GRR's p; for m = 2, k = 2 and
    epsilon = ln 2, p = 2/3 and the probabilities are 4/9, 4/9 and 1/9:

    >>> import math
    >>> (9 * hamming_rr_distance_pmf(2, 2, math.log(2))).round(9).tolist()
    [4.0, 4.0, 1.0]
    """
    m = check_int(m, "m", minimum=1, maximum=10**6)
    k = check_int(k, "k", minimum=2)
    eps = check_epsilon(epsilon)
    grr_probabilities(k, eps)  # the safe-range check
    z = np.arange(m + 1)
    log_comb = np.array([math.lgamma(m + 1) - math.lgamma(i + 1) - math.lgamma(m - i + 1) for i in range(m + 1)])
    log_num = eps * (m - z) + log_comb + z * math.log(k - 1.0)
    log_num -= log_num.max()
    num = np.exp(log_num)
    return num / num.sum()


def hamming_rr_matrix(domain_sizes, epsilon):
    """The full transition matrix over the joint domain (for small domains only).

    P[x, y] = prod_j (e^eps if y_j = x_j else 1) / prod_j (e^eps + k_j - 1), with
    records indexed in mixed radix (first attribute most significant), so
    P = P_1 (x) P_2 (x) ... (x) P_m, the Kronecker product of GRR matrices.

    Parameters
    ----------
    domain_sizes : sequence of int
        k_1 .. k_m, each >= 2, with k_1 * ... * k_m <= MAX_DENSE_CELLS.
    epsilon : float
        Privacy parameter per unit of Hamming distance.

    Returns
    -------
    ndarray of shape (k_1 ... k_m, k_1 ... k_m)
        ``P[x, y] = Pr[M(x) = y]``; every row sums to one.

    Examples
    --------
    Domains (2, 3) and epsilon = ln 2: the normaliser is (2 + 1)(2 + 2) = 12, and
    record (0, 0) is kept with weight 2 * 2, moved in one attribute with weight 2
    (three such records) and in both with weight 1 (two records):

    >>> import math
    >>> P = hamming_rr_matrix((2, 3), math.log(2))
    >>> P.shape, (12 * P[0]).round(9).tolist()
    ((6, 6), [4.0, 2.0, 2.0, 2.0, 1.0, 1.0])
    >>> P.sum(axis=1).round(12).tolist()
    [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    """
    sizes = check_domain_sizes(domain_sizes)
    cells = math.prod(sizes)  # Python ints: np.prod would wrap around silently
    if cells > MAX_DENSE_CELLS:
        raise ValueError(
            f"domain_sizes={sizes} give {cells} cells; the dense matrix is for small domains "
            f"(<= {MAX_DENSE_CELLS} cells). Use frequency.LDPFO, which never builds it."
        )
    P = np.ones((1, 1))
    for k in sizes:
        P = np.kron(P, grr_matrix(k, epsilon))
    return P


def hamming_rr_perturb(X, domain_sizes, epsilon, random_state=None):
    """Perturb records with the Hamming-distance randomized response.

    Each output y has probability proportional to e^{eps (m - d(x, y))}. Since
    sum_w e^{eps w} C(m, w) (k - 1)^{m - w} = (e^eps + k - 1)^m, this is the
    same distribution as m independent k-ary randomized responses with eps
    each, which is how it is sampled here (vectorised). With unequal domain
    sizes the factorised form is the natural generalisation.

    Parameters
    ----------
    X : array_like of shape (n, m)
        Integer codes, ``X[:, j]`` in 0 .. k_j - 1.
    domain_sizes : sequence of m int
        k_1 .. k_m, each >= 2.
    epsilon : float
        The per-unit-distance privacy parameter (a whole record gets m * epsilon);
        numerically safe up to ln(2^40 - max(domain_sizes) + 1) (see :func:`grr_probabilities`).
    random_state : None, int, SeedSequence, numpy Generator or "os", default=None
        The source of randomness.

    Returns
    -------
    Y : ndarray of int64, shape (n, m)
        The perturbed records.

    Examples
    --------
    Each attribute is kept with GRR's p: at epsilon = ln 3, 3/4 for k = 2 and 3/5 for k = 3:

    >>> import math
    >>> X = np.zeros((100_000, 2), dtype=int)
    >>> Y = hamming_rr_perturb(X, (2, 3), math.log(3), random_state=0)
    >>> Y.shape, (Y == X).mean(axis=0).round(2).tolist()
    ((100000, 2), [0.75, 0.6])
    """
    sizes = check_domain_sizes(domain_sizes)
    X = check_categorical(X, sizes)
    eps = check_epsilon(epsilon)
    rng = check_random_state(random_state)
    n, m = X.shape
    for kj in sizes:
        grr_probabilities(kj, eps)  # the safe range of every attribute
    coins, heads_keep = (np.array(v) for v in zip(*(_grr_coin(kj, eps) for kj in sizes)))
    heads = sample_bernoulli(coins, rng, size=(n, m))  # exact coins, as grr_perturb
    keep = np.where(heads_keep, heads, ~heads)
    other = np.stack([rng.integers(0, kj - 1, n) for kj in sizes], axis=1)  # exactly uniform; one bound a call
    other = other + (other >= X)
    return np.where(keep, X, other)

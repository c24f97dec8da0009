"""The black-box (output-only) audit of the private estimators: a statistical lower bound on epsilon.

The coupling audit (:mod:`.coupling`) looks inside a run: it sees every Laplace release and couples
its noise. This audit sees only what a fitted estimator publishes (``cluster_centers_``, noisy
counts, the released tree; a refusal or a warning too), exactly as an outside analyst would, so it
keeps working whatever the estimator does internally.

Method (the threshold-event test of Ding et al. 2018 with the Clopper-Pearson bounds of Jagielski,
Ullman and Oprea 2020):

1. Fit the estimator ``n_fits`` times on a data set D and ``n_fits`` times on a neighbour D'
   (one record added, removed or replaced), each fit with its own recorded seed, and read a
   scalar *statistic* of the public release of each fit. A fit that refuses the data (ValueError
   or TypeError) is an outcome too: its statistic is +inf.
2. The event E = {statistic >= t}, more likely under D'. Either t is fixed before any fit, from
   the mechanism's structure alone (:func:`laplace_loss_threshold`: the threshold on the
   likelihood ratio of the released Laplace counts and sums that a perfect test of that release
   would pick), and every fit evaluates it; or E (its threshold, direction and favoured side) is
   chosen on half of each side's fits and evaluated on the other half.
3. With p the probability of E on the favoured side and q on the other, epsilon-DP implies
   p <= e^epsilon q, so with probability at least ``confidence`` the true epsilon is at least
   ln(p_lower / q_upper), one-sided Clopper-Pearson bounds at level (1 - confidence) / 2 each.

The bound is clipped at 0. It is a *lower* bound: passing says only that this statistic, at this
number of fits, could not show more loss than claimed. :func:`perfect_test_bound` is what a perfect
test of that many fits shows against a true claim at its expected hit counts: the bound when E has
exactly the extreme probabilities the claim allows (a run can pass it by chance).

The cases (:func:`blackbox_cases`) are what an outside auditor would choose to see a leak: for every
private estimator (:func:`private_estimators`), a worst-case pair (a record at the far corner of the
public domain; for the local protocols one user's record replaced by the farthest one), the budget
setting that puts almost all of epsilon on one release, and a statistic built from the mechanism's
structure: the log-likelihood ratio of the released counts and sums (recovered exactly from a
released centre, see :func:`recover_sum_and_count`), the released mode, or one user's report.

References
----------
Z. Ding, Y. Wang, G. Wang, D. Zhang, D. Kifer. Detecting violations of differential privacy.
ACM CCS 2018.
M. Jagielski, J. Ullman, A. Oprea. Auditing differentially private machine learning: how private is
private SGD? NeurIPS 2020.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import numbers
import time
import warnings
from fractions import Fraction

import joblib
import numpy as np
import pandas as pd
from scipy import stats
from sklearn.base import clone

from ..noise import laplace_noise_grid

__all__ = [
    "BlackBoxResult",
    "BlackBoxCase",
    "clopper_pearson",
    "count_bound",
    "perfect_test_bound",
    "laplace_loss_threshold",
    "threshold_audit",
    "blackbox_audit",
    "audit_release",
    "audit_case",
    "recover_sum_and_count",
    "root_count_loss",
    "top_cell_report",
    "private_estimators",
    "boundary_cases",
    "saturation_edge_case",
    "blackbox_cases",
    "blackbox_table",
]

_REL_TOL = 1e-9  # floating-point slack when a bound is compared with a claimed epsilon
SIDES = ("D", "D'")
REFUSED = math.inf
"""The statistic of a fit that refused its data: an observable outcome, above every threshold."""


@dataclasses.dataclass(frozen=True)
class BlackBoxResult:
    """The outcome of one black-box audit.

    Attributes
    ----------
    epsilon_lower_bound : float
        ln(p_lower / q_upper) on the evaluation fits, clipped at 0; a lower bound on the true epsilon
        with probability at least ``confidence``.
    confidence : float
    statistic : str
        The name of the statistic of the release.
    threshold : float
        The event's threshold t.
    direction : str
        ">=" (E = {statistic >= t}) or "<=" (E = {statistic <= t}).
    favoured : str
        "D" or "D'": the side under which E is more likely (the numerator).
    hits_d, n_d, hits_d_prime, n_d_prime : int
        Hits of E and evaluation runs on D and on D'.
    epsilon_claimed : float
        The largest ``epsilon_guaranteed_`` over the fits (NaN when nothing claims one).
    epsilon_spent : float
        The largest ``epsilon_spent_`` over the fits (NaN when none).
    n_fits : int
        Fits per side.
    seconds : float
        CPU time of the audit (user + system, this process).
    seeds_d, seeds_d_prime : tuple of int
        The ``random_state`` of each fit on D and on D' (empty for :func:`threshold_audit`).
    warnings : tuple of str
        Names of the warning categories the fits raised.
    refused_d, refused_d_prime : int
        Fits that refused their data (ValueError or TypeError), on D and on D'.
    warned_d, warned_d_prime : int
        Fits that raised at least one warning, on D and on D'.
    fixed_event : bool
        True when the event was fixed before the fits (all fits evaluate it).

    Examples
    --------
    A statistic that tells D from D' every time, 25 evaluation runs a side: the bound is
    ln(0.863 / 0.137), about 1.84, whatever the claim, and the verdict compares it with the claim:

    >>> r = threshold_audit([0.0] * 50, [1.0] * 50)
    >>> round(r.epsilon_lower_bound, 3), r.verdict  # no claim (NaN): nothing to violate
    (1.839, 'consistent')
    >>> dataclasses.replace(r, epsilon_claimed=1.0).verdict
    'violates'
    """

    epsilon_lower_bound: float
    confidence: float
    statistic: str
    threshold: float
    direction: str
    favoured: str
    hits_d: int
    n_d: int
    hits_d_prime: int
    n_d_prime: int
    epsilon_claimed: float = math.nan
    epsilon_spent: float = math.nan
    n_fits: int = 0
    seconds: float = 0.0
    seeds_d: tuple = ()
    seeds_d_prime: tuple = ()
    warnings: tuple = ()
    refused_d: int = 0
    refused_d_prime: int = 0
    warned_d: int = 0
    warned_d_prime: int = 0
    fixed_event: bool = False

    @property
    def verdict(self):
        """``"consistent"`` when the bound does not exceed the claim (or there is none), else ``"violates"``."""
        claim = self.epsilon_claimed
        if math.isnan(claim) or self.epsilon_lower_bound <= claim * (1 + _REL_TOL):
            return "consistent"
        return "violates"


# ---------------------------------------------------------------------------
# The statistics: Clopper-Pearson bounds, the perfect test, the threshold event
# ---------------------------------------------------------------------------


def clopper_pearson(hits, n, alpha, upper):
    """One-sided Clopper-Pearson bound on a binomial probability, vectorised over ``hits``.

    Implemented here rather than imported: :mod:`.local` keeps its helper private. ``hits`` may be
    fractional (an expected count), as :func:`perfect_test_bound` uses it.

    Parameters
    ----------
    hits : float or array of float
        Successes, 0 <= hits <= n.
    n : int
        Trials.
    alpha : float
        One-sided error: the bound fails with probability at most ``alpha``.
    upper : bool
        True for the upper bound, False for the lower bound.

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> round(clopper_pearson(10, 10, 0.025, upper=False), 4)
    0.6915
    """
    h = np.asarray(hits, dtype=float)
    with np.errstate(invalid="ignore"):  # beta(0, .) and beta(., 0) are the degenerate ends set below
        if upper:
            out = np.where(h >= n, 1.0, stats.beta.ppf(1 - alpha, h + 1, n - h))
        else:
            out = np.where(h <= 0, 0.0, stats.beta.ppf(alpha, h, n - h + 1))
    return float(out) if out.ndim == 0 else out


def _log_ratio_bound(hits_p, n_p, hits_q, n_q, alpha):
    """ln(CP_lower(p) / CP_upper(q)) at alpha / 2 each, clipped at 0; vectorised over the hits."""
    low = clopper_pearson(hits_p, n_p, alpha / 2, upper=False)
    high = clopper_pearson(hits_q, n_q, alpha / 2, upper=True)
    with np.errstate(divide="ignore"):
        return np.maximum(np.log(low) - np.log(high), 0.0)


def count_bound(hits_favoured, n_favoured, hits_other, n_other, confidence=0.95):
    """The lower bound on epsilon from the hits of one event fixed in advance, on two sides.

    Parameters
    ----------
    hits_favoured, n_favoured : int
        Hits and runs on the side under which the event should be likelier.
    hits_other, n_other : int
        Hits and runs on the other side.
    confidence : float in (0, 1), default 0.95

    Returns
    -------
    float
        ln(p_lower / q_upper), clipped at 0.

    Examples
    --------
    >>> round(count_bound(40, 40, 0, 40), 3), count_bound(5, 40, 5, 40)
    (2.337, 0.0)
    """
    alpha = 1.0 - _check_confidence(confidence)
    return float(_log_ratio_bound(hits_favoured, n_favoured, hits_other, n_other, alpha))


def perfect_test_bound(epsilon, n_fits, confidence=0.95):
    """The bound a perfect test of ``n_fits`` runs a side shows, at its expected hit counts, against a true claim.

    What a test of that size can typically reach, not a ceiling: a run's hit counts scatter around their
    expectations, so its bound can exceed this one by chance (never the claim, but with probability at most
    1 - ``confidence``); :func:`blackbox_table` reports it as ``perfect_test_expected``.

    A perfect test has an event E with exactly the extreme probabilities the claim allows:
    p = Pr_D'[E] and q = Pr_D[E] = e^-epsilon p, with p at most e^epsilon / (1 + e^epsilon) (then
    Pr_D[not E] = e^epsilon Pr_D'[not E] too: randomized response). Its bound at the expected hit
    counts n p and n q is maximised over p.

    Parameters
    ----------
    epsilon : float > 0
    n_fits : int >= 1
        Runs a side that evaluate the event.
    confidence : float in (0, 1), default 0.95

    Returns
    -------
    float

    Examples
    --------
    One Laplace count can show at most 0.86 of epsilon = 1 at 2,000 fits a side (its events have
    p <= 1/2); a perfect test shows 0.90:

    >>> round(perfect_test_bound(1.0, 2000), 3)
    0.9
    """
    alpha = 1.0 - _check_confidence(confidence)
    eps = float(epsilon)
    if not eps > 0 or not math.isfinite(eps):
        raise ValueError(f"epsilon must be a finite number > 0, got epsilon={epsilon!r}")
    n = _check_n_fits(n_fits, "n_fits", minimum=1)
    largest = 1.0 / (1.0 + math.exp(-eps))
    p = np.geomspace(1.0 / n, largest, 4000)
    return float(np.max(_log_ratio_bound(n * p, n, n * p * math.exp(-eps), n, alpha)))


def laplace_loss_threshold(ratios, n_fits, confidence=0.95, draws=400_000):
    """The threshold on the log-likelihood ratio of a Laplace release that a test of ``n_fits`` should use.

    A release of independent Laplace coordinates, coordinate i shifted between D and D' by r_i
    noise scales, has privacy loss L = sum_i (|y_i - c_i| - |y_i - c'_i|) / b_i, at most sum r_i.
    The event {L >= t} is more likely under D'; this picks the t that maximises the bound at the
    expected hit counts of ``n_fits`` runs a side, from draws of the model alone (seeded: the same
    t every time). It reads no fit: the event is fixed before the audit.

    Parameters
    ----------
    ratios : sequence of float > 0
        r_i = shift_i / scale_i of each coordinate (their sum is the release's epsilon).
    n_fits : int >= 1
    confidence : float in (0, 1), default 0.95
    draws : int, default 400000
        Model draws a side.

    Returns
    -------
    float
        t, a relative 2^-9 below the best value of L (so that the atom at the largest loss is included
    whatever the exact sampler's slightly larger scales).

    Examples
    --------
    One count released with epsilon = 1, 2,000 fits a side: L = 2y - 1 between the two counts (0
    and 1), so t = 0.88 is the event {y >= 0.94}, of probability 0.53 under D' and 0.20 under D,
    a ratio of e^0.997: a little likelier than the half-line beyond the neighbour's count (1/2),
    at nearly the whole ratio e:

    >>> round(laplace_loss_threshold([1.0], 2000), 2)
    0.88
    """
    r = np.asarray(ratios, dtype=float)
    if r.ndim != 1 or r.size == 0 or not np.all((r > 0) & np.isfinite(r)):
        raise ValueError("ratios must be a non-empty sequence of finite numbers > 0")
    alpha = 1.0 - _check_confidence(confidence)
    n = _check_n_fits(n_fits, "n_fits", minimum=1)
    return _loss_threshold(tuple(float(v) for v in r), n, alpha, int(draws))


@functools.lru_cache(maxsize=64)
def _loss_threshold(ratios, n, alpha, draws):
    r = np.asarray(ratios)
    rng = np.random.default_rng(0)
    z_d = rng.laplace(0.0, 1.0, (draws, r.size))
    z_p = rng.laplace(0.0, 1.0, (draws, r.size)) + r
    loss_d = np.sort(np.sum(np.abs(z_d) - np.abs(z_d - r), axis=1))
    loss_p = np.sort(np.sum(np.abs(z_p) - np.abs(z_p - r), axis=1))
    t = np.unique(np.quantile(loss_p, np.linspace(0.0, 0.999, 1000)))
    p = (draws - np.searchsorted(loss_p, t, side="left")) / draws
    q = (draws - np.searchsorted(loss_d, t, side="left")) / draws
    best = float(t[int(np.argmax(_log_ratio_bound(n * p, n, n * q, n, alpha)))])
    # The exact sampler's scales exceed the ideal ones by up to 2^-10 (its grid), so the largest loss an
    # estimator reports sits up to that much below sum r: the threshold goes that much lower.
    return best - 2.0**-9 * float(r.sum())


def _hits(values, thresholds):
    """Hits of {v >= t} and of {v <= t} for every threshold t (values sorted)."""
    at_least = values.size - np.searchsorted(values, thresholds, side="left")
    at_most = np.searchsorted(values, thresholds, side="right")
    return at_least, at_most


def _candidates(a, b, n_thresholds):
    """Candidate thresholds: every distinct pooled value when few (a discrete statistic), else quantiles."""
    pooled = np.concatenate([a, b])
    distinct = np.unique(pooled)
    if distinct.size <= n_thresholds:
        return distinct
    return np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, n_thresholds), method="inverted_cdf"))


def _select_event(sel_d, sel_p, alpha, n_thresholds):
    """(threshold, direction, favoured side) maximising the bound on the selection half."""
    sel_d, sel_p = np.sort(sel_d), np.sort(sel_p)
    t = _candidates(sel_d, sel_p, n_thresholds)
    ge_d, le_d = _hits(sel_d, t)
    ge_p, le_p = _hits(sel_p, t)
    options = [  # (direction, favoured, hits on the favoured side, hits on the other side)
        (">=", "D", ge_d, ge_p),
        (">=", "D'", ge_p, ge_d),
        ("<=", "D", le_d, le_p),
        ("<=", "D'", le_p, le_d),
    ]
    n_fav = {"D": sel_d.size, "D'": sel_p.size}
    n_other = {"D": sel_p.size, "D'": sel_d.size}
    best = (-1.0, None)
    for direction, favoured, hp, hq in options:
        score = _log_ratio_bound(hp, n_fav[favoured], hq, n_other[favoured], alpha)
        # Ties: the first best; the hit margin breaks them so that an all-vacuous selection still picks an event.
        score = score + 1e-12 * (hp / n_fav[favoured] - hq / n_other[favoured])
        i = int(np.argmax(score))
        if score[i] > best[0]:
            best = (float(score[i]), (float(t[i]), direction, favoured))
    return best[1]


def _check_values(values, side, statistic):
    """Values as floats; +inf (a refused fit) is an outcome, NaN and -inf are errors."""
    arr = np.asarray(values, dtype=float).ravel()
    bad = np.isnan(arr) | (arr == -np.inf)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"statistic {statistic!r} returned a non-finite value (run {i} on {side})")
    return arr


def _check_confidence(confidence):
    ok = isinstance(confidence, numbers.Real) and not isinstance(confidence, bool)
    if not ok or not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence must lie in the open interval (0, 1), got confidence={confidence!r}")
    return float(confidence)


def _check_n_fits(n_fits, name="n_fits", minimum=4):
    if isinstance(n_fits, bool) or not isinstance(n_fits, numbers.Integral) or int(n_fits) < minimum:
        why = " (each side needs two selection and two evaluation runs)" if minimum == 4 else ""
        raise ValueError(f"{name} must be an integer >= {minimum}{why}, got {name}={n_fits!r}")
    return int(n_fits)


def _check_threshold(threshold):
    if threshold is None:
        return None
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) or not math.isfinite(threshold):
        raise ValueError(f"threshold must be None or a finite number, got threshold={threshold!r}")
    return float(threshold)


def threshold_audit(
    values_d, values_d_prime, *, confidence=0.95, statistic="statistic", n_thresholds=64, threshold=None
):
    """The lower bound on epsilon from statistic values already drawn on D and on D'.

    Parameters
    ----------
    values_d, values_d_prime : array_like of float
        One value of the statistic per run on D and on D' (at least 4 each); +inf marks a run
        that refused its data.
    confidence : float in (0, 1), default 0.95
        The probability that the bound holds (the error is split evenly between the two sides).
    statistic : str, default "statistic"
        Its name, for the result and for error messages.
    n_thresholds : int >= 2, default 64
        Quantiles of the pooled selection values tried as thresholds (all distinct values when fewer).
    threshold : float or None, default None
        A threshold fixed in advance: the event is {value >= threshold}, favoured side D', and every
        run evaluates it. None: the first half of each side (rounded down) selects the event, the
        rest evaluates it.

    Returns
    -------
    BlackBoxResult
        With ``epsilon_claimed`` NaN and no seeds.

    Examples
    --------
    A deterministic statistic that differs between D and D' (25 evaluation runs a side):

    >>> r = threshold_audit([0.0] * 50, [1.0] * 50, confidence=0.95)
    >>> round(r.epsilon_lower_bound, 3), r.direction, r.favoured, r.hits_d_prime, r.hits_d
    (1.839, '>=', "D'", 25, 0)
    >>> round(threshold_audit([0.0] * 50, [1.0] * 50, threshold=0.5).epsilon_lower_bound, 3)  # all 50 evaluate
    2.57
    """
    alpha = 1.0 - _check_confidence(confidence)
    a = _check_values(values_d, "D", statistic)
    b = _check_values(values_d_prime, "D'", statistic)
    fixed = _check_threshold(threshold)
    _check_n_fits(min(a.size, b.size), "the number of runs on each side", minimum=4 if fixed is None else 1)
    if isinstance(n_thresholds, bool) or not isinstance(n_thresholds, numbers.Integral) or n_thresholds < 2:
        raise ValueError(f"n_thresholds must be an integer >= 2, got n_thresholds={n_thresholds!r}")
    if fixed is None:
        ha, hb = a.size // 2, b.size // 2
        t, direction, favoured = _select_event(a[:ha], b[:hb], alpha, int(n_thresholds))
    else:
        ha = hb = 0
        t, direction, favoured = fixed, ">=", "D'"
    ev_a, ev_b = a[ha:], b[hb:]
    hit_a = int(np.sum(ev_a >= t if direction == ">=" else ev_a <= t))
    hit_b = int(np.sum(ev_b >= t if direction == ">=" else ev_b <= t))
    if favoured == "D":
        bound = _log_ratio_bound(hit_a, ev_a.size, hit_b, ev_b.size, alpha)
    else:
        bound = _log_ratio_bound(hit_b, ev_b.size, hit_a, ev_a.size, alpha)
    return BlackBoxResult(
        epsilon_lower_bound=float(bound),
        confidence=1.0 - alpha,
        statistic=statistic,
        threshold=t,
        direction=direction,
        favoured=favoured,
        hits_d=hit_a,
        n_d=int(ev_a.size),
        hits_d_prime=hit_b,
        n_d_prime=int(ev_b.size),
        n_fits=int(min(a.size, b.size)),
        fixed_event=fixed is not None,
    )


# ---------------------------------------------------------------------------
# Running the estimator (or a release function) on D and D'
# ---------------------------------------------------------------------------


def _seeds(random_state, n_fits):
    """2 n_fits distinct int seeds from ``random_state`` (D's runs first, then D''s)."""
    if isinstance(random_state, bool) or not isinstance(random_state, numbers.Integral) or random_state < 0:
        raise ValueError(f"random_state must be a non-negative integer, got random_state={random_state!r}")
    seeds = np.random.SeedSequence(int(random_state)).generate_state(2 * n_fits, dtype=np.uint64)
    seeds = [int(s) for s in seeds]
    if len(set(seeds)) != len(seeds):  # 2^64 values: a collision would be a broken generator
        raise RuntimeError("seed collision: pick another random_state")
    return seeds[:n_fits], seeds[n_fits:]


def _statistic_name(statistic, name):
    if name is not None:
        return str(name)
    return getattr(statistic, "__name__", type(statistic).__name__)


@dataclasses.dataclass
class _Side:
    """What the fits on one side showed: statistic values, claims, refusals, warnings."""

    values: np.ndarray
    claims: list
    refused: int = 0
    warned: int = 0


def _fit_once(estimator, X, seed, statistic, name, side, i):
    """(value, [guaranteed, spent], warned): one fit; a refusal of the data is the outcome +inf."""
    est = clone(estimator).set_params(random_state=seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # recorded, not raised: a fit's warning is part of its output
        try:
            est.fit(X)
        except (ValueError, TypeError):
            return REFUSED, [math.nan, math.nan], bool(caught), list(caught)
    value = statistic(est)
    if not np.ndim(value) == 0:
        raise ValueError(f"statistic {name!r} must return a scalar, got an array of shape {np.shape(value)}")
    if not np.isfinite(float(value)):
        raise ValueError(f"statistic {name!r} returned a non-finite value (run {i} on {side}, seed {seed})")
    claims = [getattr(est, a, math.nan) for a in ("epsilon_guaranteed_", "epsilon_spent_")]
    return float(value), claims, bool(caught), list(caught)


def _run_side(estimator, X, seeds, statistic, name, side, caught):
    """Fit a clone per seed on X; the statistic values, the claims, refusals and warnings."""
    out = _Side(np.empty(len(seeds)), [])
    for i, seed in enumerate(seeds):
        value, claims, warned, these = _fit_once(estimator, X, seed, statistic, name, side, i)
        out.values[i] = value
        out.claims.append(claims)
        out.refused += value == REFUSED
        out.warned += warned
        caught.extend(these)
    return out


def _largest(rows):
    """Column-wise largest of the non-NaN entries (NaN where a column has none)."""
    arr = np.asarray(rows, dtype=float).reshape(-1, 2)
    return tuple(float(np.max(c[~np.isnan(c)])) if np.any(~np.isnan(c)) else math.nan for c in arr.T)


def blackbox_audit(
    estimator,
    X,
    X_prime,
    statistic,
    *,
    n_fits=200,
    confidence=0.95,
    random_state=0,
    statistic_name=None,
    threshold=None,
):
    """Audit an estimator from its public release only: a lower bound on epsilon over (D, D').

    Parameters
    ----------
    estimator : unfitted scikit-learn style estimator
        Cloned for every fit, with ``random_state`` set to that fit's seed.
    X, X_prime : array_like
        The neighbouring data sets D and D' (worst case: a record at a corner of the public domain
        added, removed or replaced).
    statistic : callable(fitted estimator) -> float
        A scalar of the *public* release (fitted attributes the estimator documents as released).
        A fit that refuses its data (ValueError or TypeError) counts as the value +inf.
    n_fits : int >= 4, default 200
        Fits on each side.
    confidence : float in (0, 1), default 0.95
    random_state : int >= 0, default 0
        Seeds every fit (recorded in the result, so any fit can be replayed).
    statistic_name : str or None, default None
        Its name in the result (default: the function's ``__name__``).
    threshold : float or None, default None
        An event {statistic >= threshold} fixed in advance (favoured side D'), evaluated on every
        fit; None chooses the event on half of the fits (see :func:`threshold_audit`).

    Returns
    -------
    BlackBoxResult
        ``epsilon_claimed`` is the largest ``epsilon_guaranteed_`` over the fits (it is the same for
        every fit of a correct estimator); ``seconds`` the CPU time.

    Examples
    --------
    >>> from dpclust_lib import EUGKMeans
    >>> X = np.full((6, 1), 0.9)
    >>> est = EUGKMeans(1, epsilon=1.0, bounds=(0.0, 1.0), grid_size=2, max_iter=1)
    >>> def corner_count(e):
    ...     return e.bucket_counts_[0]
    >>> r = blackbox_audit(est, X, np.vstack([X, [[0.0]]]), corner_count, n_fits=20)
    >>> r.verdict, r.epsilon_claimed, r.n_d, r.refused_d
    ('consistent', 1.0, 10, 0)
    """
    n_fits = _check_n_fits(n_fits, minimum=4 if threshold is None else 1)
    confidence = _check_confidence(confidence)
    name = _statistic_name(statistic, statistic_name)
    seeds_d, seeds_p = _seeds(random_state, n_fits)
    start = time.process_time()
    caught = []
    a = _run_side(estimator, X, seeds_d, statistic, name, "D", caught)
    b = _run_side(estimator, X_prime, seeds_p, statistic, name, "D'", caught)
    result = threshold_audit(a.values, b.values, confidence=confidence, statistic=name, threshold=threshold)
    claimed, spent = _largest(a.claims + b.claims)
    return dataclasses.replace(
        result,
        epsilon_claimed=claimed,
        epsilon_spent=spent,
        seconds=time.process_time() - start,
        seeds_d=tuple(seeds_d),
        seeds_d_prime=tuple(seeds_p),
        warnings=tuple(sorted({w.category.__name__ for w in caught})),
        refused_d=int(a.refused),
        refused_d_prime=int(b.refused),
        warned_d=int(a.warned),
        warned_d_prime=int(b.warned),
    )


def audit_release(
    release,
    X,
    X_prime,
    *,
    epsilon_claimed,
    n_fits=10_000,
    confidence=0.95,
    random_state=0,
    statistic_name="value",
    threshold=None,
):
    """:func:`blackbox_audit` for a vectorised release: ``release(data, rng, size)`` returns ``size`` values.

    For mechanisms cheap enough to draw many times at once (a plain Laplace mechanism, one user's
    local report); the statistic is the value ``release`` returns.

    Parameters
    ----------
    release : callable(data, numpy Generator, int) -> array of float
    X, X_prime : the neighbouring inputs D and D', passed to ``release`` as given
    epsilon_claimed : float, what the mechanism claims
    n_fits : int >= 4, default 10000, draws on each side (>= 1 with a fixed threshold)
    confidence : float in (0, 1), default 0.95
    random_state : int >= 0, default 0; D's draws use the first of two derived seeds, D''s the second
    statistic_name : str, default "value"
    threshold : float or None, default None, as in :func:`blackbox_audit`

    Returns
    -------
    BlackBoxResult

    Examples
    --------
    >>> def laplace(x, rng, size):
    ...     return x + rng.laplace(0.0, 1.0, size)
    >>> r = audit_release(laplace, 0.0, 1.0, epsilon_claimed=1.0, n_fits=2000)
    >>> r.verdict, 0.3 < r.epsilon_lower_bound <= 1.0
    ('consistent', True)
    """
    n_fits = _check_n_fits(n_fits, minimum=4 if threshold is None else 1)
    confidence = _check_confidence(confidence)
    seed_d, seed_p = _seeds(random_state, 1)
    start = time.process_time()
    a = np.asarray(release(X, np.random.default_rng(seed_d[0]), n_fits), dtype=float).ravel()
    b = np.asarray(release(X_prime, np.random.default_rng(seed_p[0]), n_fits), dtype=float).ravel()
    if a.size != n_fits or b.size != n_fits:
        raise ValueError(f"release must return n_fits={n_fits} values, got {a.size} on D and {b.size} on D'")
    result = threshold_audit(a, b, confidence=confidence, statistic=str(statistic_name), threshold=threshold)
    return dataclasses.replace(
        result,
        epsilon_claimed=float(epsilon_claimed),
        seconds=time.process_time() - start,
        seeds_d=(seed_d[0],),
        seeds_d_prime=(seed_p[0],),
    )


# ---------------------------------------------------------------------------
# Statistics of the public releases, built from each mechanism's structure
# ---------------------------------------------------------------------------


def _laplace_loss(released, exact_d, exact_d_prime, scales):
    """sum_i (|y_i - c_i| - |y_i - c'_i|) / b_i: the log-likelihood ratio of D' against D for Laplace noise."""
    y, c, c_p, b = (np.asarray(v, dtype=float) for v in (released, exact_d, exact_d_prime, scales))
    return float(np.sum((np.abs(y - c) - np.abs(y - c_p)) / b))


def recover_sum_and_count(centre, gamma, expected_count, max_count):
    """(S, N): the noisy sum and count behind a released centre S / N, when both lie on the grid gamma Z.

    With the exact sampler a SuLQ release is S = a gamma and N = b gamma with a, b integers, so the
    released centre S / N is the double nearest a / b: a ratio of two integers below max_count /
    gamma, which continued fractions recover from the one double (``Fraction.limit_denominator``:
    two such ratios differ by far more than a double's spacing). The reduced fraction gives a / b up
    to a common factor j; the j whose count j b gamma is nearest ``expected_count`` is taken.

    Parameters
    ----------
    centre : float
        The released coordinate, on data scaled to [0, 1] (bounds (0, 1)).
    gamma : float
        The grid of the release (:func:`dpclust_lib.noise.laplace_noise_grid`).
    expected_count : float
        Where the count should be (the data sets' sizes are the auditor's own).
    max_count : float
        A count the noise almost never exceeds.

    Returns
    -------
    (float, float) or None
        None when the centre is no such ratio (clipped to the domain, or kept from before).

    Examples
    --------
    >>> gamma = 2.0**-19
    >>> S, N = 1234567 * gamma, 52345678 * gamma  # a noisy sum and count near 100 records
    >>> recover_sum_and_count(S / N, gamma, 100.0, 200.0) == (S, N)
    True
    """
    if not 0.0 < centre < 1.0:
        return None
    ratio = Fraction(centre).limit_denominator(int(max_count / gamma))
    if float(ratio) != centre:
        return None
    j = max(1, round(expected_count / (ratio.denominator * gamma)))
    return j * ratio.numerator * gamma, j * ratio.denominator * gamma


def sulq_loss(n_records):
    """Statistic of a SuLQ release at K = 1, d = 1: the likelihood ratio of its recovered sum and count.

    D holds ``n_records`` records at 0 and D' one more at 1 (bounds (0, 1)): the exact sum and
    count are (0, n) and (1, n + 1). The release is read off ``cluster_centers_`` (exactly, see
    :func:`recover_sum_and_count`), with the scale and the budget the estimator publishes
    (``noise_scales_`` or ``initial_noise_scale_``, ``ledger_``, ``sensitivity_``). An unrecoverable
    centre gets the smallest loss.
    """

    def sulq_release_loss(est):
        scale = est.noise_scales_[-1] if est.noise_scales_ else est.initial_noise_scale_
        gamma = laplace_noise_grid(est.sensitivity_, est.ledger_.entries[-1][1], 2)
        found = recover_sum_and_count(float(est.cluster_centers_[0, 0]), gamma, n_records + 0.5, 2 * n_records + 64)
        if found is None:
            return -2.0 / scale
        return _laplace_loss(found, (0.0, n_records), (1.0, n_records + 1.0), scale)

    return sulq_release_loss


def count_loss(n_records):
    """Statistic of a one-cell count release (EUGKMeans' grid or DPQTKMeans' root leaf): its likelihood ratio.

    The count is ``bucket_counts_[0]``, n on D and n + 1 on D', with Laplace scale 1 / (the last
    budget of ``ledger_``), the leaves' budget.
    """

    def cell_count_loss(est):
        return _laplace_loss(est.bucket_counts_[0], n_records, n_records + 1.0, 1.0 / est.ledger_.entries[-1][1])

    return cell_count_loss


def corner_leaf_loss(X_d):
    """Statistic of DPBirchPublicTree: the likelihood ratio of the noisy CF of the leaf holding the corner 1.

    The skeleton is public, so the auditor routes D (``X_d``) through it for the leaf's exact CF
    under D; D' adds the record (1, ..., 1), whose CF is (1, 1, ..., 1, d). The released (N, LS, SS)
    of that leaf and the published ``noise_scales_`` give the Laplace likelihood ratio.
    """

    def corner_leaf_cf_loss(est):
        d = est.n_features_in_
        tree = est.skeleton_tree_
        leaf = int(tree.route(np.ones((1, d)))[0])
        inside = X_d[tree.route(X_d) == leaf] if len(X_d) else np.zeros((0, d))
        exact = np.concatenate([[len(inside)], inside.sum(axis=0), [np.sum(inside**2)]])
        shift = np.concatenate([[1.0], np.ones(d), [float(d)]])
        b_n, b_ls, b_ss = est.noise_scales_
        released = np.concatenate([[est.leaf_n_[leaf]], est.leaf_ls_[leaf], [est.leaf_ss_[leaf]]])
        scales = np.concatenate([[b_n], np.full(d, b_ls), [b_ss]])
        return _laplace_loss(released, exact, exact + shift, scales)

    return corner_leaf_cf_loss


def root_count_loss(n_records):
    """Statistic of LSHCoresetKMeans' root count (level 0 of its tree): the likelihood ratio of that Laplace release.

    The count is ``level_counts_[0][0]``, n on D and n + 1 on D', with Laplace scale 1 / (the first budget of
    ``ledger_``, the root's).

    Examples
    --------
    >>> from dpclust_lib import LSHCoresetKMeans
    >>> est = LSHCoresetKMeans(1, radius=0.5, center=0.5, max_depth=0, random_state=0).fit(np.zeros((100, 1)))
    >>> loss = root_count_loss(100)(est)
    >>> bool(abs(loss) <= est.ledger_.entries[0][1])  # |loss| <= 1 / scale: a count shifted by one
    True
    """

    def root_count_release_loss(est):
        return _laplace_loss(est.level_counts_[0][0], n_records, n_records + 1.0, 1.0 / est.ledger_.entries[0][1])

    return root_count_release_loss


def top_cell_report(est, record, rng, size):
    """OneRoundLocalKMeans' user side at its first level: 1 for each of ``size`` reports of ``record`` that name the
    last cell alone (OUE: that cell's bit set and no other; GRR: that cell).

    The reports are drawn as the fitted estimator's users draw theirs (its ``bounds_``, ``level_epsilon_`` and
    oracle); with one dimension and one level the grid has two cells, and the last holds the corner 1.

    Examples
    --------
    >>> from dpclust_lib import OneRoundLocalKMeans
    >>> est = OneRoundLocalKMeans(1, bounds=(0.0, 1.0), n_levels=1, random_state=0).fit(np.array([[0.0], [1.0]]))
    >>> hits = top_cell_report(est, [1.0], np.random.default_rng(0), 20_000).mean()
    >>> round(float(hits), 2)  # (1 - q) / 2 with q = 1 / (e + 1): 0.37
    0.37
    """
    from ..cluster.one_round_local import ORACLES, grid_cells

    X = np.repeat(np.asarray(record, dtype=float)[None, :], size, axis=0)
    lower, upper = est.bounds_
    cells = grid_cells(X, lower, upper, 1)
    oracle = ORACLES[est.oracle](2 ** X.shape[1], est.level_epsilon_)
    reports = oracle.perturb(cells, rng)
    if reports.ndim == 1:
        return (reports == oracle.k - 1).astype(float)
    return ((reports[:, -1] == 1) & (reports[:, :-1].sum(axis=1) == 0)).astype(float)


def released_total_n(est):
    """Total N of the leaf CFs in the paper's DPBirch release ``tree_`` (exact: the number of records)."""
    return float(est.tree_.leaf_cfs()[0].sum())


def top_mode(est):
    """1 when the released mode of every attribute is its largest code (the value D' adds), else 0."""
    return float(np.all(np.asarray(est.cluster_centers_[0]) == np.asarray(est.domain_sizes_) - 1))


def top_report(est):
    """1 when LDPKModes' released estimate is largest at the cell of every largest code, else 0.

    With one user the estimate is an invertible image of that user's report: this is the event
    {report = the record of every largest code}.
    """
    return float(np.argmax(est.raw_estimate_) == est.raw_estimate_.size - 1)


def index_report(est, record, rng, size):
    """SamplingLDPKModes' user side: 1 for each of ``size`` reports of ``record`` whose cluster index is 1.

    The reports are drawn as the fitted estimator's users draw theirs in its first round (its
    ``initial_centers_``, ``bit_epsilon_`` and ``index_epsilon_``); centre 1 is nearest the
    largest codes.
    """
    from ..cluster.sampling_kmodes import user_reports

    X = np.repeat(np.asarray(record)[None, :], size, axis=0)
    reports = user_reports(X, est.initial_centers_, est.domain_sizes_, est.bit_epsilon_, est.index_epsilon_, rng)
    return (reports.cluster == 1).astype(float)


# ---------------------------------------------------------------------------
# The cases: every private estimator, a worst-case pair, one release, a statistic from its structure
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class BlackBoxCase:
    """One audited setting of :func:`blackbox_table`.

    Attributes
    ----------
    estimator, setting : str
        Names for the table.
    template : estimator
        The unfitted estimator.
    X, X_prime : ndarray
        The neighbouring pair D, D' (for a per-report case, the two records of one user, one row each).
    statistic : callable
        A scalar read from the public release only: of a fitted estimator, or for a per-report case
        ``release(fitted estimator, record, rng, size)`` giving one value per report.
    neighbours : str
        How X and X_prime differ.
    threshold : float or None
        The event {statistic >= threshold}, fixed in advance (None: see ``loss_ratios``).
    loss_ratios : tuple of float or None
        For a likelihood-ratio statistic of a Laplace release: each coordinate's shift over its
        scale, from which :func:`laplace_loss_threshold` fixes the threshold for the number of fits.
    n_fits : int, default=2000
        Fits (or reports) per side.
    per_report : bool, default=False
        True for a local protocol audited on one user's report: the template is fitted once (on
        both records, as two users) for its configuration and its claim, and the statistic draws
        that user's reports.

    Examples
    --------
    >>> case = blackbox_cases()[0]
    >>> case.estimator, case.setting, case.statistic.__name__, case.n_fits, case.loss_ratios
    ('DPKMeans', 'K=1, d=1, one release', 'sulq_release_loss', 2000, (0.5, 0.5))
    >>> case.X.shape, case.X_prime.shape, case.neighbours
    ((100, 1), (101, 1), 'add one record (corner 1)')
    """

    estimator: str
    setting: str
    template: object
    X: np.ndarray
    X_prime: np.ndarray
    statistic: object
    neighbours: str
    threshold: float = None
    loss_ratios: tuple = None
    n_fits: int = 2000
    per_report: bool = False


def private_estimators():
    """The names of the estimator classes exported by :mod:`dpclust_lib.cluster` that take ``epsilon``.

    Examples
    --------
    >>> "DPKMeans" in private_estimators(), "KMeans" in private_estimators()
    (True, False)
    """
    from .. import cluster

    names = []
    for name in cluster.__all__:
        obj = getattr(cluster, name)
        if inspect.isclass(obj) and hasattr(obj, "fit") and "epsilon" in inspect.signature(obj).parameters:
            names.append(name)
    return sorted(names)


N_RECORDS = 100
"""Records of D in the numeric cases, all at the corner 0 of [0, 1]^d; D' adds one at the corner 1."""

ADD = "add one record (corner 1)"
REPLACE = "replace one user's record (the farthest)"


def _corner_pair(n, d):
    X = np.zeros((n, d))
    return X, np.vstack([X, np.ones((1, d))])


def _numeric_cases(cluster):
    """(name, setting, estimator, pair, statistic, loss ratios) of the central numeric estimators, epsilon = 1.

    Each puts (almost) all of epsilon on one release: one cluster and one iteration for SuLQ (whose
    d = 1 release of a sum and a count has ratio 1/2 each), one grid cell, a tree that never
    splits with nearly all the budget on its leaf, and DPBirchPublicTree's budget on the leaves' N.
    """
    unit, line = (0.0, 1.0), _corner_pair(N_RECORDS, 1)
    tiny = 1e-3  # the share left to the other releases where a parameter must be positive
    split = np.array([1.0, tiny, tiny]) / (1 + 2 * tiny)
    return [
        ("DPKMeans", "K=1, d=1, one release", cluster.DPKMeans(1, max_iter=1, bounds=unit), line,
         sulq_loss(N_RECORDS), (0.5, 0.5)),
        ("IDPKMeans", "K=1, d=1, the initial release only", cluster.IDPKMeans(1, max_iter=1, bounds=unit), line,
         sulq_loss(N_RECORDS), (0.5, 0.5)),
        ("DPKMeansPP", "K=1, d=1, seeding_share=0.001, one Lloyd release",
         cluster.DPKMeansPP(1, max_iter=1, bounds=unit, n_public=N_RECORDS, seeding_share=tiny), line,
         sulq_loss(N_RECORDS), ((1 - tiny) / 2,) * 2),
        ("EUGKMeans", "one grid cell", cluster.EUGKMeans(1, grid_size=1, max_iter=1, bounds=unit), line,
         count_loss(N_RECORDS), (1.0,)),
        ("DPQTKMeans", "gamma=0.001, a tree that never splits",
         cluster.DPQTKMeans(1, gamma=tiny, max_height=1, threshold=1e9, max_iter=1, bounds=unit), line,
         count_loss(N_RECORDS), (1 - tiny,)),
        ("DPBirchPublicTree", "d=2, 20 skeleton points, budget on the leaves' N",
         cluster.DPBirchPublicTree(1, n_skeleton=20, threshold=0.2, branching_factor=4, budget_split=tuple(split),
                                   bounds=unit), _corner_pair(20, 2), corner_leaf_loss(np.zeros((20, 2))),
         (split[0], split[1] / 2, split[1] / 2, split[2])),
        ("LSHCoresetKMeans", "d=1, max_depth=0, count_share=0.999: the root's count",
         cluster.LSHCoresetKMeans(1, radius=0.5, center=0.5, max_depth=0, count_share=1 - tiny, max_iter=1, n_init=1),
         line, root_count_loss(N_RECORDS), (1 - tiny,)),
    ]  # fmt: skip


def blackbox_cases():
    """The cases of :func:`blackbox_table`: every private estimator, a worst-case pair, one release.

    Central estimators (add/remove-one, their ``neighbouring_``): D' adds a record at the corner of
    the public domain opposite D (of the largest codes, for DPKModes), at epsilon = 1 with the
    budget on one release; the statistic is the likelihood ratio of the released counts and sums,
    or the released mode, with its event fixed in advance. DPKModes releases only the argmax of
    noisy counts, which shows at most 0.74 of epsilon = 1 at 2,000 fits a side and 0.82 of
    epsilon = 2: it is audited at 2. The paper's DPBirch (epsilon = 0.5, its
    nominal 2 epsilon = 1) is audited on its released total N. Local protocols (any two records of
    one user): the record replaced by the farthest one, one user; LDPKModes on its output (with one
    user, an image of the report), SamplingLDPKModes on the user's report itself, its budget on the
    cluster index. These are the settings an auditor would pick to see a leak, not typical ones.

    Returns
    -------
    list of BlackBoxCase

    Examples
    --------
    >>> cases = blackbox_cases()
    >>> sorted(c.estimator for c in cases) == private_estimators()
    True
    >>> sorted({c.neighbours for c in cases})
    ['add one record (corner 1)', 'add one record (corner 1), the code 3', "replace one user's record (the farthest)"]
    """
    from .. import cluster

    cases = [
        BlackBoxCase(name, setting, est.set_params(epsilon=1.0), *pair, statistic, ADD, loss_ratios=ratios)
        for name, setting, est, pair, statistic, ratios in _numeric_cases(cluster)
    ]
    modes = np.array([[0], [1], [2]])
    cases.append(
        BlackBoxCase(
            "DPKModes",
            "K=1, one attribute of 4 values, one release, epsilon=2",
            cluster.DPKModes(1, epsilon=2.0, max_iter=1, domain_sizes=(4,)),
            modes,
            np.vstack([modes, [[3]]]),
            top_mode,
            ADD + ", the code 3",
            threshold=0.5,
        )
    )
    birch_pair = _corner_pair(20, 2)
    cases.append(
        BlackBoxCase(
            "DPBirch",
            "the paper's algorithm, epsilon=0.5 (nominal 2 epsilon = 1)",
            cluster.DPBirch(1, epsilon=0.5, threshold=0.2, branching_factor=4, bounds=(0.0, 1.0)),
            *birch_pair,
            released_total_n,
            ADD,
            threshold=20.5,
        )
    )
    return cases + _local_cases(cluster)


def _local_cases(cluster):
    one, other = np.array([[0]]), np.array([[1]])
    return [
        BlackBoxCase(
            "LDPKModes",
            "one user, one binary attribute",
            cluster.LDPKModes(1, epsilon=1.0, max_iter=1, domain_sizes=(2,)),
            one,
            other,
            top_report,
            REPLACE,
            threshold=0.5,
        ),
        BlackBoxCase(
            "SamplingLDPKModes",
            "one user's report, index_share=0.999",
            cluster.SamplingLDPKModes(
                2, epsilon=1.0, max_iter=1, index_share=0.999, init=np.array([[0], [1]]), domain_sizes=(2,)
            ),
            one,
            other,
            index_report,
            REPLACE,
            threshold=0.5,
            per_report=True,
        ),
        BlackBoxCase(
            "OneRoundLocalKMeans",
            "one user's report, d=1, one level (two cells)",
            cluster.OneRoundLocalKMeans(1, epsilon=1.0, bounds=(0.0, 1.0), n_levels=1, max_iter=1, n_init=1),
            np.array([[0.0]]),
            np.array([[1.0]]),
            top_cell_report,
            REPLACE,
            threshold=0.5,
            per_report=True,
        ),
    ]


def largest_centre(est):
    """The largest first coordinate among the released centres (or the largest code of the first attribute)."""
    return float(np.max(np.asarray(est.cluster_centers_, dtype=float)[:, 0]))


FAR = 1e6
"""Where the boundary cases put the record that the bounds or the schema do not hold: far outside."""


def boundary_cases():
    """Every private estimator at the boundaries where a refusal or an overflow would once have leaked.

    For each case of :func:`blackbox_cases` that fits the estimator on the pair (all but the per-report one):

    * ``outside``: D' adds (or, for a local one, has) a record far outside the public bounds or the schema
      (:data:`FAR`, or the code FAR), which the estimator clamps into the domain: the same statistic and event as
      the case's own, now against a record that a refusal would have named.
    * ``K = n``: K = 2 clusters, D one record at the corner 0 and D' one more at the corner 1, so that K equals
      the number of records on D' and exceeds it on D (a refusal of K > n told them apart); the statistic is the
      largest released centre, its event chosen on half of the fits.

    :func:`saturation_edge_case` is the third boundary, the exact sampler's saturation edge.

    Returns
    -------
    list of BlackBoxCase

    Examples
    --------
    >>> cases = boundary_cases()
    >>> sorted({c.setting.split(":")[0] for c in cases})
    ['K = n', 'outside']
    """
    cases = []
    for case in blackbox_cases():
        if case.per_report:
            continue
        far = np.array(case.X_prime, copy=True)
        far[-1] = FAR
        cases.append(dataclasses.replace(case, setting=f"outside: {case.setting}", X_prime=far))
        if case.neighbours == REPLACE:  # one user: K = n is the case itself
            continue
        d = case.X.shape[1]
        if case.X.dtype.kind in "iu":
            top = np.asarray(case.template.get_params()["domain_sizes"]) - 1
            pair = (
                np.zeros((1, d), dtype=case.X.dtype),
                np.vstack([np.zeros((1, d)), top[None, :]]).astype(case.X.dtype),
            )
        else:
            pair = _corner_pair(1, d)
        template = clone(case.template).set_params(n_clusters=2)
        statistic = top_mode if case.statistic is top_mode else largest_centre
        cases.append(BlackBoxCase(case.estimator, f"K = n: {case.setting}", template, *pair, statistic, ADD))
    return cases


def saturation_edge_case(n_fits=40):
    """EUGKMeans at the exact sampler's saturation edge: 2^22 - 1 against 2^22 identical records in one cell.

    At epsilon = 1 and ``n_public = 10^7`` the grid has 1,000 x 1,000 cells, whose release together puts the grid
    step at 2^-30 and its largest index, 2^52 steps, at 2^22 = 4,194,304 records: D' reaches it, D stays one
    below. A release that refused a count at the edge told them apart with certainty (a lower bound of about 2.3
    against the claim of 1 at 40 fits a side); the saturating release is audited on that cell's count, with the
    event {count >= 2^22 - 1/2} fixed in advance.

    Examples
    --------
    >>> case = saturation_edge_case()
    >>> case.X.shape[0], case.X_prime.shape[0], case.threshold
    (4194303, 4194304, 4194303.5)
    """
    from .. import cluster

    edge = 2**22
    X_prime = np.full((edge, 2), 0.0002)  # every record in the first cell of the 1000 x 1000 grid
    return BlackBoxCase(
        "EUGKMeans",
        "saturation edge: 1000 x 1000 grid at epsilon = 1, 2^22 records in one cell",
        cluster.EUGKMeans(1, epsilon=1.0, bounds=(0.0, 1.0), n_public=10**7, max_iter=1),
        X_prime[:-1],
        X_prime,
        first_bucket_count,
        ADD.replace("corner 1", "in the same cell"),
        threshold=edge - 0.5,
        n_fits=n_fits,
    )


def first_bucket_count(est):
    """The released count of the first cell of the grid."""
    return float(est.bucket_counts_[0])


def audit_case(case, *, n_fits=None, confidence=0.95, random_state=0):
    """The black-box audit of one case (its event fixed in advance when it has one).

    Parameters
    ----------
    case : BlackBoxCase
    n_fits : int or None, default None
        Fits (or reports) per side; None uses the case's own.
    confidence : float in (0, 1), default 0.95
    random_state : int >= 0, default 0

    Returns
    -------
    BlackBoxResult

    Examples
    --------
    >>> r = audit_case(blackbox_cases()[-1], n_fits=500)  # SamplingLDPKModes: 500 reports a side
    >>> r.fixed_event, r.n_d, r.epsilon_claimed, r.verdict
    (True, 500, 1.0, 'consistent')
    """
    n = case.n_fits if n_fits is None else _check_n_fits(n_fits, minimum=1)
    threshold = case.threshold
    if case.loss_ratios is not None:
        threshold = laplace_loss_threshold(case.loss_ratios, n, confidence)
    if not case.per_report:
        return blackbox_audit(
            case.template,
            case.X,
            case.X_prime,
            case.statistic,
            n_fits=n,
            confidence=confidence,
            random_state=random_state,
            threshold=threshold,
        )
    est = clone(case.template).set_params(random_state=random_state).fit(np.vstack([case.X, case.X_prime]))

    def reports(record, rng, size):
        return case.statistic(est, record, rng, size)

    result = audit_release(
        reports,
        case.X[0],
        case.X_prime[0],
        epsilon_claimed=est.epsilon_guaranteed_,
        n_fits=n,
        confidence=confidence,
        random_state=random_state,
        statistic_name=case.statistic.__name__,
        threshold=threshold,
    )
    return dataclasses.replace(result, epsilon_spent=est.epsilon_spent_)


def blackbox_table(cases=None, *, n_fits=None, confidence=0.95, random_state=0, n_jobs=1):
    """The black-box overview: one row per case, the lower bound against the claim and the ceiling.

    Parameters
    ----------
    cases : list of BlackBoxCase or None, default None (:func:`blackbox_cases`)
    n_fits : int or None, default None
        Fits per side for every case; None uses each case's own ``n_fits``.
    confidence : float in (0, 1), default 0.95
        Per case (the table's family-wise level is lower: about 1 - (1 - confidence) x cases).
    random_state : int >= 0, default 0
    n_jobs : int, default 1
        Cases audited side by side (joblib's n_jobs; -1: every core). Each case draws from its own
        generators, so the table does not depend on it (but ``cpu_seconds``).

    Returns
    -------
    DataFrame
        One row per case: estimator, setting, neighbours, statistic, n_fits; claim (the
        ``epsilon_guaranteed_`` of the fits, or for an estimator that guarantees nothing the
        ``epsilon_spent_`` its accounting reports: the paper's DPBirch), epsilon_lower_bound,
        perfect_test_expected (:func:`perfect_test_bound` of the claim at the fits evaluated: what a perfect test
        shows at its expected hit counts, which a run's bound can pass by chance),
        ratio (bound / claim), verdict ("violates" when the bound exceeds the claim),
        epsilon_guaranteed, epsilon_spent, refused (fits that refused their data, both sides)
        and cpu_seconds.

    Examples
    --------
    Two cases at 50 fits a side, where a perfect test shows 0.35 against a claim of 1 (the table
    runs 2,000, where it shows 0.90):

    >>> table = blackbox_table(blackbox_cases()[3:5], n_fits=50)
    >>> table["estimator"].tolist(), table["perfect_test_expected"].round(2).tolist(), table["verdict"].tolist()
    (['EUGKMeans', 'DPQTKMeans'], [0.35, 0.35], ['consistent', 'consistent'])
    """
    cases = blackbox_cases() if cases is None else list(cases)
    results = joblib.Parallel(n_jobs=n_jobs)(
        joblib.delayed(audit_case)(case, n_fits=n_fits, confidence=confidence, random_state=random_state)
        for case in cases
    )
    rows = []
    for case, r in zip(cases, results):
        claim = r.epsilon_claimed if math.isfinite(r.epsilon_claimed) else r.epsilon_spent
        rows.append(
            dict(
                estimator=case.estimator,
                setting=case.setting,
                neighbours=case.neighbours,
                statistic=r.statistic,
                n_fits=r.n_fits,
                claim=claim,
                epsilon_lower_bound=r.epsilon_lower_bound,
                perfect_test_expected=perfect_test_bound(claim, r.n_d_prime, confidence),
                ratio=r.epsilon_lower_bound / claim,
                verdict="violates" if r.epsilon_lower_bound > claim * (1 + _REL_TOL) else "consistent",
                epsilon_guaranteed=r.epsilon_claimed,
                epsilon_spent=r.epsilon_spent,
                refused=r.refused_d + r.refused_d_prime,
                cpu_seconds=r.seconds,
            )
        )
    return pd.DataFrame(rows)

"""The black-box (output-only) audit of the private estimators: a statistical lower bound on epsilon.

The coupling audit (:mod:`.coupling`) looks inside a run: it sees every Laplace release and couples
its noise. This audit sees only what a fitted estimator publishes (``cluster_centers_``, noisy
counts, the released tree), exactly as an outside analyst would, so it keeps working whatever the
estimator does internally (how it draws its noise, which sampler, which code path).

Method (the threshold-event test of Ding et al. 2018 with the Clopper-Pearson bounds of Jagielski,
Ullman and Oprea 2020):

1. Fit the estimator ``n_fits`` times on a data set D and ``n_fits`` times on a neighbour D'
   (one record added, removed or replaced), each fit with its own recorded seed, and read a
   scalar *statistic* of the public release of each fit.
2. Split each side's runs in half. On the *selection* half pick the event E = {statistic >= t}
   or {statistic <= t}, t among quantiles of the pooled values, and the side (D or D') under
   which E is more likely, that maximise the lower bound of step 3 computed on that half.
3. On the *evaluation* half count E's hits under both sides. With p the probability of E on the
   favoured side and q on the other, epsilon-DP implies p <= e^epsilon q, so with probability at
   least ``confidence`` the true epsilon is at least ln(p_lower / q_upper), p_lower and q_upper
   being one-sided Clopper-Pearson bounds at level (1 - confidence) / 2 each (Bonferroni). The
   event and the side were chosen on other runs, so the choice needs no further correction.

The bound is clipped at 0. It is a *lower* bound: passing says only that this statistic, at this
number of fits, could not show more loss than claimed. The most a run of n evaluation fits per side
can show is about ln(n / ln(2 / alpha)) (a deterministic statistic: all hits against none).

References
----------
Z. Ding, Y. Wang, G. Wang, D. Zhang, D. Kifer. Detecting violations of differential privacy.
ACM CCS 2018.
M. Jagielski, J. Ullman, A. Oprea. Auditing differentially private machine learning: how private is
private SGD? NeurIPS 2020.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import time
import warnings

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.base import clone

__all__ = [
    "BlackBoxResult",
    "BlackBoxCase",
    "clopper_pearson",
    "threshold_audit",
    "blackbox_audit",
    "audit_release",
    "blackbox_cases",
    "blackbox_table",
]

_REL_TOL = 1e-9  # floating-point slack when a bound is compared with a claimed epsilon
SIDES = ("D", "D'")


@dataclasses.dataclass(frozen=True)
class BlackBoxResult:
    """The outcome of one black-box audit.

    Attributes
    ----------
    epsilon_lower_bound : float
        ln(p_lower / q_upper) on the evaluation half, clipped at 0; a lower bound on the true epsilon
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
        The largest ``epsilon_spent_`` over the fits (the budget arithmetic; NaN when none).
    n_fits : int
        Fits per side (half of them select the event, half evaluate it).
    seconds : float
        Wall time of the audit.
    seeds_d, seeds_d_prime : tuple of int
        The ``random_state`` of each fit on D and on D' (empty for :func:`threshold_audit`).
    warnings : tuple of str
        Names of the warning categories the fits raised.

    Examples
    --------
    A statistic that tells D from D' every time, 25 evaluation runs a side: the bound is
    ln(0.863 / 0.137), about 1.84, whatever the claim, and the verdict compares it with the claim:

    >>> import dataclasses
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

    @property
    def verdict(self):
        """``"consistent"`` when the bound does not exceed the claim (or there is none), else ``"violates"``."""
        claim = self.epsilon_claimed
        if math.isnan(claim) or self.epsilon_lower_bound <= claim * (1 + _REL_TOL):
            return "consistent"
        return "violates"


# ---------------------------------------------------------------------------
# The statistics: Clopper-Pearson bounds and the threshold event
# ---------------------------------------------------------------------------


def clopper_pearson(hits, n, alpha, upper):
    """One-sided Clopper-Pearson bound on a binomial probability, vectorised over ``hits``.

    Implemented here rather than imported: :mod:`.local` keeps its helper private.

    Parameters
    ----------
    hits : int or array of int
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
    arr = np.asarray(values, dtype=float).ravel()
    if not np.all(np.isfinite(arr)):
        i = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise ValueError(f"statistic {statistic!r} returned a non-finite value (run {i} on {side})")
    return arr


def _check_confidence(confidence):
    ok = isinstance(confidence, numbers.Real) and not isinstance(confidence, bool)
    if not ok or not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence must lie in the open interval (0, 1), got confidence={confidence!r}")
    return float(confidence)


def _check_n_fits(n_fits, name="n_fits"):
    if isinstance(n_fits, bool) or not isinstance(n_fits, numbers.Integral) or int(n_fits) < 4:
        raise ValueError(
            f"{name} must be an integer >= 4 (each side needs two selection and two evaluation runs), "
            f"got {name}={n_fits!r}"
        )
    return int(n_fits)


def threshold_audit(values_d, values_d_prime, *, confidence=0.95, statistic="statistic", n_thresholds=64):
    """The lower bound on epsilon from statistic values already drawn on D and on D'.

    Parameters
    ----------
    values_d, values_d_prime : array_like of float
        One value of the statistic per run on D and on D' (at least 4 each). The first half of each
        (rounded down) selects the event, the rest evaluates it.
    confidence : float in (0, 1), default 0.95
        The probability that the bound holds (the error is split evenly between the two sides).
    statistic : str, default "statistic"
        Its name, for the result and for error messages.
    n_thresholds : int >= 2, default 64
        Quantiles of the pooled selection values tried as thresholds (all distinct values when fewer).

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
    """
    alpha = 1.0 - _check_confidence(confidence)
    a = _check_values(values_d, "D", statistic)
    b = _check_values(values_d_prime, "D'", statistic)
    _check_n_fits(min(a.size, b.size), "the number of runs on each side")
    if isinstance(n_thresholds, bool) or not isinstance(n_thresholds, numbers.Integral) or n_thresholds < 2:
        raise ValueError(f"n_thresholds must be an integer >= 2, got n_thresholds={n_thresholds!r}")
    ha, hb = a.size // 2, b.size // 2
    t, direction, favoured = _select_event(a[:ha], b[:hb], alpha, int(n_thresholds))
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


def _run_side(estimator, X, seeds, statistic, name, side):
    """Fit a clone per seed on X; return the statistic values and the largest epsilon_guaranteed_ and _spent_."""
    values, claims = np.empty(len(seeds)), []
    for i, seed in enumerate(seeds):
        est = clone(estimator).set_params(random_state=seed)
        est.fit(X)
        value = statistic(est)
        if not np.ndim(value) == 0:
            raise ValueError(f"statistic {name!r} must return a scalar, got an array of shape {np.shape(value)}")
        if not np.isfinite(float(value)):
            raise ValueError(f"statistic {name!r} returned a non-finite value (run {i} on {side}, seed {seed})")
        values[i] = float(value)
        claims.append([getattr(est, a, math.nan) for a in ("epsilon_guaranteed_", "epsilon_spent_")])
    return values, _largest(claims)


def _largest(rows):
    """Column-wise largest of the non-NaN entries (NaN where a column has none)."""
    arr = np.asarray(rows, dtype=float).reshape(-1, 2)
    return tuple(float(np.max(c[~np.isnan(c)])) if np.any(~np.isnan(c)) else math.nan for c in arr.T)


def blackbox_audit(
    estimator, X, X_prime, statistic, *, n_fits=200, confidence=0.95, random_state=0, statistic_name=None
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
    n_fits : int >= 4, default 200
        Fits on each of D and D' (half select the event, half evaluate it).
    confidence : float in (0, 1), default 0.95
    random_state : int >= 0, default 0
        Seeds the fits' seeds (recorded in the result); every fit gets a distinct one.
    statistic_name : str or None, default None
        Defaults to ``statistic.__name__``.

    Returns
    -------
    BlackBoxResult
        ``epsilon_claimed`` is the largest ``epsilon_guaranteed_`` over the fits (a run that stops
        early may claim less; the mechanism's claim is the largest).

    Examples
    --------
    >>> from dpclust_lib import EUGKMeans
    >>> X = np.full((6, 1), 0.9)
    >>> est = EUGKMeans(1, epsilon=1.0, bounds=(0.0, 1.0), grid_size=2, max_iter=1)
    >>> def corner_count(e):
    ...     return e.bucket_counts_[0]
    >>> r = blackbox_audit(est, X, np.vstack([X, [[0.0]]]), corner_count, n_fits=20)
    >>> r.verdict, r.epsilon_claimed, r.n_d
    ('consistent', 1.0, 10)
    """
    n_fits = _check_n_fits(n_fits)
    confidence = _check_confidence(confidence)
    name = _statistic_name(statistic, statistic_name)
    seeds_d, seeds_p = _seeds(random_state, n_fits)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # recorded, not raised: a fit's warning is part of its output
        a, claims_a = _run_side(estimator, X, seeds_d, statistic, name, "D")
        b, claims_b = _run_side(estimator, X_prime, seeds_p, statistic, name, "D'")
    result = threshold_audit(a, b, confidence=confidence, statistic=name)
    claimed, spent = _largest([claims_a, claims_b])
    return dataclasses.replace(
        result,
        epsilon_claimed=claimed,
        epsilon_spent=spent,
        seconds=time.perf_counter() - start,
        seeds_d=tuple(seeds_d),
        seeds_d_prime=tuple(seeds_p),
        warnings=tuple(sorted({w.category.__name__ for w in caught})),
    )


def audit_release(
    release, X, X_prime, *, epsilon_claimed, n_fits=10_000, confidence=0.95, random_state=0, statistic_name="value"
):
    """:func:`blackbox_audit` for a vectorised release: ``release(data, rng, size)`` returns ``size`` values.

    For mechanisms cheap enough to draw many times at once (a test's plain Laplace mechanism); the
    statistic is the released value itself.

    Parameters
    ----------
    release : callable(data, numpy Generator, int) -> array of float
    X, X_prime : the neighbouring inputs D and D', passed to ``release`` as given
    epsilon_claimed : float, what the mechanism claims
    n_fits : int >= 4, default 10000, draws on each side
    confidence : float in (0, 1), default 0.95
    random_state : int >= 0, default 0; D's draws use the first of two derived seeds, D''s the second
    statistic_name : str, default "value"

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
    n_fits = _check_n_fits(n_fits)
    confidence = _check_confidence(confidence)
    seed_d, seed_p = _seeds(random_state, 1)
    start = time.perf_counter()
    a = np.asarray(release(X, np.random.default_rng(seed_d[0]), n_fits), dtype=float).ravel()
    b = np.asarray(release(X_prime, np.random.default_rng(seed_p[0]), n_fits), dtype=float).ravel()
    if a.size != n_fits or b.size != n_fits:
        raise ValueError(f"release must return n_fits={n_fits} values, got {a.size} on D and {b.size} on D'")
    result = threshold_audit(a, b, confidence=confidence, statistic=str(statistic_name))
    return dataclasses.replace(
        result,
        epsilon_claimed=float(epsilon_claimed),
        seconds=time.perf_counter() - start,
        seeds_d=(seed_d[0],),
        seeds_d_prime=(seed_p[0],),
    )


# ---------------------------------------------------------------------------
# The cases: every private estimator on small data, a worst-case pair, a statistic
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
        The neighbouring pair D, D'.
    statistic : callable(fitted estimator) -> float
        A scalar read from the public release only.
    neighbours : str
        How X and X_prime differ.
    n_fits : int, default=2000
        The default number of fits per side (smaller for slow estimators).

    Examples
    --------
    >>> case = blackbox_cases()[0]
    >>> case.estimator, case.setting, case.statistic.__name__, case.n_fits
    ('DPKMeans', 'K=1, one release', 'far_centre_l1', 2000)
    >>> case.X.shape, case.X_prime.shape, case.neighbours
    ((12, 2), (13, 2), 'add one record (corner 1)')
    """

    estimator: str
    setting: str
    template: object
    X: np.ndarray
    X_prime: np.ndarray
    statistic: object
    neighbours: str
    n_fits: int = 2000


# Statistics of the public release. Each reads documented fitted attributes only: released centres,
# released noisy counts and noise scales, the released (public) skeleton or tree; never
# exact_diagnostics and never a "_"-name. The cases put D near the corner 0 of [0, 1]^d and the
# differing record at the corner 1, so each statistic looks at what sits nearest the corner 1.


def _nearest_to_ones(points):
    return int(np.argmin(np.abs(np.asarray(points, dtype=float) - 1.0).sum(axis=1)))


def far_centre_l1(est):
    """L1 norm of the released centre nearest the corner 1 (a record added there pulls it up)."""
    return float(np.asarray(est.cluster_centers_, dtype=float).sum(axis=1).max())


def corner_bucket_count(est):
    """Released noisy count of the bucket (grid cell or quadtree leaf) whose centre is nearest the corner 1."""
    return float(est.bucket_counts_[_nearest_to_ones(est.bucket_centers_)])


def corner_leaf_loss(est):
    """Privacy loss of the record at the corner 1, read off the noisy CF of the skeleton leaf holding that corner.

    Under D the leaf is empty (D lies near the corner 0); under D' it holds the record, whose CF is
    c = (1, 1, ..., 1, d) in (N, LS, SS). For Laplace noise of scale b on a released y the log
    likelihood ratio is (|y| - |y - c|) / b; summed over the leaf's released coordinates, with the
    scales the estimator publishes (``noise_scales_``), it is the statistic the Neyman-Pearson lemma
    picks. It is only a statistic: whatever noise the estimator really draws, the bound stays valid.
    """
    d = est.n_features_in_
    leaf = int(est.skeleton_tree_.route(np.ones((1, d)))[0])
    b_n, b_ls, b_ss = est.noise_scales_
    released = np.concatenate([[est.leaf_n_[leaf]], est.leaf_ls_[leaf], [est.leaf_ss_[leaf]]])
    shift = np.concatenate([[1.0], np.ones(d), [float(d)]])
    scale = np.concatenate([[b_n], np.full(d, b_ls), [b_ss]])
    return float(np.sum((np.abs(released) - np.abs(released - shift)) / scale))


def released_total_n(est):
    """Total N of the leaf CFs in the paper's DPBirch release ``tree_`` (exact: the number of records)."""
    return float(est.tree_.leaf_cfs()[0].sum())


def top_code_matches(est):
    """Entries of the released modes equal to the largest code of their attribute (the differing record's value)."""
    top = np.asarray(est.domain_sizes_) - 1
    return float(np.sum(np.asarray(est.cluster_centers_) == top[None, :]))


def top_cell_estimate(est):
    """LDPKModes' released estimate of how many users hold the record of every largest code."""
    return float(est.raw_estimate_[tuple(np.asarray(est.domain_sizes_) - 1)])


def _numeric_pair(n=12, seed=7):
    """D: n records in [0, 0.2]^2 (near the corner 0); D' adds a record at the opposite corner 1."""
    X = 0.2 * np.random.default_rng(seed).random((n, 2))
    return X, np.vstack([X, np.ones((1, 2))])


def _categorical_pair(sizes, n, seed=7, replace=False):
    """D: n records of codes 0 or 1; D' adds the record of the largest codes (or puts it in place of the last)."""
    X = np.random.default_rng(seed).integers(0, 2, size=(n, len(sizes))).astype(np.int64)
    top = np.array([k - 1 for k in sizes], dtype=np.int64)[None, :]
    if not replace:
        return X, np.vstack([X, top])
    Xp = X.copy()
    Xp[-1] = top[0]
    return X, Xp


SIZES = (3, 4, 3)
"""Domain sizes of the categorical cases (the differing record has the largest codes, (2, 3, 2))."""


def blackbox_cases():
    """The cases of :func:`blackbox_table`: every private estimator, small data, a worst-case pair.

    Central estimators: D has 12 records in [0, 0.2]^2 (2 categorical records of codes 0 or 1 over
    :data:`SIZES`); D' adds one record at the opposite corner 1 (of the largest codes): add/remove-one,
    their ``neighbouring_``. Local estimators: D' replaces one user's record by the one at the largest
    Hamming distance (their guarantee is for any two records of one user), with as few other users
    as the estimator accepts, since their reports only add noise. One cluster and one release where
    the estimator allows it, so that the record's effect is least diluted: these are the settings an
    auditor would pick to see a leak, not typical ones.

    Returns
    -------
    list of BlackBoxCase

    Examples
    --------
    >>> cases = blackbox_cases()
    >>> len(cases), [c.estimator for c in cases[-2:]]
    (10, ['LDPKModes', 'SamplingLDPKModes'])
    >>> sorted({c.neighbours for c in cases})
    ['add one record (corner 1)', "replace one user's record (Hamming distance 3)"]
    """
    from .. import cluster

    X, Xp = _numeric_pair()
    C, Cp = _categorical_pair(SIZES, 2)
    unit, add = (0.0, 1.0), "add one record (corner 1)"
    birch = dict(threshold=0.2, branching_factor=4, bounds=unit)
    central = [  # (estimator, setting, parameters, categorical?, statistic, n_fits)
        ("DPKMeans", "K=1, one release", dict(max_iter=1, bounds=unit), False, far_centre_l1, 2000),
        ("IDPKMeans", "K=1, one release (DPKMeans' stream)", dict(max_iter=1, bounds=unit), False, far_centre_l1, 2000),
        (
            "DPKMeansPP",
            "K=1, one Lloyd release",
            dict(max_iter=1, bounds=unit, n_public=12),
            False,
            far_centre_l1,
            2000,
        ),
        ("EUGKMeans", "4x4 grid", dict(max_iter=5, bounds=unit, grid_size=4), False, corner_bucket_count, 2000),
        (
            "DPQTKMeans",
            "max_height=2, T=3",
            dict(max_height=2, threshold=3.0, bounds=unit, max_iter=5),
            False,
            corner_bucket_count,
            2000,
        ),
        ("DPKModes", "K=1, one release", dict(max_iter=1, domain_sizes=SIZES), True, top_code_matches, 2000),
        ("DPBirchPublicTree", "50 skeleton points", dict(n_skeleton=50, **birch), False, corner_leaf_loss, 2000),
        ("DPBirch", "the paper's algorithm, epsilon=0.5", dict(epsilon=0.5, **birch), False, released_total_n, 500),
    ]
    cases = []
    for name, setting, params, categorical, statistic, n_fits in central:
        template = getattr(cluster, name)(1, **{"epsilon": 1.0, **params})
        data = (C, Cp) if categorical else (X, Xp)
        cases.append(BlackBoxCase(name, setting, template, *data, statistic, add, n_fits))
    return cases + _local_cases(cluster)


def _local_cases(cluster):
    one, one_p = _categorical_pair(SIZES, 1, replace=True)
    two, two_p = _categorical_pair(SIZES, 2, replace=True)
    public = np.array([[0, 0, 0], [1, 1, 1]])  # given public initial centres: no random start to hide behind
    replace = "replace one user's record (Hamming distance 3)"
    return [
        BlackBoxCase(
            "LDPKModes",
            "one user, epsilon=0.5 per attribute",
            cluster.LDPKModes(1, epsilon=0.5, max_iter=1, domain_sizes=SIZES),
            one,
            one_p,
            top_cell_estimate,
            replace,
        ),
        BlackBoxCase(
            "SamplingLDPKModes",
            "two users, K=2, one round",
            cluster.SamplingLDPKModes(2, epsilon=1.0, max_iter=1, init=public, domain_sizes=SIZES),
            two,
            two_p,
            top_code_matches,
            replace,
        ),
    ]


def blackbox_table(cases=None, *, n_fits=None, confidence=0.95, random_state=0):
    """The black-box overview: one row per case, the lower bound against the claim.

    Parameters
    ----------
    cases : list of BlackBoxCase or None, default None (:func:`blackbox_cases`)
    n_fits : int >= 4 or None, default None
        Fits per side for every case; None uses each case's own ``n_fits``.
    confidence : float in (0, 1), default 0.95
        Per case (the table's family-wise level is lower: about 1 - (1 - confidence) x cases).
    random_state : int >= 0, default 0

    Returns
    -------
    DataFrame
        One row per case, with columns estimator, setting, neighbours, statistic, epsilon_spent
        (the largest ``epsilon_spent_`` of a fit), epsilon_claimed (``epsilon_guaranteed_``),
        epsilon_lower_bound, n_fits, seconds, verdict ("consistent" when the bound does not
        exceed the claim, else "violates") and above_spent (the bound exceeds
        ``epsilon_spent_``: the budget arithmetic itself is wrong).

    Examples
    --------
    The table's shape on two cases at 20 fits a side (the ten cases at their own ``n_fits``
    take most of a minute). With 10 evaluation fits a side no bound can exceed
    ln(0.6915 / 0.3085) = 0.81 (all hits against none), so a run this small cannot catch a
    violation of these claims of 1:

    >>> table = blackbox_table(blackbox_cases()[:2], n_fits=20)
    >>> list(table.columns)  # doctest: +NORMALIZE_WHITESPACE
    ['estimator', 'setting', 'neighbours', 'statistic', 'epsilon_spent', 'epsilon_claimed',
     'epsilon_lower_bound', 'n_fits', 'seconds', 'verdict', 'above_spent']
    >>> table["estimator"].tolist(), table["n_fits"].tolist(), table["verdict"].tolist()
    (['DPKMeans', 'IDPKMeans'], [20, 20], ['consistent', 'consistent'])
    """
    rows = []
    for case in blackbox_cases() if cases is None else cases:
        fits = case.n_fits if n_fits is None else n_fits
        r = blackbox_audit(
            case.template,
            case.X,
            case.X_prime,
            case.statistic,
            n_fits=fits,
            confidence=confidence,
            random_state=random_state,
        )
        rows.append(
            dict(
                estimator=case.estimator,
                setting=case.setting,
                neighbours=case.neighbours,
                statistic=r.statistic,
                epsilon_spent=r.epsilon_spent,
                epsilon_claimed=r.epsilon_claimed,
                epsilon_lower_bound=r.epsilon_lower_bound,
                n_fits=r.n_fits,
                seconds=r.seconds,
                verdict=r.verdict,
                above_spent=bool(r.epsilon_lower_bound > r.epsilon_spent * (1 + _REL_TOL)),
            )
        )
    return pd.DataFrame(rows)

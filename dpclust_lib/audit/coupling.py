"""The coupling audit of the central (Laplace) estimators.

An estimator M is epsilon-DP under add/remove-one neighbours when, for every pair D, D' of
neighbouring data sets, the randomness of a run on D can be mapped onto that of a run on D' so
that both runs give the same output and the densities of the two runs' randomness differ by a
factor of at most e^epsilon. For an estimator whose only data-dependent randomness is Laplace
noise, the map is a shift: run M on D and record every Laplace release (exact value v_D, scale b,
noisy release y); run M on D' with the same seed and replace every release by D's (the noise is
still drawn, so the random stream is consumed as on D). Every noisy release is then equal, so
everything computed from the releases and from public inputs is equal too, and the privacy loss
this coupling used is the sum over releases of ||v_D - v_D'||_1 / b (the Laplace density ratio at
any point is at most e^{|shift| / b}). :func:`coupled_loss` does this through
:func:`dpclust_lib.mechanisms.observe_laplace`.

Three things can then go wrong, and each is reported:

* the public outputs differ: something reached them without noise (``loss = inf``, a leak; the
  differing attributes are listed);
* the runs make a different number of releases, or releases of a different shape or scale: the
  structure of the release depends on the data (``loss = inf``, a leak);
* the loss exceeds what the estimator claims (``epsilon_spent_``): the accounting is wrong
  (``"over budget"``).

What the audit can see, and what it cannot
-------------------------------------------
* One seed is one path. Outputs that are equal on this path may differ on another (e.g. a leaky
  fallback taken only when a noisy count is small); run several seeds. A finite loss bounds the
  loss of this coupling on this path, not the worst case.
* Only Laplace noise drawn through :func:`~dpclust_lib.mechanisms.laplace_mechanism` is coupled.
  Every other random draw (uniform initial centres, k-means++ seeding on released counts, a
  random split) is replayed only in the sense that the same seed gives the same stream -- and
  that holds only while the estimator consumes the stream identically on D and D'. When it does
  not, later draws differ, and an output difference may come from the uncoupled draw rather
  than from raw data; the audit still reports a leak (it fails closed) and says at which release
  the stream first diverged (``stream_diverged_at``), so a reader can tell the two apart.
  Noise drawn outside ``laplace_mechanism`` (``rng.laplace`` directly) is invisible: it is
  neither shifted nor counted. An estimator that claims a budget but makes no observed release
  gets the verdict ``"unobserved"``, since a zero loss would then mean nothing.
* Per-record randomness couples only for some neighbours. IDP k-means' random split draws one
  part per record with ``rng.integers(0, K, size=n)``; numpy draws such bounded integers two to a
  64-bit word, so n and n + 1 draws leave the stream at the same 64-bit word when n is odd (only
  the buffered half word differs, which the doubles drawn next do not read), and the first n
  parts are the same. With the added (or removed) record last and the smaller data set of
  odd size, the two runs couple naturally; otherwise the stream diverges and the audit says so.
  :func:`neighbours` always adds, removes or replaces the *last* record for this reason (it is
  also the natural choice for an estimator that reads records in order, like DPBirch).
* The paper's DPBirch draws its per-insertion noise in blocks of zero-valued releases of
  ``laplace_mechanism`` (noise only), which the audit observes with zero shift. With the record
  added last, the first n insertions are the same on D and D' (same seed, same draws); the last one
  changes N along one path of the tree by exactly 1, with no noise on N at all, so no coupling of
  the noise could make the outputs equal: the "leak" verdict is right.
* Exact-data diagnostics that the estimator documents as not private (``labels_``, the true part
  sizes, the record-to-leaf map, ...) are not compared: see :data:`DIAGNOSTICS`.
* The audit trusts ``laplace_mechanism`` to draw Laplace noise of the scale it reports, and
  floating-point effects of the sampler (Mironov 2012) are out of its sight.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import math
import warnings

import numpy as np
import pandas as pd

from .. import mechanisms
from ..cluster import DPBirch, DPBirchPublicTree, DPKMeans, DPKMeansPP, DPKModes, DPQTKMeans, EUGKMeans, IDPKMeans

__all__ = [
    "DIAGNOSTICS",
    "CouplingResult",
    "coupled_loss",
    "public_attributes",
    "public_differences",
    "neighbours",
    "domain_points",
    "audit_neighbours",
    "audit_cases",
    "audit_table",
]

RELATIONS = ("add", "remove", "replace")

DIAGNOSTICS = (
    "labels_",
    "part_sizes_",
    "nearest_subcluster_",
    "tree_.point_node",
)
"""Fitted attributes (dotted paths) that hold exact-data diagnostics, documented as not private.

They are left out of the comparison of public outputs. After fit, a private estimator should not
hold them at all (they belong to ``exact_diagnostics(X)``); listing them here keeps the audit
usable on estimators that still do.
"""

_REL_TOL = 1e-9  # floating-point slack when a loss is compared with a claimed epsilon


# ---------------------------------------------------------------------------
# One coupled pair of runs
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class CouplingResult:
    """The outcome of :func:`coupled_loss` for one pair (D, D') and one seed.

    Attributes
    ----------
    loss : float
        Sum over the coupled Laplace releases of ||v_D - v_D'||_1 / scale; ``inf`` on a leak.
    epsilon_spent : float
        The estimator's ``epsilon_spent_`` after the run on D (NaN if it has none).
    epsilon_guaranteed : float
        Its ``epsilon_guaranteed_`` (NaN if it has none).
    n_releases : int
        Laplace releases observed on D.
    differences : tuple of str
        Why the loss is infinite: public attributes that differ, or a structural mismatch.
    stream_diverged_at : int or None
        The first release at which the random stream's state differed between the runs
        (``n_releases`` = after the last one), None if it never did or could not be watched.
    shifts : tuple of float
        The loss of each release, in order.
    warnings : tuple of str
        Names of the warning categories the two fits raised (PrivacyLeakWarning among them).
        The audit records the fits' warnings instead of letting them through, so a
        RuntimeWarning shows here, not as an error.

    Examples
    --------
    The verdicts, from results written by hand (:func:`coupled_loss` makes them from two runs):

    >>> import math
    >>> CouplingResult(loss=0.8, epsilon_spent=1.0, epsilon_guaranteed=1.0, n_releases=2).verdict()
    'ok'
    >>> over = CouplingResult(loss=1.5, epsilon_spent=1.0, epsilon_guaranteed=1.0, n_releases=2)
    >>> over.verdict(), over.verdict(bound=2.0)  # replace-one neighbours may lose twice the budget
    ('over budget', 'ok')
    >>> leak = CouplingResult(math.inf, 1.0, 1.0, n_releases=2, differences=("cluster_centers_",))
    >>> leak.verdict(), leak.explain()
    ('leak', 'cluster_centers_')
    >>> CouplingResult(loss=0.0, epsilon_spent=1.0, epsilon_guaranteed=1.0, n_releases=0).verdict()
    'unobserved'
    """

    loss: float
    epsilon_spent: float
    epsilon_guaranteed: float
    n_releases: int
    differences: tuple = ()
    stream_diverged_at: int | None = None
    shifts: tuple = ()
    warnings: tuple = ()

    def explain(self):
        """The reasons for a leak, in words, with what the audit could not couple ("" when none)."""
        if not self.differences:
            return ""
        text = "; ".join(self.differences)
        if self.n_releases == 0 and self.epsilon_spent > 0:
            text += (
                " (no Laplace release was observed: noise drawn outside laplace_mechanism is not coupled, "
                "so part of this difference may be that noise)"
            )
        elif self.stream_diverged_at is not None and not self.differences[0].startswith(("release ", "D' makes")):
            text += f" (the random stream diverged at release {self.stream_diverged_at})"
        return text

    def verdict(self, bound=None):
        """``"leak"``, ``"unobserved"``, ``"over budget"`` or ``"ok"`` against ``bound``.

        ``bound`` defaults to ``epsilon_spent`` (add/remove-one neighbours); pass
        ``2 * epsilon_spent`` for replace-one neighbours.
        """
        bound = self.epsilon_spent if bound is None else bound
        if math.isinf(self.loss):
            return "leak"
        if self.n_releases == 0 and self.epsilon_spent > 0:
            return "unobserved"
        if not self.loss <= bound * (1 + _REL_TOL):
            return "over budget"
        return "ok"


@dataclasses.dataclass
class _Release:
    value: np.ndarray
    scale: float
    noisy: np.ndarray
    state: object


def _stream_state(rng):
    """The position in the stream of 64-bit words (without the half word numpy buffers for 32-bit draws).

    Doubles (uniform, Laplace) read whole words, so two runs at the same position draw the same
    doubles next; a later bounded-integer draw may still differ by the buffered half word.
    """
    if rng is None:
        return None
    state = dict(rng.bit_generator.state)
    state.pop("has_uint32", None)
    state.pop("uinteger", None)
    return state


class _Recorder:
    """Observer on D: keep every release as drawn, and the stream state right after it."""

    def __init__(self, rng):
        self.rng, self.releases = rng, []

    def __call__(self, value, scale, noisy):
        self.releases.append(
            _Release(np.array(value, dtype=float), float(scale), np.array(noisy, dtype=float), _stream_state(self.rng))
        )
        return noisy


class _Replayer:
    """Observer on D': replace release i by D's and add up the shift it needed."""

    def __init__(self, recorded, rng):
        self.recorded, self.rng = recorded, rng
        self.count, self.shifts, self.problems, self.diverged_at = 0, [], [], None

    def __call__(self, value, scale, noisy):
        i = self.count
        self.count += 1
        if i >= len(self.recorded):
            self.problems.append(f"release {i}: D' makes a release that D does not make")
            return noisy
        r = self.recorded[i]
        if self.diverged_at is None and self.rng is not None and _stream_state(self.rng) != r.state:
            self.diverged_at = i
        value = np.asarray(value, dtype=float)
        if value.shape != r.value.shape:
            self.problems.append(f"release {i}: shape {value.shape} on D' but {r.value.shape} on D")
            return noisy
        if float(scale) != r.scale:
            self.problems.append(f"release {i}: Laplace scale {float(scale):.6g} on D' but {r.scale:.6g} on D")
            return noisy
        self.shifts.append(float(np.abs(value - r.value).sum()) / r.scale)
        return r.noisy.copy()


def _fit(template, X, seed, observer_factory):
    """Fit a fresh copy of ``template`` on X with a Generator seeded by ``seed``, under an observer."""
    est = copy.deepcopy(template)
    rng = np.random.default_rng(seed)
    est.random_state = rng
    observer = observer_factory(rng)
    with warnings.catch_warnings(record=True) as caught, mechanisms.observe_laplace(observer):
        warnings.simplefilter("always")
        est.fit(X)
    # A Generator the estimator did not use (it made its own) cannot be watched.
    used = _stream_state(rng) != _stream_state(np.random.default_rng(seed))
    return est, observer, (rng if used else None), tuple(w.category.__name__ for w in caught)


def coupled_loss(estimator, X, X_prime, *, seed=0):
    """Run ``estimator`` on X and on its neighbour X' with every Laplace release coupled.

    Parameters
    ----------
    estimator : an unfitted estimator
        Copied for each run; its ``random_state`` is replaced by a Generator seeded with ``seed``
        (the same seed for both runs).
    X, X_prime : array_like
        The data set D and its neighbour D'.
    seed : int, default=0
        The seed of both runs: one random path.

    Returns
    -------
    CouplingResult
        The loss is finite when every public output is equal on D and D'.

    Examples
    --------
    DPKMeans with public bounds, one record added at a corner. Its two releases (one per
    iteration, half the budget each) need shifts that add up to the budget; they fall a
    hair short of it because the scale also covers the rounding to the noise grid:

    >>> from dpclust_lib import DPKMeans
    >>> X = np.array([[0.1, 0.2], [0.15, 0.1], [0.8, 0.9], [0.9, 0.7], [0.5, 0.5]])
    >>> D, D_prime = neighbours(X, [1.0, 1.0], "add")
    >>> est = DPKMeans(n_clusters=2, epsilon=1.0, max_iter=2, bounds=(0.0, 1.0))
    >>> r = coupled_loss(est, D, D_prime, seed=0)
    >>> r.n_releases, round(r.loss, 4), bool(r.loss <= 1.0), r.epsilon_spent, r.verdict()
    (2, 1.0, True, 1.0, 'ok')

    Bounds read off the data are not private: the new record moves the upper bounds, and
    with them the centres, whatever the noise:

    >>> leaky = coupled_loss(DPKMeans(n_clusters=2, epsilon=1.0, max_iter=2, bounds="data"), D, D_prime)
    >>> leaky.verdict(), leaky.differences, leaky.warnings
    ('leak', ('bounds_[1]', 'cluster_centers_', 'initial_centers_'), ('PrivacyLeakWarning',))
    """
    est, recorder, rng_d, warned_d = _fit(estimator, X, seed, _Recorder)
    recorded = recorder.releases
    est_p, replayer, rng_p, warned_p = _fit(estimator, X_prime, seed, lambda rng: _Replayer(recorded, rng))
    differences = list(replayer.problems)
    if replayer.count < len(recorded):
        differences.append(f"D' makes {replayer.count} releases, D makes {len(recorded)}")
    if not replayer.problems and replayer.count == len(recorded):
        differences += public_differences(est, est_p)
    diverged = replayer.diverged_at
    if diverged is None and rng_d is not None and rng_p is not None and _stream_state(rng_d) != _stream_state(rng_p):
        diverged = len(recorded)
    return CouplingResult(
        loss=math.inf if differences else float(sum(replayer.shifts)),
        epsilon_spent=float(getattr(est, "epsilon_spent_", math.nan)),
        epsilon_guaranteed=float(getattr(est, "epsilon_guaranteed_", math.nan)),
        n_releases=len(recorded),
        differences=tuple(differences),
        stream_diverged_at=diverged,
        shifts=tuple(replayer.shifts),
        warnings=tuple(sorted(set(warned_d + warned_p))),
    )


# ---------------------------------------------------------------------------
# Comparing the public outputs
# ---------------------------------------------------------------------------


def public_attributes(est):
    """Names of the fitted public attributes: ending in ``_``, not starting with ``_``.

    Parameters
    ----------
    est : object
        A fitted estimator (any object with a ``__dict__``).

    Returns
    -------
    list of str
        Sorted, without the exact-data :data:`DIAGNOSTICS`.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> fitted = SimpleNamespace(centers_=[0.5], k=2, _cache_=None, labels_=[0, 1])
    >>> public_attributes(fitted)  # k is a parameter, _cache_ private, labels_ a diagnostic
    ['centers_']
    """
    return sorted(k for k in vars(est) if k.endswith("_") and not k.startswith("_") and k not in DIAGNOSTICS)


def public_differences(a, b, limit=10):
    """Dotted paths of the public fitted attributes that differ between two fitted estimators.

    Arrays must agree in shape and in every bit (NaN equal to NaN); nested objects (a ledger, a
    tree) are compared attribute by attribute. Random generators and :data:`DIAGNOSTICS` are
    skipped.

    Parameters
    ----------
    a, b : object
        Two fitted estimators.
    limit : int, default=10
        The most differences reported.

    Returns
    -------
    list of str
        The dotted paths that differ (with the reason for a type, shape, length or key mismatch);
        empty when the public outputs are equal.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> a = SimpleNamespace(centers_=np.array([0.5, np.nan]), info_={"n": 3})
    >>> b = SimpleNamespace(centers_=np.array([0.5, np.nan]), info_={"n": 4})
    >>> public_differences(a, b)  # NaN equals NaN; the dict is compared key by key
    ["info_['n']"]

    Two fits of DPKMeans with different seeds release different centres:

    >>> from dpclust_lib import DPKMeans
    >>> X = np.array([[0.1, 0.2], [0.15, 0.1], [0.8, 0.9], [0.9, 0.7], [0.5, 0.5]])
    >>> def fit(seed):
    ...     return DPKMeans(n_clusters=2, epsilon=1.0, max_iter=2, bounds=(0.0, 1.0), random_state=seed).fit(X)
    >>> public_differences(fit(0), fit(0)), public_differences(fit(0), fit(1))
    ([], ['cluster_centers_', 'initial_centers_'])
    """
    out, seen = [], set()
    names_a, names_b = public_attributes(a), public_attributes(b)
    for name in sorted(set(names_a) ^ set(names_b)):
        out.append(f"{name} (present in one run only)")
    for name in sorted(set(names_a) & set(names_b)):
        _diff(getattr(a, name), getattr(b, name), name, out, seen, limit)
    return out[:limit]


def _fields(obj):
    if dataclasses.is_dataclass(obj):
        return [f.name for f in dataclasses.fields(obj)]
    names = list(getattr(obj, "__dict__", {}))
    for cls in type(obj).__mro__:
        names += [s for s in getattr(cls, "__slots__", ()) if s not in names]
    return names


def _diff(a, b, path, out, seen, limit):
    if len(out) >= limit or path in DIAGNOSTICS:
        return
    if isinstance(a, (np.random.Generator, np.random.BitGenerator)):
        return  # the random stream, not a release
    key = (id(a), id(b))
    if key in seen:
        return
    seen.add(key)
    if type(a) is not type(b):
        out.append(f"{path} (type {type(a).__name__} vs {type(b).__name__})")
    elif isinstance(a, np.ndarray):
        if a.shape != b.shape:
            out.append(f"{path} (shape {a.shape} vs {b.shape})")
        elif not np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"):
            out.append(path)
    elif isinstance(a, (float, np.floating)):
        if not (a == b or (math.isnan(a) and math.isnan(b))):
            out.append(path)
    elif a is None or isinstance(a, (bool, int, str, bytes, np.generic)):
        if a != b:
            out.append(path)
    elif isinstance(a, dict):
        if a.keys() != b.keys():
            out.append(f"{path} (keys)")
        else:
            for k in a:
                _diff(a[k], b[k], f"{path}[{k!r}]", out, seen, limit)
    elif isinstance(a, (list, tuple)):
        if len(a) != len(b):
            out.append(f"{path} (length {len(a)} vs {len(b)})")
        else:
            for i, (x, y) in enumerate(zip(a, b)):
                _diff(x, y, f"{path}[{i}]", out, seen, limit)
    elif callable(a) and not _fields(a):
        return  # a bound method or function: code, not a release
    else:
        for name in _fields(a):
            if not name.startswith("__"):
                _diff(getattr(a, name, None), getattr(b, name, None), f"{path}.{name}", out, seen, limit)


# ---------------------------------------------------------------------------
# Neighbours and test points
# ---------------------------------------------------------------------------


def domain_points(lower, upper, *, integer=False):
    """Corners, edge midpoints and the centre of the box [lower, upper], with names.

    An edge midpoint has one coordinate at the middle and the others at a bound. With
    ``integer=True`` (category codes, upper = k - 1) the middle is rounded down.

    Parameters
    ----------
    lower, upper : array_like of shape (d,)
        The box's bounds per coordinate.
    integer : bool, default=False
        Integer points (category codes), the middle rounded down.

    Returns
    -------
    list of (name, point ndarray)
        3^d points in 2-D and up (2^d corners, the edge midpoints, the centre); 3 for d = 1.

    Examples
    --------
    >>> points = domain_points([0.0, 0.0], [1.0, 1.0])
    >>> [name for name, _ in points]  # doctest: +NORMALIZE_WHITESPACE
    ['corner(lo,lo)', 'corner(lo,hi)', 'corner(hi,lo)', 'corner(hi,hi)',
     'edge(lo,mid)', 'edge(hi,mid)', 'edge(mid,lo)', 'edge(mid,hi)', 'centre(mid,mid)']
    >>> points[4][1].tolist(), points[-1][1].tolist()
    ([0.0, 0.5], [0.5, 0.5])
    >>> domain_points([0, 0], [2, 3], integer=True)[-1][1].tolist()  # codes 0..2 and 0..3
    [1, 1]
    """
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    d = lower.shape[0]
    middle = (lower + upper) / 2.0
    if integer:
        middle = np.floor(middle)
    out = []
    for kind, n_mid in (("corner", 0), ("edge", 1), ("centre", d)):
        if kind == "edge" and d == 1:
            continue
        for code in itertools.product((0, 1, 2), repeat=d):
            if sum(c == 2 for c in code) != n_mid:
                continue
            point = np.array([(lower, upper, middle)[c][j] for j, c in enumerate(code)])
            label = ",".join("lo" if c == 0 else "hi" if c == 1 else "mid" for c in code)
            out.append((f"{kind}({label})", point.astype(np.int64) if integer else point))
    return out


def neighbours(X, x, relation):
    """The pair (D, D') for one relation, always touching the *last* record (see the module docs).

    ``"add"``: (X, X + [x]); ``"remove"``: (X + [x], X); ``"replace"``: (X, X with its last row
    replaced by x).

    Parameters
    ----------
    X : array_like of shape (n, d)
        The base data set.
    x : array_like of shape (d,)
        The record added, removed or put in place of the last one (cast to X's dtype).
    relation : {"add", "remove", "replace"}

    Returns
    -------
    D, D_prime : ndarray
        The neighbouring pair.

    Examples
    --------
    >>> X = np.array([[0.1, 0.2], [0.3, 0.4]])
    >>> D, D_prime = neighbours(X, [1.0, 1.0], "add")
    >>> D.shape, D_prime.shape, D_prime[-1].tolist()
    ((2, 2), (3, 2), [1.0, 1.0])
    >>> D, D_prime = neighbours(X, [1.0, 1.0], "replace")
    >>> D_prime.tolist()
    [[0.1, 0.2], [1.0, 1.0]]
    """
    X = np.asarray(X)
    x = np.asarray(x, dtype=X.dtype).reshape(1, -1)
    if relation == "add":
        return X, np.vstack([X, x])
    if relation == "remove":
        return np.vstack([X, x]), X
    if relation == "replace":
        Xp = X.copy()
        Xp[-1] = x[0]
        return X, Xp
    raise ValueError(f"relation must be one of {RELATIONS}, got relation={relation!r}")


def audit_neighbours(estimator, X, points, *, relations=("add", "remove"), seeds=(0,)):
    """:func:`coupled_loss` over test points, neighbour relations and seeds, one row each.

    Parameters
    ----------
    estimator : an unfitted estimator
    X : array_like
        The base data set.
    points : list of (name, point)
        The records that make the neighbours, e.g. from :func:`domain_points`.
    relations : subset of ("add", "remove", "replace"), default=("add", "remove")
    seeds : iterable of int, default=(0,)

    Returns
    -------
    DataFrame
        One row per seed, point and relation, with columns relation, point, seed, n_releases,
        loss, epsilon_spent, epsilon_guaranteed, bound (epsilon_spent, twice that for
        "replace"), verdict, detail, warnings (the warning categories the fits raised,
        comma-separated).

    Examples
    --------
    DPKMeans with public bounds, neighbours made with two corners of the unit square:

    >>> from dpclust_lib import DPKMeans
    >>> est = DPKMeans(n_clusters=2, epsilon=1.0, max_iter=2, bounds=(0.0, 1.0))
    >>> X = np.array([[0.1, 0.2], [0.15, 0.1], [0.8, 0.9], [0.9, 0.7], [0.5, 0.5]])
    >>> corners = domain_points([0.0, 0.0], [1.0, 1.0])[:2]
    >>> frame = audit_neighbours(est, X, corners, relations=("add", "remove", "replace"))
    >>> frame.shape, frame["bound"].tolist()
    ((6, 11), [1.0, 1.0, 2.0, 1.0, 1.0, 2.0])
    >>> sorted(set(frame["verdict"])), bool((frame["loss"] <= frame["bound"]).all())
    (['ok'], True)
    """
    rows = []
    for seed in seeds:
        for name, x in points:
            for relation in relations:
                r = coupled_loss(estimator, *neighbours(X, x, relation), seed=seed)
                bound = r.epsilon_spent * (2.0 if relation == "replace" else 1.0)
                detail = r.explain()
                rows.append(
                    dict(
                        relation=relation,
                        point=name,
                        seed=seed,
                        n_releases=r.n_releases,
                        loss=r.loss,
                        epsilon_spent=r.epsilon_spent,
                        epsilon_guaranteed=r.epsilon_guaranteed,
                        bound=bound,
                        verdict=r.verdict(bound),
                        detail=detail,
                        warnings=", ".join(r.warnings),
                    )
                )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------
# The overview table
# ---------------------------------------------------------------------------

FROM_DATA = "data"
"""How a public quantity is asked to be read off the data (``bounds``, ``domain_sizes``, ``n_public``)."""


def _numeric_data(n=41, seed=7):
    """n records in [0, 1]^2: a dense group near the upper corner, the rest spread; n odd (IDP's split)."""
    rng = np.random.default_rng(seed)
    dense = 0.9 + 0.1 * rng.random((n // 2, 2))
    spread = rng.random((n - n // 2, 2))
    return np.vstack([dense, spread])


def _categorical_data(n=41, sizes=(3, 4, 2), seed=7):
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.integers(0, k, n) for k in sizes]).astype(np.int64)


def _kmeans_cases(X, n, unit, box, quick):
    return [
        ("DPKMeans", "private", DPKMeans(n_clusters=2, epsilon=1.0, max_iter=3, bounds=unit), X, box),
        ("DPKMeans", "bounds from data", DPKMeans(n_clusters=2, epsilon=1.0, max_iter=3, bounds=FROM_DATA), X, quick),
        (
            "DPKMeans",
            "init='records'",
            DPKMeans(n_clusters=2, epsilon=1.0, max_iter=3, bounds=unit, init="records"),
            X,
            quick,
        ),
        ("IDPKMeans", "private", IDPKMeans(n_clusters=2, epsilon=1.0, max_iter=3, bounds=unit), X, box),
        (
            "IDPKMeans",
            "split='order'",
            IDPKMeans(n_clusters=2, epsilon=1.0, max_iter=1, bounds=unit, split="order"),
            X[:-1],
            quick,
        ),  # n even: a record moves
        ("DPKMeansPP", "private", DPKMeansPP(n_clusters=2, epsilon=1.0, max_iter=2, bounds=unit, n_public=n), X, box),
        ("EUGKMeans", "private", EUGKMeans(n_clusters=2, epsilon=1.0, max_iter=10, bounds=unit, n_public=n), X, box),
        (
            "EUGKMeans",
            "n from data",
            EUGKMeans(n_clusters=2, epsilon=1.5, max_iter=10, bounds=unit, n_public=FROM_DATA),
            X,
            quick,
        ),
    ]


def _dpqt_cases(X, n, unit, box, quick):
    return [
        (
            "DPQTKMeans",
            "private",
            DPQTKMeans(n_clusters=2, epsilon=1.0, max_height=3, threshold=3.0, n_public=n, bounds=unit, max_iter=10),
            X,
            box,
        ),
        (
            "DPQTKMeans",
            "init='kmeans-on-data'",
            DPQTKMeans(
                n_clusters=2,
                epsilon=1.0,
                max_height=3,
                threshold=3.0,
                n_public=n,
                bounds=unit,
                max_iter=10,
                init="kmeans-on-data",
            ),
            X,
            quick,
        ),
    ]


def _kmodes_cases(C, sizes, cat):
    return [
        ("DPKModes", "private", DPKModes(n_clusters=2, epsilon=1.0, max_iter=3, domain_sizes=sizes), C, cat),
        (
            "DPKModes",
            "init='records'",
            DPKModes(n_clusters=2, epsilon=1.0, max_iter=3, domain_sizes=sizes, init="records"),
            C[C[:, 1] < 3],
            cat,
        ),
        (
            "DPKModes",
            "domain sizes from data",
            DPKModes(n_clusters=2, epsilon=1.0, max_iter=3, domain_sizes=FROM_DATA),
            C[C[:, 1] < 3],
            cat[:4],
        ),
    ]


def _birch_cases(X, unit, box, quick, birch):
    return [
        ("DPBirchPublicTree", "private", DPBirchPublicTree(epsilon=1.0, n_skeleton=100, bounds=unit, **birch), X, box),
        (
            "DPBirchPublicTree",
            "skeleton='data'",
            DPBirchPublicTree(epsilon=1.0, skeleton="data", bounds=unit, **birch),
            X,
            quick,
        ),
        ("DPBirch", "the paper's algorithm", DPBirch(epsilon=1.0, bounds=unit, **birch), X, quick),
    ]


def audit_cases():
    """The fixed cases of :func:`audit_table`: (estimator, setting, unfitted estimator, X, points).

    Small data (41 records), few iterations; private settings and every documented leaky option.

    Returns
    -------
    list of (str, str, estimator, ndarray, list of (name, point))
        A private setting is tested at every point of :func:`domain_points` of its domain; most
        leaky options at fewer (the corners and the centre), which suffice to show their leak.

    Examples
    --------
    >>> cases = audit_cases()
    >>> len(cases), sorted({name for name, *_ in cases})[:3]
    (16, ['DPBirch', 'DPBirchPublicTree', 'DPKMeans'])
    >>> name, setting, est, X, points = cases[0]
    >>> name, setting, X.shape, len(points)
    ('DPKMeans', 'private', (41, 2), 9)
    """
    X, C = _numeric_data(), _categorical_data()
    n, unit, sizes = X.shape[0], (0.0, 1.0), (3, 4, 2)
    box = domain_points([0.0, 0.0], [1.0, 1.0])
    cat = domain_points([0, 0, 0], [k - 1 for k in sizes], integer=True)
    quick = [p for p in box if p[0].startswith(("corner", "centre"))]
    birch = dict(threshold=0.2, branching_factor=4, n_clusters=2)
    return (
        _kmeans_cases(X, n, unit, box, quick)
        + _dpqt_cases(X, n, unit, box, quick)
        + _kmodes_cases(C, sizes, cat)
        + _birch_cases(X, unit, box, quick, birch)
    )


def audit_table(cases=None, *, seeds=(0,)):
    """The audit overview: one row per case and neighbour relation, the worst over its test points.

    Parameters
    ----------
    cases : list of (estimator, setting, unfitted estimator, X, points), default :func:`audit_cases`
    seeds : iterable of int

    Returns
    -------
    DataFrame
        Two rows per case, with columns estimator, setting, neighbours ("add/remove one" against
        epsilon_spent_, "replace one" against 2 epsilon_spent_), epsilon_spent, epsilon_guaranteed,
        bound, audited_loss (the largest loss over the test points), verdict (the worst: leak,
        unobserved, over budget, ok), detail (the first reason for a leak).

    Examples
    --------
    The first two cases only (the whole table takes about a second): DPKMeans with public
    bounds, and with bounds read off the data:

    >>> table = audit_table(audit_cases()[:2])
    >>> list(table.columns)  # doctest: +NORMALIZE_WHITESPACE
    ['estimator', 'setting', 'neighbours', 'epsilon_spent', 'epsilon_guaranteed', 'bound',
     'audited_loss', 'verdict', 'detail']
    >>> table[["setting", "neighbours", "verdict"]].values.tolist()  # doctest: +NORMALIZE_WHITESPACE
    [['private', 'add/remove one', 'ok'], ['private', 'replace one', 'ok'],
     ['bounds from data', 'add/remove one', 'leak'], ['bounds from data', 'replace one', 'leak']]
    >>> table.loc[2, "detail"]
    'bounds_[0]; cluster_centers_; initial_centers_'
    """
    order = {"leak": 0, "unobserved": 1, "over budget": 2, "ok": 3}
    rows = []
    for name, setting, est, X, points in audit_cases() if cases is None else cases:
        for label, relations in (("add/remove one", ("add", "remove")), ("replace one", ("replace",))):
            frame = audit_neighbours(est, X, points, relations=relations, seeds=seeds)
            worst = frame.iloc[int(frame["verdict"].map(order).values.argmin())]
            details = [d for d in frame["detail"] if d]
            rows.append(
                dict(
                    estimator=name,
                    setting=setting,
                    neighbours=label,
                    epsilon_spent=float(frame["epsilon_spent"].max()),
                    epsilon_guaranteed=float(frame["epsilon_guaranteed"].max()),
                    bound=float(frame["bound"].max()),
                    audited_loss=float(frame["loss"].max()),
                    verdict=worst["verdict"],
                    detail=details[0] if details else "",
                )
            )
    return pd.DataFrame(rows)

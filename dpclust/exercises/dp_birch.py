"""Wang et al., DPBIRCH, notebook 05: clustering features, the noisy CF updates, the CF sensitivities,
the insertion budget and the leaf noise of the public-tree variant.
"""

from __future__ import annotations

import contextlib
import functools
import io
import math
import warnings

import numpy as np
from scipy import stats
from scipy.spatial.distance import pdist

from dpclust_lib.cluster.birch import (  # the checker's argument has this name
    ClusteringFeature,
    NegativeRadiusWarning,
)
from dpclust_lib.cluster.birch import cf_sensitivities as library_cf_sensitivities
from dpclust_lib.cluster.dp_birch import DPBirch, DPBirchPublicTree

from ._core import (
    ALPHA,
    ExerciseError,
    answer_key,
    as_float,
    call_student,
    check_function,
    diagnose,
    fail,
    passed,
    reference_inputs,
    short,
)

__all__ = [
    "check_clustering_feature",
    "check_dpbirch_noisy_update",
    "check_cf_sensitivities",
    "check_dpbirch_insertion_epsilon",
    "check_public_tree_leaf_noise",
    "check_replacement_sensitivities",
]


def _quietly(check, *args, **kwargs):
    """Run a checker without its confirmation line (the caller prints one for all its parts)."""
    with contextlib.redirect_stdout(io.StringIO()):
        check(*args, **kwargs)


def _fresh(value):
    """A copy of the arrays in ``value`` (a Generator is passed on as it is: its draws must advance)."""
    if isinstance(value, (tuple, list)):
        return type(value)(_fresh(v) for v in value)
    return value.copy() if isinstance(value, np.ndarray) else value


def _same(a, b):
    if isinstance(a, (tuple, list)):
        return isinstance(b, (tuple, list)) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.random.Generator):
        return True
    return np.array_equal(np.asarray(a), np.asarray(b))


def _cf(X):
    """The library's CF of the rows of X, as a tuple (n, ls, ss)."""
    cf = ClusteringFeature.of(X)
    return cf.n, cf.ls, cf.ss


def _cf_of_library(cf):
    return cf.n, cf.ls, cf.ss


def _flat(cf):
    n, ls, ss = cf
    return np.concatenate([[float(n)], np.ravel(ls), [float(ss)]])


def _flat_parts(n, ls, ss):
    return _flat((n, ls, ss))


def _cf_flat(out, name):
    """The student's CF (n, ls, ss) as one flat array [n, ls_1, ..., ls_d, ss]; N and SS must be numbers."""
    if isinstance(out, ClusteringFeature):
        out = (out.n, out.ls, out.ss)
    if out is None:
        fail(f"{name} returned None", "a CF (n, ls, ss)", None, "did you forget the return statement?")
    if not isinstance(out, (tuple, list)) or len(out) != 3:
        fail(
            f"{name} did not return a CF",
            "a tuple (n, ls, ss)",
            short(out),
            "return the three parts as a tuple: n (a number), ls (an array of d numbers), ss (a number)",
        )
    try:
        n, ls, ss = (np.asarray(part, dtype=float) for part in out)
    except (TypeError, ValueError):
        fail(
            f"{name} did not return numbers",
            "a tuple (n, ls, ss) of numbers",
            short(out),
            "n and ss are numbers, ls a numpy array",
        )
    if ss.size != 1:
        fail(
            f"{name}: SS is not a number",
            "SS = the sum of the squared norms ||x||^2 of the points: one number",
            f"SS of shape {ss.shape}",
            "SS is one number per CF (the notebook's and scikit-learn's convention): "
            "sum the squares over the coordinates as well as over the points",
        )
    if n.size != 1:
        fail(
            f"{name}: N is not a number",
            "N = the number of points",
            f"N of shape {n.shape}",
            "N counts the points: one number",
        )
    return np.concatenate([n.ravel(), ls.ravel(), ss.ravel()])


def _cf_valued(fn, name):
    """``fn`` as a function returning a flat CF; it works on copies, and changing an argument is an error."""

    @functools.wraps(fn)
    def flat(*args):
        given = _fresh(args)
        out = fn(*given)
        if not _same(given, args):
            fail(
                f"{name} changed its arguments",
                "the CFs it was given, unchanged",
                "an argument modified in place",
                "build a new CF: ls_a + ls_b makes a new array, while ls_a += ls_b changes CF a",
            )
        return _cf_flat(out, name)

    return flat


def _sq_radius(cf):
    n, ls, ss = cf
    return ss / n - float((ls / n) @ (ls / n))


def _root(value):
    return math.sqrt(value) if value >= 0 else np.nan


# The typical wrong answers of Exercise 1, as data: (name, wrong function, hint). A function of the same
# arguments as the student's; check_clustering_feature names the first one the answer matches.
CF_OF_MISTAKES = (
    (
        "mean for LS",
        lambda X: _flat_parts(len(X), X.mean(axis=0), np.sum(X * X)),
        "LS is the SUM of the points, not their mean (the centroid is LS/N)",
    ),
    (
        "SS without squares",
        lambda X: _flat_parts(len(X), X.sum(axis=0), X.sum()),
        "SS sums the SQUARED norms ||x||^2 of the points",
    ),
    (
        "SS as ||LS||^2",
        lambda X: _flat_parts(len(X), X.sum(axis=0), X.sum(axis=0) @ X.sum(axis=0)),
        "SS is the sum of the squared norms of the points, not the squared norm of their sum",
    ),
    (
        "N as d",
        lambda X: _flat_parts(X.shape[1], X.sum(axis=0), np.sum(X * X)),
        "N counts the points (the rows of X), not the coordinates",
    ),
)

CF_MERGE_MISTAKES = (
    (
        "averaged",
        lambda a, b: _flat_parts(a[0] + b[0], (a[1] + b[1]) / 2, (a[2] + b[2]) / 2),
        "the additivity theorem ADDS the three parts; it does not average them",
    ),
    (
        "cross term in SS",
        lambda a, b: _flat_parts(a[0] + b[0], a[1] + b[1], a[2] + b[2] + 2 * a[1] @ b[1]),
        "SS adds like N and LS: SS_a + SS_b. The cross term 2 LS_a.LS_b belongs to ||LS_a + LS_b||^2, not to SS",
    ),
    (
        "SS as ||LS||^2",
        lambda a, b: _flat_parts(a[0] + b[0], a[1] + b[1], (a[1] + b[1]) @ (a[1] + b[1])),
        "SS is not ||LS||^2: it is the sum of the points' squared norms, so the union has SS_a + SS_b",
    ),
    (
        "LS as a centroid",
        lambda a, b: _flat_parts(a[0] + b[0], (a[1] + b[1]) / (a[0] + b[0]), a[2] + b[2]),
        "LS is a sum, not a centroid: the union has LS_a + LS_b",
    ),
)

CF_RADIUS_MISTAKES = (
    ("R^2", _sq_radius, "that is R^2; the radius is its square root"),
    (
        "||LS||^2 / N",
        lambda cf: _root(cf[2] / cf[0] - cf[1] @ cf[1] / cf[0]),
        "the centroid is LS/N, so its squared norm is ||LS||^2 / N^2",
    ),
    (
        "sum, not mean",
        lambda cf: _root(cf[2] - cf[1] @ cf[1] / cf[0]),
        "that is the root of the SUM of the squared distances to the centroid; R is the root of their MEAN: "
        "divide by N",
    ),
    (
        "roots subtracted",
        lambda cf: math.sqrt(max(cf[2] / cf[0], 0)) - np.linalg.norm(cf[1] / cf[0]),
        "subtract before the square root: R^2 = SS/N - ||LS/N||^2",
    ),
    (
        "the diameter",
        "diameter",  # the value comes from the point set (scipy's pdist), not from a formula in the CF
        "that is the diameter (the mean over pairs of points); the radius is the root mean squared distance "
        "to the centroid",
    ),
)

# The typical wrong diameters, as functions of the CF and of the right diameter (the mean over the pairs of
# points, from scipy's pdist: the package holds no formula that answers the exercise).
CF_DIAMETER_MISTAKES = (
    ("D^2", lambda cf, want: want**2, "that is D^2; the diameter is its square root"),
    (
        "twice the radius",
        lambda cf, want: 2 * _root(_sq_radius(cf)),
        "the diameter is not twice the radius: average the squared distances over the pairs of points",
    ),
    (
        "all N^2 pairs",
        lambda cf, want: _root(2 * _sq_radius(cf)),
        "average over the N (N - 1) ordered pairs of DISTINCT points, not over all N^2 pairs",
    ),
    (
        "unordered pairs counted twice",
        lambda cf, want: want / math.sqrt(2),
        "each unordered pair {i, j} appears twice among the ordered pairs i != j: the sum over i != j of "
        "||x_i - x_j||^2 counts both",
    ),
    ("the radius", lambda cf, want: _root(_sq_radius(cf)), "that is the radius R"),
)

_CF_RTOL = 1e-9


def _pairs(catalogue):
    """The (wrong function, hint) pairs of a catalogue of (name, wrong function, hint)."""
    return [(wrong, hint) for _, wrong, hint in catalogue]


def _point_sets(seed):
    """The point sets of Exercise 1: one with negative coordinates, one of two points, one of a single point."""
    rng = np.random.default_rng(seed)
    return [
        rng.random((7, 3)),
        rng.random((4, 3)) * 2 - 0.5,
        rng.normal(size=(12, 5)) * 2,
        rng.random((2, 1)),
        rng.random((1, 4)),
    ]


def _diameter(X):
    """The root mean squared distance between two distinct points of X, from scipy's pairwise distances."""
    return math.sqrt(float(np.mean(pdist(X, "sqeuclidean")))) if len(X) > 1 else np.nan


def _radius_mistakes(sets):
    """CF_RADIUS_MISTAKES as (wrong function, hint) pairs; the diameter's value is looked up by the point set."""
    diameters = {tuple(_flat(_cf(X))): _diameter(X) for X in sets}
    out = []
    for _, wrong, hint in CF_RADIUS_MISTAKES:
        if wrong == "diameter":
            wrong = lambda cf, diameters=diameters: diameters.get(tuple(_flat(cf)), np.nan)  # noqa: E731
        out.append((wrong, hint))
    return out


def check_clustering_feature(cf_of, cf_merge, cf_radius, cf_diameter, seed=0):
    """Four functions on clustering features, each CF a tuple (n, ls, ss) with SS one number.

    ``cf_of(X)``: the CF of the rows of X. ``cf_merge(a, b)``: the CF of the
    union (the additivity theorem), without changing a or b.
    ``cf_radius(cf)``: R = sqrt(SS/N - ||LS/N||^2), and 0 when noise makes the
    square negative. ``cf_diameter(cf)``: the root mean squared distance between
    two distinct points. The first three are compared with the library's
    :class:`~dpclust_lib.cluster.birch.ClusteringFeature` on five point sets
    (one with negative coordinates) and on noisy CFs, the diameter with the mean
    over the pairs of points (``scipy.spatial.distance.pdist``); relative
    tolerance 1e-9. The typical mistakes named are ``CF_OF_MISTAKES``,
    ``CF_MERGE_MISTAKES``, ``CF_RADIUS_MISTAKES`` and ``CF_DIAMETER_MISTAKES``.

    Examples
    --------
    >>> import math
    >>> import numpy as np
    >>> def cf_of(X):
    ...     return len(X), np.sum(X, axis=0), float(np.sum(np.square(X)))
    >>> def cf_merge(a, b):
    ...     return a[0] + b[0], a[1] + b[1], a[2] + b[2]
    >>> def cf_radius(cf):
    ...     return math.sqrt(max(cf[2] / cf[0] - (cf[1] / cf[0]) @ (cf[1] / cf[0]), 0.0))
    >>> def cf_diameter(cf):
    ...     return math.sqrt(2 * (cf[0] * cf[2] - cf[1] @ cf[1]) / (cf[0] * (cf[0] - 1)))
    >>> check_clustering_feature(cf_of, cf_merge, cf_radius, cf_diameter)
    Correct: ...
    """
    sets = _point_sets(seed)
    noisy = (5.0, np.array([1.2, -0.3, 2.0]), 1.4)  # a CF after noise: R^2 = 0.0588 > 0
    noisy_negative = (3.0, np.array([2.0, 1.0, -1.5]), 0.9)  # noise made R^2 = 0.3 - 0.806 < 0
    _quietly(
        check_function,
        "cf_of",
        _cf_valued(cf_of, "cf_of"),
        lambda X: _flat(_cf(X)),
        [(X,) for X in sets],
        rtol=_CF_RTOL,
        mistakes=_pairs(CF_OF_MISTAKES),
        hint="N = the number of rows, LS = their sum (a vector), SS = the sum of their squared norms (a number)",
    )
    pairs = [(_cf(sets[0]), _cf(sets[1])), (_cf(sets[2][:5]), _cf(sets[2][5:])), (noisy, noisy_negative)]
    _quietly(
        check_function,
        "cf_merge",
        _cf_valued(cf_merge, "cf_merge"),
        lambda a, b: _flat(_cf_of_library(ClusteringFeature(*a) + ClusteringFeature(*b))),
        pairs,
        rtol=_CF_RTOL,
        mistakes=_pairs(CF_MERGE_MISTAKES),
        hint="the additivity theorem: (N_a + N_b, LS_a + LS_b, SS_a + SS_b)",
    )
    _quietly(
        check_function,
        "cf_radius",
        cf_radius,
        lambda cf: ClusteringFeature(*cf).radius,
        [(_cf(X),) for X in sets] + [(noisy,)],
        rtol=_CF_RTOL,
        mistakes=_radius_mistakes(sets),
        hint="R^2 = SS/N - ||LS/N||^2: the mean squared norm minus the squared norm of the mean",
    )
    _check_negative_radius(cf_radius, noisy_negative)
    _check_diameter(cf_diameter, sets)
    return passed(
        "cf_of, cf_merge and cf_radius agree with the library's ClusteringFeature on every case (noisy CFs "
        "included), and cf_diameter with the mean over the pairs of points"
    )


def _check_negative_radius(cf_radius, noisy_negative):
    """A noisy CF whose squared radius is negative has radius 0 (as the library's threshold test takes it)."""
    name = "cf_radius"
    with np.errstate(invalid="ignore"):
        try:
            got, crashed = call_student(cf_radius, _fresh(noisy_negative)), None
        except ExerciseError as err:
            if not isinstance(err.__cause__, (ValueError, FloatingPointError)):
                raise
            got, crashed = None, f"{type(err.__cause__).__name__}: {err.__cause__}"
    if crashed is None:
        got = as_float(got, name, ())
    if crashed is not None or got.shape != () or got != 0:
        fail(
            f"{name}({short(noisy_negative, 90)}): a noisy CF whose squared radius is negative",
            0.0,
            crashed or np.round(got, 6).tolist(),
            "noise can make SS/N - ||LS/N||^2 negative (section 2); the library then takes the radius as 0, "
            "as the threshold test does: return 0 in that case",
        )


def _check_diameter(cf_diameter, sets):
    """The diameter of the CF of each point set against the mean over its pairs of points (``pdist``)."""
    for X in sets:
        if len(X) < 2:
            continue
        cf, want = _cf(X), _diameter(X)
        got = as_float(call_student(cf_diameter, _fresh(cf)), "cf_diameter", ())
        if got.shape == () and np.isclose(got, want, rtol=_CF_RTOL, atol=0):
            continue
        wrong = [(np.asarray(w(cf, want), dtype=float).reshape(got.shape), h) for _, w, h in CF_DIAMETER_MISTAKES]
        hint = diagnose(
            got,
            wrong if got.size == 1 else [],
            _CF_RTOL,
            "expand ||x_i - x_j||^2 = ||x_i||^2 + ||x_j||^2 - 2 x_i.x_j and sum over the pairs i != j",
        )
        fail(
            f"cf_diameter({short(cf, 90)}) is not right (relative tolerance {_CF_RTOL:g}; the subcluster has "
            f"{len(X)} points)",
            round(want, 6),
            np.round(got, 6).tolist(),
            hint,
        )


def _laplace_part(what, draws, scale, level, mistakes, hint):
    """Kolmogorov-Smirnov test of ``draws`` against Lap(0, scale) at ``level``; on failure the hint of the first
    typical wrong distribution ((cdf, hint) in ``mistakes``) that the draws pass at the same level."""
    if stats.kstest(draws, stats.laplace(scale=scale).cdf).pvalue >= level:
        return
    if np.ptp(draws) == 0:
        hint = f"{what} carries no noise: add a fresh Laplace draw to every number released"
    else:
        hint = next((h for cdf, h in mistakes if stats.kstest(draws, cdf).pvalue >= level), hint)
    fail(
        f"the noise on {what} does not follow Lap({scale:g}) (Kolmogorov-Smirnov p < {level:.1e})",
        f"Laplace noise of scale {scale:g}, centred at 0 (mean |noise| = the scale)",
        f"mean |noise| {np.mean(np.abs(draws)):.4g}, median {np.median(draws):.3g}",
        hint,
    )


def _independent(noise, names, level):
    """Correlation test of every pair of noise columns (sqrt(m) |r| is about N(0, 1) under independence),
    Bonferroni over the pairs at family-wise ``level``."""
    m, k = noise.shape
    r = np.corrcoef(noise, rowvar=False)
    i, j = np.triu_indices(k, 1)
    p = 2 * stats.norm.sf(math.sqrt(m) * np.abs(r[i, j]))
    worst = int(np.argmin(p))
    if p[worst] < level / len(p):
        a, b = names[i[worst]], names[j[worst]]
        fail(
            f"the noise on {a} and the noise on {b} are not independent (correlation test, p < {level / len(p):.1e})",
            "correlation about 0",
            f"correlation {r[i[worst], j[worst]]:.3f}",
            "draw a separate Laplace value for every number released: each coordinate of LS, and SS",
        )


# The typical wrong noise-free parts of the paper's step 1, as data: (name, wrong update of (cf, x, ...), hint).
UPDATE_MERGE_MISTAKES = (
    (
        "N not counted",
        lambda cf, x, *_: _flat((cf[0], cf[1] + x, cf[2] + x @ x)),
        "N counts the records: the merged CF has N + 1",
    ),
    (
        "SS + sum(x)",
        lambda cf, x, *_: _flat((cf[0] + 1, cf[1] + x, cf[2] + x.sum())),
        "SS adds the squared norm ||x||^2, not the sum of x's coordinates",
    ),
    (
        "SS + ||x||",
        lambda cf, x, *_: _flat((cf[0] + 1, cf[1] + x, cf[2] + math.sqrt(x @ x))),
        "SS adds ||x||^2, the SQUARED norm",
    ),
    (
        "SS unchanged",
        lambda cf, x, *_: _flat((cf[0] + 1, cf[1] + x, cf[2])),
        "SS takes the record in as well: SS + ||x||^2",
    ),
    ("LS unchanged", lambda cf, x, *_: _flat((cf[0] + 1, cf[1], cf[2] + x @ x)), "LS takes the record in: LS + x"),
    (
        "CF replaced",
        lambda cf, x, *_: _flat((cf[0] + 1, x, x @ x)),
        "the record joins the subcluster: add it to the CF, do not replace the CF by it",
    ),
)

# The typical wrong noise of step 1, as data: (name, distribution family, its scale as a function of
# (d, epsilon), hint; "{scale}" in a hint is that scale).
UPDATE_NOISE_MISTAKES = (
    (
        "scale d/eps",
        stats.laplace,
        lambda d, eps: d / eps,
        "scale d/eps = {scale:g}: d is the L1 sensitivity of LS on [0, 1]^d (the honest accounting of "
        "Exercise 3), but the paper's step 1, which this exercise implements, uses Delta q = 1: Lap(1/eps)",
    ),
    (
        "scale 2/eps",
        stats.laplace,
        lambda d, eps: 2 / eps,
        "scale 2/eps: the paper spends eps on LS and eps on SS (2 eps in all), so each draw is Lap(1/eps)",
    ),
    (
        "scale 1/(2 eps)",
        stats.laplace,
        lambda d, eps: 1 / (2 * eps),
        "scale 1/(2 eps): each of LS and SS gets the whole eps in the paper, so each draw is Lap(1/eps)",
    ),
    ("scale eps", stats.laplace, lambda d, eps: eps, "the scale is Delta q / eps = 1/eps, not eps"),
    (
        "Gaussian, the same scale",
        stats.norm,
        lambda d, eps: 1.0 / eps,
        "that is Gaussian noise; the paper uses the Laplace mechanism",
    ),
    (
        "Gaussian, the same variance",
        stats.norm,
        lambda d, eps: math.sqrt(2) * (1.0 / eps),
        "that is Gaussian noise; the paper uses the Laplace mechanism",
    ),
)


def _merged(cf, x, *_):
    """The library's merge of record x into the CF, flat."""
    return _flat(_cf_of_library(ClusteringFeature(*cf) + ClusteringFeature.of(x)))


def check_dpbirch_noisy_update(update, d=3, epsilon=0.5, n=10_000, seed=0):
    """``update(cf, x, epsilon, rng)``: the paper's step 1, record x merged into one CF with Laplace noise.

    The answer must be (N + 1, LS + x + eta, SS + ||x||^2 + xi): eta are d and
    xi one independent Lap(1/epsilon) draws (the paper's Delta q = 1 on [0, 1]
    data), and N is exact. First at epsilon = 1e8 (noise below 1e-6) against the
    library's merge ``ClusteringFeature`` + ``ClusteringFeature.of(x)`` on three
    CFs (typical mistakes: ``UPDATE_MERGE_MISTAKES``); then ``n`` calls at
    ``epsilon`` on one CF: Kolmogorov-Smirnov tests of the LS noise (all
    coordinates) and of the SS noise against Lap(1/epsilon) (typical mistakes:
    ``UPDATE_NOISE_MISTAKES``), and a correlation test of every pair of the
    d + 1 noise columns; family-wise alpha = 0.001 (Bonferroni, a third for each).

    Examples
    --------
    >>> def noisy_update(cf, x, epsilon, rng):
    ...     eta = rng.laplace(0.0, 1.0 / epsilon, size=len(x) + 1)
    ...     return cf[0] + 1, cf[1] + x + eta[:-1], cf[2] + x @ x + eta[-1]
    >>> check_dpbirch_noisy_update(noisy_update)
    Correct: ...
    """
    rng = np.random.default_rng(seed)
    cfs = [_cf(rng.random((5, d))), _cf(rng.random((1, d))), _cf(rng.random((40, d)))]
    records = list(rng.random((3, d)))
    flat_update = _cf_valued(update, "update")
    _check_update_noise_free(flat_update, [(cf, x, 1e8, rng) for cf, x in zip(cfs, records)])
    cf, x = cfs[0], records[0]
    want = _merged(cf, x)
    out = np.empty((n, d + 2))
    for i in range(n):
        out[i] = call_student(flat_update, cf, x, epsilon, rng)
    if np.any(out[:, 0] != want[0]):
        fail(
            "N is not exact",
            f"N = {want[0]:g} (N + 1) in every call",
            f"N from {out[:, 0].min():.4g} to {out[:, 0].max():.4g}",
            "the paper adds no noise to N: it stays the exact count N + 1",
        )
    _check_update_noise(out[:, 1:] - want[1:], d, epsilon)
    return passed(
        f"step 1 merges the record exactly, adds independent Lap(1/eps) noise to each of the {d} "
        f"coordinates of LS and to SS, and keeps N exact ({n:,} calls at eps = {epsilon:g})"
    )


def _check_update_noise_free(flat_update, cases):
    """At a huge epsilon the update is the library's merge (to 1e-5): first a gross check, then every case."""
    big = cases[0][2]
    got, want = call_student(flat_update, *cases[0]), _merged(*cases[0])
    if got.shape == want.shape and np.max(np.abs(got - want)) > 1.0:
        fail(
            f"at epsilon = {big:g} the update is far from the exact merge",
            "noise of scale 1e-8",
            f"largest |difference| {np.max(np.abs(got - want)):.3g}",
            "the Laplace scale is Delta q / epsilon = 1/epsilon: the noise shrinks as epsilon grows",
        )
    _quietly(
        check_function,
        f"the noise-free part of step 1 (epsilon = {big:g})",
        flat_update,
        _merged,
        cases,
        rtol=1e-6,
        atol=1e-5,
        mistakes=_pairs(UPDATE_MERGE_MISTAKES),
        hint="step 1 merges x into the CF, (N + 1, LS + x, SS + ||x||^2), and then adds the noise",
    )


def _check_update_noise(noise, d, epsilon):
    """The noise columns (LS_1..LS_d, SS) of many updates: Lap(1/epsilon) each, and independent."""
    scale, level = 1.0 / epsilon, ALPHA / 3
    mistakes = [
        (family(scale=scale_of(d, epsilon)).cdf, hint.format(scale=scale_of(d, epsilon)))
        for _, family, scale_of, hint in UPDATE_NOISE_MISTAKES
    ]
    _laplace_part(
        "LS",
        noise[:, :d].ravel(),
        scale,
        level,
        mistakes,
        "LS gets d independent Lap(1/eps) draws, one per coordinate, added to LS + x",
    )
    _laplace_part(
        "SS",
        noise[:, d],
        scale,
        level,
        mistakes,
        "SS gets one Lap(1/eps) draw of its own, added to SS + ||x||^2 (noise the sum, not the record "
        "before squaring it)",
    )
    _independent(noise, [f"LS[{j}]" for j in range(d)] + ["SS"], level)


# Boxes [lower, upper]: the first has a negative side whose square beats the positive one.
_SENSITIVITY_BOXES = [
    ((0.0, -2.0, 0.0, -0.5), (1.0, 1.0, 3.0, 0.5)),
    ((-1.0, 0.0, -3.0), (0.5, 2.0, -1.0)),
    ((-2.0,), (1.0,)),
    ((0.0,) * 3, (1.0,) * 3),
    ((0.0,) * 10, (1.0,) * 10),
]


def _largest(lo, up):
    """The largest |x_j| over the box, per coordinate."""
    return np.maximum(np.abs(lo), np.abs(up))


def _smallest_square(lo, up):
    """The smallest x_j^2 over the box, per coordinate (0 where the side contains 0)."""
    return np.where((lo <= 0) & (up >= 0), 0.0, np.minimum(lo**2, up**2))


_REPLACED = "that is the change when one record is REPLACED by another; here a record x is added or removed"
_ONLY_ON_THE_UNIT_BOX = "d is the answer on [0, 1]^d only; here the box has other sides"

# The typical wrong sensitivities, as data: for N, LS and SS in turn, (name, wrong value as a function of
# (lower, upper, right sensitivities), hint). check_cf_sensitivities names the first one the answer matches.
CF_SENSITIVITY_MISTAKES = (
    (("0 for N", lambda lo, up, want: 0.0, "adding or removing one record changes N by exactly 1"),),
    (
        (
            "Delta q = 1",
            lambda lo, up, want: 1.0,
            "Delta q = 1 is the change of ONE coordinate on [0, 1]; LS has d coordinates, and its L1 "
            "sensitivity adds up their changes",
        ),
        (
            "the largest coordinate",
            lambda lo, up, want: _largest(lo, up).max(),
            "the Laplace mechanism needs the L1 norm of the change: the sum over the coordinates, not the largest one",
        ),
        (
            "the L2 norm",
            lambda lo, up, want: np.sqrt(np.sum(_largest(lo, up) ** 2)),
            "that is the L2 norm of the change; the Laplace mechanism is calibrated to its L1 norm",
        ),
        ("replacement", lambda lo, up, want: np.sum(up - lo), _REPLACED + ", which moves LS by x itself"),
        (
            "upper sides only",
            lambda lo, up, want: np.sum(np.abs(up)),
            "a coordinate can be negative: |x_j| can reach |l_j|; take max(|l_j|, |u_j|)",
        ),
        ("d", lambda lo, up, want: float(len(lo)), _ONLY_ON_THE_UNIT_BOX),
    ),
    (
        (
            "(sum |x_j|)^2",
            lambda lo, up, want: want[1] ** 2,
            "||x||^2 is the sum of the squared coordinates, not the square of their sum",
        ),
        (
            "upper sides only",
            lambda lo, up, want: np.sum(up**2),
            "a coordinate in [l_j, u_j] with l_j < 0 can reach l_j^2 > u_j^2: take the larger",
        ),
        ("||x||_1", lambda lo, up, want: want[1], "SS moves by ||x||^2 (squared coordinates), not by ||x||_1"),
        ("1", lambda lo, up, want: 1.0, "SS moves by ||x||^2, which can be far above 1 (d on [0, 1]^d)"),
        (
            "replacement",
            lambda lo, up, want: np.sum(_largest(lo, up) ** 2 - _smallest_square(lo, up)),
            _REPLACED + ", which moves SS by ||x||^2",
        ),
        ("d", lambda lo, up, want: float(len(lo)), _ONLY_ON_THE_UNIT_BOX),
    ),
)
_SENSITIVITY_DEFAULT_HINTS = (
    "N counts the records",
    "adding or removing x moves LS by x itself: take the largest L1 norm ||x||_1 over the box",
    "adding or removing x moves SS by ||x||^2: take its largest value over the box",
)


# Their right answers (tests/test_exercises.py: birch.cf_sensitivities, and the largest change over the box)
CF_SENSITIVITY_ANSWERS = [(1.0, 6.5, 14.25), (1.0, 6.0, 14.0), (1.0, 2.0, 4.0), (1.0, 3.0, 3.0), (1.0, 10.0, 10.0)]


def _boxes(rng, count=5):
    """Boxes [lower, upper] of a graded run: 0 inside, a side below 0, a side above 0, 1 to 6 coordinates."""
    boxes = []
    for i in range(count):
        d = int(rng.integers(1, 7))
        lo = np.round(rng.uniform(-3, 2, size=d), 2)
        up = np.round(lo + rng.uniform(0.25, 3, size=d), 2)
        if i == 0:
            lo[0], up[0] = -abs(lo[0]) - 0.5, abs(up[0]) + 0.5  # 0 inside
        boxes.append((tuple(lo.tolist()), tuple(up.tolist())))
    return boxes


def _check_triples(fn, name, boxes, reference, mistakes, default_hints):
    """The (Delta N, Delta LS, Delta SS) of ``fn`` on every box against the reference's (answers or a function)."""
    for i, (lower, upper) in enumerate(boxes):
        lo, up = np.array(lower), np.array(upper)
        want = np.array(reference(lo.copy(), up.copy()) if callable(reference) else reference[i], dtype=float)
        got = as_float(call_student(fn, lo.copy(), up.copy()), name, (3,))
        if got.shape != (3,):
            fail(
                f"{name}({list(lower)}, {list(upper)}) has the wrong shape",
                "three numbers",
                got.shape,
                "return (Delta N, Delta LS, Delta SS)",
            )
        for k, what in enumerate(("N", "LS", "SS")):
            if np.isclose(got[k], want[k], rtol=1e-9, atol=1e-12):
                continue
            hint = next(
                (h for _, value, h in mistakes[k] if np.isclose(got[k], value(lo, up, want), rtol=1e-6)),
                default_hints[k],
            )
            fail(
                f"{name}: the L1 sensitivity of {what} is not right for the box lower={list(lower)}, "
                f"upper={list(upper)}",
                round(float(want[k]), 6),
                round(float(got[k]), 6),
                hint,
            )


def check_cf_sensitivities(cf_sensitivities, seed=None, solutions=None):
    """``cf_sensitivities(lower, upper)``: the L1 sensitivities (Delta N, Delta LS, Delta SS) of one CF.

    Neighbouring data sets differ by adding or removing one record x of the box
    [lower, upper]. Checked on five boxes, two with negative sides, against ``CF_SENSITIVITY_ANSWERS``
    (``birch.cf_sensitivities``, the sensitivities ``DPBirchPublicTree`` calibrates its noise to; relative
    tolerance 1e-9); each part's typical mistakes are in ``CF_SENSITIVITY_MISTAKES``. A graded run draws
    five other boxes from ``seed`` and compares with the teacher's solution.

    Examples
    --------
    >>> import numpy as np
    >>> def cf_sensitivities(lower, upper):
    ...     largest = np.maximum(np.abs(lower), np.abs(upper))
    ...     return 1.0, float(largest.sum()), float(np.sum(largest**2))
    >>> check_cf_sensitivities(cf_sensitivities)
    Correct: ...
    """
    boxes, reference = answer_key(
        _SENSITIVITY_BOXES, CF_SENSITIVITY_ANSWERS, _boxes, seed, solutions, "cf_sensitivities"
    )
    _check_triples(
        cf_sensitivities, "cf_sensitivities", boxes, reference, CF_SENSITIVITY_MISTAKES, _SENSITIVITY_DEFAULT_HINTS
    )
    return passed(f"the sensitivities of (N, LS, SS) are right on all {len(boxes)} boxes")


# DPBirch trees on uniform data in a box: (lower, upper, epsilon, T, B, records). The first is the case the
# hints are read from: there no two typical mistakes give the same number. The epsilons are large enough
# that no tree collapses to a single level (their heights are 9, 9, 2, 3 and 12).
_INSERTION_TREES = [
    ((0.0, -2.0, 0.0, -0.5), (1.0, 1.0, 3.0, 0.5), 2.0, 0.3, 4, 300),
    ((-1.0, 0.0, -3.0), (0.5, 2.0, -1.0), 5.0, 0.1, 3, 200),
    ((0.0,) * 10, (1.0,) * 10, 2.0, 0.5, 50, 300),
    ((-2.0,), (1.0,), 5.0, 0.2, 5, 50),
    ((0.0,) * 3, (1.0,) * 3, 5.0, 0.1, 2, 100),
]


def _insertion_cases(rng, public=False):
    """(h, lower, upper, epsilon) of DPBirch trees fitted to data drawn from ``rng``: a graded run's cases, each
    epsilon moved by up to 25% (``public``: the trees as listed)."""
    cases = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NegativeRadiusWarning)
        for lower, upper, eps, T, B, n in _INSERTION_TREES:
            eps = eps if public else float(np.round(eps * 10 ** rng.uniform(-0.1, 0.1), 3))
            lo, up = np.array(lower), np.array(upper)
            X = lo + (up - lo) * rng.random((n, len(lo)))
            est = DPBirch(None, epsilon=eps, threshold=T, branching_factor=B, bounds=(lo, up), random_state=rng).fit(X)
            cases.append((est.height_, lo, up, eps))
    return cases


# The public cases: the trees fitted with np.random.default_rng(0), and what one insertion costs in each
# (DPBirch.epsilon_if_shape_public_; tests/test_exercises.py fits them again)
INSERTION_CASES = [
    (h, np.array(lower), np.array(upper), eps) for h, (lower, upper, eps, *_) in zip((9, 9, 2, 3, 12), _INSERTION_TREES)
]
INSERTION_ANSWERS = [124.5, 300.0, 80.0, 45.0, 360.0]


def _insertion_mistake(cost):
    """A wrong cost as a function of the checker's case (h, lower, upper, epsilon), from
    ``cost(h, Delta LS, Delta SS, Delta q, epsilon, d)``."""

    def wrong(h, lo, up, e):
        big = _largest(lo, up)
        return cost(h, float(big.sum()), float(np.sum(big**2)), float(big.max()), e, len(lo))

    return wrong


# The typical wrong costs of one insertion, as data: (name, cost as a function of (h, Delta LS, Delta SS,
# Delta q, epsilon, d), hint).
INSERTION_EPSILON_MISTAKES = (
    (
        "the paper's 2 eps",
        lambda h, L, S, q, e, d: 2 * e,
        "that is the paper's claim (eps for LS, eps for SS): it takes the sensitivity to be Delta q and counts one CF",
    ),
    (
        "one CF",
        lambda h, L, S, q, e, d: (L + S) * e / q,
        "that is the cost of ONE noisy CF. The record updates one CF on each of the h levels; all of them contain "
        "it, so they compose sequentially",
    ),
    (
        "Delta q as the sensitivity",
        lambda h, L, S, q, e, d: 2 * h * e,
        "Delta q is the largest change of ONE coordinate: LS moves by up to sum_j max(|l_j|, |u_j|) in L1 norm, "
        "and SS by up to sum_j max(l_j^2, u_j^2)",
    ),
    (
        "scale 1/eps",
        lambda h, L, S, q, e, d: h * (L + S) * e,
        "the noise scale is Delta q / eps, not 1/eps: a release with L1 sensitivity Delta and noise scale b costs "
        "Delta / b",
    ),
    ("LS only", lambda h, L, S, q, e, d: h * L * e / q, "SS is noised too, and its change counts as well"),
    (
        "(sum |x_j|)^2 for SS",
        lambda h, L, S, q, e, d: h * (L + L * L) * e / q,
        "SS moves by ||x||^2 = sum_j x_j^2, at most sum_j max(l_j^2, u_j^2), not by (sum_j |x_j|)^2",
    ),
    (
        "h - 1 levels",
        lambda h, L, S, q, e, d: (h - 1) * (L + S) * e / q,
        "count the leaf level too: a tree of h levels has h CFs on every path",
    ),
    (
        "2 h d eps",
        lambda h, L, S, q, e, d: 2 * h * d * e,
        "2 h d eps holds on [0, 1]^d only; in this box the sensitivities and Delta q are different",
    ),
)


def check_dpbirch_insertion_epsilon(insertion_epsilon, seed=None, solutions=None):
    """``insertion_epsilon(h, lower, upper, epsilon)``: what the noise of one insertion costs, the paper's scheme.

    Lap(Delta q / epsilon) on every coordinate of LS and on SS of each of the h
    CFs on the record's path, Delta q the largest |x_j| the box [lower, upper]
    allows (1 on [0, 1]^d, the paper's value); each noisy CF released once, N
    and the tree's shape taken as public. Checked against ``INSERTION_ANSWERS``, the
    ``DPBirch.epsilon_if_shape_public_`` of five fitted trees in boxes with
    and without negative sides (relative tolerance 1e-9), naming the typical
    mistakes of ``INSERTION_EPSILON_MISTAKES``; a graded run fits five trees to data drawn from ``seed``
    and compares with the teacher's solution. While it runs, the
    ``cf_sensitivities`` it may call gives the right answer of the exercise's first part (the library's,
    or the teacher's in a graded run), so a wrong first part does not fail this one.

    Examples
    --------
    The ``cf_sensitivities`` it calls is the reference while the check runs:

    >>> import numpy as np
    >>> def insertion_epsilon(h, lower, upper, epsilon):
    ...     _, delta_ls, delta_ss = cf_sensitivities(lower, upper)
    ...     return h * (delta_ls + delta_ss) * epsilon / np.max(np.maximum(np.abs(lower), np.abs(upper)))
    >>> check_dpbirch_insertion_epsilon(insertion_epsilon)
    Correct: ...
    """
    cases, reference = answer_key(
        INSERTION_CASES, INSERTION_ANSWERS, _insertion_cases, seed, solutions, "insertion_epsilon"
    )
    first_part = library_cf_sensitivities if seed is None else solutions["cf_sensitivities"]
    with reference_inputs(insertion_epsilon, cf_sensitivities=first_part):
        return check_function(
            "the budget one insertion spends",
            insertion_epsilon,
            reference,
            cases,
            rtol=1e-9,
            mistakes=[(_insertion_mistake(f), hint) for _, f, hint in INSERTION_EPSILON_MISTAKES],
            hint="for each CF on the path: (L1 sensitivity of LS + that of SS) / noise scale; then compose over "
            "the path",
        )


_SPLIT_HINT = "the three parts share eps: N gets eps/4, LS eps/2 and SS eps/4 (sequential composition)"

# The typical wrong noise scales of the leaves, as data: (part, or None for every part; name; wrong scale
# as a function of (part index k, sensitivities, epsilon, the part's share of epsilon, lower, upper, the number
# of leaves); hint).
# check_public_tree_leaf_noise names the first one the noise of a part follows (the common ones first).
LEAF_NOISE_MISTAKES = (
    (
        None,
        "the share divided among the leaves",
        lambda k, delta, eps, eps_k, lo, up, m: delta[k] / (eps_k / m),
        "misconception: that the leaves share each part's budget. A record falls into ONE leaf, so the m "
        "leaves' releases are on disjoint data (parallel composition): each leaf's N, LS and SS get their "
        "part's whole share of eps. Dividing it among the leaves multiplies the noise by m for no privacy gain",
    ),
    (None, "the whole eps", lambda k, delta, eps, eps_k, lo, up, m: delta[k] / eps, _SPLIT_HINT),
    (
        None,
        "equal thirds",
        lambda k, delta, eps, eps_k, lo, up, m: delta[k] / (eps / 3),
        "the split is (1/4, 1/2, 1/4) for (N, LS, SS), not equal thirds",
    ),
    (
        "LS",
        "d",
        lambda k, delta, eps, eps_k, lo, up, m: len(lo) / eps_k,
        "d is the sensitivity of LS on [0, 1]^d only; for this box it is larger",
    ),
    (
        "LS",
        "Delta q = 1",
        lambda k, delta, eps, eps_k, lo, up, m: 1 / eps_k,
        "Delta q = 1 is the paper's value for one coordinate; LS has d of them, and "
        "its L1 sensitivity adds up their largest changes",
    ),
    (
        "LS",
        "the largest coordinate",
        lambda k, delta, eps, eps_k, lo, up, m: _largest(lo, up).max() / eps_k,
        "the L1 sensitivity adds up the coordinates' largest changes; it is not the largest one",
    ),
    (
        "LS",
        "replacement",
        lambda k, delta, eps, eps_k, lo, up, m: np.sum(up - lo) / eps_k,
        "that is the sensitivity when a record is REPLACED; here a record is added or removed",
    ),
    (
        "SS",
        "d",
        lambda k, delta, eps, eps_k, lo, up, m: len(lo) / eps_k,
        "d is the sensitivity of SS on [0, 1]^d only; for this box it is larger",
    ),
    ("SS", "1", lambda k, delta, eps, eps_k, lo, up, m: 1 / eps_k, "SS moves by ||x||^2, far more than 1 in this box"),
    (
        "SS",
        "(sum |x_j|)^2",
        lambda k, delta, eps, eps_k, lo, up, m: delta[1] ** 2 / eps_k,
        "||x||^2 is the sum of the squared coordinates, not the square of their sum",
    ),
    (
        "SS",
        "upper sides only",
        lambda k, delta, eps, eps_k, lo, up, m: np.sum(up**2) / eps_k,
        "a side with l_j < 0 can reach l_j^2 > u_j^2: take the larger",
    ),
    (
        "SS",
        "||x||_1",
        lambda k, delta, eps, eps_k, lo, up, m: delta[1] / eps_k,
        "SS moves by ||x||^2, not by ||x||_1",
    ),
)


def check_public_tree_leaf_noise(noisy_leaves, epsilon=1.0, m=20_000, seed=0):
    """``noisy_leaves(n, ls, ss, epsilon, lower, upper, rng)``: DPBirchPublicTree's release of its leaf CFs.

    Every leaf's N, each coordinate of its LS, and its SS get an independent
    Laplace draw of scale Delta / (share * epsilon): the L1 sensitivities of
    the box [lower, upper], the shares (1/4, 1/2, 1/4). Checked on m leaves in
    a 4-d box with negative sides, against the library's scales
    (``birch.cf_sensitivities`` over DPBirchPublicTree's budget shares): a Kolmogorov-Smirnov test of each
    part's noise (typical mistakes: ``LEAF_NOISE_MISTAKES``) and a correlation test of all pairs of noise
    columns, family-wise alpha = 0.001 (Bonferroni, a quarter for each). While it runs, the
    ``cf_sensitivities`` it may call is the library's (Exercise 3's reference answer).

    Examples
    --------
    >>> import numpy as np
    >>> def noisy_leaves(n, ls, ss, epsilon, lower, upper, rng):
    ...     top = np.maximum(np.abs(lower), np.abs(upper))
    ...     scale = np.array([1.0, top.sum(), np.sum(top**2)]) / (np.array([0.25, 0.5, 0.25]) * epsilon)
    ...     return tuple(part + rng.laplace(0.0, b, size=np.shape(part)) for part, b in zip((n, ls, ss), scale))
    >>> check_public_tree_leaf_noise(noisy_leaves)
    Correct: ...
    """
    lower, upper = (np.array(b) for b in _SENSITIVITY_BOXES[0])
    d = len(lower)
    rng = np.random.default_rng(seed)
    n = rng.integers(0, 60, m).astype(float)
    ls = (lower + (upper - lower) * rng.random((m, d))) * n[:, None]  # exact CFs of some records in the box
    ss = np.sum(np.maximum(lower**2, upper**2)) * n * rng.random(m)
    with reference_inputs(noisy_leaves, cf_sensitivities=library_cf_sensitivities):
        out = call_student(noisy_leaves, n.copy(), ls.copy(), ss.copy(), epsilon, lower.copy(), upper.copy(), rng)
    parts = _leaf_noise_parts(out, (n, ls, ss))
    share = np.array(DPBirchPublicTree().budget_split)
    delta = np.array(library_cf_sensitivities(lower, upper))
    scales = delta / (share * epsilon)
    level = ALPHA / 4
    for k, (what, noise) in enumerate(zip(("N", "LS", "SS"), (parts[0], parts[1].ravel(), parts[2]))):
        mistakes = [
            (stats.laplace(scale=scale(k, delta, epsilon, share[k] * epsilon, lower, upper, m)).cdf, hint)
            for part, _, scale, hint in LEAF_NOISE_MISTAKES
            if part in (None, what)
        ]
        hint = f"{what}: Laplace noise of scale (L1 sensitivity of {what}) / (its share of eps)"
        _laplace_part(what, noise, scales[k], level, mistakes, hint)
    columns = np.column_stack([parts[0], parts[1], parts[2]])
    _independent(columns, ["N"] + [f"LS[{j}]" for j in range(d)] + ["SS"], level)
    return passed(
        f"each leaf's N, LS and SS carry independent Laplace noise of scales "
        f"{', '.join(f'{s:g}' for s in scales)} (eps = {epsilon:g}), as in DPBirchPublicTree"
    )


def _leaf_noise_parts(out, exact):
    """The noise the student's release added to (n, ls, ss): three arrays shaped like the exact ones."""
    if not isinstance(out, (tuple, list)) or len(out) != 3:
        fail(
            "noisy_leaves did not return three arrays",
            "a tuple (n, ls, ss) of noisy arrays",
            short(out),
            "return the noisy n, ls and ss, shaped like the exact ones",
        )
    parts = []
    for part, value, label in zip(out, exact, ("n", "ls", "ss")):
        got = as_float(part, "noisy_leaves", value.shape)
        if got.shape != value.shape:
            fail(
                f"noisy_leaves returned {label} of the wrong shape",
                value.shape,
                got.shape,
                "one noisy value per leaf (and per coordinate for ls); no loop, no aggregation",
            )
        parts.append(got - value)
    return parts


_ADD_REMOVE = "that is the change when one record is ADDED or REMOVED; here one record is replaced by another"

# The typical wrong sensitivities under replacement, as data: for N, LS and SS in turn, (name, wrong value as a
# function of (lower, upper), hint).
REPLACEMENT_SENSITIVITY_MISTAKES = (
    (("add or remove", lambda lo, up, want: 1.0, "a replaced record leaves N as it is: " + _ADD_REMOVE),),
    (
        ("add or remove", lambda lo, up, want: float(np.sum(_largest(lo, up))), _ADD_REMOVE),
        (
            "twice the largest",
            lambda lo, up, want: float(2 * np.sum(_largest(lo, up))),
            "x - x' has coordinates in [l_j - u_j, u_j - l_j]: the largest |x_j - x'_j| is u_j - l_j",
        ),
    ),
    (
        ("add or remove", lambda lo, up, want: float(np.sum(_largest(lo, up) ** 2)), _ADD_REMOVE),
        (
            "u^2 - l^2",
            lambda lo, up, want: float(np.sum(np.abs(np.asarray(up) ** 2 - np.asarray(lo) ** 2))),
            "where the box contains 0 the smallest x_j^2 is 0, not min(l_j^2, u_j^2)",
        ),
        (
            "(u - l)^2",
            lambda lo, up, want: float(np.sum((np.asarray(up) - np.asarray(lo)) ** 2)),
            "||x||^2 - ||x'||^2 is not ||x - x'||^2: take the largest ||x||^2 minus the smallest over the box",
        ),
    ),
)

REPLACEMENT_BOXES = [
    ((0.0, 0.0, 0.0), (1.0, 1.0, 1.0)),
    ((-1.0, 0.5, -3.0), (2.0, 1.5, -1.0)),
    ((-2.0, -2.0), (-0.5, 3.0)),
    ((1.0, -4.0, 0.0, 2.0), (3.0, 1.0, 0.25, 2.5)),
]


# Their right answers (tests/test_exercises.py: the largest change over pairs of records of each box)
REPLACEMENT_ANSWERS = [(0.0, 3.0, 3.0), (0.0, 6.0, 14.0), (0.0, 6.5, 12.75), (0.0, 7.75, 26.3125)]


def check_replacement_sensitivities(replacement_sensitivities, seed=None, solutions=None):
    """``replacement_sensitivities(lower, upper)``: (Delta N, Delta LS, Delta SS) of one CF, bounded DP.

    Neighbouring data sets of the same size differ in one record of the box
    [lower, upper], replaced by another. Checked on four boxes (with and without
    0 inside, negative sides) against ``REPLACEMENT_ANSWERS`` (relative tolerance 1e-9),
    naming the typical mistakes of ``REPLACEMENT_SENSITIVITY_MISTAKES``; a graded run draws five other
    boxes from ``seed`` and compares with the teacher's solution.

    Examples
    --------
    >>> check_replacement_sensitivities(lambda lower, upper: (0.0, 1.0, 1.0))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: replacement_sensitivities: the L1 sensitivity of LS is not right ...
    """
    boxes, reference = answer_key(
        REPLACEMENT_BOXES, REPLACEMENT_ANSWERS, _boxes, seed, solutions, "replacement_sensitivities"
    )
    hints = ("take the largest change over every pair (x, x') of records of the box",) * 3
    _check_triples(
        replacement_sensitivities,
        "replacement_sensitivities",
        boxes,
        reference,
        REPLACEMENT_SENSITIVITY_MISTAKES,
        hints,
    )
    return passed(f"the sensitivities of (N, LS, SS) under replacement are right on all {len(boxes)} boxes")

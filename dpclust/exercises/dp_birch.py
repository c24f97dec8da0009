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
from dpclust_lib.validation import PrivacyLeakWarning

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
            "SS, one number",
            f"SS of shape {ss.shape}",
            "SS is one number per CF (the notebook's and scikit-learn's convention), not one per coordinate",
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
                "build a new CF: an in-place operation such as += changes the array of a CF you were given",
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
        "your LS is the mean of the points, their centroid; reread what LS, the linear sum, is (Section 1)",
    ),
    (
        "SS without squares",
        lambda X: _flat_parts(len(X), X.sum(axis=0), X.sum()),
        "your SS adds up the coordinates as they are; what does SS, the square sum, square?",
    ),
    (
        "SS as ||LS||^2",
        lambda X: _flat_parts(len(X), X.sum(axis=0), X.sum(axis=0) @ X.sum(axis=0)),
        "your SS is the squared norm of LS; does SS square before or after summing over the points?",
    ),
    (
        "N as d",
        lambda X: _flat_parts(X.shape[1], X.sum(axis=0), np.sum(X * X)),
        "your N is the number of coordinates; what does N count?",
    ),
)

CF_MERGE_MISTAKES = (
    (
        "averaged",
        lambda a, b: _flat_parts(a[0] + b[0], (a[1] + b[1]) / 2, (a[2] + b[2]) / 2),
        "you averaged the two CFs; what does the additivity theorem say each part of the union is?",
    ),
    (
        "cross term in SS",
        lambda a, b: _flat_parts(a[0] + b[0], a[1] + b[1], a[2] + b[2] + 2 * a[1] @ b[1]),
        "your SS has a cross term 2 LS_a.LS_b, as if you squared the norm of the union's LS; is SS the squared "
        "norm of a sum, or a sum of squared norms?",
    ),
    (
        "SS as ||LS||^2",
        lambda a, b: _flat_parts(a[0] + b[0], a[1] + b[1], (a[1] + b[1]) @ (a[1] + b[1])),
        "your SS is the union's ||LS||^2; is SS the squared norm of a sum, or a sum of squared norms?",
    ),
    (
        "LS as a centroid",
        lambda a, b: _flat_parts(a[0] + b[0], (a[1] + b[1]) / (a[0] + b[0]), a[2] + b[2]),
        "your LS is the union's centroid, but LS is a sum, not a mean",
    ),
)

CF_RADIUS_MISTAKES = (
    ("R^2", _sq_radius, "that is R^2, not R"),
    (
        "||LS||^2 / N",
        lambda cf: _root(cf[2] / cf[0] - cf[1] @ cf[1] / cf[0]),
        "you divided ||LS||^2 by N once: how does the squared norm of the centroid scale with N?",
    ),
    (
        "sum, not mean",
        lambda cf: _root(cf[2] - cf[1] @ cf[1] / cf[0]),
        "that is the root of the SUM of the squared distances to the centroid; R is a root MEAN square",
    ),
    (
        "roots subtracted",
        lambda cf: math.sqrt(max(cf[2] / cf[0], 0)) - np.linalg.norm(cf[1] / cf[0]),
        "you subtracted two square roots; is the root of a difference the difference of the roots?",
    ),
    (
        "the diameter",
        "diameter",  # the value comes from the point set (scipy's pdist), not from a formula in the CF
        "that is the diameter, from the distances between pairs of points; the radius measures distances to what?",
    ),
)

# The typical wrong diameters, as functions of the CF and of the right diameter (the mean over the pairs of
# points, from scipy's pdist: the package holds no formula that answers the exercise).
CF_DIAMETER_MISTAKES = (
    ("D^2", lambda cf, want: want**2, "that is D^2, not D"),
    (
        "twice the radius",
        lambda cf, want: 2 * _root(_sq_radius(cf)),
        "the diameter is not twice the radius: it is a root mean over pairs of points; start from ||x_i - x_j||^2",
    ),
    (
        "all N^2 pairs",
        lambda cf, want: _root(2 * _sq_radius(cf)),
        "you averaged over all N^2 pairs, the pairs (i, i) included; which pairs does D average over?",
    ),
    (
        "unordered pairs counted twice",
        lambda cf, want: want / math.sqrt(2),
        "off by a factor 2 under the root: how often does each unordered pair {i, j} appear in the sum over "
        "i != j, and how many pairs does the mean divide by?",
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
    ``cf_radius(cf)``: the radius R, and 0 when noise makes its square negative.
    ``cf_diameter(cf)``: the root mean squared distance between two distinct
    points. The first three are compared with the library's
    :class:`~dpclust_lib.cluster.birch.ClusteringFeature` on five point sets
    (one with negative coordinates) and on noisy CFs, the diameter with the mean
    over the pairs of points (``scipy.spatial.distance.pdist``); relative
    tolerance 1e-9. The typical mistakes named are ``CF_OF_MISTAKES``,
    ``CF_MERGE_MISTAKES``, ``CF_RADIUS_MISTAKES`` and ``CF_DIAMETER_MISTAKES``.

    Examples
    --------
    The first function is checked first; a typical mistake is named by its hint:

    >>> def cf_of(X):
    ...     return len(X), X.mean(axis=0), float(np.sum(X * X))
    >>> check_clustering_feature(cf_of, None, None, None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: cf_of: cf_of(array([[0.63696169, ... is not right ...
      hint:     your LS is the mean of the points, their centroid; reread what LS, the linear sum, is (Section 1)
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
        hint="compare each part with Section 1's definition of the CF: N and SS are numbers, LS a vector of d",
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
        hint="which quantities does the additivity theorem say add up over disjoint sets, and does the "
        "squared-norm term add too?",
    )
    _quietly(
        check_function,
        "cf_radius",
        cf_radius,
        lambda cf: ClusteringFeature(*cf).radius,
        [(_cf(X),) for X in sets] + [(noisy,)],
        rtol=_CF_RTOL,
        mistakes=_radius_mistakes(sets),
        hint="R^2 is the mean squared distance to the centroid: expand ||x - centroid||^2 and average over the points",
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
            "noise can make the squared radius negative (section 2): what does the prompt ask cf_radius to "
            "return then?",
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
            "expand ||x_i - x_j||^2 and sum each of its terms over the pairs i != j: which sums are N, LS and SS?",
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
        "your N did not change; what does N count, and what happens to it when a record joins?",
    ),
    (
        "SS + sum(x)",
        lambda cf, x, *_: _flat((cf[0] + 1, cf[1] + x, cf[2] + x.sum())),
        "your SS grew by the sum of x's coordinates; what does SS add up for each record?",
    ),
    (
        "SS + ||x||",
        lambda cf, x, *_: _flat((cf[0] + 1, cf[1] + x, cf[2] + math.sqrt(x @ x))),
        "your SS grew by the norm ||x||; what does SS add up for each record?",
    ),
    (
        "SS unchanged",
        lambda cf, x, *_: _flat((cf[0] + 1, cf[1] + x, cf[2])),
        "your SS did not change; the record joins the subcluster: what does it add to SS?",
    ),
    (
        "LS unchanged",
        lambda cf, x, *_: _flat((cf[0] + 1, cf[1], cf[2] + x @ x)),
        "your LS did not change; the record joins the subcluster: what does it add to LS?",
    ),
    (
        "CF replaced",
        lambda cf, x, *_: _flat((cf[0] + 1, x, x @ x)),
        "your CF is the record's own CF; the record joins the subcluster: what does the additivity theorem say?",
    ),
)

# The typical wrong noise of step 1, as data: (name, distribution family, its scale as a function of
# (d, epsilon), hint; "{scale}" in a hint is that scale).
UPDATE_NOISE_MISTAKES = (
    (
        "scale d/eps",
        stats.laplace,
        lambda d, eps: d / eps,
        "scale d/eps = {scale:g}: that is the honest accounting of Exercise 3; this exercise implements the "
        "paper's step 1: which Delta q does the paper use?",
    ),
    (
        "scale 2/eps",
        stats.laplace,
        lambda d, eps: 2 / eps,
        "scale 2/eps: the paper claims 2 eps in all: how much of it does each of LS and SS get?",
    ),
    (
        "scale 1/(2 eps)",
        stats.laplace,
        lambda d, eps: 1 / (2 * eps),
        "scale 1/(2 eps): how much budget does the paper give each of LS and SS?",
    ),
    (
        "scale eps",
        stats.laplace,
        lambda d, eps: eps,
        "your scale grows with eps; more budget must mean less noise: check which way round your ratio is",
    ),
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

    The answer must be the record merged into the CF, with an independent
    Lap(1/epsilon) draw (the paper's Delta q = 1 on [0, 1] data) on each
    coordinate of LS and on SS, and N exact. First at epsilon = 1e8 (noise below 1e-6) against the
    library's merge ``ClusteringFeature`` + ``ClusteringFeature.of(x)`` on three
    CFs (typical mistakes: ``UPDATE_MERGE_MISTAKES``); then ``n`` calls at
    ``epsilon`` on one CF: Kolmogorov-Smirnov tests of the LS noise (all
    coordinates) and of the SS noise against Lap(1/epsilon) (typical mistakes:
    ``UPDATE_NOISE_MISTAKES``), and a correlation test of every pair of the
    d + 1 noise columns; family-wise alpha = 0.001 (Bonferroni, a third for each).

    Examples
    --------
    A CF returned as it was:

    >>> check_dpbirch_noisy_update(lambda cf, x, epsilon, rng: cf)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: at epsilon = 1e+08 the update is far from the exact merge ...
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
            f"N = {want[0]:g} in every call",
            f"N from {out[:, 0].min():.4g} to {out[:, 0].max():.4g}",
            "the paper adds no noise to N: it stays exact",
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
            "at this epsilon the noise should be tiny: is the record merged in, and does your noise shrink as "
            "epsilon grows?",
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
        hint="step 1 first merges x into the CF by the additivity theorem (x alone is a CF of one point), then "
        "adds the noise",
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
        "LS needs one independent Laplace draw per coordinate, added after the merge; check its scale against "
        "the prompt's",
    )
    _laplace_part(
        "SS",
        noise[:, d],
        scale,
        level,
        mistakes,
        "SS needs one Laplace draw of its own, added after the merge: do you noise SS itself, or the record "
        "before squaring it?",
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
    """The smallest x_j^2 over the box, per coordinate."""
    return np.where((lo <= 0) & (up >= 0), 0.0, np.minimum(lo**2, up**2))


_REPLACED = "that is the change when one record is REPLACED by another; here a record x is added or removed"
_ONLY_ON_THE_UNIT_BOX = "d is the answer on [0, 1]^d only; here the box has other sides"
_SQUARE_OF_THE_SUM = "that is the square of the sum of the |x_j|; what does ||x||^2 add up?"
_UPPER_SIDES_SQUARED = "you used the upper sides only; with l_j < 0, which end of a side gives the largest x_j^2?"

# The typical wrong sensitivities, as data: for N, LS and SS in turn, (name, wrong value as a function of
# (lower, upper, right sensitivities), hint). check_cf_sensitivities names the first one the answer matches.
CF_SENSITIVITY_MISTAKES = (
    (("0 for N", lambda lo, up, want: 0.0, "N is a count: how much does adding or removing one record change it?"),),
    (
        (
            "Delta q = 1",
            lambda lo, up, want: 1.0,
            "Delta q = 1 is the change of ONE coordinate on [0, 1]; LS has d coordinates: what does the L1 norm of "
            "its change add up?",
        ),
        (
            "the largest coordinate",
            lambda lo, up, want: _largest(lo, up).max(),
            "that is the largest change of one coordinate; which norm of the whole change does the Laplace "
            "mechanism need?",
        ),
        (
            "the L2 norm",
            lambda lo, up, want: np.sqrt(np.sum(_largest(lo, up) ** 2)),
            "that is the L2 norm of the change; which norm is the Laplace mechanism calibrated to?",
        ),
        ("replacement", lambda lo, up, want: np.sum(up - lo), _REPLACED + ": how far does adding x move LS?"),
        (
            "upper sides only",
            lambda lo, up, want: np.sum(np.abs(up)),
            "you used the upper sides only; a coordinate can be negative: how large can |x_j| be when l_j < 0?",
        ),
        ("d", lambda lo, up, want: float(len(lo)), _ONLY_ON_THE_UNIT_BOX),
    ),
    (
        ("(sum |x_j|)^2", lambda lo, up, want: want[1] ** 2, _SQUARE_OF_THE_SUM),
        ("upper sides only", lambda lo, up, want: np.sum(up**2), _UPPER_SIDES_SQUARED),
        ("||x||_1", lambda lo, up, want: want[1], "that is LS's sensitivity, ||x||_1; how far can adding x move SS?"),
        ("1", lambda lo, up, want: 1.0, "1 bounds a count's change; how far can adding x move SS in this box?"),
        (
            "replacement",
            lambda lo, up, want: np.sum(_largest(lo, up) ** 2 - _smallest_square(lo, up)),
            _REPLACED + ": how far does adding x move SS?",
        ),
        ("d", lambda lo, up, want: float(len(lo)), _ONLY_ON_THE_UNIT_BOX),
    ),
)
_SENSITIVITY_DEFAULT_HINTS = (
    "N counts the records",
    "how far does adding or removing x move LS, in L1 norm, and how large can that be over the box?",
    "how far does adding or removing x move SS, and how large can that be over the box?",
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
    >>> check_cf_sensitivities(lambda lower, upper: (1.0, 1.0, 1.0))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: cf_sensitivities: the L1 sensitivity of LS is not right ...
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
    with warnings.catch_warnings():  # DPBirch's notes (its leak, its noisy radii) on data drawn here: no one's
        warnings.simplefilter("ignore", NegativeRadiusWarning)
        warnings.simplefilter("ignore", PrivacyLeakWarning)
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
        "that is the paper's claim (eps for LS, eps for SS); Section 6 lists what it leaves out: the "
        "sensitivities, and how many CFs?",
    ),
    (
        "one CF",
        lambda h, L, S, q, e, d: (L + S) * e / q,
        "that is the cost of ONE noisy CF; how many CFs on the path hold the record, and how do their releases "
        "compose?",
    ),
    (
        "Delta q as the sensitivity",
        lambda h, L, S, q, e, d: 2 * h * e,
        "you took Delta q as the sensitivity; Delta q bounds ONE coordinate: what are the L1 sensitivities of LS "
        "and SS (the first part)?",
    ),
    (
        "scale 1/eps",
        lambda h, L, S, q, e, d: h * (L + S) * e,
        "you took the noise scale as 1/eps; which scale does the scheme draw with in this box?",
    ),
    ("LS only", lambda h, L, S, q, e, d: h * L * e / q, "you counted LS only; what else does each CF release?"),
    (
        "(sum |x_j|)^2 for SS",
        lambda h, L, S, q, e, d: h * (L + L * L) * e / q,
        "you took (sum_j |x_j|)^2 for SS's sensitivity; is ||x||^2 the square of a sum or a sum of squares?",
    ),
    (
        "h - 1 levels",
        lambda h, L, S, q, e, d: (h - 1) * (L + S) * e / q,
        "one level short: does your count of the CFs on the path include the leaf level's?",
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
    >>> check_dpbirch_insertion_epsilon(lambda h, lower, upper, epsilon: 2 * epsilon)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: the budget one insertion spends: <lambda>(9, ...
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
            hint="for each noisy CF on the path, what does the Laplace mechanism's guarantee give, and how do the "
            "CFs on the path compose?",
        )


_SPLIT_HINT = "each part got the whole eps, but the three parts hold the same record: how does the prompt split eps?"

# The typical wrong noise scales of the leaves, as data: (part, or None for every part; name; wrong scale
# as a function of (part index k, sensitivities, epsilon, the part's share of epsilon, lower, upper, the number
# of leaves); hint).
# check_public_tree_leaf_noise names the first one the noise of a part follows (the common ones first).
LEAF_NOISE_MISTAKES = (
    (
        None,
        "the share divided among the leaves",
        lambda k, delta, eps, eps_k, lo, up, m: delta[k] / (eps_k / m),
        "misconception: that the leaves share each part's budget. How many leaves can one record fall into, "
        "and which composition applies to releases on disjoint data?",
    ),
    (None, "the whole eps", lambda k, delta, eps, eps_k, lo, up, m: delta[k] / eps, _SPLIT_HINT),
    (
        None,
        "equal thirds",
        lambda k, delta, eps, eps_k, lo, up, m: delta[k] / (eps / 3),
        "you split eps in equal thirds; reread the prompt's budget_split",
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
        "Delta q = 1 is the paper's value for one coordinate; LS has d of them: what does its L1 sensitivity "
        "add up (Exercise 3)?",
    ),
    (
        "LS",
        "the largest coordinate",
        lambda k, delta, eps, eps_k, lo, up, m: _largest(lo, up).max() / eps_k,
        "that is the largest change of one coordinate; what does the L1 sensitivity of LS add up (Exercise 3)?",
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
    (
        "SS",
        "1",
        lambda k, delta, eps, eps_k, lo, up, m: 1 / eps_k,
        "1 bounds a count's change; how far can adding x move SS in this box (Exercise 3)?",
    ),
    ("SS", "(sum |x_j|)^2", lambda k, delta, eps, eps_k, lo, up, m: delta[1] ** 2 / eps_k, _SQUARE_OF_THE_SUM),
    ("SS", "upper sides only", lambda k, delta, eps, eps_k, lo, up, m: np.sum(up**2) / eps_k, _UPPER_SIDES_SQUARED),
    (
        "SS",
        "||x||_1",
        lambda k, delta, eps, eps_k, lo, up, m: delta[1] / eps_k,
        "that is LS's sensitivity, ||x||_1; how far can adding x move SS?",
    ),
)


def check_public_tree_leaf_noise(noisy_leaves, epsilon=1.0, m=20_000, seed=0):
    """``noisy_leaves(n, ls, ss, epsilon, lower, upper, rng)``: DPBirchPublicTree's release of its leaf CFs.

    Every leaf's N, each coordinate of its LS, and its SS get an independent
    Laplace draw, of the scale the Laplace mechanism needs for that part's L1
    sensitivity in the box [lower, upper] and its share of epsilon (1/4, 1/2, 1/4). Checked on m leaves in
    a 4-d box with negative sides, against the library's scales
    (``birch.cf_sensitivities`` over DPBirchPublicTree's budget shares): a Kolmogorov-Smirnov test of each
    part's noise (typical mistakes: ``LEAF_NOISE_MISTAKES``) and a correlation test of all pairs of noise
    columns, family-wise alpha = 0.001 (Bonferroni, a quarter for each). While it runs, the
    ``cf_sensitivities`` it may call is the library's (Exercise 3's reference answer).

    Examples
    --------
    Leaves released without noise:

    >>> check_public_tree_leaf_noise(lambda n, ls, ss, epsilon, lower, upper, rng: (n, ls, ss))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: the noise on N does not follow Lap(4) ...
      hint:     N carries no noise: add a fresh Laplace draw to every number released
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
        hint = f"{what}: which L1 sensitivity and which share of eps set the scale of its Laplace noise?"
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
    (("add or remove", lambda lo, up, want: 1.0, _ADD_REMOVE + ": does N change?"),),
    (
        ("add or remove", lambda lo, up, want: float(np.sum(_largest(lo, up))), _ADD_REMOVE),
        (
            "twice the largest",
            lambda lo, up, want: float(2 * np.sum(_largest(lo, up))),
            "you doubled the largest |x_j|; how far apart can two values x_j, x'_j of the side [l_j, u_j] be?",
        ),
    ),
    (
        ("add or remove", lambda lo, up, want: float(np.sum(_largest(lo, up) ** 2)), _ADD_REMOVE),
        (
            "u^2 - l^2",
            lambda lo, up, want: float(np.sum(np.abs(np.asarray(up) ** 2 - np.asarray(lo) ** 2))),
            "you took |u_j^2 - l_j^2| per side; where is x_j^2 smallest on a side that contains 0?",
        ),
        (
            "(u - l)^2",
            lambda lo, up, want: float(np.sum((np.asarray(up) - np.asarray(lo)) ** 2)),
            "||x||^2 - ||x'||^2 is not ||x - x'||^2: how large can the difference of two squared norms be over "
            "the box?",
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

"""Zhang & Cheng (2021), notebook 03: the noisy quadtree levels, the EUG grid size and the budget a
DPQTk-means fit spends.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from dpclust_lib.cluster.dpqt_kmeans import DPQTKMeans

from ._core import (
    ExerciseError,
    answer_key,
    call_student,
    check_function,
    diagnose,
    fail,
    ks_check,
    laplace_cdf,
    pair_of_arrays,
    passed,
    reference_inputs,
)

__all__ = [
    "check_quadtree_level",
    "check_eug_grid_size",
    "check_dpqt_epsilon_spent",
    "check_split_probability",
    "check_reach_probability",
]


# The typical wrong noise scales of one quadtree level, as data: (name, scale as a function of
# (epsilon_tree, max_height), hint). check_quadtree_level names the first one the noise follows.
QUADTREE_SCALE_MISTAKES = (
    (
        "the whole budget per level",
        lambda eps, height: 1 / eps,
        "every level gets epsilon_tree / maxH, not all of epsilon_tree: the maxH "
        "levels run one after the other on the same data (sequential composition)",
    ),
    (
        "maxH + 1 levels",
        lambda eps, height: (height + 1) / eps,
        "off by one in the depth: counts are released at depths "
        "0, ..., maxH - 1, that is maxH levels (a node at depth maxH "
        "stops whatever its count), so each gets epsilon_tree / maxH",
    ),
    (
        "maxH - 1 levels",
        lambda eps, height: (height - 1) / eps,
        "off by one in the depth: depths 0, ..., maxH - 1 are maxH levels, so each gets epsilon_tree / maxH",
    ),
    (
        "budget times sensitivity",
        lambda eps, height: 1 / (eps * height),
        "the scale is sensitivity / budget = 1 / (epsilon_tree / maxH) = maxH / epsilon_tree",
    ),
    (
        "sensitivity 2",
        lambda eps, height: 2 * height / eps,
        "the nodes of one level are disjoint cells, so one record changes one count by 1: the level's sensitivity is 1",
    ),
)

# The typical wrong split rules, as data: (name, split as a function of (counts, noisy counts, threshold), hint).
QUADTREE_SPLIT_MISTAKES = (
    (
        "split on the true count",
        lambda counts, noisy, threshold: counts > threshold,
        "the split is decided on the TRUE count; it must use the noisy count, or the tree's "
        "shape leaks the data outside the budget",
    ),
    (
        "inverted",
        lambda counts, noisy, threshold: noisy <= threshold,
        "inverted: a node splits when its noisy count EXCEEDS the threshold (Alg. 2 stops if NoisyCount <= T)",
    ),
    (
        "not strict",
        lambda counts, noisy, threshold: noisy >= threshold,
        "a node splits when its noisy count exceeds T (strictly)",
    ),
)


def check_quadtree_level(release_level, epsilon_tree=0.6, max_height=4, threshold=10.0, n_nodes=20_000, seed=0):
    """``release_level(counts, epsilon_tree, max_height, threshold, rng)``: one level of the DP quadtree.

    Must return (noisy counts, split): every node's count plus its own
    Lap(max_height / epsilon_tree) (the level's share epsilon_tree / max_height,
    sensitivity 1 over disjoint cells), and split = noisy count > threshold, as
    :func:`~dpclust_lib.cluster.dpqt_kmeans.build_dp_quadtree` does. The noise is
    checked by a Kolmogorov-Smirnov test at alpha = 0.001 over ``n_nodes``
    nodes, naming typical wrong scales (``QUADTREE_SCALE_MISTAKES``); the split
    rule exactly (``QUADTREE_SPLIT_MISTAKES``).

    Examples
    --------
    >>> import numpy as np
    >>> def release_level(counts, epsilon_tree, max_height, threshold, rng):
    ...     noisy = np.asarray(counts, dtype=float) + rng.laplace(0.0, max_height / epsilon_tree, size=len(counts))
    ...     return noisy, noisy > threshold
    >>> check_quadtree_level(release_level)
    Correct: ...
    """
    counts = np.random.default_rng([seed, 303]).integers(0, 40, size=n_nodes).astype(float)
    name = "release_level"
    out = call_student(release_level, counts.copy(), epsilon_tree, max_height, threshold, np.random.default_rng(seed))
    noisy, split = pair_of_arrays(out, name, ("noisy_counts", (n_nodes,)), ("split", (n_nodes,)))
    _check_level_noise(noisy - counts, epsilon_tree, max_height)
    _check_level_split(split, counts, noisy, threshold)
    return passed(
        f"every node's count carries Lap(maxH / epsilon_tree) = Lap({max_height / epsilon_tree:g}), and a node "
        "splits when its noisy count exceeds T"
    )


def _check_level_noise(noise, epsilon_tree, max_height):
    """The noise of one level: present, one draw per node, Lap(maxH / epsilon_tree)."""
    if np.all(np.abs(noise) < 1e-12):
        fail(
            "the counts came back exact",
            "count + Laplace noise for every node",
            "the exact counts",
            "the split decisions are released (they shape the tree), so they must come from noisy counts",
        )
    if np.ptp(noise) == 0:
        fail(
            "every node got the same noise",
            "an independent draw per node",
            "one draw for the whole level",
            "draw one Laplace value per node: size=len(counts)",
        )
    b = max_height / epsilon_tree
    mistakes = [(laplace_cdf(scale(epsilon_tree, max_height)), hint) for _, scale, hint in QUADTREE_SCALE_MISTAKES]
    ks_check(
        "the noise of the counts",
        noise,
        noise.size,
        laplace_cdf(b),
        mistakes,
        f"each count gets Lap(maxH / epsilon_tree) = Lap({b:g})",
    )


def _check_level_split(split, counts, noisy, threshold):
    """The split decisions: exactly noisy count > threshold, one boolean per node."""
    want = noisy > threshold
    as_bool = split.astype(bool)
    if np.isin(split, [0, 1]).all() and np.array_equal(as_bool, want):
        return
    wrong = [(rule(counts, noisy, threshold), hint) for _, rule, hint in QUADTREE_SPLIT_MISTAKES]
    hint = diagnose(split, wrong, 1e-9, "split = noisy count > threshold, one boolean per node")
    fail(
        "the split decisions are not right",
        f"{int(want.sum())} of {len(want)} nodes split",
        f"{int(as_bool.sum())} split",
        hint,
    )


def _eug_raw(n, e, d, theta=10.0):
    """m before rounding: (N eps / theta)^(2 / (d + 2))."""
    return (n * e / theta) ** (2.0 / (d + 2))


_ROUNDING = "round to the nearest integer (2.55 -> 3), as the library does"

# The typical wrong grid sizes, as data: (name, m as a function of (n, epsilon, n_features), hint).
EUG_GRID_MISTAKES = (
    (
        "M, not m",
        lambda n, e, d: max(1, math.floor(_eug_raw(n, e, d) ** d + 0.5)),
        "that is M, the number of cells in all; each of the d dimensions gets m = M^(1/d)",
    ),
    (
        "not rounded",
        lambda n, e, d: _eug_raw(n, e, d),
        "a number of cells is an integer: round to the nearest, at least 1",
    ),
    ("rounded down", lambda n, e, d: max(1, math.floor(_eug_raw(n, e, d))), _ROUNDING),
    ("rounded up", lambda n, e, d: max(1, math.ceil(_eug_raw(n, e, d))), _ROUNDING),
    (
        "no floor at 1",
        lambda n, e, d: math.floor(_eug_raw(n, e, d) + 0.5),
        "a grid has at least one cell per dimension, even when N eps / 10 is below 1",
    ),
    (
        "theta left out",
        lambda n, e, d: max(1, math.floor(_eug_raw(n, e, d, 1.0) + 0.5)),
        "theta = 10 is part of the formula: (N eps / 10)",
    ),
    (
        "exponent 2/d",
        lambda n, e, d: max(1, math.floor((n * e / 10) ** (2.0 / d) + 0.5)),
        "M^(1/d) = (N eps / 10)^(2d/(d + 2) / d) = (N eps / 10)^(2/(d + 2))",
    ),
)

_EUG_CASES = [
    (10_000, 0.1, 2),
    (6_500, 0.01, 2),
    (100, 0.01, 2),
    (19_020, 0.5, 10),
    (1_000, 1.0, 1),
    (5_000, 0.2, 3),
    (100_000, 1.0, 2),
]
EUG_GRID_ANSWERS = [10, 3, 1, 3, 22, 6, 100]  # what eug_grid_size gives (tests/test_exercises.py)


def _eug_cases(rng):
    """Seven cases (n, epsilon, d) of a graded run, one with n epsilon / 10 below 1."""
    cases = [(int(rng.integers(20, 90)), 0.01, int(rng.integers(1, 4)))]
    for _ in range(6):
        n = int(10 ** rng.uniform(2.5, 5.2))
        cases.append((n, float(np.round(10 ** rng.uniform(-2, 0.2), 3)), int(rng.integers(1, 11))))
    return cases


def check_eug_grid_size(cells_per_dim, seed=None, solutions=None):
    """``cells_per_dim(n, epsilon, n_features)``: m of Su et al.'s grid, as :func:`eug_grid_size` computes it.

    M = (N epsilon / 10)^(2d / (d + 2)) cells in all, m = M^(1/d) per dimension,
    rounded to the nearest integer, at least 1. Seven cases against ``EUG_GRID_ANSWERS`` (what
    ``eug_grid_size`` gives; relative tolerance 1e-9; a graded run draws seven others from ``seed`` and
    compares with the teacher's solution); the typical mistakes named are ``EUG_GRID_MISTAKES``.

    Examples
    --------
    >>> import math
    >>> check_eug_grid_size(lambda n, epsilon, d: max(1, math.floor((n * epsilon / 10) ** (2 / (d + 2)) + 0.5)))
    Correct: ...
    """
    cases, reference = answer_key(_EUG_CASES, EUG_GRID_ANSWERS, _eug_cases, seed, solutions, "cells_per_dim")
    return check_function(
        "the number of grid cells per dimension",
        cells_per_dim,
        reference,
        cases,
        mistakes=[(wrong, hint) for _, wrong, hint in EUG_GRID_MISTAKES],
        hint="m = M^(1/d), rounded to the nearest integer, at least 1",
    )


def _dpqt_cases(rng):
    """(epsilon, gamma, max_height, levels_released) of DPQTKMeans fits stopping at various depths (a graded
    run's: the trees of five fits on data drawn from ``rng``)."""
    X = rng.random((400, 2))
    settings = [(1.0, 0.3, 4, 2.0), (0.5, 0.5, 3, 1e9), (2.0, 0.3, 6, 20.0), (0.1, 0.2, 2, 0.0), (5.0, 0.7, 7, 3.0)]
    cases = []
    for eps, gamma, height, threshold in settings:  # the budgets moved: other cases than the public ones
        eps, gamma = float(np.round(eps * 10 ** rng.uniform(-0.2, 0.2), 3)), float(np.round(rng.uniform(0.2, 0.8), 2))
        est = DPQTKMeans(
            2,
            epsilon=eps,
            gamma=gamma,
            max_height=height,
            threshold=threshold,
            random_state=int(rng.integers(2**31)),
            bounds=(0.0, 1.0),
            max_iter=5,
        ).fit(X)
        cases.append((eps, gamma, height, est.tree_.levels_released))
    return cases


# Five fits whose trees release 1 to maxH levels, and what they spend (tests/test_exercises.py fits them with
# DPQTKMeans and reads epsilon_spent_)
DPQT_SPENT_CASES = [(1.0, 0.3, 4, 4), (0.5, 0.5, 3, 1), (2.0, 0.3, 6, 5), (0.1, 0.2, 2, 2), (5.0, 0.7, 7, 7)]
DPQT_SPENT_ANSWERS = [1.0, 0.3333333333333333, 1.9, 0.10000000000000002, 5.0]

_OFF_BY_ONE_LEVEL = "off by one: levels_released already counts every released level, the root's included"

# The typical wrong budgets of a fit, as data: (name, epsilon spent as a function of (epsilon, gamma,
# max_height, levels_released), hint).
DPQT_SPENT_MISTAKES = (
    (
        "every level charged",
        lambda e, g, h, L: e,
        "a level releases counts only if it has nodes: when no node of depth h splits, the "
        "deeper levels release nothing and spend nothing",
    ),
    (
        "the whole tree budget per level",
        lambda e, g, h, L: L * g * e + (1 - g) * e,
        "each level gets epsilon_1 / maxH, not all of epsilon_1 = gamma eps",
    ),
    ("one level too many", lambda e, g, h, L: (L + 1) * g * e / h + (1 - g) * e, _OFF_BY_ONE_LEVEL),
    ("one level too few", lambda e, g, h, L: (L - 1) * g * e / h + (1 - g) * e, _OFF_BY_ONE_LEVEL),
    ("leaves left out", lambda e, g, h, L: L * g * e / h, "the leaf counts spend epsilon_2 = (1 - gamma) eps as well"),
    (
        "shares swapped",
        lambda e, g, h, L: g * e + L * (1 - g) * e / h,
        "gamma eps is the TREE's share; the leaf counts get (1 - gamma) eps",
    ),
)


def check_dpqt_epsilon_spent(epsilon_spent, seed=None, solutions=None):
    """``epsilon_spent(epsilon, gamma, max_height, levels_released)``: what a DPQTk-means fit spends.

    Checked on five fits whose trees release 1 to ``max_height`` levels against ``DPQT_SPENT_ANSWERS``,
    the ``epsilon_spent_`` of the library's DPQTKMeans (relative tolerance 1e-9); the typical mistakes
    named are ``DPQT_SPENT_MISTAKES``. A graded run fits five trees on data drawn from ``seed`` and
    compares with the teacher's solution.

    Examples
    --------
    >>> def epsilon_spent(epsilon, gamma, max_height, levels_released):
    ...     return gamma * epsilon / max_height * levels_released + (1 - gamma) * epsilon
    >>> check_dpqt_epsilon_spent(epsilon_spent)
    Correct: ...
    """
    cases, reference = answer_key(DPQT_SPENT_CASES, DPQT_SPENT_ANSWERS, _dpqt_cases, seed, solutions, "epsilon_spent")
    return check_function(
        "the epsilon a DPQTk-means fit spends",
        epsilon_spent,
        reference,
        cases,
        mistakes=[(wrong, hint) for _, wrong, hint in DPQT_SPENT_MISTAKES],
        hint="add up the budgets of the releases: one per released level, then the leaves",
    )


def _laplace_tail(z, b):
    """P[Lap(b) > z] by scipy: the wrong answers below are built from it."""
    return float(stats.laplace.sf(z, scale=b))


# The typical wrong split probabilities, as data: (name, probability as a function of the checker's case, hint).
SPLIT_PROBABILITY_MISTAKES = (
    (
        "the tree's whole budget",
        lambda c, e, h, t: _laplace_tail(t - c, 1 / e),
        "a level's counts get epsilon_tree / maxH, not the whole epsilon_tree: the scale is maxH / epsilon_tree",
    ),
    (
        "not splitting",
        lambda c, e, h, t: 1 - _laplace_tail(t - c, h / e),
        "that is the probability that the node does NOT split: it splits when count + noise > T",
    ),
    (
        "Gaussian",
        lambda c, e, h, t: float(stats.norm.sf(t - c, scale=math.sqrt(2) * h / e)),
        "the noise is Laplace, not Gaussian with the same variance: P[Lap(b) > z] = exp(-z/b)/2 for z >= 0",
    ),
    (
        "one side only",
        lambda c, e, h, t: float(math.exp(-(t - c) * e / h)) if t >= c else 1.0,
        "the Laplace density has mass 1/2 on each side: P[Lap(b) > z] = exp(-z/b)/2 for z >= 0, "
        "1 - exp(z/b)/2 for z < 0",
    ),
)

SPLIT_PROBABILITY_CASES = [
    (8, 0.6, 4, 10.0),
    (25, 0.6, 4, 10.0),
    (10, 1.0, 3, 10.0),
    (0, 0.3, 5, 6.5),
    (100, 0.1, 6, 65),
]
REACH_PROBABILITY_CASES = [
    ((400, 30, 12), 0.6, 4, 10.0),
    ((15,), 1.0, 3, 10.0),
    ((6500, 900, 40, 3), 0.15, 4, 6.5),
    ((), 0.6, 4, 10.0),
]
# The right answers of these cases (tests/test_exercises.py checks them against a simulation and scipy), and the
# split probabilities of the counts on the reach cases' paths, which a right reach_probability asks for.
SPLIT_PROBABILITY_ANSWERS = [0.37040911034085894, 0.9473003877190679, 0.5, 0.3385284372490824, 0.7209824271149765]
REACH_PROBABILITY_ANSWERS = [0.6139181473255192, 0.9055621985812191, 0.37607455570345455, 1.0]
PATH_SPLIT_PROBABILITIES = {
    (3, 0.15, 4, 6.5): 0.4384992486791085,
    (12, 0.6, 4, 10.0): 0.6295908896591411,
    (15, 1.0, 3, 10.0): 0.9055621985812191,
    (30, 0.6, 4, 10.0): 0.9751064658160681,
    (40, 0.15, 4, 6.5): 0.8576401369815448,
    (400, 0.6, 4, 10.0): 1.0,
    (900, 0.15, 4, 6.5): 0.9999999999999986,
    (6500, 0.15, 4, 6.5): 1.0,
}


def _split_cases(rng):
    """Five cases (count, epsilon_tree, maxH, T) of a graded run: counts below, at and above T."""
    cases = []
    for offset in (-12, -3, 0, 4, 30):
        threshold = float(rng.integers(5, 40))
        count = max(0, int(threshold) + offset + int(rng.integers(-2, 3)))
        cases.append((count, float(np.round(rng.uniform(0.1, 1.5), 2)), int(rng.integers(2, 8)), threshold))
    return cases


def _reach_cases(rng):
    """Four paths of a graded run (root first, counts shrinking down the path), the empty one included."""
    cases = [((), float(np.round(rng.uniform(0.1, 1.5), 2)), 4, 10.0)]
    for length in (1, 3, 4):
        counts = tuple(sorted(rng.integers(2, 2000, size=length).tolist(), reverse=True))
        cases.append((counts, float(np.round(rng.uniform(0.1, 1.5), 2)), int(rng.integers(2, 8)), 8.0))
    return cases


def _lookup_split(count, epsilon_tree, max_height, threshold):
    """The split probabilities a right reach_probability asks for on the public paths (and no others)."""
    key = (count, epsilon_tree, max_height, threshold)
    if key not in PATH_SPLIT_PROBABILITIES:
        raise ExerciseError(
            f"split_probability{key} is not one of the calls the check expects: call it once per count on the "
            "path, with the same epsilon_tree, max_height and threshold"
        )
    return PATH_SPLIT_PROBABILITIES[key]


def check_split_probability(split_probability, seed=None, solutions=None):
    """``split_probability(count, epsilon_tree, max_height, threshold)``: the probability that a node splits.

    A node holding ``count`` records splits in the DP quadtree when its count plus
    its level's Laplace noise, of scale maxH / epsilon_tree, exceeds T (Alg. 2 line 5).
    Checked on five counts below and above T, relative tolerance 1e-9, naming the typical mistakes
    of ``SPLIT_PROBABILITY_MISTAKES``; a graded run draws five others from ``seed`` and compares with the
    teacher's solution (:func:`~._core.answer_key`).

    Examples
    --------
    >>> check_split_probability(lambda count, epsilon_tree, max_height, threshold: 0.5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: the probability that a node splits: <lambda>(8, 0.6, 4, 10.0) is not ...
    """
    cases, reference = answer_key(
        SPLIT_PROBABILITY_CASES, SPLIT_PROBABILITY_ANSWERS, _split_cases, seed, solutions, "split_probability"
    )
    return check_function(
        "the probability that a node splits",
        split_probability,
        reference,
        cases,
        rtol=1e-9,
        mistakes=[(f, hint) for _, f, hint in SPLIT_PROBABILITY_MISTAKES],
        hint="the node splits when count + Lap(b) > T, with b = maxH / epsilon_tree: P[Lap(b) > T - count]",
    )


# The typical wrong probabilities that a node is created, as data: (name, function of the split probability and
# the case, hint).
REACH_PROBABILITY_MISTAKES = (
    (
        "a sum",
        lambda split, cs, e, h, t: sum(split(c, e, h, t) for c in cs),
        "the levels' noise draws are independent and every split on the path must happen: multiply, do not add",
    ),
    (
        "the parent only",
        lambda split, cs, e, h, t: split(cs[-1], e, h, t) if cs else 1.0,
        "the node exists only if EVERY node on its path split, not only its parent",
    ),
)


def check_reach_probability(reach_probability, seed=None, solutions=None):
    """``reach_probability(path_counts, epsilon_tree, max_height, threshold)``: the probability that a node exists.

    ``path_counts`` are the true counts of the nodes on its path from the root down
    to its parent; the node is created when each of them splits. Checked on four
    paths, the empty one (the root) included, relative tolerance 1e-9, naming the
    mistakes of ``REACH_PROBABILITY_MISTAKES``; a graded run draws four others from ``seed``. While it
    runs, the ``split_probability`` it may call gives the right answers (the exercise's first part:
    ``PATH_SPLIT_PROBABILITIES``, or the teacher's in a graded run), so a wrong first part does not fail
    this one.

    Examples
    --------
    >>> def reach_probability(path_counts, epsilon_tree, max_height, threshold):
    ...     return float(np.prod([split_probability(c, epsilon_tree, max_height, threshold) for c in path_counts]))
    >>> check_reach_probability(reach_probability)
    Correct: the probability that a node is created is right on all 4 cases
    """
    cases, reference = answer_key(
        REACH_PROBABILITY_CASES, REACH_PROBABILITY_ANSWERS, _reach_cases, seed, solutions, "reach_probability"
    )
    split = _lookup_split if seed is None else solutions["split_probability"]
    with reference_inputs(reach_probability, split_probability=split):
        return check_function(
            "the probability that a node is created",
            reach_probability,
            reference,
            cases,
            rtol=1e-9,
            mistakes=[(lambda *case, f=f: f(split, *case), hint) for _, f, hint in REACH_PROBABILITY_MISTAKES],
            hint="the node is created when each node on its path splits, and the levels' noise is independent; "
            "the empty path is the root, which always exists",
        )

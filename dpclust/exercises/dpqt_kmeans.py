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
        "each level got the whole epsilon_tree, but the levels release counts of the same records one after "
        "the other: how must they share the budget?",
    ),
    (
        "maxH + 1 levels",
        lambda eps, height: (height + 1) / eps,
        "off by one in the depth: at which depths does the tree release counts (what does a node at depth maxH "
        "do?), and how many levels is that?",
    ),
    (
        "maxH - 1 levels",
        lambda eps, height: (height - 1) / eps,
        "off by one in the depth: at which depths does the tree release counts, and how many levels is that?",
    ),
    (
        "budget times sensitivity",
        lambda eps, height: 1 / (eps * height),
        "your scale shrinks as maxH grows; more levels share the budget, so should each level's noise shrink or "
        "grow? check how the level's share enters the scale",
    ),
    (
        "sensitivity 2",
        lambda eps, height: 2 * height / eps,
        "you used sensitivity 2; the nodes of one level are disjoint cells: how many of the level's counts can "
        "one added record change, and by how much?",
    ),
)

# The typical wrong split rules, as data: (name, split as a function of (counts, noisy counts, threshold), hint).
QUADTREE_SPLIT_MISTAKES = (
    (
        "split on the true count",
        lambda counts, noisy, threshold: counts > threshold,
        "the split is decided on the TRUE count; the tree's shape is released too: what may it depend on to stay "
        "within the budget?",
    ),
    (
        "inverted",
        lambda counts, noisy, threshold: noisy <= threshold,
        "your split rule is inverted: reread Alg. 2 line 5, which nodes stop and which split?",
    ),
    (
        "not strict",
        lambda counts, noisy, threshold: noisy >= threshold,
        "your rule splits a node whose noisy count equals T; reread Alg. 2 line 5: what happens at equality?",
    ),
)


def check_quadtree_level(release_level, epsilon_tree=0.6, max_height=4, threshold=10.0, n_nodes=20_000, seed=0):
    """``release_level(counts, epsilon_tree, max_height, threshold, rng)``: one level of the DP quadtree.

    Must return (noisy counts, split): every node's count plus its own Laplace
    noise, of the scale that gives the level its share of epsilon_tree, and the
    split decisions of Alg. 2 line 5, as
    :func:`~dpclust_lib.cluster.dpqt_kmeans.build_dp_quadtree` does. The noise is
    checked by a Kolmogorov-Smirnov test at alpha = 0.001 over ``n_nodes``
    nodes, naming typical wrong scales (``QUADTREE_SCALE_MISTAKES``); the split
    rule exactly (``QUADTREE_SPLIT_MISTAKES``).

    Examples
    --------
    Counts released as they are:

    >>> def release_level(counts, epsilon_tree, max_height, threshold, rng):
    ...     return counts, counts > threshold
    >>> check_quadtree_level(release_level)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: the counts came back exact ...
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
    """The noise of one level: present, one draw per node, of the level's Laplace scale."""
    if np.all(np.abs(noise) < 1e-12):
        fail(
            "the counts came back exact",
            "count + Laplace noise for every node",
            "the exact counts",
            "no noise was added, yet the counts are released and the splits depend on them: what must each count "
            "get first?",
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
        "which share of epsilon_tree does one level get, and what is the sensitivity of a level's counts? the "
        "Laplace scale follows from both",
    )


def _check_level_split(split, counts, noisy, threshold):
    """The split decisions: exactly Alg. 2 line 5's rule, one boolean per node."""
    want = noisy > threshold
    as_bool = split.astype(bool)
    if np.isin(split, [0, 1]).all() and np.array_equal(as_bool, want):
        return
    wrong = [(rule(counts, noisy, threshold), hint) for _, rule, hint in QUADTREE_SPLIT_MISTAKES]
    hint = diagnose(split, wrong, 1e-9, "one boolean per node: reread Alg. 2 line 5 for the split rule")
    fail(
        "the split decisions are not right",
        f"{int(want.sum())} of {len(want)} nodes split",
        f"{int(as_bool.sum())} split",
        hint,
    )


def _eug_raw(n, e, d, theta=10.0):
    """The cells per dimension before rounding, the number the typical wrong grid sizes below start from."""
    return (n * e / theta) ** (2.0 / (d + 2))


_ROUNDING = "your m is rounded the wrong way: reread the prompt's rounding rule (what should 2.55 give?)"

# The typical wrong grid sizes, as data: (name, m as a function of (n, epsilon, n_features), hint).
EUG_GRID_MISTAKES = (
    (
        "M, not m",
        lambda n, e, d: max(1, math.floor(_eug_raw(n, e, d) ** d + 0.5)),
        "that is M, the number of cells in all; the grid has m cells along each of its d dimensions: how do m "
        "and M relate?",
    ),
    (
        "not rounded",
        lambda n, e, d: _eug_raw(n, e, d),
        "a number of cells is an integer: reread the prompt's rounding rule",
    ),
    ("rounded down", lambda n, e, d: max(1, math.floor(_eug_raw(n, e, d))), _ROUNDING),
    ("rounded up", lambda n, e, d: max(1, math.ceil(_eug_raw(n, e, d))), _ROUNDING),
    (
        "no floor at 1",
        lambda n, e, d: math.floor(_eug_raw(n, e, d) + 0.5),
        "a grid has at least one cell per dimension: what does yours give when N eps / 10 is below 1?",
    ),
    (
        "theta left out",
        lambda n, e, d: max(1, math.floor(_eug_raw(n, e, d, 1.0) + 0.5)),
        "you left theta out: reread the prompt's M",
    ),
    (
        "exponent 2/d",
        lambda n, e, d: max(1, math.floor((n * e / 10) ** (2.0 / d) + 0.5)),
        "check your exponent: what is the d-th root of a power?",
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

    M = (N epsilon / 10)^(2d / (d + 2)) cells in all (Su et al.), the same number m along each
    dimension, rounded to the nearest integer, at least 1. Seven cases against ``EUG_GRID_ANSWERS`` (what
    ``eug_grid_size`` gives; relative tolerance 1e-9; a graded run draws seven others from ``seed`` and
    compares with the teacher's solution); the typical mistakes named are ``EUG_GRID_MISTAKES``.

    Examples
    --------
    >>> check_eug_grid_size(lambda n, epsilon, d: 1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: the number of grid cells per dimension: <lambda>(10000, 0.1, 2) is not ...
    """
    cases, reference = answer_key(_EUG_CASES, EUG_GRID_ANSWERS, _eug_cases, seed, solutions, "cells_per_dim")
    return check_function(
        "the number of grid cells per dimension",
        cells_per_dim,
        reference,
        cases,
        mistakes=[(wrong, hint) for _, wrong, hint in EUG_GRID_MISTAKES],
        hint="the grid has the same number m of cells along each dimension: how does m relate to M? then apply "
        "the prompt's rounding",
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

_OFF_BY_ONE_LEVEL = "off by one in the levels: what does levels_released count, and is the root's level among them?"

# The typical wrong budgets of a fit, as data: (name, epsilon spent as a function of (epsilon, gamma,
# max_height, levels_released), hint).
DPQT_SPENT_MISTAKES = (
    (
        "every level charged",
        lambda e, g, h, L: e,
        "you charged the whole budget whatever the tree's depth; what does a level that has no nodes release, "
        "and spend?",
    ),
    (
        "the whole tree budget per level",
        lambda e, g, h, L: L * g * e + (1 - g) * e,
        "each released level got all of the tree's budget gamma eps; how do the maxH levels share it?",
    ),
    ("one level too many", lambda e, g, h, L: (L + 1) * g * e / h + (1 - g) * e, _OFF_BY_ONE_LEVEL),
    ("one level too few", lambda e, g, h, L: (L - 1) * g * e / h + (1 - g) * e, _OFF_BY_ONE_LEVEL),
    (
        "leaves left out",
        lambda e, g, h, L: L * g * e / h,
        "you counted the tree's levels only: what else does a fit release, and what does it spend?",
    ),
    (
        "shares swapped",
        lambda e, g, h, L: g * e + L * (1 - g) * e / h,
        "the shares look swapped: which part of eps does gamma give the tree, and which the leaves?",
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
    >>> check_dpqt_epsilon_spent(lambda epsilon, gamma, max_height, levels_released: 0.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: the epsilon a DPQTk-means fit spends: <lambda>(1.0, 0.3, 4, 4) is not ...
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
        "your noise spends the whole epsilon_tree; what share of it does one level's release get (Exercise 1)?",
    ),
    (
        "not splitting",
        lambda c, e, h, t: 1 - _laplace_tail(t - c, h / e),
        "that is the probability that the node does NOT split",
    ),
    (
        "Gaussian",
        lambda c, e, h, t: float(stats.norm.sf(t - c, scale=math.sqrt(2) * h / e)),
        "that is Gaussian noise of the same variance; the tree adds Laplace noise: what is the Laplace "
        "distribution's tail?",
    ),
    (
        "one side only",
        lambda c, e, h, t: float(math.exp(-(t - c) * e / h)) if t >= c else 1.0,
        "that is a one-sided exponential tail; how much of the Laplace density's mass lies on each side of 0, and "
        "what if T is below the count?",
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
            f"split_probability{key} is not one of the calls the check expects: it knows the split probabilities "
            "of the counts on its paths only, at the case's epsilon_tree, max_height and threshold"
        )
    return PATH_SPLIT_PROBABILITIES[key]


def check_split_probability(split_probability, seed=None, solutions=None):
    """``split_probability(count, epsilon_tree, max_height, threshold)``: the probability that a node splits.

    A node holding ``count`` records splits in the DP quadtree when its count plus
    its level's Laplace noise (Exercise 1) exceeds T (Alg. 2 line 5).
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
        hint="the node splits when its noisy count exceeds T: which Laplace scale does its level use, and what is "
        "the tail of that Laplace distribution?",
    )


# The typical wrong probabilities that a node is created, as data: (name, function of the split probability and
# the case, hint).
REACH_PROBABILITY_MISTAKES = (
    (
        "a sum",
        lambda split, cs, e, h, t: sum(split(c, e, h, t) for c in cs),
        "you added the split probabilities; every split on the path must happen, and the levels' noise is "
        "independent: how do the probabilities of independent events combine?",
    ),
    (
        "the parent only",
        lambda split, cs, e, h, t: split(cs[-1], e, h, t) if cs else 1.0,
        "you used the parent's split only; what must happen at the other nodes on the path for the node to exist?",
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
    >>> check_reach_probability(lambda path_counts, epsilon_tree, max_height, threshold: 0.5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: the probability that a node is created: <lambda>((400, 30, 12), ...
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
            hint="when is the node created, and are the levels' noise draws independent? the empty path is the "
            "root, which always exists",
        )

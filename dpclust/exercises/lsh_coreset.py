"""Chang et al. 2021 and Google's LSH clustering, notebook 06: the noise of the private prefix tree and its coreset,
and a conversion from zCDP to (epsilon, delta)-DP.
"""

from __future__ import annotations

import math

import numpy as np

from ._core import answer_key, check_function

__all__ = ["check_lsh_noise_scales", "check_zcdp_epsilon"]

# The public cases (epsilon, radius, n_features, max_depth, count_share) and their right answers (count scale,
# sum scale): the scales of LSHCoresetKMeans's pure-epsilon releases (tests/test_exercises.py derives them from the
# library's budget).
NOISE_SCALE_CASES = [(1.0, 21.6, 16, 20, 0.5), (1.0, 1.0, 100, 20, 0.5), (0.5, 2.0, 2, 10, 0.3), (4.0, 5.0, 8, 0, 0.5)]
NOISE_SCALE_ANSWERS = [(42.0, 172.8), (42.0, 20.0), (73.33333333333334, 8.081220356417687), (0.5, 7.0710678118654755)]


def _noise_cases(rng):
    """Four cases of a graded run, max_depth = 0 among them."""
    cases = []
    for i in range(4):
        eps = float(np.round(10 ** rng.uniform(-1.0, 0.7), 3))
        radius = float(np.round(rng.uniform(0.5, 30.0), 2))
        depth = 0 if i == 3 else int(rng.integers(1, 25))
        cases.append((eps, radius, int(rng.integers(1, 120)), depth, float(np.round(rng.uniform(0.2, 0.8), 2))))
    return cases


NOISE_SCALE_MISTAKES = (
    (
        "max_depth levels",
        lambda e, r, d, L, s: (L / (s * e), r * math.sqrt(d) / ((1 - s) * e)),
        "the root is a level too: how many levels of counts does a tree of depth L release?",
    ),
    (
        "L2 sensitivity for the Laplace sums",
        lambda e, r, d, L, s: ((L + 1) / (s * e), r / ((1 - s) * e)),
        "the Laplace mechanism is calibrated to the L1 sensitivity; how large can the L1 norm of an offset in the "
        "ball of radius r be in d dimensions?",
    ),
    (
        "the whole count budget per level",
        lambda e, r, d, L, s: (1 / (s * e), r * math.sqrt(d) / ((1 - s) * e)),
        "one record is counted once at every level: the levels compose, so they share the counts' budget",
    ),
    (
        "shares swapped",
        lambda e, r, d, L, s: ((L + 1) / ((1 - s) * e), r * math.sqrt(d) / (s * e)),
        "count_share is the counts' share of epsilon; the sums get the rest",
    ),
)


def check_lsh_noise_scales(lsh_noise_scales, seed=None, solutions=None):
    """``lsh_noise_scales(epsilon, radius, n_features, max_depth, count_share)``: (count scale, sum scale).

    The Laplace scales of the pure-epsilon releases of the LSH prefix tree: every level's counts, and the leaves'
    sums of offsets in the ball of ``radius``. Checked on four cases against ``NOISE_SCALE_ANSWERS`` (relative
    tolerance 1e-9; a graded run draws four others from ``seed`` and compares with the teacher's solution); the
    typical mistakes named are ``NOISE_SCALE_MISTAKES``.

    Examples
    --------
    >>> check_lsh_noise_scales(lambda e, r, d, L, s: (1.0, 1.0))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: the Laplace scales of the tree: ...
    """
    cases, reference = answer_key(
        NOISE_SCALE_CASES, NOISE_SCALE_ANSWERS, _noise_cases, seed, solutions, "lsh_noise_scales"
    )
    return check_function(
        "the Laplace scales of the tree",
        lsh_noise_scales,
        reference,
        cases,
        mistakes=[(f, hint) for _, f, hint in NOISE_SCALE_MISTAKES],
        hint="what does one record change at one level, and in the leaves' sums (in L1)? Then divide by the share "
        "of epsilon each release gets",
    )


# The public cases (rho, delta) and their right answers, rho + 2 sqrt(rho ln(1/delta)) (Bun & Steinke 2016,
# Proposition 1.3; tests/test_exercises.py derives them from the definition of the privacy loss's tail).
ZCDP_CASES = [(0.01, 1e-6), (0.05, 1e-6), (0.5, 1e-5), (0.001, 1e-9), (2.0, 1e-3)]
ZCDP_ANSWERS = [0.7533844377699678, 1.71225813626911, 5.298525912188081, 0.2889115547312849, 9.433844377699677]


def _zcdp_cases(rng):
    """Five cases (rho, delta) of a graded run."""
    return [(float(10 ** rng.uniform(-3.0, 0.5)), float(10.0 ** -rng.integers(3, 12))) for _ in range(5)]


ZCDP_MISTAKES = (
    (
        "without rho",
        lambda r, d: 2 * math.sqrt(r * math.log(1 / d)),
        "the privacy loss of rho-zCDP has mean rho too, not only a Gaussian-like tail",
    ),
    (
        "half the tail",
        lambda r, d: r + math.sqrt(r * math.log(1 / d)),
        "check the factor in front of the square root: the tail bound of a Gaussian of variance 2 rho",
    ),
    (
        "log base 10",
        lambda r, d: r + 2 * math.sqrt(r * math.log10(1 / d)),
        "the logarithm is the natural one",
    ),
)


def check_zcdp_epsilon(zcdp_epsilon, seed=None, solutions=None):
    """``zcdp_epsilon(rho, delta)``: an epsilon such that rho-zCDP implies (epsilon, delta)-DP.

    The simple conversion rho + 2 sqrt(rho ln(1/delta)) (Bun & Steinke 2016, Prop. 1.3). Checked on five cases
    against ``ZCDP_ANSWERS`` (relative tolerance 1e-9; a graded run draws five others from ``seed`` and compares
    with the teacher's solution); the typical mistakes named are ``ZCDP_MISTAKES``.

    Examples
    --------
    >>> check_zcdp_epsilon(lambda rho, delta: rho)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: the epsilon of rho-zCDP at delta: ...
    """
    cases, reference = answer_key(ZCDP_CASES, ZCDP_ANSWERS, _zcdp_cases, seed, solutions, "zcdp_epsilon")
    return check_function(
        "the epsilon of rho-zCDP at delta",
        zcdp_epsilon,
        reference,
        cases,
        mistakes=[(f, hint) for _, f, hint in ZCDP_MISTAKES],
        hint="bound the tail of the privacy loss, a random variable of mean rho and sub-Gaussian with variance 2 rho",
    )

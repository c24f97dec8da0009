"""OneRoundLocalKMeans: each user's budget, the protocol's estimates, the sqrt(n) additive error, and the approach
to the central method as epsilon grows.

The sqrt(n) check. Chang et al. (ICML 2021) bound the additive error of the one-round coreset by O(sqrt(n)) (and
Stemmer, SODA 2020, shows few-round protocols cannot do better): for fixed centres C, the coreset's cost of C
differs from the records' cost of C by about sqrt(n), because every cell's estimate carries noise of order sqrt(n)
and the cells kept are those whose mass clears it. The test measures exactly that error, on subsamples of one fixed
mixture, at the mixture's own centres, and fits the slope of log RMS error against log n: near 0.5, with a wide
tolerance [0.25, 0.85] stated here because the kept cells change level by level as n grows (a staircase, not a
line): five independent sets of eight runs per size gave slopes of 0.39 to 0.74 (mean 0.53, sd 0.13), so the
tolerance is about two of their standard deviations; 0 (an error that does not grow) and 1 (an error proportional
to n, i.e. a multiplicative one) are both outside it. The same five sets gave the clustering's excess cost slopes of
-0.04 to 0.34. The clustering's own excess cost
grows more slowly on such a fixed mixture (Lloyd's averaging turns weight noise of order sqrt(n) into centre
errors of order 1 / sqrt(n)), so for it the test asserts only that it grows no faster than sqrt(n).
"""

import math
from fractions import Fraction

import numpy as np
import pytest

from dpclust_lib import BudgetAccountant, LSHCoresetKMeans, OneRoundLocalKMeans
from dpclust_lib.cluster.one_round_local import MAX_LEVEL_EPSILON, grid_cells
from dpclust_lib.frequency import OUE

MIXTURE = np.array([[0.2, 0.25], [0.75, 0.2], [0.5, 0.8], [0.8, 0.7]])


def _mixture(n, seed=0, sd=0.06):
    rng = np.random.default_rng(seed)
    return np.clip(MIXTURE[rng.integers(0, 4, n)] + rng.normal(0, sd, (n, 2)), 0, 1)


def _cost(X, centres, weights=None):
    d = ((X[:, None, :] - centres[None]) ** 2).sum(-1).min(1)
    return float(d.sum() if weights is None else (d * weights).sum())


def test_each_user_spends_at_most_epsilon_exactly_over_the_levels():
    est = OneRoundLocalKMeans(4, epsilon=0.7, bounds=(0, 1), random_state=0).fit(_mixture(500))
    shares = [Fraction(e) for _, e in est.ledger_.entries]
    assert len(shares) == est.n_levels_ == 5  # 2-D, 1024 cells at most: levels of 4, 16, 64, 256, 1024 cells
    assert sum(shares) <= Fraction(0.7) and est.level_epsilon_ == est.ledger_.entries[0][1]
    assert est.epsilon_guaranteed_ == 0.7 and est.neighbouring_ == "any two records of one user"
    accountant = BudgetAccountant(1.0)
    OneRoundLocalKMeans(4, epsilon=0.7, bounds=(0, 1), accountant=accountant).fit(_mixture(50))
    assert accountant.spent == 0.7


def test_a_huge_budget_is_spent_only_up_to_the_oracles_exact_range():
    est = OneRoundLocalKMeans(4, epsilon=1e3, bounds=(0, 1), random_state=0).fit(_mixture(2000))
    assert est.level_epsilon_ == MAX_LEVEL_EPSILON and est.epsilon_spent_ <= 1e3
    assert _cost(_mixture(2000), est.cluster_centers_) < 1.2 * _cost(_mixture(2000), MIXTURE)


@pytest.mark.parametrize(
    "kw, words",
    [
        ({}, ["bounds is required"]),
        ({"bounds": (0, 1), "n_levels": 6}, ["n_levels=6", "max_cells=1024"]),
        ({"bounds": (0, 1), "max_cells": 2}, ["max_cells=2", "no level"]),
        ({"bounds": (0, 1), "oracle": "olh"}, ["oracle"]),
        ({"bounds": (0, 1), "threshold": 0.0}, ["threshold"]),
    ],
)
def test_bad_public_input_is_refused_naming_the_parameter(kw, words):
    with pytest.raises((ValueError, TypeError)) as err:
        OneRoundLocalKMeans(2, **kw).fit(_mixture(50))
    for word in words:
        assert word in str(err.value), str(err.value)


def test_grid_cells_and_the_estimates_are_the_oracles():
    """Level 1 of a 2-D box has 4 cells; the released estimate is OUE's unbiased one (mean over runs near the truth)."""
    X = _mixture(4000, seed=3)
    truth = np.bincount(grid_cells(X, np.zeros(2), np.ones(2), 1), minlength=4)
    runs = [OneRoundLocalKMeans(4, epsilon=2.0, bounds=(0, 1), n_levels=1, random_state=s).fit(X) for s in range(20)]
    estimates = np.array([r.level_estimates_[0] for r in runs])
    sd = math.sqrt(OUE(4, 2.0).variance(4000))  # per run; the mean of 20 has sd / sqrt(20)
    assert np.all(np.abs(estimates.mean(axis=0) - truth) < 4 * sd / math.sqrt(20))
    assert 0.5 * sd < estimates.std(axis=0).mean() < 1.5 * sd


def test_its_cost_approaches_the_central_methods_as_epsilon_grows():
    """Mean cost over three runs, relative to the central LSH coreset's at the same epsilon: far above it at
    epsilon = 0.5 (local noise of order sqrt(n) / epsilon per cell), within 10% at epsilon = 16."""
    X = _mixture(8000, seed=4)

    def mean_cost(make):
        return np.mean([_cost(X, make(s).fit(X).cluster_centers_) for s in range(3)])

    ratios = {}
    for eps in (0.5, 16.0):
        local = mean_cost(lambda s: OneRoundLocalKMeans(4, epsilon=eps, bounds=(0, 1), random_state=s))
        central = mean_cost(
            lambda s: LSHCoresetKMeans(4, epsilon=eps, radius=math.sqrt(0.5), center=0.5, random_state=s)
        )
        ratios[eps] = local / central
    assert ratios[0.5] > ratios[16.0], ratios
    assert ratios[16.0] < 1.1, ratios
    assert ratios[0.5] > 1.5, ratios  # so the approach is seen, not assumed


@pytest.mark.slow
def test_the_additive_error_grows_as_sqrt_n():
    """See the module docstring: slope of log RMS coreset error at fixed centres against log n, in [0.25, 0.85]."""
    pool = _mixture(64_000)
    sizes = [1000, 2000, 4000, 8000, 16000]
    coreset_error, excess = [], []
    for n in sizes:
        errors, gaps = [], []
        for rep in range(8):
            S = pool[np.random.default_rng(rep).choice(pool.shape[0], n, replace=False)]
            est = OneRoundLocalKMeans(4, epsilon=1.0, bounds=(0, 1), max_cells=256, random_state=rep).fit(S)
            errors.append(_cost(est.coreset_, MIXTURE, est.coreset_weights_) - _cost(S, MIXTURE))
            gaps.append(_cost(S, est.cluster_centers_) - _cost(S, MIXTURE))
        coreset_error.append(math.sqrt(np.mean(np.square(errors))))
        excess.append(max(np.mean(gaps), 1e-9))
    slope = np.polyfit(np.log(sizes), np.log(coreset_error), 1)[0]
    assert 0.25 <= slope <= 0.85, (slope, coreset_error)
    assert np.polyfit(np.log(sizes), np.log(excess), 1)[0] <= 0.85, excess

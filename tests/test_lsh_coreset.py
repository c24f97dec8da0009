"""LSHCoresetKMeans: its public inputs, the declared treatment of private values, its two kinds of guarantee, the
released tree, and its utility on separated clusters."""

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

from dpclust_lib import LSHCoresetKMeans, PrivacyLeakWarning
from dpclust_lib.accounting import BudgetAccountant, BudgetExceededError, dp_to_zcdp, zcdp_to_dp
from dpclust_lib.cluster.lsh_coreset import _leaf_sums, _prefixes, project_to_ball

CENTRES = np.array([[0.6, 0.0, 0.0], [-0.5, 0.4, 0.0], [0.0, -0.4, 0.5]])


def _blobs(n=3000, seed=0, sd=0.04):
    rng = np.random.default_rng(seed)
    return CENTRES[rng.integers(0, 3, n)] + rng.normal(0, sd, (n, 3))


def _cost(X, centres):
    return float(((X[:, None, :] - centres[None]) ** 2).sum(-1).min(1).sum())


# --------------------------------------------------------------------------- public inputs: clear errors


@pytest.mark.parametrize(
    "kw, exc, words",
    [
        ({}, ValueError, ["radius is required", "radius='data'"]),
        ({"radius": 0.0}, ValueError, ["radius"]),
        ({"radius": -1.0}, ValueError, ["radius"]),
        ({"radius": math.inf}, ValueError, ["radius"]),
        ({"radius": "wide"}, TypeError, ["radius"]),
        ({"radius": 1.0, "center": [0.0, 0.0]}, ValueError, ["center", "one value per feature (3)"]),
        ({"radius": 1.0, "center": [0.0, np.nan, 0.0]}, ValueError, ["center"]),
        ({"radius": 1.0, "delta": 1.0}, ValueError, ["delta"]),
        ({"radius": 1.0, "delta": -1e-6}, ValueError, ["delta"]),
        ({"radius": 1.0, "delta": "1e-6"}, TypeError, ["delta"]),
        ({"radius": 1.0, "count_share": 0.0}, ValueError, ["count_share"]),
        ({"radius": 1.0, "count_share": 1.0}, ValueError, ["count_share"]),
        ({"radius": 1.0, "max_depth": -1}, ValueError, ["max_depth"]),
        ({"radius": 1.0, "min_points": 0.0}, ValueError, ["min_points"]),
        ({"radius": 1.0, "epsilon": 0.0}, ValueError, ["epsilon"]),
        ({"radius": 1.0, "n_init": 0}, ValueError, ["n_init"]),
    ],
)
def test_bad_public_input_is_refused_naming_the_parameter(kw, exc, words):
    with pytest.raises(exc) as err:
        LSHCoresetKMeans(2, **kw).fit(_blobs(50))
    for word in words:
        assert word in str(err.value), str(err.value)


# --------------------------------------------------------------------------- private values: the declared treatment


def test_project_to_ball_keeps_inside_and_maps_outside_onto_the_sphere():
    rng = np.random.default_rng(1)
    X = rng.normal(0, 3, (500, 4))
    X[0] = [np.inf, 0.0, -np.inf, 1.0]
    X[1, 2] = np.nan
    X[2] = [1e300, -1e300, 1e300, 0.0]
    centre, r = np.array([0.5, 0.0, 0.0, 1.0]), 2.0
    Y = project_to_ball(X, centre, r)
    assert np.all(np.isfinite(Y))
    assert np.all(np.linalg.norm(Y - centre, axis=1) <= r)
    ordinary = np.isfinite(X).all(axis=1)
    ordinary[2] = False  # its plain norm overflows here (the library scales before squaring): checked above only
    inside = ordinary & (np.linalg.norm(np.where(ordinary[:, None], X, 0.0) - centre, axis=1) <= r)
    np.testing.assert_array_equal(Y[inside], X[inside])
    outside = ordinary & ~inside
    # moved along the ray from the centre: the direction is kept
    u = (X[outside] - centre) / np.linalg.norm(X[outside] - centre, axis=1)[:, None]
    v = (Y[outside] - centre) / np.linalg.norm(Y[outside] - centre, axis=1)[:, None]
    np.testing.assert_allclose(u, v, atol=1e-12)
    assert Y[1, 2] == centre[2]


def test_project_to_ball_maps_each_record_alone_also_a_hair_from_the_sphere_and_without_a_word():
    rng = np.random.default_rng(2)
    centre, r = np.array([0.25, -1.0, 0.0]), 1.5
    u = rng.standard_normal((300, 3))
    u /= np.linalg.norm(u, axis=1)[:, None]
    X = (
        centre
        + u * r * rng.choice([1 - 1e-9, 1 - 1e-12, 1 - 2.0**-40, 1.0, 1 + 1e-15, 1 + 1e-12, 0.3, 7.0], 300)[:, None]
    )
    X[5] = [1.7e308, -1.7e308, 0.0]  # its offset overflows
    X[6] = [np.nan, np.inf, 1.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Y = project_to_ball(X, centre, r)
        alone = np.vstack([project_to_ball(x[None, :], centre, r) for x in X])
    np.testing.assert_array_equal(Y, alone)  # a record's image does not depend on the others
    assert np.all(np.linalg.norm(Y - centre, axis=1) <= r * (1 + 1e-15))  # on the sphere: to rounding
    with np.errstate(over="ignore"):  # row 5's plain norm overflows: outside
        inside = np.linalg.norm(X - centre, axis=1) <= r * (1 - 1e-10)
    np.testing.assert_array_equal(Y[inside], X[inside])


def test_leaf_sums_are_the_sums_of_each_leafs_records():
    rng = np.random.default_rng(4)
    offsets = rng.integers(-50, 50, (2_000, 6)).astype(float)  # integers: every order of summation is exact
    prefixes = _prefixes(rng.random((2_000, 8)) < 0.5)
    leaves = [(3, p, 0.0) for p in range(0, 8, 2)] + [(5, p, 0.0) for p in (1, 7, 30)] + [(8, 9_999, 0.0)]
    want = [offsets[prefixes[:, level] == p].sum(axis=0) for level, p, _ in leaves]
    np.testing.assert_array_equal(_leaf_sums(offsets, prefixes, leaves), want)


@pytest.mark.parametrize("case", ["outside", "inf", "NaN"])
def test_private_values_get_the_declared_treatment(case):
    """The fit on records with a bad value is the fit on the records as projected, seed for seed, without a word."""
    X = _blobs(400)
    bad = X.copy()
    bad[7] = {"outside": [30.0, -4.0, 2.0], "inf": [np.inf, 0.0, -np.inf], "NaN": [np.nan, 0.1, 0.2]}[case]
    est = dict(epsilon=1.0, radius=1.0, random_state=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = LSHCoresetKMeans(3, **est).fit(bad)
        b = LSHCoresetKMeans(3, **est).fit(project_to_ball(bad, np.zeros(3), 1.0))
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    assert a.epsilon_guaranteed_ == b.epsilon_guaranteed_ == 1.0


def test_radius_from_data_warns_and_guarantees_nothing():
    with pytest.warns(PrivacyLeakWarning, match="radius='data'"):
        est = LSHCoresetKMeans(3, radius="data", random_state=0).fit(_blobs(300))
    assert est.epsilon_guaranteed_ == math.inf
    with pytest.raises(BudgetExceededError, match="no finite epsilon"):
        LSHCoresetKMeans(3, radius="data", accountant=BudgetAccountant(10.0)).fit(None)


# --------------------------------------------------------------------------- the guarantee, pure and approximate


def test_pure_epsilon_shares_sum_to_at_most_epsilon_exactly():
    est = LSHCoresetKMeans(3, epsilon=0.7, radius=1.0, max_depth=12, random_state=0).fit(_blobs())
    shares = [Fraction(e) for _, e in est.ledger_.entries]
    levels = len(est.level_counts_)
    assert len(shares) == levels + 1  # one per released level, then the leaf sums
    budget = Fraction(0.7)
    # every level's share, had the tree grown to max_depth, plus the sums: within epsilon, exactly
    assert 13 * shares[0] + shares[-1] <= budget
    assert Fraction(est.epsilon_spent_) <= Fraction(est.epsilon_guaranteed_) == budget
    assert est.delta_guaranteed_ == 0.0 and est.rho_ is None


def test_approximate_mode_is_zcdp_converted_and_charged_with_its_delta():
    X = _blobs()
    est = LSHCoresetKMeans(3, epsilon=1.0, delta=1e-6, radius=1.0, random_state=0).fit(X)
    assert est.rho_ == dp_to_zcdp(1.0, 1e-6)
    assert zcdp_to_dp(est.rho_, 1e-6) <= est.epsilon_guaranteed_ * (1 + 1e-12) <= 1.0 + 1e-12
    assert est.delta_guaranteed_ == 1e-6 and est.ledger_.delta_spent == 1e-6
    assert est.epsilon_spent_ <= est.epsilon_guaranteed_
    # a pure-epsilon accountant refuses a fit with a delta, before reading the records
    with pytest.raises(BudgetExceededError, match="delta"):
        LSHCoresetKMeans(3, epsilon=1.0, delta=1e-6, radius=1.0, accountant=BudgetAccountant(5.0)).fit(None)
    shared = BudgetAccountant(2.0, delta=2e-6)
    for seed in (0, 1):
        LSHCoresetKMeans(3, epsilon=1.0, delta=1e-6, radius=1.0, random_state=seed, accountant=shared).fit(X)
    assert shared.delta_spent == 2e-6
    with pytest.raises(BudgetExceededError):
        LSHCoresetKMeans(3, epsilon=0.01, delta=1e-6, radius=1.0, accountant=shared).fit(None)


def test_seeded_fits_repeat_and_the_os_generator_does_not():
    X = _blobs(500)
    for delta in (0.0, 1e-6):
        a = LSHCoresetKMeans(3, delta=delta, radius=1.0, random_state=5).fit(X)
        b = LSHCoresetKMeans(3, delta=delta, radius=1.0, random_state=5).fit(X)
        np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
        np.testing.assert_array_equal(a.coreset_, b.coreset_)
    c = LSHCoresetKMeans(3, radius=1.0, random_state="os").fit(X)
    d = LSHCoresetKMeans(3, radius=1.0, random_state="os").fit(X)
    assert not np.array_equal(c.coreset_, d.coreset_)


# --------------------------------------------------------------------------- the released tree


def test_both_children_of_a_branching_node_are_released_even_when_empty():
    """Records on one side of every hyperplane: the other child of each branching node is empty and still counted."""
    X = np.tile([[0.5, 0.0, 0.0]], (3000, 1))
    est = LSHCoresetKMeans(1, epsilon=2.0, radius=1.0, max_depth=6, random_state=0).fit(X)
    for level, counts in enumerate(est.level_counts_[1:], start=1):
        assert counts.size % 2 == 0, level
    assert len(est.level_counts_) > 2  # the tree did branch
    # one leaf holds the records; its coreset point is their noisy mean
    heaviest = np.argmax(est.coreset_weights_)
    assert np.linalg.norm(est.coreset_[heaviest] - X[0]) < 0.05


def test_an_empty_or_tiny_data_set_releases_noise_alone_with_the_same_shapes():
    reference = LSHCoresetKMeans(3, radius=1.0, random_state=0).fit(_blobs(300))
    for n in (0, 1, 2):
        est = LSHCoresetKMeans(3, radius=1.0, random_state=0).fit(_blobs(300)[:n])
        assert est.cluster_centers_.shape == reference.cluster_centers_.shape
        assert np.all(np.linalg.norm(est.cluster_centers_, axis=1) <= 1.0)
        assert est.epsilon_guaranteed_ == reference.epsilon_guaranteed_


# --------------------------------------------------------------------------- utility


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_separated_clusters_are_found_at_a_moderate_budget(delta):
    """20,000 records, three clusters 0.04 wide, epsilon = 2: the cost is near the true centres' (median of 3 runs)."""
    X = _blobs(20_000, seed=2)
    best = _cost(X, CENTRES)
    ratios = [
        _cost(X, LSHCoresetKMeans(3, epsilon=2.0, delta=delta, radius=1.0, random_state=s).fit(X).cluster_centers_)
        / best
        for s in range(3)
    ]
    assert np.median(ratios) < 1.25, ratios

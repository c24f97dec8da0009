"""KModes (weighted) and DPKModes (DP-modes-Lloyd)."""

import warnings

import numpy as np
import pytest

from dpclust_lib import DPKModes, KModes, PrivacyLeakWarning, mechanisms
from dpclust_lib.cluster.kmodes import frequent_value_centres


def _two_groups(rng, n=200):
    a = np.tile([0, 0, 0, 0], (n, 1))
    b = np.tile([1, 2, 1, 1], (n, 1))
    X = np.vstack([a, b])
    flip = rng.random(X.shape) < 0.1
    return np.where(flip, rng.integers(0, 3, X.shape), X), np.repeat([0, 1], n)


def test_kmodes_finds_two_clear_groups(rng):
    X, y = _two_groups(rng)
    km = KModes(2, init="random", n_init=5, random_state=0).fit(X)
    assert sorted(map(tuple, km.cluster_centers_)) == [(0, 0, 0, 0), (1, 2, 1, 1)]
    assert (km.labels_ == km.predict(X)).all()


def test_weighted_unique_rows_equal_materialised_rows(rng):
    X = rng.integers(0, 3, size=(300, 4))
    uniq, counts = np.unique(X, axis=0, return_counts=True)
    init = X[:3]
    a = KModes(3, init=init, max_iter=20).fit(X)
    b = KModes(3, init=init, max_iter=20).fit(uniq, sample_weight=counts)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    assert a.cost_ == pytest.approx(b.cost_) and a.n_iter_ == b.n_iter_


def test_same_seed_same_centres(rng):
    X = rng.integers(0, 4, size=(200, 5))
    for init in ["random", "frequent"]:
        a = KModes(4, init=init, random_state=3).fit(X).cluster_centers_
        b = KModes(4, init=init, random_state=3).fit(X).cluster_centers_
        np.testing.assert_array_equal(a, b)


def test_n_init_keeps_the_lowest_cost(rng):
    X = rng.integers(0, 4, size=(200, 5))
    costs = [KModes(4, random_state=np.random.default_rng(s)).fit(X).cost_ for s in range(3)]
    best = KModes(4, n_init=10, random_state=1).fit(X).cost_
    assert best <= max(costs)


def test_frequent_value_centres_follow_alg4_with_errata(rng):
    # D1-like domains {3, 2, 3}, K = 3: f = ceil(3^(1/3)) = 2 (the text's floor gives 1 and loops forever).
    X = np.column_stack(
        [rng.choice(3, 500, p=[0.6, 0.3, 0.1]), rng.choice(2, 500, p=[0.7, 0.3]), rng.choice(3, 500, p=[0.1, 0.2, 0.7])]
    )
    C = frequent_value_centres(X, 3, random_state=0)
    assert C.shape == (3, 3) and len({tuple(c) for c in C}) == 3
    assert set(C[:, 0]) <= {0, 1} and set(C[:, 1]) <= {0, 1} and set(C[:, 2]) <= {2, 1}


def test_frequent_value_centres_f_for_exact_powers():
    # K = 8, m = 3: 8^(1/3) is 2.0000000000000004 in floating point; f must be 2, not 3.
    X = np.array([[0, 0, 0], [1, 1, 1], [2, 2, 2]] * 10 + [[2, 2, 2]])
    C = frequent_value_centres(X, 8, random_state=0)
    assert set(C.ravel()) <= {0, 2}  # the top-2 values of every attribute are 2 and 0


def test_frequent_value_centres_too_few_candidates():
    X = np.array([[0, 0], [0, 1], [0, 0]])  # attribute 0 has one value: 1 x 2 candidates < 3
    with pytest.raises(ValueError, match="n_clusters=3 is larger than the number of frequent-value candidates"):
        frequent_value_centres(X, 3, random_state=0)


def test_frequent_value_centres_rank_over_a_declared_domain():
    X = np.array([[0, 0], [0, 1], [0, 0]])  # attribute 0 has one observed value
    C = frequent_value_centres(X, 3, random_state=0, domain_sizes=(3, 2))
    assert len({tuple(c) for c in C}) == 3
    assert set(C[:, 0]) <= {0, 1}  # 0 (observed), then 1 (the smaller of the unobserved codes)


def test_unfitted_predict():
    with pytest.raises(AttributeError, match="not fitted"):
        KModes(2).predict(np.zeros((2, 2), dtype=int))


# --------------------------------------------------------------------------- DPKModes


def test_dpkmodes_accounting_and_noise_scale(rng):
    X = rng.integers(0, 3, size=(300, 4))
    est = DPKModes(3, epsilon=1.0, max_iter=5, domain_sizes=(3,) * 4, random_state=0).fit(X)
    assert est.noise_scale_ == pytest.approx(4 * 5 / 1.0)
    assert est.epsilon_spent_ == pytest.approx(est.n_iter_ * 1.0 / 5)
    assert est.epsilon_spent_ <= 1.0 + 1e-12
    assert len(est.ledger_.entries) == est.n_iter_


def test_dpkmodes_without_noise_is_kmodes_from_the_same_start(rng):
    X, _ = _two_groups(rng)
    dp = DPKModes(2, epsilon=1e6, max_iter=5, domain_sizes=(3,) * 4, random_state=4).fit(X)
    plain = KModes(2, init=dp.initial_centers_, max_iter=5, domain_sizes=(3,) * 4).fit(X)
    np.testing.assert_array_equal(dp.cluster_centers_, plain.cluster_centers_)


def test_dpkmodes_same_seed_same_result(rng):
    X = rng.integers(0, 3, size=(300, 4))
    a = DPKModes(3, epsilon=0.5, domain_sizes=(3,) * 4, random_state=9).fit(X)
    b = DPKModes(3, epsilon=0.5, domain_sizes=(3,) * 4, random_state=9).fit(X)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)


def test_dpkmodes_domain_init_is_data_independent(rng):
    X1 = rng.integers(0, 3, size=(300, 4))
    X2 = rng.integers(0, 3, size=(50, 4))
    a = DPKModes(3, epsilon=1.0, domain_sizes=(3,) * 4, random_state=2).fit(X1).initial_centers_
    b = DPKModes(3, epsilon=1.0, domain_sizes=(3,) * 4, random_state=2).fit(X2).initial_centers_
    np.testing.assert_array_equal(a, b)
    assert len({tuple(c) for c in a}) == 3


def test_dpkmodes_warns_when_reading_the_domain_or_the_records_from_data(rng):
    X = rng.integers(0, 3, size=(100, 2))
    with pytest.raises(ValueError, match="domain_sizes is required"):
        DPKModes(2, random_state=0).fit(X)
    with pytest.warns(PrivacyLeakWarning, match="domain_sizes"):
        est = DPKModes(2, domain_sizes="data", random_state=0).fit(X)
    assert est.epsilon_guaranteed_ == float("inf") and est.epsilon_spent_ <= 1.0 + 1e-12
    with pytest.warns(PrivacyLeakWarning, match="records"):
        est = DPKModes(2, init="records", domain_sizes=(3, 3), random_state=0).fit(X)
    assert est.epsilon_guaranteed_ == float("inf")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = DPKModes(2, domain_sizes=(3, 3), random_state=0).fit(X)
    assert est.epsilon_guaranteed_ == 1.0 >= est.epsilon_spent_ and est.neighbouring_ == "add/remove one record"


@pytest.mark.parametrize(
    "make, X, exc, needle",
    [
        (lambda: KModes(0), [[0, 1]], ValueError, "n_clusters"),
        (lambda: KModes(2.0), [[0, 1], [1, 0]], TypeError, "n_clusters"),
        (lambda: KModes(3), [[0, 1], [1, 0], [0, 1]], ValueError, "distinct records"),
        (lambda: KModes(2, domain_sizes=(2, 2)), [[0, 1], [2, 0]], ValueError, "outside the declared domain"),
        (lambda: KModes(2), [[0.0, np.nan], [1.0, 0.0]], ValueError, "NaN"),
        (lambda: KModes(2), [[0, -1], [1, 0]], ValueError, "negative"),
        (lambda: KModes(2), np.zeros((0, 2), dtype=int), ValueError, "empty"),
        (lambda: KModes(2, init="kmeans++"), [[0, 1], [1, 0]], ValueError, "init"),
        (lambda: KModes(2, init=np.zeros((3, 2), dtype=int)), [[0, 1], [1, 0]], ValueError, "init array"),
        (lambda: KModes(2, max_iter=0), [[0, 1], [1, 0]], ValueError, "max_iter"),
        (lambda: DPKModes(2, epsilon=0.0, domain_sizes=(2, 2)), [[0, 1], [1, 0]], ValueError, "epsilon"),
        (lambda: DPKModes(2, epsilon=float("nan"), domain_sizes=(2, 2)), [[0, 1], [1, 0]], ValueError, "epsilon"),
        (lambda: DPKModes(5, domain_sizes=(2, 2)), [[0, 1]] * 6, ValueError, "points in the domain"),
        (lambda: DPKModes(2, init="random", domain_sizes=(2, 2)), [[0, 1], [1, 0]], ValueError, "init"),
        (lambda: DPKModes(2, max_iter=0, domain_sizes=(2, 2)), [[0, 1], [1, 0]], ValueError, "max_iter"),
    ],
)
def test_kmodes_bad_input(make, X, exc, needle):
    with pytest.raises(exc, match=needle):
        make().fit(np.asarray(X))


# --------------------------------------------------------------------------- distinct rows (speed by structure)


@pytest.mark.parametrize("shape, high", [((500, 4), 3), ((300, 3), [2, 7, 4]), ((200, 9), 1000)])
def test_unique_rows_is_numpys_rowwise_unique(rng, shape, high):
    from dpclust_lib.cluster._common import unique_rows

    X = rng.integers(0, high, size=shape)
    rows, inverse, counts = unique_rows(X)
    ref_rows, ref_inverse, ref_counts = np.unique(X, axis=0, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(rows, ref_rows)
    np.testing.assert_array_equal(inverse, ref_inverse.ravel())
    np.testing.assert_array_equal(counts, ref_counts)


def test_dpkmodes_labels_are_the_nearest_centres_of_every_record(rng):
    X = rng.integers(0, 3, size=(400, 4))
    est = DPKModes(3, epsilon=2.0, domain_sizes=(3,) * 4, random_state=1).fit(X)
    # The reference: Hamming distances by broadcasting, first minimum (ties: the lowest index).
    dist = (X[:, None, :] != est.cluster_centers_[None, :, :]).sum(axis=2)
    np.testing.assert_array_equal(est.predict(X), dist.argmin(axis=1))
    diagnostics = est.exact_diagnostics(X)
    np.testing.assert_array_equal(diagnostics.labels, dist.argmin(axis=1))
    assert diagnostics.cost == dist.min(axis=1).sum() and diagnostics.private is False
    np.testing.assert_array_equal(diagnostics.cluster_sizes, np.bincount(dist.argmin(axis=1), minlength=3))
    assert not hasattr(est, "labels_")  # the release holds no exact-data labels


def test_kmodes_still_refuses_negative_weights():
    with pytest.raises(ValueError, match="sample_weight"):
        KModes(1).fit(np.array([[0, 1], [1, 0]]), sample_weight=[1.0, -1.0])


def test_dpkmodes_noise_goes_through_the_laplace_mechanism(rng):
    """Every release is one laplace_mechanism call per iteration (the coupling audit watches that function):
    with the noise removed by an observer, DP-modes-Lloyd is k-modes from the same initial centres."""

    X, _ = _two_groups(rng)
    seen = []

    def exact(value, scale, noisy):
        seen.append((value.shape, scale))
        return value

    with mechanisms.observe_laplace(exact):
        dp = DPKModes(2, epsilon=0.1, max_iter=4, domain_sizes=(3,) * 4, random_state=3).fit(X)
    plain = KModes(2, init=dp.initial_centers_, max_iter=4, domain_sizes=(3,) * 4).fit(X)
    np.testing.assert_array_equal(dp.cluster_centers_, plain.cluster_centers_)
    assert len(seen) == dp.n_iter_
    # the scale the exact sampler used: the analysis' m T / epsilon, plus at most 2^-10 for the grid's rounding
    assert all(shape == (2 * 3 * 4,) and scale == pytest.approx(4 * 4 / 0.1, rel=2.0**-9) for shape, scale in seen)

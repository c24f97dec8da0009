"""The DP k-means family: KMeans (core), DPKMeans, IDPKMeans, DPKMeansPP, EUGKMeans.

Statistical tests state their family-wise alpha; each has a companion that
shows it can fail.
"""

import itertools
import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.cluster import KMeans as SkKMeans

from dpclust_lib import DPKMeans, DPKMeansPP, EUGKMeans, IDPKMeans, KMeans, PrivacyLeakWarning
from dpclust_lib._distances import _DISTANCE_ROWS
from dpclust_lib.cluster.eug_kmeans import eug_grid_size
from dpclust_lib.cluster.kmeans import (
    budget_shares,
    cluster_sums_counts,
    distinct_records,
    grid_histogram,
    kmeans_plusplus,
    lloyd,
    noisy_centres,
    sum_count_sensitivity,
)

ALPHA = 1e-3
UNIT = (0.0, 1.0)


def _blobs(rng, n=600, d=2, k=3, spread=0.03):
    centres = rng.uniform(0.2, 0.8, size=(k, d))
    X = centres[rng.integers(0, k, n)] + rng.normal(0, spread, size=(n, d))
    return np.clip(X, 0.0, 1.0)


def _all_dp(k=3, eps=1.0, **kw):
    """One of each private estimator, with bounds and n_public given (no warning expected)."""
    return {
        "DPKMeans": DPKMeans(k, epsilon=eps, bounds=UNIT, **kw),
        "IDPKMeans": IDPKMeans(k, epsilon=eps, bounds=UNIT, **kw),
        "DPKMeansPP": DPKMeansPP(k, epsilon=eps, bounds=UNIT, n_public=600, **kw),
        "EUGKMeans": EUGKMeans(k, epsilon=eps, bounds=UNIT, n_public=600, **kw),
    }


# --------------------------------------------------------------------------- the non-private core


def test_kmeans_matches_scikit_learn_from_the_same_start(rng):
    X = _blobs(rng, k=4) * 100 + 7
    start = X[:4].copy()
    ours = KMeans(4, init=start, max_iter=100).fit(X)
    sk = SkKMeans(4, init=start, n_init=1, max_iter=100, tol=0, algorithm="lloyd").fit(X)
    np.testing.assert_allclose(ours.cluster_centers_, sk.cluster_centers_, rtol=1e-10)
    np.testing.assert_array_equal(ours.labels_, sk.labels_)
    assert ours.inertia_ == pytest.approx(sk.inertia_, rel=1e-9)


def test_weights_equal_repeated_rows(rng):
    X = rng.integers(0, 6, size=(300, 2)).astype(float)
    uniq, counts = np.unique(X, axis=0, return_counts=True)
    start = uniq[:3]
    a = lloyd(X, start, None, 50)
    b = lloyd(uniq, start, counts, 50)
    np.testing.assert_allclose(a[0], b[0])
    assert a[2] == pytest.approx(b[2]) and a[3] == b[3]


def test_kmeans_plusplus_never_draws_zero_weight_records_while_others_remain(rng):
    X = rng.random((200, 2))
    w = np.zeros(200)
    w[:10] = 1.0
    for seed in range(20):
        C = kmeans_plusplus(X, 5, seed, w)
        assert all(any(np.array_equal(c, x) for x in X[:10]) for c in C)


def test_kmeans_plusplus_falls_back_to_uniform_when_weights_run_out(rng):
    X = rng.random((50, 2))
    w = np.zeros(50)
    w[3] = 2.0
    C = kmeans_plusplus(X, 4, 0, w)
    np.testing.assert_array_equal(C[0], X[3])
    assert C.shape == (4, 2)


def test_kmeans_n_init_keeps_the_lowest_inertia(rng):
    X = _blobs(rng, k=5)
    single = [KMeans(5, random_state=s).fit(X).inertia_ for s in range(5)]
    assert KMeans(5, n_init=10, random_state=0).fit(X).inertia_ <= max(single)


# --------------------------------------------------------------------------- sensitivity of (sum, count)


def _query(X, centres, lower, upper):
    labels = np.argmin(((X[:, None] - centres[None]) ** 2).sum(2), 1)  # centres are public: a fixed assignment
    sums, counts = cluster_sums_counts(X, labels, centres.shape[0], lower, upper)
    return np.concatenate([sums.ravel(), counts])


@pytest.mark.parametrize("d, lower, upper", [(2, 0.0, 1.0), (5, 0.0, 1.0), (3, -2.0, 2.0), (2, 1e5, 1e6)])
def test_sum_count_sensitivity_is_d_plus_1(rng, d, lower, upper):
    lo, hi = np.full(d, lower), np.full(d, upper)
    worst = 0.0
    for _ in range(2000):
        n = int(rng.integers(1, 30))
        D = rng.uniform(lo, hi, size=(n, d))
        centres = rng.uniform(lo, hi, size=(int(rng.integers(1, 6)), d))
        x = rng.uniform(lo, hi, size=(1, d))
        change = np.abs(_query(np.vstack([D, x]), centres, lo, hi) - _query(D, centres, lo, hi)).sum()
        worst = max(worst, change)
    assert worst <= sum_count_sensitivity(d) + 1e-9
    # The worst case: the added record at the upper corner of the domain reaches d + 1 exactly.
    D = rng.uniform(lo, hi, size=(10, d))
    centres = rng.uniform(lo, hi, size=(3, d))
    corner = hi[None]
    change = np.abs(_query(np.vstack([D, corner]), centres, lo, hi) - _query(D, centres, lo, hi)).sum()
    assert change == pytest.approx(d + 1)
    assert sum_count_sensitivity(d) == d + 1


def test_sensitivity_check_can_fail_on_raw_sums():
    # Sums of unscaled records on [0, 2]^d exceed d + 1: the check above would catch such a query.
    d = 3
    hi = np.full(d, 2.0)
    D = np.full((4, d), 0.5)
    x = hi[None]

    def raw(Z):
        return np.concatenate([Z.sum(0), [len(Z)]])

    assert np.abs(raw(np.vstack([D, x])) - raw(D)).sum() > sum_count_sensitivity(d)


def test_noisy_centres_noise_has_scale_d_plus_1_over_epsilon(rng):
    # One cluster holding everything: released sums and counts minus the true ones are Laplace((d+1)/eps).
    # KS test per coordinate, Bonferroni over d + 1 = 3: family-wise alpha 1e-3.
    X = rng.random((40, 2))
    eps, reps = 0.7, 4000
    lo, hi = np.zeros(2), np.ones(2)
    s, c = cluster_sums_counts(X, np.zeros(40, dtype=int), 1, lo, hi)
    from dpclust_lib.mechanisms import laplace_mechanism

    g = np.random.default_rng(5)
    draws = np.array(
        [laplace_mechanism(np.column_stack([s, c]), sum_count_sensitivity(2), eps, g)[0] for _ in range(reps)]
    ) - np.concatenate([s[0], c])
    for j in range(3):
        assert stats.kstest(draws[:, j], stats.laplace(scale=3 / eps).cdf).pvalue > ALPHA / 3
    # ... and the same test rejects the scale d / eps (too little noise).
    assert stats.kstest(draws[:, 0], stats.laplace(scale=2 / eps).cdf).pvalue < ALPHA / 3


def test_noisy_centres_keep_a_centre_whose_noisy_count_is_below_one_and_stay_in_the_domain(rng):
    X = rng.random((30, 2))
    previous = np.array([[0.25, 0.25], [0.75, 0.75]])
    labels = np.zeros(30, dtype=int)  # cluster 1 is empty
    out = noisy_centres(X, labels, 2, np.zeros(2), np.ones(2), 1e-3, previous, 0)
    assert np.all((out >= 0) & (out <= 1))
    out = noisy_centres(X, labels, 2, np.zeros(2), np.ones(2), 1e4, previous, 0)
    np.testing.assert_allclose(out[0], X.mean(0), atol=1e-3)
    np.testing.assert_array_equal(out[1], previous[1])


# --------------------------------------------------------------------------- budgets


@pytest.mark.parametrize("T", [1, 3, 7])
def test_budget_shares(T):
    assert sum(budget_shares("fixed", 2.0, T)) == pytest.approx(2.0)
    assert budget_shares("halving", 2.0, T) == [2.0 / 2**t for t in range(1, T + 1)]
    assert budget_shares("fixed", 1.0, 0) == []


@pytest.mark.parametrize("schedule", ["fixed", "halving"])
@pytest.mark.parametrize("T", [1, 2, 5])
def test_dp_and_idp_spend_the_schedule(rng, schedule, T):
    X = _blobs(rng)
    eps = 0.8
    expected = eps if schedule == "fixed" else eps * (1 - 2.0**-T)
    for est in (
        DPKMeans(3, epsilon=eps, max_iter=T, schedule=schedule, random_state=0, bounds=UNIT),
        IDPKMeans(3, epsilon=eps, max_iter=T, schedule=schedule, random_state=0, bounds=UNIT),
    ):
        est.fit(X)
        assert est.epsilon_spent_ == pytest.approx(expected, rel=1e-12)
        assert est.epsilon_spent_ <= eps * (1 + 1e-12)
        assert len(est.ledger_.entries) == T
        assert est.ledger_.spent == est.epsilon_spent_
    # DPKMeans: T Lloyd iterations; IDPKMeans: the initial release is the first of the T.
    assert DPKMeans(3, epsilon=eps, max_iter=T, schedule=schedule, random_state=0, bounds=UNIT).fit(X).n_iter_ == T
    idp = IDPKMeans(3, epsilon=eps, max_iter=T, schedule=schedule, random_state=0, bounds=UNIT).fit(X)
    assert idp.n_iter_ == T - 1 and idp.ledger_.entries[0][0].startswith("initial centres")


def test_fixed_noise_scale_is_d_plus_1_times_n_over_epsilon(rng):
    X = _blobs(rng, d=3)
    est = DPKMeans(3, epsilon=0.5, max_iter=4, schedule="fixed", random_state=0, bounds=UNIT).fit(X)
    assert est.noise_scales_ == [pytest.approx((3 + 1) * 4 / 0.5)] * 4
    idp = IDPKMeans(3, epsilon=0.5, max_iter=4, schedule="fixed", random_state=0, bounds=UNIT).fit(X)
    assert idp.initial_noise_scale_ == pytest.approx(4 * 4 / 0.5)


@pytest.mark.parametrize("schedule", ["fixed", "halving"])
def test_dpkmeanspp_spends_half_on_seeding(rng, schedule):
    X = _blobs(rng)
    est = DPKMeansPP(3, epsilon=1.0, max_iter=4, schedule=schedule, random_state=0, bounds=UNIT, n_public=600).fit(X)
    assert est.ledger_.entries[0][1] == pytest.approx(0.5) and est.ledger_.entries[0][0].startswith("seeding")
    rest = 0.5 if schedule == "fixed" else 0.5 * (1 - 2.0**-4)
    assert est.epsilon_spent_ == pytest.approx(0.5 + rest)
    assert est.epsilon_spent_ <= 1.0 * (1 + 1e-12)


def test_eug_spends_all_of_epsilon_on_the_grid(rng):
    est = EUGKMeans(3, epsilon=0.3, bounds=UNIT, n_public=600, random_state=0).fit(_blobs(rng))
    assert est.epsilon_spent_ == 0.3 and len(est.ledger_.entries) == 1


# --------------------------------------------------------------------------- behaviour


def test_dpkmeans_without_noise_is_lloyd_from_the_same_start(rng):
    X = _blobs(rng)
    dp = DPKMeans(3, epsilon=1e6, max_iter=6, schedule="fixed", random_state=4, bounds=UNIT).fit(X)
    plain = lloyd(X, dp.initial_centers_, max_iter=6)[0]
    np.testing.assert_allclose(dp.cluster_centers_, plain, atol=1e-5)  # epsilon = 1e6: noise of scale ~1e-6 remains


def test_idp_initial_centres_are_the_noisy_part_centroids(rng):
    X = _blobs(rng)
    k, seed = 3, 11
    est = IDPKMeans(k, epsilon=1e6, max_iter=1, schedule="fixed", random_state=seed, bounds=UNIT).fit(X)
    parts = np.random.default_rng(seed).integers(0, k, size=len(X))  # the same stream: parts are drawn first
    np.testing.assert_array_equal(est.exact_diagnostics(X).part_sizes, np.bincount(parts, minlength=k))
    means = np.array([X[parts == g].mean(0) for g in range(k)])
    np.testing.assert_allclose(est.cluster_centers_, means, atol=1e-8)
    with pytest.warns(PrivacyLeakWarning, match="split='order'"):
        ordered = IDPKMeans(
            k, epsilon=1e6, max_iter=1, schedule="fixed", random_state=seed, bounds=UNIT, split="order"
        ).fit(X)
    blocks = np.array([b.mean(0) for b in np.array_split(X, k)])
    np.testing.assert_allclose(ordered.cluster_centers_, blocks, atol=1e-8)


def test_idp_order_split_has_larger_sensitivity_than_d_plus_1(rng):
    # Appending one record moves K - 1 boundary records between contiguous parts.
    d, k, n = 2, 4, 12
    lo, hi = np.zeros(d), np.ones(d)
    D = np.tile([[1.0, 1.0], [0.0, 0.0]], (n // 2, 1))

    def initial_release(Z):
        parts = (np.arange(len(Z)) * k) // len(Z)
        s, c = cluster_sums_counts(Z, parts, k, lo, hi)
        return np.concatenate([s.ravel(), c])

    change = np.abs(initial_release(np.vstack([D, [[1.0, 1.0]]])) - initial_release(D)).sum()
    assert change > sum_count_sensitivity(d)
    # The random split draws each record's part independently: appending a record keeps the others' parts.
    a = np.random.default_rng(3).integers(0, k, size=n)
    b = np.random.default_rng(3).integers(0, k, size=n + 1)
    np.testing.assert_array_equal(a, b[:n])


def test_eug_grid_size_and_histogram(rng):
    assert eug_grid_size(10_000, 1.0, 2) == 32  # sqrt(1000) = 31.6
    assert eug_grid_size(10_000, 0.01, 2) == 3
    assert eug_grid_size(10, 0.01, 2) == 1
    X = np.array([[0.0, 0.0], [1.0, 1.0], [0.5, 0.49], [0.99, 0.0]])
    centres, counts = grid_histogram(X, np.zeros(2), np.ones(2), 2)
    np.testing.assert_allclose(centres, [[0.25, 0.25], [0.25, 0.75], [0.75, 0.25], [0.75, 0.75]])
    np.testing.assert_array_equal(counts, [1, 0, 2, 1])  # the upper edge is in the last cell
    with pytest.raises(ValueError, match="cells"):
        grid_histogram(rng.random((3, 8)), np.zeros(8), np.ones(8), 10)


def test_grid_histogram_is_numpys_histogramdd_with_the_cells_midpoints(rng):
    lower, upper, m = np.array([-1.0, 0.0, 10.0]), np.array([2.0, 0.3, 13.5]), 5
    X = lower + rng.random((2_000, 3)) * (upper - lower)
    X[:3] = upper  # the upper edge belongs to the last cell
    centres, counts = grid_histogram(X, lower, upper, m)
    edges = [np.linspace(lo, hi, m + 1) for lo, hi in zip(lower, upper)]
    expected, _ = np.histogramdd(X, bins=edges)
    np.testing.assert_array_equal(counts, expected.ravel())  # C order of the cell indices
    midpoints = [(e[:-1] + e[1:]) / 2 for e in edges]
    np.testing.assert_allclose(centres, list(itertools.product(*midpoints)), rtol=1e-12)


def test_kmeans_plusplus_sees_a_far_record_beyond_the_first_block_of_rows(rng):
    # More rows than one block of the distance computation; the far record sits in the second block and
    # carries nearly all of the second draw's mass (unless it is drawn first, then a near one follows).
    X = rng.random((70_000, 10)) * 1e-3
    X[69_000] = 1_000.0
    assert _DISTANCE_ROWS < 69_000
    for seed in range(5):
        C = kmeans_plusplus(X, 2, seed)
        assert (C == 1_000.0).all(axis=1).sum() == 1


def test_eug_without_noise_is_weighted_kmeans_on_the_grid(rng):
    X = _blobs(rng)
    est = EUGKMeans(3, epsilon=1e6, bounds=UNIT, grid_size=20, random_state=2).fit(X)
    cells, counts = grid_histogram(X, np.zeros(2), np.ones(2), 20)
    np.testing.assert_allclose(est.bucket_counts_, counts, atol=1e-4)  # noise of scale 1e-6 per cell remains
    assert est.grid_size_ == 20
    # a fixed point of weighted Lloyd on the release
    ref = lloyd(cells, est.cluster_centers_, np.maximum(est.bucket_counts_, 0.0), 300)[0]
    np.testing.assert_allclose(est.cluster_centers_, ref, atol=1e-9)


@pytest.mark.parametrize("name", ["DPKMeans", "IDPKMeans", "DPKMeansPP", "EUGKMeans"])
def test_same_seed_same_result_bit_for_bit(rng, name):
    X = _blobs(rng)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # bounds and n_public given: nothing leaks
        a = _all_dp(random_state=7)[name].fit(X)
        b = _all_dp(random_state=7)[name].fit(X)
        c = _all_dp(random_state=np.random.default_rng(7))[name].fit(X)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    np.testing.assert_array_equal(a.cluster_centers_, c.cluster_centers_)
    assert not np.array_equal(a.cluster_centers_, _all_dp(random_state=8)[name].fit(X).cluster_centers_)


@pytest.mark.parametrize("name", ["DPKMeans", "IDPKMeans", "DPKMeansPP", "EUGKMeans"])
def test_contract(rng, name):
    X = _blobs(rng)
    est = _all_dp(random_state=1)[name]
    params = dict(vars(est))
    labels = est.fit_predict(X)
    assert vars(est).items() >= params.items()  # hyper-parameters untouched by fit
    for attr in (
        "cluster_centers_",
        "n_iter_",
        "epsilon_spent_",
        "epsilon_guaranteed_",
        "neighbouring_",
        "ledger_",
        "n_features_in_",
    ):
        assert hasattr(est, attr)
    for attr in ("labels_", "part_sizes_"):  # exact data: not on the release
        assert not hasattr(est, attr)
    assert est.epsilon_guaranteed_ == est.epsilon_spent_ and est.neighbouring_ == "add/remove one record"
    diag = est.exact_diagnostics(X)
    np.testing.assert_array_equal(diag.labels, labels)
    assert diag.cluster_sizes.sum() == len(X)
    assert est.cluster_centers_.shape == (3, 2)
    np.testing.assert_array_equal(labels, est.predict(X))
    assert est.epsilon_spent_ <= 1.0 * (1 + 1e-12)
    assert np.all((est.cluster_centers_ >= 0) & (est.cluster_centers_ <= 1))
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :1])


@pytest.mark.parametrize(
    "make",
    [lambda: DPKMeans(2), lambda: IDPKMeans(2), lambda: DPKMeansPP(2, n_public=50), lambda: EUGKMeans(2, n_public=50)],
)
def test_bounds_are_required(rng, make):
    with pytest.raises(ValueError, match="bounds is required"):
        make().fit(rng.random((50, 2)))


@pytest.mark.parametrize(
    "make",
    [
        lambda: DPKMeans(2, bounds="data"),
        lambda: IDPKMeans(2, bounds="data"),
        lambda: DPKMeansPP(2, n_public=50, bounds="data"),
        lambda: EUGKMeans(2, n_public=50, bounds="data"),
    ],
)
def test_bounds_from_data_warn_and_guarantee_nothing(rng, make):
    with pytest.warns(PrivacyLeakWarning, match="bounds"):
        est = make().fit(rng.random((50, 2)))
    assert est.epsilon_guaranteed_ == float("inf") and est.epsilon_spent_ <= 1.0 + 1e-12


@pytest.mark.parametrize("make", [lambda: DPKMeansPP(2, bounds=UNIT), lambda: EUGKMeans(2, bounds=UNIT)])
def test_n_public_is_required(rng, make):
    with pytest.raises(ValueError, match="n_public is required"):
        make().fit(rng.random((50, 2)))


@pytest.mark.parametrize(
    "make", [lambda: DPKMeansPP(2, bounds=UNIT, n_public="data"), lambda: EUGKMeans(2, bounds=UNIT, n_public="data")]
)
def test_true_n_warns(rng, make):
    with pytest.warns(PrivacyLeakWarning, match="n_public"):
        est = make().fit(rng.random((50, 2)))
    assert est.epsilon_guaranteed_ == float("inf")


def test_records_init_warns_and_domain_init_is_data_independent(rng):
    with pytest.warns(PrivacyLeakWarning, match="records"):
        est = DPKMeans(2, bounds=UNIT, init="records", random_state=0).fit(rng.random((50, 2)))
    assert est.epsilon_guaranteed_ == float("inf")
    a = DPKMeans(2, bounds=UNIT, random_state=3).fit(rng.random((50, 2))).initial_centers_
    b = DPKMeans(2, bounds=UNIT, random_state=3).fit(rng.random((80, 2))).initial_centers_
    np.testing.assert_array_equal(a, b)


def test_records_init_draws_as_weka_simplekmeans():
    # Weka's SimpleKMeans visits the records in a uniformly random order and takes each one unless it repeats a
    # record already taken. With the records A, A, B, C and K = 2 the ordered pair taken has an exact law over the
    # 4! orders, enumerated here; 6,000 draws of the library are tested against it (chi-squared, alpha = 1e-3).
    X = np.array([[0.0], [0.0], [1.0], [2.0]])
    exact = {}
    for order in itertools.permutations(range(4)):
        taken = []
        for i in order:
            if X[i, 0] not in taken:
                taken.append(X[i, 0])
        exact[tuple(taken[:2])] = exact.get(tuple(taken[:2]), 0) + 1 / 24
    draws = [tuple(distinct_records(X, 2, np.random.default_rng(s)).ravel()) for s in range(6_000)]
    assert all(a != b for a, b in draws)
    cells = sorted(exact)
    observed = [draws.count(c) for c in cells]
    assert sum(observed) == len(draws)  # no pair outside the exact law
    assert stats.chisquare(observed, [exact[c] * len(draws) for c in cells]).pvalue > 1e-3
    # uniform over the distinct values instead (A as likely as B) is rejected by the same test
    uniform = [len(draws) / len(cells)] * len(cells)
    assert stats.chisquare(observed, uniform).pvalue < 1e-3
    with pytest.warns(PrivacyLeakWarning, match="records"), pytest.raises(ValueError, match="distinct records"):
        DPKMeans(4, bounds=(0, 2), init="records").fit(X)


def test_scalar_and_array_bounds_agree(rng):
    X = rng.random((60, 2))
    a = DPKMeans(2, bounds=(0, 1), random_state=0).fit(X).cluster_centers_
    b = DPKMeans(2, bounds=([0, 0], [1, 1]), random_state=0).fit(X).cluster_centers_
    np.testing.assert_array_equal(a, b)


def test_unfitted_predict():
    from sklearn.exceptions import NotFittedError

    for est in (KMeans(2), DPKMeans(2), EUGKMeans(2)):
        with pytest.raises(NotFittedError, match="not fitted"):
            est.predict(np.zeros((2, 2)))


GOOD = np.random.default_rng(0).random((20, 2))


@pytest.mark.parametrize(
    "make, X, exc, needle",
    [
        (lambda: DPKMeans(2, epsilon=0.0, bounds=UNIT), GOOD, ValueError, "epsilon"),
        (lambda: DPKMeans(2, epsilon=-1.0, bounds=UNIT), GOOD, ValueError, "epsilon"),
        (lambda: DPKMeans(2, epsilon=float("nan"), bounds=UNIT), GOOD, ValueError, "epsilon"),
        (lambda: DPKMeans(2, epsilon=float("inf"), bounds=UNIT), GOOD, ValueError, "epsilon"),
        (lambda: DPKMeans(2, epsilon="1", bounds=UNIT), GOOD, TypeError, "epsilon"),
        (lambda: DPKMeans(0, bounds=UNIT), GOOD, ValueError, "n_clusters"),
        (lambda: DPKMeans(2.0, bounds=UNIT), GOOD, TypeError, "n_clusters"),
        (lambda: DPKMeans(2, max_iter=0, bounds=UNIT), GOOD, ValueError, "max_iter"),
        (lambda: DPKMeans(2, schedule="linear", bounds=UNIT), GOOD, ValueError, "schedule"),
        (lambda: DPKMeans(2, init="k-means++", bounds=UNIT), GOOD, ValueError, "init"),
        (lambda: DPKMeans(2, init=np.zeros((3, 2)), bounds=UNIT), GOOD, ValueError, "init array"),
        (lambda: DPKMeans(2, bounds=(1, 0)), GOOD, ValueError, "upper must exceed lower"),
        (lambda: DPKMeans(2, bounds=([0, 0, 0], [1, 1, 1])), GOOD, ValueError, "bounds"),
        (lambda: DPKMeans(2, bounds=UNIT), np.zeros(5), ValueError, "2-D"),
        (lambda: DPKMeans(2, bounds=UNIT), np.array([["a", "b"]]), TypeError, "numeric"),
        (lambda: IDPKMeans(2, split="sorted", bounds=UNIT), GOOD, ValueError, "split"),
        (lambda: IDPKMeans(2, epsilon=0.0, bounds=UNIT), GOOD, ValueError, "epsilon"),
        (lambda: DPKMeansPP(2, seeding_share=0.0, bounds=UNIT, n_public=20), GOOD, ValueError, "seeding_share"),
        (lambda: DPKMeansPP(2, seeding_share=1.0, bounds=UNIT, n_public=20), GOOD, ValueError, "seeding_share"),
        (lambda: DPKMeansPP(2, bounds=UNIT, n_public=0), GOOD, ValueError, "n_public"),
        (lambda: EUGKMeans(2, epsilon=0.0, bounds=UNIT, n_public=20), GOOD, ValueError, "epsilon"),
        (lambda: EUGKMeans(2, bounds=UNIT, grid_size=0), GOOD, ValueError, "grid_size"),
        (lambda: EUGKMeans(2, bounds=UNIT, n_public=2.5), GOOD, TypeError, "n_public"),
        (lambda: KMeans(2, init="random"), GOOD, ValueError, "init"),
        (lambda: KMeans(2, n_init=0), GOOD, ValueError, "n_init"),
    ],
)
def test_bad_input(make, X, exc, needle):
    with pytest.raises(exc, match=needle):
        make().fit(X)


def test_bucket_lloyd_ignores_zero_weight_buckets_and_survives_all_zero(rng):
    from dpclust_lib.cluster.kmeans import fit_buckets

    buckets = rng.random((300, 2))
    noisy = rng.laplace(0, 3.0, size=300)
    start = buckets[:4].copy()
    centres, _ = fit_buckets(buckets, noisy, start, 300)
    full = lloyd(buckets, start, np.maximum(noisy, 0), 300)[0]
    np.testing.assert_allclose(centres, full, rtol=1e-12)
    centres, n_iter = fit_buckets(buckets, -np.abs(noisy), start, 300)
    np.testing.assert_array_equal(centres, start)
    assert n_iter == 0

"""Birch (our CF tree), DPBirch (Wang et al., as published) and DPBirchPublicTree (honestly accounted)."""

import math
import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.cluster import Birch as SkBirch

from dpclust import datasets
from dpclust_lib import Birch, DPBirch, DPBirchPublicTree, PrivacyLeakWarning, metrics
from dpclust_lib.cluster.birch import BirchWarning, ClusteringFeature, NegativeRadiusWarning, global_clustering

from .conftest import bonferroni

UNIT = (0.0, 1.0)


def _blobs(rng, n=3000, d=3):
    centres = rng.random((6, d)) * 0.6 + 0.2
    X = centres[rng.integers(0, 6, n)] + rng.normal(0, 0.05, (n, d))
    return np.clip(X, 0, 1)


# --------------------------------------------------------------------------- clustering features


def test_cf_additivity_and_radius(rng):
    A, B = rng.random((40, 5)), rng.random((25, 5))
    both = ClusteringFeature.of(A) + ClusteringFeature.of(B)
    direct = ClusteringFeature.of(np.vstack([A, B]))
    assert both.n == direct.n == 65
    np.testing.assert_allclose(both.ls, direct.ls, rtol=1e-12)
    assert both.ss == pytest.approx(direct.ss, rel=1e-12)
    X = np.vstack([A, B])
    assert direct.sq_radius == pytest.approx(np.mean(np.sum((X - X.mean(0)) ** 2, axis=1)), rel=1e-10)
    np.testing.assert_allclose(direct.centroid, X.mean(0), rtol=1e-12)


def test_cluster_centres_are_the_cluster_cfs_centroids(rng):
    # Sum of LS over sum of N per global cluster; a noisy N < 0 weighs 0; a cluster with no weight
    # left takes the plain mean of its centroids.
    from dpclust_lib.cluster.birch import cluster_centres_from_cfs

    centers, n = rng.normal(0, 3, (9, 2)), np.array([2.0, 1, 5, -1, 3, -2, -0.5, 4, 1])
    labels = np.array([0, 1, 0, 2, 1, 2, 2, 0, 3])
    want = [
        (2 * centers[0] + 5 * centers[2] + 4 * centers[7]) / 11,
        (centers[1] + 3 * centers[4]) / 4,
        centers[[3, 5, 6]].mean(axis=0),
        centers[8],
    ]
    np.testing.assert_allclose(cluster_centres_from_cfs(centers, n, labels), want, rtol=1e-12)
    est = Birch(4, threshold=0.05, branching_factor=10).fit(_blobs(rng, n=500))
    by_cf = [
        est.subcluster_ls_[est.subcluster_labels_ == g].sum(0) / est.subcluster_n_[est.subcluster_labels_ == g].sum()
        for g in range(4)
    ]
    np.testing.assert_allclose(est.cluster_centers_, by_cf, rtol=1e-10)


def test_exact_tree_is_additive_and_noisy_tree_is_not(rng):
    X = _blobs(rng)
    exact = Birch(threshold=0.05, branching_factor=5, n_clusters=None).fit(X)
    assert exact.height_ >= 3  # several levels, so the check covers parents of parents
    gap_n, gap_ls, gap_ss = exact.tree_.additivity_residuals()
    assert gap_n == 0 and gap_ls < 1e-9 and gap_ss < 1e-9
    assert exact.subcluster_n_.sum() == len(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NegativeRadiusWarning)
        noisy = DPBirch(
            epsilon=50.0, threshold=0.05, branching_factor=5, n_clusters=None, random_state=0, bounds=UNIT
        ).fit(X)
    assert noisy.height_ >= 2
    gap_n, gap_ls, gap_ss = noisy.tree_.additivity_residuals()
    assert gap_n == 0 and gap_ls > 1e-3 and gap_ss > 1e-3  # independent noise per CF on a path


# --------------------------------------------------------------------------- agreement with scikit-learn


@pytest.mark.parametrize(
    "threshold, branching_factor, n_clusters",
    [
        (0.5, 50, 3),
        (0.1, 50, 3),
        (0.05, 5, 4),
        (0.02, 3, 6),
        (0.08, 2, None),
    ],
)
def test_birch_builds_the_same_tree_as_scikit_learn(rng, threshold, branching_factor, n_clusters):
    X = _blobs(rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BirchWarning)
        ours = Birch(n_clusters, threshold=threshold, branching_factor=branching_factor).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn's ConvergenceWarning when subclusters < K
        sk = SkBirch(threshold=threshold, branching_factor=branching_factor, n_clusters=n_clusters).fit(X)
    assert ours.n_subclusters_ == len(sk.subcluster_centers_)
    np.testing.assert_array_equal(ours.subcluster_centers_, sk.subcluster_centers_)  # bit for bit, same order
    np.testing.assert_array_equal(ours.labels_, sk.labels_)
    np.testing.assert_array_equal(ours.predict(X[:100]), sk.predict(X[:100]))


def _cf_rows(ours_node, sk_node):
    """Both trees' CFs, node by node in the same order: (ours, scikit-learn's) rows of n, LS and SS."""
    mine, theirs = [], []
    stack = [(ours_node, sk_node)]
    while stack:
        a, b = stack.pop()
        assert a.size == len(b.subclusters_) and a.is_leaf == b.is_leaf
        for i, sub in enumerate(b.subclusters_):
            mine.append(np.concatenate([[a.n[i]], a.ls[i], [a.ss[i]]]))
            theirs.append(np.concatenate([[sub.n_samples_], sub.linear_sum_, [sub.squared_sum_]]))
            if not a.is_leaf:
                stack.append((a.children[i], sub.child_))
    return np.array(mine), np.array(theirs)


def test_every_cf_of_the_tree_is_scikit_learns_bit_for_bit_signed_zeros_included(rng):
    # The non-leaf CFs a split forms are sums in entry order from 0, as scikit-learn's: a column of -0.0
    # sums to +0.0 there. Many splits (B = 3), every CF compared, the sign of every zero too.
    X = _blobs(rng)[:600]
    X[:, 1] = -0.0
    ours = Birch(None, threshold=0.002, branching_factor=3).fit(X)
    sk = SkBirch(threshold=0.002, branching_factor=3, n_clusters=None).fit(X)
    mine, theirs = _cf_rows(ours.tree_.root, sk.root_)
    assert ours.n_splits_ > 100 and ours.height_ > 4
    np.testing.assert_array_equal(mine, theirs)
    np.testing.assert_array_equal(np.signbit(mine), np.signbit(theirs))


def test_birch_duplicates_split_like_scikit_learn():
    X = np.repeat(np.array([[0.1, 0.1], [0.9, 0.9], [0.5, 0.2]]), 30, axis=0)
    ours = Birch(threshold=1e-9, branching_factor=2, n_clusters=None).fit(X)
    sk = SkBirch(threshold=1e-9, branching_factor=2, n_clusters=None).fit(X)
    np.testing.assert_array_equal(ours.subcluster_centers_, sk.subcluster_centers_)


def test_birch_breaks_ward_ties_as_scikit_learn_does():
    """The six points of a 2 x 3 grid: many equal Ward distances.

    scikit-learn's partition is {4 points of rows 0-1} + {the 2 points of row 2}: SSE 2 + 0.5 = 2.5
    (fastcluster's vector algorithm broke the tie into two triangles, SSE 4/3 + 4/3 = 2.67).
    """
    X = np.array([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]], dtype=float)
    ours = Birch(2, threshold=0.1).fit(X)
    sk = SkBirch(threshold=0.1, n_clusters=2).fit(X)
    np.testing.assert_array_equal(sk.labels_, [0, 0, 1, 0, 0, 1])
    np.testing.assert_array_equal(ours.labels_, sk.labels_)
    sse = sum(((X[ours.labels_ == g] - X[ours.labels_ == g].mean(0)) ** 2).sum() for g in range(2))
    assert sse == pytest.approx(2.5)


@pytest.mark.parametrize("n_clusters", [2, 3, 5, 8])
def test_birch_matches_scikit_learn_on_tie_heavy_integer_grid(n_clusters):
    # Integer records on an 8 x 8 grid: every leaf centroid is a grid point, Ward distances tie everywhere.
    X = np.random.default_rng(0).integers(0, 8, (400, 2)).astype(float)
    ours = Birch(n_clusters, threshold=0.1).fit(X)
    sk = SkBirch(threshold=0.1, n_clusters=n_clusters).fit(X)
    np.testing.assert_array_equal(ours.subcluster_centers_, sk.subcluster_centers_)
    np.testing.assert_array_equal(ours.labels_, sk.labels_)
    np.testing.assert_array_equal(ours.relabel(n_clusters), sk.labels_)


@pytest.mark.parametrize("threshold, branching_factor", [(0.5, 50), (0.2, 50), (0.3, 5)])
def test_birch_agrees_with_scikit_learn_on_magic(needs_data, threshold, branching_factor):
    needs_data(datasets.MAGIC)
    X = datasets.load("magic", "minmax").X
    ours = Birch(2, threshold=threshold, branching_factor=branching_factor).fit(X)
    sk = SkBirch(threshold=threshold, branching_factor=branching_factor, n_clusters=2).fit(X)
    assert ours.n_subclusters_ == len(sk.subcluster_centers_)
    assert metrics.adjusted_rand_index(sk.labels_, ours.labels_) == 1.0
    np.testing.assert_array_equal(ours.subcluster_centers_, sk.subcluster_centers_)


# --------------------------------------------------------------------------- contract


@pytest.mark.parametrize(
    "make",
    [
        lambda: Birch(3, threshold=0.1, branching_factor=10, random_state=0),
        lambda: DPBirch(3, epsilon=5.0, threshold=0.1, branching_factor=10, random_state=0, bounds=UNIT),
        lambda: DPBirchPublicTree(
            3, epsilon=5.0, threshold=0.1, branching_factor=10, n_skeleton=500, random_state=0, bounds=UNIT
        ),
    ],
)
def test_estimator_contract(rng, make):
    X = _blobs(rng, n=600)
    est = make()
    params = dict(vars(est))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NegativeRadiusWarning)
        assert est.fit(X) is est
        assert est.fit_predict(X).shape == (600,)
    assert {k: v for k, v in vars(est).items() if not k.endswith("_") and not k.startswith("_")} == params
    assert est.n_features_in_ == 3
    if isinstance(est, Birch):
        labels, nearest, again = est.labels_, est.nearest_subcluster_, est.relabel(3)
    else:  # a private estimator keeps no labels of its records: they come from predict / exact_diagnostics
        for attr in ("labels_", "nearest_subcluster_", "subcluster_n_"):
            assert not hasattr(est, attr)
        assert est.neighbouring_ == "add/remove one record"
        diag = est.exact_diagnostics(X)
        labels, nearest, again = diag.labels, diag.nearest_subcluster, est.relabel(3, X)
        with pytest.raises(ValueError, match="X is required"):
            est.relabel(3)
    np.testing.assert_array_equal(labels, est.predict(X))
    np.testing.assert_array_equal(labels, est.subcluster_labels_[nearest])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BirchWarning)
        assert metrics.adjusted_rand_index(labels, again) == 1.0
        assert set(np.unique(est.relabel(2, X))) <= {0, 1}


def test_relabel_gives_the_partition_of_a_fit_with_that_k(rng):
    X = _blobs(rng, n=800)
    est = Birch(3, threshold=0.02, branching_factor=20).fit(X)
    assert est.n_subclusters_ > 50
    for k in (1, 2, 4, 7):
        assert (
            metrics.adjusted_rand_index(Birch(k, threshold=0.02, branching_factor=20).fit(X).labels_, est.relabel(k))
            == 1.0
        )
    np.testing.assert_array_equal(est.relabel(None), est.nearest_subcluster_)


def test_ward_linkage_and_cut_match_scikit_learn_on_noisy_centroids(rng):
    from scipy.cluster.hierarchy import ward
    from sklearn.cluster import AgglomerativeClustering

    from dpclust_lib.cluster.birch import _ward_cut, ward_linkage

    for _ in range(5):
        C = np.vstack([rng.laplace(0, 3.0, (300, 4)), rng.random((6, 4))])
        Z = ward_linkage(C)
        np.testing.assert_allclose(Z[:, 2], ward(C)[:, 2], rtol=1e-10)  # the same merge heights as scipy
        for k in (2, 3, 5):
            assert metrics.adjusted_rand_index(AgglomerativeClustering(k).fit_predict(C), _ward_cut(Z, k)) == 1.0
            assert (
                metrics.adjusted_rand_index(AgglomerativeClustering(k).fit_predict(C), global_clustering(C, k)) == 1.0
            )


def test_unfitted_predict():
    from sklearn.exceptions import NotFittedError

    for est in (Birch(), DPBirch(bounds=UNIT), DPBirchPublicTree(bounds=UNIT)):
        with pytest.raises(NotFittedError, match="not fitted"):
            est.predict(np.zeros((2, 2)))


def test_fewer_subclusters_than_k_warns(rng):
    X = _blobs(rng, n=200)
    with pytest.warns(BirchWarning, match="fewer than n_clusters=5") as caught:
        est = Birch(threshold=5.0, n_clusters=5).fit(X)
    assert caught[0].filename == __file__  # the warning points at the caller
    assert est.n_subclusters_ == 1 and (est.labels_ == 0).all()


# --------------------------------------------------------------------------- determinism


@pytest.mark.parametrize("cls", [DPBirch, DPBirchPublicTree])
def test_same_seed_same_result(rng, cls):
    X = _blobs(rng, n=800)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NegativeRadiusWarning)
        a = cls(3, epsilon=2.0, threshold=0.1, branching_factor=10, random_state=7, bounds=UNIT).fit(X)
        b = cls(3, epsilon=2.0, threshold=0.1, branching_factor=10, random_state=7, bounds=UNIT).fit(X)
        c = cls(3, epsilon=2.0, threshold=0.1, branching_factor=10, random_state=8, bounds=UNIT).fit(X)
        g = cls(
            3, epsilon=2.0, threshold=0.1, branching_factor=10, random_state=np.random.default_rng(7), bounds=UNIT
        ).fit(X)
    np.testing.assert_array_equal(a.subcluster_centers_, b.subcluster_centers_)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_array_equal(a.subcluster_centers_, g.subcluster_centers_)
    assert a.subcluster_centers_.shape != c.subcluster_centers_.shape or not np.array_equal(
        a.subcluster_centers_, c.subcluster_centers_
    )


def test_birch_is_deterministic(rng):
    X = _blobs(rng, n=800)
    np.testing.assert_array_equal(
        Birch(threshold=0.05, branching_factor=5).fit(X).subcluster_centers_,
        Birch(threshold=0.05, branching_factor=5, random_state=3).fit(X).subcluster_centers_,
    )


# --------------------------------------------------------------------------- DPBirch: as published


def test_dpbirch_accounting(rng):
    X = _blobs(rng, n=500, d=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NegativeRadiusWarning)
        est = DPBirch(epsilon=0.3, threshold=0.1, branching_factor=5, n_clusters=2, random_state=0, bounds=UNIT).fit(X)
    assert est.epsilon_spent_ == pytest.approx(2 * 0.3)  # the paper's claim: eps for LS + eps for SS
    assert len(est.ledger_.entries) == 2
    assert est.epsilon_guaranteed_ == math.inf
    assert est.epsilon_if_shape_public_ == pytest.approx(2 * est.height_ * 4 * 0.3)
    assert est.noise_scale_ == pytest.approx(1 / 0.3)
    # One noise row per CF update: at least one per record (its leaf), at most one per level.
    assert len(X) <= est.n_noise_draws_ <= len(X) * est.height_


def test_dpbirch_releases_exact_counts_so_neighbours_are_told_apart(rng):
    """No finite epsilon: the leaves' N always sum to the number of records, with or without one record."""
    X = _blobs(rng, n=300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NegativeRadiusWarning)
        for seed in range(5):
            full = DPBirch(None, epsilon=1.0, threshold=0.1, branching_factor=10, random_state=seed, bounds=UNIT).fit(X)
            minus = DPBirch(None, epsilon=1.0, threshold=0.1, branching_factor=10, random_state=seed, bounds=UNIT).fit(
                X[1:]
            )
            # The release itself (the noisy tree) carries the exact N.
            assert full.tree_.leaf_cfs()[0].sum() == 300 and minus.tree_.leaf_cfs()[0].sum() == 299
            assert full.exact_diagnostics(X).subcluster_n.sum() == 300


def test_dpbirch_noise_on_a_single_record_is_laplace():
    """The first record starts a leaf CF: LS - x and SS - ||x||^2 must be Lap(1/eps).

    KS tests, family-wise alpha = 0.01 over two tests (Bonferroni); the same tests reject a
    mechanism with the scale off by a factor 1.5, which shows they can fail.
    """
    eps, x, runs = 0.7, np.array([[0.3, 0.8]]), 1500
    ls_noise, ss_noise = [], []
    for seed in range(runs):
        est = DPBirch(None, epsilon=eps, threshold=0.5, branching_factor=50, random_state=seed, bounds=UNIT).fit(x)
        ls_noise.append(est.subcluster_ls_[0, 0] - x[0, 0])
        ss_noise.append(est.subcluster_ss_[0] - x[0] @ x[0])
    alpha = bonferroni(0.01, 2)
    for sample in (ls_noise, ss_noise):
        assert stats.kstest(sample, stats.laplace(scale=1 / eps).cdf).pvalue > alpha
        assert stats.kstest(sample, stats.laplace(scale=1.5 / eps).cdf).pvalue < alpha


def test_negative_squared_radius_is_counted_and_announced(rng):
    X = _blobs(rng, n=400)
    with pytest.warns(NegativeRadiusWarning, match="negative noisy squared radius"):
        est = DPBirch(None, epsilon=0.5, threshold=0.1, branching_factor=10, random_state=0, bounds=UNIT).fit(X)
    assert 0 < est.n_negative_sq_radius_ <= est.n_threshold_tests_ == len(X) - 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", NegativeRadiusWarning)
        Birch(2, threshold=0.1, branching_factor=10).fit(X)


# --------------------------------------------------------------------------- DPBirchPublicTree: honest accounting


def test_public_tree_accounting(rng):
    X = _blobs(rng, n=500, d=4)
    est = DPBirchPublicTree(
        2,
        epsilon=0.8,
        threshold=0.2,
        branching_factor=10,
        n_skeleton=300,
        budget_split=(1, 2, 1),
        min_count=1.0,
        random_state=0,
        bounds=UNIT,
    ).fit(X)
    assert est.epsilon_spent_ == pytest.approx(0.8) and est.epsilon_spent_ <= 0.8 * (1 + 1e-9)
    assert est.epsilon_guaranteed_ == est.epsilon_spent_
    n_scale, ls_scale, ss_scale = est.noise_scales_
    assert (
        n_scale == pytest.approx(1 / 0.2) and ls_scale == pytest.approx(4 / 0.4) and ss_scale == pytest.approx(4 / 0.2)
    )
    assert [e for _, e in est.ledger_.entries] == pytest.approx([0.2, 0.4, 0.2])


def test_public_tree_released_tree_is_additive(rng):
    X = _blobs(rng, n=500)
    est = DPBirchPublicTree(
        None, epsilon=1.0, threshold=0.05, branching_factor=4, n_skeleton=400, random_state=3, bounds=UNIT
    ).fit(X)
    levels = est.level_cfs()
    assert len(levels) == est.height_ >= 3
    np.testing.assert_allclose(levels[0][0].sum(), est.leaf_n_.sum())  # the root level holds every leaf
    rows = list(est.skeleton_tree_.ancestry()) + [np.arange(len(est.leaf_n_))]  # each leaf's entry per level
    for level in range(len(levels) - 1):
        pairs = np.unique(np.column_stack([rows[level], rows[level + 1]]), axis=0)  # (parent, child) entries
        (n_up, ls_up, ss_up), (n_low, ls_low, ss_low) = levels[level], levels[level + 1]
        m = len(n_up)
        np.testing.assert_allclose(n_up, np.bincount(pairs[:, 0], weights=n_low[pairs[:, 1]], minlength=m), atol=1e-9)
        np.testing.assert_allclose(ss_up, np.bincount(pairs[:, 0], weights=ss_low[pairs[:, 1]], minlength=m), atol=1e-9)
        for j in range(ls_up.shape[1]):
            np.testing.assert_allclose(
                ls_up[:, j], np.bincount(pairs[:, 0], weights=ls_low[pairs[:, 1], j], minlength=m), atol=1e-9
            )


def test_public_tree_skeleton_does_not_depend_on_the_data(rng):
    X = _blobs(rng, n=500)
    a = DPBirchPublicTree(
        None, epsilon=1.0, threshold=0.2, branching_factor=10, n_skeleton=300, random_state=4, bounds=UNIT
    ).fit(X)
    b = DPBirchPublicTree(
        None, epsilon=1.0, threshold=0.2, branching_factor=10, n_skeleton=300, random_state=4, bounds=UNIT
    ).fit(X[:50])
    np.testing.assert_array_equal(a.skeleton_tree_.leaf_cfs()[3], b.skeleton_tree_.leaf_cfs()[3])


def test_public_tree_sensitivity_one_leaf_changes_by_one_record(rng):
    """Removing a record changes the exact CFs of one leaf, by (1, x, ||x||^2): L1 <= 1 + d + d on [0, 1]^d."""
    X = _blobs(rng, n=400)
    tree = (
        DPBirchPublicTree(
            2, epsilon=1.0, threshold=0.2, branching_factor=10, n_skeleton=300, random_state=1, bounds=UNIT
        )
        .fit(X)
        .skeleton_tree_
    )

    def exact(Y):
        leaf = tree.route(Y)
        m = sum(node.size for node in tree.leaves())
        ls = np.zeros((m, Y.shape[1]))
        np.add.at(ls, leaf, Y)
        return np.bincount(leaf, minlength=m), ls, np.bincount(leaf, weights=(Y * Y).sum(1), minlength=m)

    (n1, ls1, ss1), (n2, ls2, ss2) = exact(X), exact(X[1:])
    changed = np.flatnonzero((n1 != n2) | (np.abs(ls1 - ls2).sum(1) > 1e-12) | (np.abs(ss1 - ss2) > 1e-12))
    assert changed.tolist() == [tree.route(X[:1])[0]]
    j = changed[0]
    assert n1[j] - n2[j] == 1
    np.testing.assert_allclose(ls1[j] - ls2[j], X[0], atol=1e-12)
    assert ss1[j] - ss2[j] == pytest.approx(X[0] @ X[0])


def test_public_tree_count_noise_is_laplace(rng):
    """Noisy N - exact N of one leaf over many seeds, against Lap(1 / (eps * share_N)).

    KS test at alpha = 0.01; the same test rejects the scale off by a factor 1.5.
    """
    X = _blobs(rng, n=200)
    P = np.array([[0.5, 0.5, 0.5]])  # a one-point public skeleton: a single leaf holding every record
    noise = [
        DPBirchPublicTree(1, epsilon=0.9, threshold=0.2, branching_factor=10, skeleton=P, random_state=s, bounds=UNIT)
        .fit(X)
        .leaf_n_[0]
        - 200
        for s in range(1500)
    ]
    scale = 1 / (0.9 * 0.25)
    assert stats.kstest(noise, stats.laplace(scale=scale).cdf).pvalue > 0.01
    assert stats.kstest(noise, stats.laplace(scale=1.5 * scale).cdf).pvalue < 0.01


def test_public_tree_with_data_skeleton_warns_and_guarantees_nothing(rng):
    X = _blobs(rng, n=300)
    with pytest.warns(PrivacyLeakWarning, match="skeleton='data'"):
        est = DPBirchPublicTree(
            None, epsilon=1.0, threshold=0.1, branching_factor=10, skeleton="data", random_state=0, bounds=UNIT
        ).fit(X)
    assert est.epsilon_guaranteed_ == math.inf
    # With (almost) no noise the data skeleton gives back BIRCH's own leaves (the exact sampler's grid
    # cannot go as fine as epsilon = 1e9: the textbook sampler, by name).
    with pytest.warns(PrivacyLeakWarning):
        loud = DPBirchPublicTree(
            2,
            noise="float",
            epsilon=1e9,
            threshold=0.1,
            branching_factor=10,
            skeleton="data",
            min_count=0.5,
            random_state=0,
            bounds=UNIT,
        ).fit(X)
    np.testing.assert_allclose(
        loud.subcluster_centers_, Birch(2, threshold=0.1, branching_factor=10).fit(X).subcluster_centers_, atol=1e-6
    )


@pytest.mark.parametrize("cls", [DPBirch, DPBirchPublicTree])
def test_private_estimators_require_bounds(rng, cls):
    with pytest.raises(ValueError, match="bounds is required"):
        cls(2).fit(_blobs(rng, n=50))


def test_private_estimators_warn_when_bounds_come_from_the_data(rng):
    X = _blobs(rng, n=200)
    for est in (
        DPBirch(None, epsilon=1.0, threshold=0.2, branching_factor=10, bounds="data", random_state=0),
        DPBirchPublicTree(
            None, epsilon=1.0, threshold=0.2, branching_factor=10, n_skeleton=100, bounds="data", random_state=0
        ),
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NegativeRadiusWarning)
            with pytest.warns(PrivacyLeakWarning, match="bounds"):
                est.fit(X)
        assert est.epsilon_guaranteed_ == math.inf


# --------------------------------------------------------------------------- bad input

GOOD = [[0.1, 0.2], [0.3, 0.4], [0.9, 0.8]]


@pytest.mark.parametrize(
    "make, X, exc, needle",
    [
        (lambda: Birch(threshold=0.0), GOOD, ValueError, "threshold"),
        (lambda: Birch(threshold=-0.5), GOOD, ValueError, "threshold"),
        (lambda: Birch(threshold=float("nan")), GOOD, ValueError, "threshold"),
        (lambda: Birch(branching_factor=1), GOOD, ValueError, "branching_factor"),
        (lambda: Birch(branching_factor=0), GOOD, ValueError, "branching_factor"),
        (lambda: Birch(branching_factor=2.5), GOOD, TypeError, "branching_factor"),
        (lambda: Birch(n_clusters=0), GOOD, ValueError, "n_clusters"),
        (lambda: Birch(n_clusters=2.0), GOOD, TypeError, "n_clusters"),
        (lambda: Birch(), [[0.1, np.nan], [0.2, 0.3]], ValueError, "NaN"),
        (lambda: Birch(), np.zeros((0, 2)), ValueError, "empty"),
        (lambda: Birch(), [0.1, 0.2], ValueError, "2-D"),
        (lambda: Birch(random_state=-1), GOOD, ValueError, "random_state"),
        (lambda: DPBirch(epsilon=0.0, bounds=UNIT), GOOD, ValueError, "epsilon"),
        (lambda: DPBirch(epsilon=float("inf"), bounds=UNIT), GOOD, ValueError, "epsilon"),
        (lambda: DPBirch(threshold=0.0, bounds=UNIT), GOOD, ValueError, "threshold"),
        (lambda: DPBirch(branching_factor=1, bounds=UNIT), GOOD, ValueError, "branching_factor"),
        (lambda: DPBirch(n_clusters=0, bounds=UNIT), GOOD, ValueError, "n_clusters"),
        (lambda: DPBirch(bounds=(1.0, 0.0)), GOOD, ValueError, "upper must exceed lower"),
        (lambda: DPBirchPublicTree(epsilon=-1.0, bounds=UNIT), GOOD, ValueError, "epsilon"),
        (lambda: DPBirchPublicTree(threshold=-1.0, bounds=UNIT), GOOD, ValueError, "threshold"),
        (lambda: DPBirchPublicTree(branching_factor=1, bounds=UNIT), GOOD, ValueError, "branching_factor"),
        (lambda: DPBirchPublicTree(n_clusters=0, bounds=UNIT), GOOD, ValueError, "n_clusters"),
        (lambda: DPBirchPublicTree(skeleton="grid", bounds=UNIT), GOOD, ValueError, "skeleton"),
        (
            lambda: DPBirchPublicTree(skeleton=np.zeros((3, 5)), bounds=UNIT),
            GOOD,
            ValueError,
            "skeleton has 5 features",
        ),
        (lambda: DPBirchPublicTree(n_skeleton=0, bounds=UNIT), GOOD, ValueError, "n_skeleton"),
        (lambda: DPBirchPublicTree(budget_split=(0.5, 0.5), bounds=UNIT), GOOD, ValueError, "budget_split"),
        (lambda: DPBirchPublicTree(budget_split=(0.5, 0.0, 0.5), bounds=UNIT), GOOD, ValueError, "budget_split"),
        (lambda: DPBirchPublicTree(min_count=0.0, bounds=UNIT), GOOD, ValueError, "min_count"),
    ],
)
def test_bad_input(make, X, exc, needle):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NegativeRadiusWarning)
        with pytest.raises(exc, match=needle):
            make().fit(np.asarray(X))


def test_predict_wrong_number_of_features(rng):
    est = Birch(2, threshold=0.1, branching_factor=10).fit(_blobs(rng, n=100))
    with pytest.raises(ValueError, match="X has 2 features, but Birch is expecting 3 features"):
        est.predict(np.zeros((4, 2)))
    with pytest.raises(ValueError, match="n_clusters"):
        est.relabel(0)


def test_cluster_centres_follow_from_the_subclusters_by_additivity():
    rng = np.random.default_rng(5)
    X = np.vstack([rng.normal(0.2, 0.03, (200, 2)), rng.normal(0.7, 0.03, (200, 2))]).clip(0, 1)
    est = Birch(2, threshold=0.05, branching_factor=20).fit(X)
    for g in range(2):
        member = est.subcluster_labels_ == g
        expected = (est.subcluster_centers_[member] * est.subcluster_n_[member, None]).sum(0) / est.subcluster_n_[
            member
        ].sum()
        np.testing.assert_allclose(est.cluster_centers_[g], expected)
    assert est.cluster_centers_.shape == (2, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BirchWarning)  # few leaves pass min_count at this budget; not the point here
        dp = DPBirchPublicTree(2, epsilon=1.0, threshold=0.05, branching_factor=20, random_state=0, bounds=UNIT).fit(X)
    assert dp.cluster_centers_.shape[1] == 2 and np.all((dp.cluster_centers_ >= 0) & (dp.cluster_centers_ <= 1))


def test_ward_beyond_the_exact_limit_has_scipys_heights(rng, monkeypatch):
    """Above WARD_EXACT_LIMIT the vector algorithm runs: the same merge heights as scipy (ties may be broken
    otherwise, as the docstring says); on tie-free data the same partition."""
    from scipy.cluster.hierarchy import ward

    from dpclust_lib.cluster import birch

    C = rng.laplace(0, 3.0, (300, 3))
    monkeypatch.setattr(birch, "WARD_EXACT_LIMIT", 100)
    Z = birch.ward_linkage(C)
    np.testing.assert_allclose(Z[:, 2], ward(C)[:, 2], rtol=1e-10)
    for k in (2, 4):
        assert metrics.adjusted_rand_index(birch._ward_cut(ward(C), k), birch._ward_cut(Z, k)) == 1.0


def _ward_on_copies_per_leaf(centres, weights, k):
    """The K-cut of scipy's Ward on the records with each leaf's records moved to its centroid, per leaf."""
    from scipy.cluster.hierarchy import fcluster, ward

    owner = np.repeat(np.arange(len(centres)), weights)
    labels = fcluster(ward(np.repeat(centres, weights, axis=0)), k, criterion="maxclust")
    per_leaf = [np.unique(labels[owner == i]) for i in range(len(centres))]
    assert all(len(u) == 1 for u in per_leaf)  # a leaf's copies are never cut apart
    return np.array([u[0] for u in per_leaf]), ward(np.repeat(centres, weights, axis=0))


def test_weighted_ward_is_scipys_ward_on_the_records_moved_to_their_leaf_centroids(rng):
    # BIRCH's phase 3: each leaf weighs its N. Independent reference: scipy's Ward on N copies of each centroid
    # (the copies merge at height 0 first; the other merges are the weighted ones, with the same heights).
    from dpclust_lib.cluster.birch import _ward_cut, ward_linkage

    centres, weights = rng.laplace(0, 1.0, (100, 3)), rng.integers(1, 20, 100)
    Z = ward_linkage(centres, weights)
    for k in (2, 3, 5, 12):
        want, Z_copies = _ward_on_copies_per_leaf(centres, weights, k)
        assert metrics.adjusted_rand_index(want, _ward_cut(Z, k)) == 1.0
    np.testing.assert_allclose(Z[:, 2], Z_copies[-(len(centres) - 1) :, 2], rtol=1e-9)
    assert Z[-1, 3] == len(centres)


@pytest.mark.parametrize("coincide", [False, True])
def test_weighted_ward_of_mostly_single_records_runs_on_copies_with_the_same_result(rng, coincide):
    # whole weights summing to at most 4 m take fastcluster's Ward on the copies: the same merges as the chain
    from dpclust_lib.cluster import birch

    centres, weights = rng.laplace(0, 1.0, (300, 3)), rng.integers(1, 4, 300)
    if coincide:  # two leaves at one centroid: their copies may interleave, the result must not change
        centres[7] = centres[3]
    Z = birch.ward_linkage(centres, weights)
    chain = birch._linkage_from_merges(*birch._weighted_ward_merges(centres, weights.astype(float)))
    np.testing.assert_allclose(Z[:, 2], chain[:, 2], rtol=1e-9, atol=1e-12)
    for k in (2, 3, 5, 12):
        want = _ward_on_copies_per_leaf(centres, weights, k)[0]
        assert metrics.adjusted_rand_index(want, birch._ward_cut(Z, k)) == 1.0


def test_weighted_ward_with_unit_weights_is_scipys_ward(rng):
    from scipy.cluster.hierarchy import ward

    from dpclust_lib.cluster.birch import ward_linkage

    C = rng.random((200, 4))
    Z, want = ward_linkage(C, np.ones(200)), ward(C)
    np.testing.assert_allclose(Z[:, 2], want[:, 2], rtol=1e-10)
    np.testing.assert_array_equal(Z[:, [0, 1, 3]], want[:, [0, 1, 3]])  # the same merges, numbered as scipy's


@pytest.mark.parametrize("weights", [np.ones(3), np.array([1.0, 0.0, 2.0, 1.0]), np.array([1.0, np.nan, 1.0, 1.0])])
def test_weighted_ward_refuses_bad_weights(weights):
    from dpclust_lib.cluster.birch import ward_linkage

    with pytest.raises(ValueError, match="weights"):
        ward_linkage(np.random.default_rng(0).random((4, 2)), weights)


def test_cut_labels_with_weights_cut_the_weighted_hierarchy(rng):
    from dpclust_lib.cluster.birch import cut_labels

    X, centres = rng.random((500, 2)), rng.random((30, 2))
    weights = rng.integers(1, 50, 30)
    nearest = ((X[:, None, :] - centres[None]) ** 2).sum(-1).argmin(1)
    for k, labels in cut_labels(X, centres, [2, 4], weights=weights).items():
        assert metrics.adjusted_rand_index(_ward_on_copies_per_leaf(centres, weights, k)[0][nearest], labels) == 1.0


def test_cut_labels_by_step_cuts_each_steps_hierarchy_with_one_nearest_centroid_search(rng, monkeypatch):
    from scipy.cluster.hierarchy import fcluster, ward

    from dpclust_lib.cluster import birch

    X, centres = rng.random((500, 2)), rng.random((30, 2))
    weights = rng.integers(1, 50, 30)
    nearest = ((X[:, None, :] - centres[None]) ** 2).sum(-1).argmin(1)
    searches = []
    search = birch._nearest_among_reachable
    monkeypatch.setattr(birch, "_nearest_among_reachable", lambda *a: searches.append(1) or search(*a))
    cuts = birch.cut_labels_by_step(X, centres, [2, 4], {"Ward": None, "weighted": weights})
    assert len(searches) == 1 and set(cuts) == {"Ward", "weighted"}
    for k in (2, 4):  # scipy's Ward on the centroids, and Ward on copies of each centroid per record of its leaf
        plain = fcluster(ward(centres), k, criterion="maxclust")[nearest]
        assert metrics.adjusted_rand_index(plain, cuts["Ward"][k]) == 1.0
        weighted = _ward_on_copies_per_leaf(centres, weights, k)[0][nearest]
        assert metrics.adjusted_rand_index(weighted, cuts["weighted"][k]) == 1.0


# --------------------------------------------------------------------------- the CF tree's noise-placement hook


def _grow(X, placement, eps, seed=0, noise="exact", t=0.15, b=5):
    from dpclust_lib.cluster.birch import LaplaceRows, grow_tree

    rows = LaplaceRows(1.0, eps, X.shape[1] + 1, seed, noise=noise) if placement is not None else None
    return grow_tree(X, t, b, placement=placement, noise=rows)


def _sorted_rows(a):
    return a[np.lexsort(a.T[::-1])]


@pytest.mark.parametrize("threshold, branching_factor", [(0.5, 50), (0.15, 5), (0.3, 3)])
def test_grow_tree_without_noise_is_scikit_learns(threshold, branching_factor):
    from dpclust_lib.cluster.birch import grow_tree

    X = np.random.default_rng(1).random((600, 3))
    n, _, _, centres = grow_tree(X, threshold, branching_factor).leaf_cfs()
    sk = SkBirch(threshold=threshold, branching_factor=branching_factor, n_clusters=None).fit(X)
    assert n.sum() == len(X)
    np.testing.assert_array_equal(centres, sk.subcluster_centers_)  # same leaves, same order, bit for bit


@pytest.mark.parametrize("scale", [0.05, 1.0, 20.0])
def test_cut_labels_skips_only_centroids_no_record_can_reach(rng, scale):
    # a noisy tree's leaves: a few near the data, many far-flung, some duplicated (ties go to the lowest index)
    from dpclust_lib.cluster.birch import _nearest_among_reachable

    X = rng.random((3000, 4))
    C = np.vstack([rng.random((5, 4)), X[rng.integers(0, 3000, 2000)] + rng.laplace(0, scale, (2000, 4))])
    C = np.vstack([C, C[:50]])
    from dpclust_lib.cluster._numeric import nearest_centre

    found, every = _nearest_among_reachable(X, C), nearest_centre(X, C, np.einsum("ij,ij->i", C, C))
    sq = ((X[:, None, :] - C[None]) ** 2).sum(-1)  # the nearest by direct distances, up to rounding
    np.testing.assert_allclose(sq[np.arange(len(X)), found], sq.min(axis=1), rtol=1e-12, atol=1e-14)
    differ = found != every  # only where two centroids tie to rounding (the duplicates)
    np.testing.assert_allclose(sq[differ, found[differ]], sq[differ, every[differ]], rtol=1e-12, atol=1e-14)
    assert differ.mean() < 0.01


def _diameter_leaves_by_brute_force(X, threshold):
    """One leaf node (no split): each record joins its nearest subcluster if the merged subcluster's diameter,
    the root mean squared distance between two distinct members (scipy's pdist), is <= T; else starts one."""
    from scipy.spatial.distance import pdist

    members = []
    for x in X:
        if members:
            i = int(np.argmin([np.sum((np.mean(m, axis=0) - x) ** 2) for m in members]))
            if np.sqrt(np.mean(pdist(np.vstack(members[i] + [x])) ** 2)) <= threshold:
                members[i].append(x)
                continue
        members.append([x])
    return np.array([len(m) for m in members]), np.array([np.mean(m, axis=0) for m in members])


@pytest.mark.parametrize("threshold", [0.1, 0.25])
def test_diameter_threshold_against_brute_force(threshold):
    from dpclust_lib.cluster.birch import grow_tree

    X = np.random.default_rng(8).random((300, 2))
    n, _, _, centres = grow_tree(X, threshold, branching_factor=400, threshold_on="diameter").leaf_cfs()
    want_n, want_centres = _diameter_leaves_by_brute_force(X, threshold)
    np.testing.assert_array_equal(n, want_n)
    np.testing.assert_allclose(centres, want_centres, atol=1e-12)
    radius_leaves = len(grow_tree(X, threshold, branching_factor=400).leaf_cfs()[0])
    assert len(n) > radius_leaves  # D > R for every subcluster of two or more: the diameter test is stricter
    with pytest.raises(ValueError, match="threshold_on"):
        grow_tree(X, threshold, 5, threshold_on="width")


@pytest.mark.filterwarnings("ignore::dpclust_lib.PrivacyLeakWarning")
@pytest.mark.parametrize("placement", ["all", "test", "nonleaf", "leaves", "leaves_accumulated"])
def test_every_placement_with_vanishing_noise_builds_scikit_learns_tree(placement):
    # Laplace scale 1e-12: the noise cannot change a decision, so every reading builds BIRCH's tree.
    X = np.random.default_rng(2).random((500, 2))
    tree = _grow(X, placement, eps=1e12, noise="float")
    sk = SkBirch(threshold=0.15, branching_factor=5, n_clusters=None).fit(X)
    centres = tree.leaf_cfs()[3]
    assert centres.shape == sk.subcluster_centers_.shape
    np.testing.assert_allclose(_sorted_rows(centres), _sorted_rows(sk.subcluster_centers_), atol=1e-9)


@pytest.mark.parametrize("placement", ["test", "nonleaf", "all"])
def test_placements_keep_exact_what_they_do_not_noise(placement):
    X = np.random.default_rng(3).random((800, 2))
    tree = _grow(X, placement, eps=5.0, seed=4)
    n, ls, ss, _ = tree.leaf_cfs()
    assert n.sum() == len(X) and tree.additivity_residuals()[0] == 0  # N is never noised
    leaves_exact = np.allclose(ls.sum(axis=0), X.sum(axis=0), atol=1e-9) and np.isclose(ss.sum(), (X**2).sum())
    gap_ls = tree.additivity_residuals()[1]
    if placement == "test":  # every stored CF is exact: leaves sum to the data, parents to their children
        assert leaves_exact and gap_ls < 1e-9 and tree.n_threshold_tests > 0
    elif placement == "nonleaf":  # exact leaves, noisy parents
        assert tree.height() >= 2 and leaves_exact and gap_ls > 1e-3
    else:
        assert not leaves_exact and gap_ls > 1e-3


def test_leaf_placements_noise_the_exact_tree_with_the_closed_form_variance():
    from dpclust_lib.cluster.birch import LaplaceRows, leaf_noise

    # LS of a leaf of N records carries N independent Lap(b) draws: variance 2 b^2 N; once: 2 b^2
    n, b = np.full(3000, 50.0), 0.25
    acc = leaf_noise(n, "leaves_accumulated", LaplaceRows(1.0, 1 / b, 2, 3))
    once = leaf_noise(n, "leaves", LaplaceRows(1.0, 1 / b, 2, 3))
    assert acc.var() == pytest.approx(2 * b**2 * 50, rel=0.08)
    assert once.var() == pytest.approx(2 * b**2, rel=0.08)
    X = np.random.default_rng(5).random((400, 2))
    exact, noisy = _grow(X, None, 1.0), _grow(X, "leaves", eps=1.0)
    np.testing.assert_array_equal(exact.leaf_cfs()[0], noisy.leaf_cfs()[0])  # same tree, same N
    assert noisy.height() >= 2  # parents stay exact: only the leaves are noised
    assert exact.additivity_residuals()[1] < 1e-9 < noisy.additivity_residuals()[1]


def test_noise_rows_come_fresh_from_the_laplace_mechanism():
    from dpclust_lib import mechanisms
    from dpclust_lib.cluster.birch import LaplaceRows

    seen = []

    def watch(value, scale, noisy):
        seen.append((np.asarray(value).copy(), scale))
        return noisy

    rows = LaplaceRows(1.0, 2.0, 3, 0, block=7)
    with mechanisms.observe_laplace(watch):
        drawn = np.vstack([rows() for _ in range(5)] + [rows.take(20)])
    assert len(seen) == rows.n_releases == 4 and rows.count == 25  # ceil(25 / 7) blocks
    assert all((v == 0).all() and v.shape == (7, 3) for v, _ in seen)  # zero-valued blocks
    assert len(np.unique(drawn)) == drawn.size  # no row (no draw) is used twice
    with pytest.raises(ValueError, match="placement"):
        _grow(drawn[:, :2], "leaf", 1.0)
    with pytest.raises(TypeError, match="noise"):
        from dpclust_lib.cluster.birch import CFTree

        CFTree(0.1, 5, 2, placement="all")


def test_dpbirch_draws_every_row_through_the_laplace_mechanism(rng):
    from dpclust_lib import mechanisms

    X, entries = _blobs(rng, n=500, d=2), []
    with mechanisms.observe_laplace(lambda v, s, noisy: entries.append(np.asarray(v).size) or noisy):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NegativeRadiusWarning)
            est = DPBirch(2, epsilon=1.0, threshold=0.1, branching_factor=5, bounds=UNIT, random_state=0).fit(X)
    # every insertion updates at least one CF per level; every row has d + 1 draws
    assert est.n_noise_draws_ >= len(X) and sum(entries) >= 3 * est.n_noise_draws_
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DPBirch(2, epsilon=1.0, bounds=UNIT, noise="float", random_state=0).fit(X)
    assert any(issubclass(w.category, PrivacyLeakWarning) and "float" in str(w.message) for w in caught)


def test_lazy_global_step_gives_the_eager_result(rng):
    X = _blobs(rng, n=1000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NegativeRadiusWarning)
        est = DPBirch(3, epsilon=2.0, threshold=0.1, bounds=UNIT, random_state=1).fit(X)
    from dpclust_lib.cluster.birch import global_clustering as gc

    np.testing.assert_array_equal(
        est.predict(X), gc(est.subcluster_centers_, 3)[est.exact_diagnostics(X).nearest_subcluster]
    )
    np.testing.assert_array_equal(est.relabel(3, X), est.predict(X))

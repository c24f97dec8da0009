"""birch_readings against scikit-learn (the global step, the pair-counting identity) and closed forms."""

import numpy as np
import pytest
from sklearn.cluster import AgglomerativeClustering
from sklearn.cluster import Birch as SkBirch
from sklearn.metrics import adjusted_rand_score, rand_score

from dpclust import birch_readings as br
from dpclust_lib.cluster.birch import PLACEMENTS, cut_labels, grow_tree


def test_every_reading_is_a_placement_of_the_librarys_tree():
    assert {r.placement for r in br.READINGS.values()} == set(PLACEMENTS) - {None}
    assert all(name == r.name for name, r in br.READINGS.items())


@pytest.mark.filterwarnings("ignore::dpclust_lib.PrivacyLeakWarning")
@pytest.mark.parametrize("reading", list(br.READINGS))
def test_readings_with_vanishing_noise_agree_with_scikit_learns_birch(reading):
    # Laplace scale 1e-12: every reading builds BIRCH's tree, so its labels are scikit-learn's (ARI 1).
    X = np.random.default_rng(1).random((400, 2))
    refs = {k: SkBirch(threshold=0.1, branching_factor=5, n_clusters=k).fit(X).labels_ for k in (2, 3)}
    frame = br.reading_runs(
        X, refs, reading=reading, threshold=0.1, branching_factor=5, epsilons=[1e12], n_runs=1, noise="float"
    )
    assert list(frame["K"]) == [2, 3] and (frame["reading"] == reading).all()
    np.testing.assert_allclose(frame["ARI"], 1.0)
    assert (
        frame["leaves"] == len(SkBirch(threshold=0.1, branching_factor=5, n_clusters=None).fit(X).subcluster_centers_)
    ).all()


@pytest.mark.filterwarnings("ignore::dpclust_lib.PrivacyLeakWarning")
@pytest.mark.parametrize("reading", list(br.READINGS))
def test_readings_with_vanishing_noise_under_the_diameter_test_and_the_weighted_step(reading):
    # Laplace scale 1e-12: each reading builds BIRCH's tree with the diameter test. The weighted global step is
    # checked against scipy's Ward on N copies of each leaf centroid (BIRCH's phase 3 on the records moved to
    # their leaf's centroid), each record to its nearest leaf.
    from scipy.cluster.hierarchy import fcluster, ward

    X = np.random.default_rng(3).random((400, 2))
    n, _, _, centres = grow_tree(X, 0.15, 5, threshold_on="diameter").leaf_cfs()
    assert len(n) > len(grow_tree(X, 0.15, 5).leaf_cfs()[0])  # the diameter test is the stricter one
    nearest = ((X[:, None, :] - centres[None]) ** 2).sum(-1).argmin(1)
    copies = np.repeat(centres, n.astype(int), axis=0)
    first = np.concatenate([[0], np.cumsum(n.astype(int))[:-1]])
    weighted = {k: fcluster(ward(copies), k, criterion="maxclust")[first][nearest] for k in (2, 3)}
    plain = {k: AgglomerativeClustering(n_clusters=k, linkage="ward").fit_predict(centres)[nearest] for k in (2, 3)}
    frame = br.reading_runs(
        X,
        plain,
        reading=reading,
        threshold=0.15,
        branching_factor=5,
        epsilons=[1e12],
        n_runs=1,
        noise="float",
        threshold_on="diameter",
        weighted_references=weighted,
    )
    assert sorted(set(frame["global_step"])) == sorted(br.GLOBAL_STEPS) and (frame["leaves"] == len(n)).all()
    np.testing.assert_allclose(frame["ARI"], 1.0)


def test_the_non_leaf_reading_of_a_one_node_tree_is_birchs_tree_at_any_epsilon():
    # T large enough for one leaf node: no CF above the leaves, so no noise; the reading skips growing the tree,
    # and a tree grown with that placement (noise of scale 100) has the same leaves
    from dpclust_lib.cluster.birch import LaplaceRows

    X = np.random.default_rng(9).random((500, 3))
    exact = grow_tree(X, 0.3, 50)
    assert exact.height() == 1
    grown = grow_tree(X, 0.3, 50, placement="nonleaf", noise=LaplaceRows(1.0, 0.01, 4, random_state=0))
    np.testing.assert_array_equal(grown.leaf_cfs()[3], exact.leaf_cfs()[3])
    refs = {2: cut_labels(X, exact.leaf_cfs()[3], [2])[2]}
    frame = br.reading_runs(
        X, refs, reading="noise only on non-leaf CFs", threshold=0.3, branching_factor=50, epsilons=[0.01], n_runs=2
    )
    assert (frame["ARI"] == 1.0).all() and (frame["leaves"] == exact.n_leaf_subclusters()).all()


def test_reading_runs_rows_seeds_and_validation():
    X = np.random.default_rng(2).random((300, 2))
    refs = {2: SkBirch(threshold=0.2, branching_factor=5, n_clusters=2).fit(X).labels_}
    kw = dict(threshold=0.2, branching_factor=5, epsilons=[0.5, 2.0], n_runs=2, seed=3)
    a = br.reading_runs(X, refs, reading="noise only on non-leaf CFs", **kw)
    b = br.reading_runs(X, refs, reading="noise only on non-leaf CFs", **kw)
    assert len(a) == 4 and a[["RI", "ARI", "leaves"]].equals(b[["RI", "ARI", "leaves"]])  # same seed, same numbers
    assert a["RI"].between(0, 1).all()
    with pytest.raises(ValueError, match="reading"):
        br.reading_runs(X, refs, reading="leaves", **kw)
    with pytest.raises(ValueError, match="noise"):
        br.reading_runs(X, refs, reading="literal", noise="gauss", **kw)
    with pytest.raises(ValueError, match="threshold_on"):
        br.reading_runs(X, refs, reading="literal", threshold_on="width", **kw)
    with pytest.raises(ValueError, match="weighted_references"):
        br.reading_runs(X, refs, reading="literal", weighted_references={3: refs[2]}, **kw)


def test_cut_labels_is_scikit_learns_ward_on_the_nearest_centroids():
    X = np.random.default_rng(6).random((300, 2))
    centres = np.random.default_rng(7).random((40, 2))
    nearest = ((X[:, None, :] - centres[None]) ** 2).sum(-1).argmin(1)
    cuts = cut_labels(X, centres, [2, 3, 5])
    for k, labels in cuts.items():
        want = AgglomerativeClustering(n_clusters=k, linkage="ward").fit_predict(centres)[nearest]
        assert adjusted_rand_score(want, labels) == 1.0
    far = np.vstack([X.mean(axis=0), X.mean(axis=0) + 100])
    assert (cut_labels(X, far, [2])[2] == 0).all()  # one nearest centroid: one cluster, no Ward


def test_pair_counting_identity_against_scikit_learn():
    rng = np.random.default_rng(4)
    for _ in range(5):
        u, v = rng.integers(0, 3, 500), rng.integers(0, 2, 500)
        a, b = br.pair_share(u), br.pair_share(v)
        assert rand_score(u, v) == pytest.approx(1 - (a + b - 2 * a * b) * (1 - adjusted_rand_score(u, v)), abs=1e-12)


def test_split_from_ri_ari_recovers_the_split():
    n, s = 20_000, 0.17
    u = (np.arange(n) < s * n).astype(int)
    v = u.copy()
    v[np.random.default_rng(5).random(n) < 0.05] ^= 1  # a noisy copy keeps about the same split
    c, a, share = br.split_from_ri_ari(rand_score(u, v), adjusted_rand_score(u, v))
    assert share == pytest.approx(s, abs=0.02)


@pytest.mark.filterwarnings("ignore::dpclust_lib.PrivacyLeakWarning")
@pytest.mark.filterwarnings("ignore::dpclust_lib.cluster.birch.NegativeRadiusWarning")  # the refits here
def test_estimator_runs_score_each_fitted_tree_by_scikit_learns_ward_and_scipys_weighted_ward():
    # Each (epsilon, run) row: the fit of the same seed (experiments.fit_seed) cut here by scikit-learn's Ward on its
    # leaf centroids and by scipy's Ward on N copies of each, every record to its nearest leaf centroid; RI and ARI
    # by scikit-learn's scores; the tree columns from the fitted estimator.
    from scipy.cluster.hierarchy import fcluster, ward

    from dpclust.datasets import make_uniform_square
    from dpclust.experiments import fit_seed
    from dpclust_lib import DPBirch

    data = make_uniform_square(300, low=0.0, high=1.0, random_state=5)
    X = data.X
    refs = {k: SkBirch(threshold=0.2, n_clusters=k).fit(X).labels_ for k in (2, 3)}
    weighted = {k: np.arange(300) % k for k in (2, 3)}

    def make(eps, rs):
        return DPBirch(None, epsilon=eps, threshold=0.2, bounds=data.bounds, random_state=rs)

    frame = br.estimator_runs({"DPBirch": make}, data, [0.5, 4.0], 2, refs, weighted_references=weighted, seed=3)
    assert len(frame) == 2 * 2 * 2 and list(frame["K"]) == [2] * 4 + [3] * 4
    for row in frame.itertuples():
        est = make(row.epsilon, fit_seed(3, row.epsilon, row.run)).fit(X)
        n, centres = est.tree_.leaf_cfs()[0], est.subcluster_centers_
        nearest = ((X[:, None, :] - centres[None]) ** 2).sum(-1).argmin(1)
        k = min(row.K, len(centres))
        plain = (
            AgglomerativeClustering(n_clusters=k, linkage="ward").fit_predict(centres)[nearest]
            if k > 1
            else 0 * nearest
        )
        copies = np.repeat(centres, n.astype(int), axis=0)
        first = np.concatenate([[0], np.cumsum(n.astype(int))[:-1]])
        by_n = fcluster(ward(copies), k, criterion="maxclust")[first][nearest] if k > 1 else 0 * nearest
        assert row.RI == pytest.approx(rand_score(refs[row.K], plain), abs=1e-12)
        assert row.ARI == pytest.approx(adjusted_rand_score(refs[row.K], plain), abs=1e-12)
        assert row.ARI_weighted == pytest.approx(adjusted_rand_score(weighted[row.K], by_n), abs=1e-12)
        assert row.leaf_subclusters == len(centres) and row.levels == est.height_
        assert row.negative_sq_radius == est.n_negative_sq_radius_ and row.threshold_tests == est.n_threshold_tests_

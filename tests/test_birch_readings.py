"""birch_readings against scikit-learn (the exact tree, the pair-counting identity) and closed forms."""

import numpy as np
import pytest
from sklearn.cluster import Birch as SkBirch
from sklearn.metrics import adjusted_rand_score, rand_score

from dpclust import birch_readings as br


def _sorted_rows(a):
    return a[np.lexsort(a.T[::-1])]


@pytest.mark.parametrize("threshold, branching_factor", [(0.5, 50), (0.15, 5), (0.3, 3)])
def test_exact_tree_is_scikit_learns(threshold, branching_factor):
    X = np.random.default_rng(1).random((600, 3))
    ours = br.cf_tree(X, threshold=threshold, branching_factor=branching_factor)
    sk = SkBirch(threshold=threshold, branching_factor=branching_factor, n_clusters=None).fit(X)
    assert ours.leaf_n.sum() == len(X)
    np.testing.assert_allclose(
        _sorted_rows(ours.leaf_ls / ours.leaf_n[:, None]), _sorted_rows(sk.subcluster_centers_), rtol=1e-12, atol=1e-12
    )


def test_noise_readings_validate_and_keep_every_record():
    X = np.random.default_rng(2).random((300, 2))
    for mode in ("all", "test", "nonleaf"):
        tree = br.cf_tree(X, threshold=0.2, branching_factor=4, noise_on=mode, scale=0.5, random_state=0)
        assert tree.leaf_n.sum() == len(X)
    with pytest.raises(ValueError, match="noise_on"):
        br.cf_tree(X, threshold=0.2, branching_factor=4, noise_on="leaves", scale=1.0)
    with pytest.raises(ValueError, match="scale"):
        br.cf_tree(X, threshold=0.2, branching_factor=4, noise_on="all")


def test_accumulated_leaf_noise_has_the_variance_of_n_draws():
    # LS of a leaf of N records carries N independent Lap(b) draws: variance 2 b^2 N per coordinate
    n, b, reps = np.full(4000, 50.0), 0.3, 4000
    ls = np.zeros((reps, 1))
    centres = br.noisy_leaf_centroids(n, ls, scale=b, noise="accumulated", random_state=3)
    assert centres.var() * 50**2 == pytest.approx(2 * b**2 * 50, rel=0.08)
    once = br.noisy_leaf_centroids(n, ls, scale=b, noise="once", random_state=3)
    assert once.var() * 50**2 == pytest.approx(2 * b**2, rel=0.08)


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


def test_cut_labels_gives_k_groups_and_one_when_every_record_shares_a_centre():
    X = np.random.default_rng(6).random((200, 2))
    centres = np.random.default_rng(7).random((30, 2))
    cuts = br.cut_labels(X, centres, [2, 3, 40])
    assert len(np.unique(cuts[2])) <= 2 and len(np.unique(cuts[3])) <= 3
    far = np.vstack([X.mean(axis=0), X.mean(axis=0) + 100])
    assert (br.cut_labels(X, far, [2])[2] == 0).all()


def test_cut_is_scipys_cut_tree():
    import fastcluster
    from scipy.cluster.hierarchy import cut_tree
    from sklearn.metrics import adjusted_rand_score as ari

    centres = np.random.default_rng(8).random((300, 3))
    Z = fastcluster.linkage_vector(centres, method="ward")
    for k in (2, 3, 5, 17):
        ours = br._cut(Z, len(centres), k)
        assert len(np.unique(ours)) == k
        assert ari(cut_tree(Z, n_clusters=k).ravel(), ours) == 1.0

"""DPQTKMeans and its DP quadtree (Zhang & Cheng 2021, Alg. 1-3).

Statistical tests: KS goodness of fit at a stated alpha, each with a
companion showing the test rejects a wrong noise scale.
"""

import math
import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.exceptions import NotFittedError

from dpclust_lib import DPQTKMeans, PrivacyLeakWarning
from dpclust_lib.cluster.dpqt_kmeans import build_dp_quadtree, default_max_height, default_threshold, level_budgets
from dpclust_lib.cluster.kmeans import lloyd

ALPHA = 1e-3
BOX = ((-2.0, -2.0), (2.0, 2.0))


def _clustered(rng, n=3000):
    centres = np.array([[-1.0, -1.0], [1.2, 0.8], [0.5, -1.3]])
    X = centres[rng.integers(0, 3, n)] + rng.normal(0, 0.15, size=(n, 2))
    return np.clip(X, -2, 2)


def _reference_tree(X, lower, upper, h, max_height, threshold):
    """Alg. 2-3 point by point, without noise: the list of leaf cells (lower, upper)."""
    if h >= max_height or len(X) <= threshold:
        return [(tuple(lower), tuple(upper))]
    mid = (lower + upper) / 2
    leaves = []
    for j in range(2 ** len(lower)):
        bit = np.array([(j >> d) % 2 for d in range(len(lower))], dtype=bool)
        inside = np.all((X >= mid) == bit, axis=1)
        leaves += _reference_tree(
            X[inside], np.where(bit, mid, lower), np.where(bit, upper, mid), h + 1, max_height, threshold
        )
    return leaves


@pytest.mark.parametrize("d, max_height, threshold", [(2, 4, 30.5), (2, 6, 5.5), (3, 3, 20.5), (1, 5, 10.5)])
def test_tree_without_noise_equals_the_recursive_listing(rng, d, max_height, threshold):
    X = rng.uniform(-2, 2, size=(2000, d)) ** 3 / 4  # dense near 0
    lo, hi = np.full(d, -2.0), np.full(d, 2.0)
    tree = build_dp_quadtree(X, lo, hi, 1e6, max_height, threshold, 0)
    ours = {(tuple(tree.lower[i]), tuple(tree.upper[i])) for i in tree.leaves}
    assert ours == set(_reference_tree(X, lo, hi, 0, max_height, threshold))


def test_leaves_partition_the_domain_and_hold_their_records(rng):
    X = _clustered(rng)
    tree = build_dp_quadtree(X, np.array([-2.0, -2.0]), np.array([2.0, 2.0]), 0.5, 5, 3.0, 1)
    leaves = tree.leaves
    volume = np.prod(tree.upper[leaves] - tree.lower[leaves], axis=1).sum()
    assert volume == pytest.approx(16.0)
    assert tree.leaf_counts().sum() == len(X)
    assert np.all(tree.is_leaf[tree.point_node])
    assert np.all((X >= tree.lower[tree.point_node]) & (X <= tree.upper[tree.point_node]))
    assert tree.depth.max() <= 5
    # Splits were decided only below max_height: nodes at depth 5 have no released count.
    assert np.all(np.isnan(tree.noisy_count[tree.depth == 5]))
    assert not np.any(np.isnan(tree.noisy_count[tree.depth < 5]))


def test_each_record_lies_in_one_node_per_level(rng):
    # The nodes of a level are disjoint cells, so a level's count vector has L1 sensitivity 1
    # (parallel composition within a level). Checked for random points, cell edges included.
    X = _clustered(rng)
    tree = build_dp_quadtree(X, np.array([-2.0, -2.0]), np.array([2.0, 2.0]), 1.0, 5, 3.0, 2)
    probes = np.vstack([rng.uniform(-2, 2, size=(500, 2)), tree.lower[:50], tree.upper[:50]])
    for h in range(tree.depth.max() + 1):
        nodes = np.flatnonzero(tree.depth == h)
        lo, hi = tree.lower[nodes], tree.upper[nodes]
        top = np.isclose(hi, 2.0)  # the last cell of a dimension is closed at the upper edge
        inside = np.all((probes[:, None] >= lo) & ((probes[:, None] < hi) | top), axis=2)
        assert inside.sum(axis=1).max() <= 1
    leaves = tree.leaves
    lo, hi = tree.lower[leaves], tree.upper[leaves]
    inside = np.all((probes[:, None] >= lo) & ((probes[:, None] < hi) | np.isclose(hi, 2.0)), axis=2)
    np.testing.assert_array_equal(inside.sum(axis=1), 1)


@pytest.mark.parametrize("fits", [1000, pytest.param(3000, marks=pytest.mark.slow)])  # make test; its full size
def test_root_and_leaf_noise_have_the_stated_scales(fits):
    # Root: noisy count - N ~ Lap(maxH / eps1); one leaf (threshold never reached): ~ Lap(1 / eps2).
    # KS tests, two of them: alpha 1e-3 / 2 each.
    X = np.zeros((40, 2))
    eps, gamma, H = 0.8, 0.3, 4
    root, leaf = [], []
    for seed in range(fits):
        est = DPQTKMeans(1, epsilon=eps, gamma=gamma, max_height=H, threshold=1e9, bounds=BOX, random_state=seed).fit(X)
        root.append(est.tree_.noisy_count[0] - 40)
        leaf.append(est.bucket_counts_[0] - 40)
    assert stats.kstest(root, stats.laplace(scale=H / (gamma * eps)).cdf).pvalue > ALPHA / 2
    assert stats.kstest(leaf, stats.laplace(scale=1 / ((1 - gamma) * eps)).cdf).pvalue > ALPHA / 2
    # The same tests reject a scale without the maxH factor (the root) or the gamma split (the leaf).
    assert stats.kstest(root, stats.laplace(scale=1 / (gamma * eps)).cdf).pvalue < ALPHA / 2
    assert stats.kstest(leaf, stats.laplace(scale=1 / eps).cdf).pvalue < ALPHA / 2


def test_budget_is_epsilon_when_the_tree_reaches_max_height(rng):
    X = _clustered(rng)
    est = DPQTKMeans(3, epsilon=0.5, gamma=0.3, max_height=4, threshold=2.0, random_state=0, bounds=BOX).fit(X)
    assert est.tree_.levels_released == 4
    assert est.epsilon_spent_ == pytest.approx(0.5, rel=1e-12)
    assert est.epsilon_spent_ <= 0.5 * (1 + 1e-12)
    shares = [e for _, e in est.ledger_.entries]
    assert shares[:4] == [pytest.approx(0.3 * 0.5 / 4)] * 4 and shares[4] == pytest.approx(0.7 * 0.5)


def test_budget_of_levels_not_reached_is_not_spent(rng):
    X = _clustered(rng)
    est = DPQTKMeans(3, epsilon=0.5, gamma=0.3, max_height=4, threshold=1e9, random_state=0, bounds=BOX).fit(
        X
    )  # the root never splits
    assert est.tree_.levels_released == 1 and len(est.tree_.leaves) == 1
    assert est.epsilon_spent_ == pytest.approx(0.3 * 0.5 / 4 + 0.7 * 0.5)
    assert est.epsilon_spent_ < 0.5


def _line17_budgets(epsilon_tree, max_height, h=0):
    """Alg. 2 as printed, recursively: a node spends budget = (what it is given) / maxH (line 1, from the
    prose) and hands "ε1 - budget" to its children (line 17); the budget of each depth below maxH."""
    if h >= max_height:
        return []
    budget = epsilon_tree / max_height
    return [budget] + _line17_budgets(epsilon_tree - budget, max_height, h + 1)


@pytest.mark.parametrize("max_height", [1, 2, 5, 12])
def test_level_budgets_are_the_prose_and_the_literal_line_17(max_height):
    uniform = level_budgets(0.3, max_height)
    assert uniform.tolist() == pytest.approx([0.3 / max_height] * max_height, rel=1e-12)
    assert uniform.sum() == pytest.approx(0.3, rel=1e-12)
    literal = level_budgets(0.3, max_height, "remaining")
    assert literal.tolist() == pytest.approx(_line17_budgets(0.3, max_height), rel=1e-12)
    assert literal.sum() == pytest.approx(0.3 * (1 - (1 - 1 / max_height) ** max_height), rel=1e-12)
    assert literal.sum() <= 0.3


def test_literal_line_17_noise_has_the_stated_scale_at_depth_one():
    # 400 records at the origin of BOX: the root splits (its noisy count is far above T = 0) and the child
    # holding them, the upper quadrant, releases 400 + Lap(1 / epsilon_1) with epsilon_1 = (ε1/maxH)(1 - 1/maxH).
    X = np.zeros((400, 2))
    eps, gamma, H = 0.8, 0.3, 4
    child = []
    for seed in range(2000):
        est = DPQTKMeans(
            1,
            epsilon=eps,
            gamma=gamma,
            max_height=H,
            threshold=0.0,
            bounds=BOX,
            random_state=seed,
            level_budget="remaining",
        ).fit(X)
        tree = est.tree_
        node = np.flatnonzero((tree.depth == 1) & np.all(tree.lower == 0.0, axis=1))
        child.append(tree.noisy_count[node[0]] - 400)
        assert [e for _, e in est.ledger_.entries][:2] == pytest.approx(level_budgets(gamma * eps, H, "remaining")[:2])
    literal = stats.laplace(scale=H / (gamma * eps) / (1 - 1 / H))
    assert stats.kstest(child, literal.cdf).pvalue > ALPHA
    assert stats.kstest(child, stats.laplace(scale=H / (gamma * eps)).cdf).pvalue < ALPHA  # the prose's scale


def test_defaults_follow_the_paper():
    assert default_max_height(100_000, 2) == 5  # ln(1e5) / 2 = 5.76
    assert default_max_height(6_500, 2) == 4
    assert default_max_height(10, 16) == 1
    assert default_threshold(100_000) == 100.0
    X = np.random.default_rng(0).uniform(-2, 2, size=(10_000, 2))
    est = DPQTKMeans(3, epsilon=1.0, bounds=BOX, n_public=10_000, random_state=0).fit(X)
    assert est.max_height_ == math.floor(math.log(10_000) / 2) and est.threshold_ == 10.0
    assert est.gamma == 0.3


def test_without_noise_buckets_are_weighted_leaf_centres(rng):
    X = _clustered(rng)
    est = DPQTKMeans(3, epsilon=1e6, gamma=0.3, max_height=5, threshold=20.5, random_state=3, bounds=BOX).fit(X)
    # noise of scale ~1e-6 per leaf remains
    np.testing.assert_allclose(est.bucket_counts_, est.exact_diagnostics(X).leaf_counts, atol=1e-4)
    leaves = est.tree_.leaves
    np.testing.assert_allclose(est.bucket_centers_, (est.tree_.lower[leaves] + est.tree_.upper[leaves]) / 2)
    again = lloyd(est.bucket_centers_, est.cluster_centers_, est.tree_.leaf_counts(X), 300)[0]
    np.testing.assert_allclose(est.cluster_centers_, again, atol=1e-9)  # a fixed point of weighted Lloyd


def test_same_seed_same_result_bit_for_bit(rng):
    X = _clustered(rng)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = DPQTKMeans(3, epsilon=0.2, bounds=BOX, n_public=3000, random_state=5).fit(X)
        b = DPQTKMeans(3, epsilon=0.2, bounds=BOX, n_public=3000, random_state=5).fit(X)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    np.testing.assert_array_equal(a.bucket_counts_, b.bucket_counts_)
    c = DPQTKMeans(3, epsilon=0.2, bounds=BOX, n_public=3000, random_state=6).fit(X)
    assert not np.array_equal(a.bucket_counts_, c.bucket_counts_)


def test_contract(rng):
    X = _clustered(rng)
    est = DPQTKMeans(3, epsilon=0.5, bounds=BOX, n_public=3000, random_state=0)
    params = dict(vars(est))
    labels = est.fit_predict(X)
    assert vars(est).items() >= params.items()
    np.testing.assert_array_equal(labels, est.predict(X))
    for attr in (
        "cluster_centers_",
        "n_iter_",
        "epsilon_spent_",
        "epsilon_guaranteed_",
        "neighbouring_",
        "ledger_",
        "tree_",
        "n_features_in_",
    ):
        assert hasattr(est, attr)
    assert not hasattr(est, "labels_") and est.tree_.point_node is None  # no exact data on the release
    assert est.epsilon_guaranteed_ == pytest.approx(0.5, rel=1e-12)  # ex ante: every level, however many ran
    assert est.epsilon_spent_ <= est.epsilon_guaranteed_
    # The leaves found by descending the released tree hold every record once, each inside its cell.
    counts = est.exact_diagnostics(X).leaf_counts
    assert counts.sum() == len(X)
    where = est.tree_.locate(X)
    assert np.all(est.tree_.is_leaf[where])
    assert np.all((X >= est.tree_.lower[where]) & (X <= est.tree_.upper[where]))
    with pytest.raises(NotFittedError, match="not fitted"):
        DPQTKMeans(3).predict(X)


def test_paper_seeding_warns_and_private_seeding_does_not(rng):
    X = _clustered(rng)
    for leaky in (
        dict(bounds=BOX, n_public=3000, init="kmeans-on-data"),
        dict(bounds="data", n_public=3000),
        dict(bounds=BOX, n_public="data"),
    ):
        name = next(k for k, v in leaky.items() if v in ("kmeans-on-data", "data"))
        with pytest.warns(PrivacyLeakWarning, match=name if name != "init" else "kmeans-on-data"):
            est = DPQTKMeans(3, epsilon=0.5, random_state=0, **leaky).fit(X)
        assert est.epsilon_guaranteed_ == float("inf")
    with pytest.raises(ValueError, match="bounds is required"):
        DPQTKMeans(3, epsilon=0.5, n_public=3000, random_state=0).fit(X)
    with pytest.raises(ValueError, match="n_public is required"):
        DPQTKMeans(3, epsilon=0.5, bounds=BOX, random_state=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DPQTKMeans(3, epsilon=0.5, max_height=4, threshold=3.0, bounds=BOX, random_state=0).fit(X)  # N not needed


def test_works_in_three_dimensions(rng):
    X = rng.random((2000, 3))
    est = DPQTKMeans(4, epsilon=1.0, bounds=(0, 1), n_public=2000, random_state=0).fit(X)
    assert est.cluster_centers_.shape == (4, 3)
    assert np.prod(
        est.tree_.upper[est.tree_.leaves] - est.tree_.lower[est.tree_.leaves], axis=1
    ).sum() == pytest.approx(1)


GOOD = np.random.default_rng(0).uniform(-1, 1, size=(50, 2))


@pytest.mark.parametrize(
    "kwargs, X, exc, needle",
    [
        (dict(epsilon=0.0), GOOD, ValueError, "epsilon"),
        (dict(epsilon=-0.5), GOOD, ValueError, "epsilon"),
        (dict(epsilon=float("nan")), GOOD, ValueError, "epsilon"),
        (dict(n_clusters=0), GOOD, ValueError, "n_clusters"),
        (dict(n_clusters=51), GOOD, ValueError, "n_clusters"),
        (dict(gamma=0.0), GOOD, ValueError, "gamma"),
        (dict(gamma=1.0), GOOD, ValueError, "gamma"),
        (dict(gamma=-0.1), GOOD, ValueError, "gamma"),
        (dict(gamma=1.5), GOOD, ValueError, "gamma"),
        (dict(gamma="0.3"), GOOD, TypeError, "gamma"),
        (dict(max_height=0), GOOD, ValueError, "max_height"),
        (dict(max_height=-2), GOOD, ValueError, "max_height"),
        (dict(max_height=2.5), GOOD, TypeError, "max_height"),
        (dict(max_height=41), GOOD, ValueError, "max_height"),
        (dict(threshold=-1.0), GOOD, ValueError, "threshold"),
        (dict(threshold=float("nan")), GOOD, ValueError, "threshold"),
        (dict(threshold="10"), GOOD, TypeError, "threshold"),
        (dict(init="random"), GOOD, ValueError, "init"),
        (dict(init=np.zeros((2, 2))), GOOD, ValueError, "init array"),
        (dict(max_iter=0), GOOD, ValueError, "max_iter"),
        (dict(level_budget="literal"), GOOD, ValueError, "level_budget"),
        (dict(n_public=0), GOOD, ValueError, "n_public"),
    ],
)
def test_bad_input(kwargs, X, exc, needle):
    params = dict(n_clusters=3, epsilon=1.0, bounds=BOX, n_public=50) | kwargs
    with pytest.raises(exc, match=needle):
        DPQTKMeans(**params).fit(X)


def test_locate_finds_the_leaf_the_build_put_each_record_in(rng):
    X = np.vstack([_clustered(rng), [[-2.0, -2.0], [2.0, 2.0], [0.0, 0.0]]])  # corners and the first midpoint
    tree = build_dp_quadtree(X, np.array([-2.0, -2.0]), np.array([2.0, 2.0]), 50.0, 5, 3.0, random_state=0)
    assert tree.levels_released > 2
    np.testing.assert_array_equal(tree.locate(X), tree.point_node)
    np.testing.assert_array_equal(tree.leaf_counts(X), tree.leaf_counts())


def test_node_cap_refuses_before_allocating():
    # The cap counts bytes: a node of a 12-dimensional tree takes 434 bytes, so the level that the node
    # count alone let through (about 2 GB) is refused before it is allocated.
    import tracemalloc

    from dpclust_lib.cluster.dpqt_kmeans import MAX_TREE_BYTES

    # 2,000 records: the root's count clears its noise whatever the draw, so the root splits and about half of its
    # 4,096 children (the non-empty ones and the empty ones with positive noise) would split again.
    X = np.random.default_rng(1).random((2000, 12))
    est = DPQTKMeans(2, bounds=(0, 1), max_height=12, threshold=0.0, random_state=0)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="quadtree would exceed its cap") as err:
            est.fit(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2**20, f"{peak:,} bytes allocated before the refusal"
    assert "max_height" in str(err.value) and f"{MAX_TREE_BYTES:,}" in str(err.value)


def test_a_dimension_too_high_for_one_split_is_refused_from_public_quantities():
    # 2^40 children per split: refused from n_features alone, before the table of child codes exists.
    with pytest.raises(ValueError, match="cannot split even once in 40 dimensions"):
        build_dp_quadtree(np.zeros((3, 40)), np.zeros(40), np.ones(40), 1.0, 3, 0.0, random_state=0)

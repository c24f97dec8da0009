"""Metrics on hand-computed examples; RI and ARI against scikit-learn."""

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score, rand_score
from sklearn.metrics.cluster import contingency_matrix

from dpclust_lib import metrics

# Classes 0,0,0,1,1,1; clusters 0,0,1,1,2,2.
# Contingency (class x cluster): [[2, 1, 0], [0, 1, 2]].
TRUE = np.array([0, 0, 0, 1, 1, 1])
PRED = np.array([0, 0, 1, 1, 2, 2])


def test_contingency_table():
    np.testing.assert_array_equal(metrics.contingency_table(TRUE, PRED), [[2, 1, 0], [0, 1, 2]])


def _labelings(rng):
    """Random pairs of labelings of every kind the table ranks differently (scikit-learn is the reference)."""
    for _ in range(40):
        n = int(rng.integers(1, 400))
        a = rng.integers(0, int(rng.integers(1, 8)), n)
        b = rng.integers(0, int(rng.integers(1, 8)), n)
        yield a, b  # contiguous codes (some may be absent)
        yield a * 7 + 3, b * 11  # non-contiguous codes, still within the direct-ranking range
        yield a - 5, b * 10**9  # negative and sparse codes: ranked by np.unique
        yield np.array(["x", "y", "z", "w", "v", "u", "t", "s"])[a], b.astype(np.uint8)
        yield a.astype(float) / 2, b
        yield np.zeros(n, dtype=int), b  # one class
    yield np.array([0]), np.array([3])  # n = 1
    yield np.array([5]), np.array(["a"])


@pytest.mark.filterwarnings("ignore:Clustering metrics expects discrete values")  # sklearn, on the float labels
def test_contingency_table_and_pair_counts_against_sklearn(rng):
    for a, b in _labelings(rng):
        table = metrics.contingency_table(a, b)
        assert table.dtype == np.int64
        np.testing.assert_array_equal(table, contingency_matrix(a, b))
        assert metrics.rand_index(a, b) == pytest.approx(rand_score(a, b), abs=1e-12)
        assert metrics.adjusted_rand_index(a, b) == pytest.approx(adjusted_rand_score(a, b), abs=1e-12)


def test_contingency_table_direct_ranking_equals_np_unique_ranking(rng):
    # The same partition coded densely (direct ranking) and sparsely (np.unique) gives the same table.
    a = rng.integers(0, 50, 10_000)
    b = rng.integers(0, 30, 10_000)
    np.testing.assert_array_equal(metrics.contingency_table(a, b), metrics.contingency_table(a * 10**9, b - 100))


def test_accuracy_majority_class_per_cluster():
    # Majority counts per cluster: 2, 1, 2 -> 5/6.
    assert metrics.accuracy(TRUE, PRED) == pytest.approx(5 / 6)


def test_entropy_by_hand():
    # Clusters 0 and 2 are pure (entropy 0); cluster 1 is 50/50 (1 bit) and holds 2 of 6 records.
    assert metrics.entropy(TRUE, PRED) == pytest.approx(1 / 3)
    assert metrics.entropy(TRUE, PRED, base=np.e) == pytest.approx(np.log(2) / 3)


def test_f_measure_best_match_by_hand():
    # Class 0: best cluster 0 with P = 2/2, R = 2/3 -> F = 0.8; class 1 likewise with cluster 2.
    assert metrics.f_measure_best_match(TRUE, PRED) == pytest.approx(0.8)


def test_f_measure_one_to_one_by_hand():
    # Best matching: cluster 0 -> class 0 (2), cluster 2 -> class 1 (2), cluster 1 unmatched.
    # AC = 4/6; RE = (2/2 + 0 + 2/2) / 3 = 2/3; F = 2 AC RE / (AC + RE) = 2/3.
    assert metrics.f_measure_one_to_one(TRUE, PRED) == pytest.approx(2 / 3)


def test_f_measures_are_one_for_identical_partitions_up_to_renaming():
    a = np.array([0, 0, 1, 1, 2, 2, 2])
    b = np.array([5, 5, 9, 9, 7, 7, 7])
    assert metrics.f_measure_one_to_one(a, b) == pytest.approx(1.0)
    assert metrics.f_measure_best_match(a, b) == pytest.approx(1.0)
    assert metrics.accuracy(a, b) == pytest.approx(1.0)
    assert metrics.entropy(a, b) == pytest.approx(0.0)


def test_one_to_one_matching_is_not_greedy():
    # Greedy on the largest cell would pair cluster 0 with class 0 (3) and leave 1 for cluster 1;
    # the best matching pairs cluster 0 -> class 1 (2) and cluster 1 -> class 0 (3): 5 > 4.
    true = np.array([0, 0, 0, 1, 1, 0, 0, 0])
    pred = np.array([0, 0, 0, 0, 0, 1, 1, 1])
    # Contingency cluster x class: c0 = [3, 2], c1 = [3, 0]; best: c0->1 (2) + c1->0 (3) = 5.
    ac = 5 / 8
    re = (2 / 5 + 3 / 3) / 2
    assert metrics.f_measure_one_to_one(true, pred) == pytest.approx(2 * ac * re / (ac + re))


def test_rand_index_by_hand_and_against_sklearn(rng):
    # 15 pairs; agreeing pairs: together in both = 2, apart in both = 8 -> RI = 10/15.
    assert metrics.rand_index(TRUE, PRED) == pytest.approx(10 / 15)
    for _ in range(50):
        n = int(rng.integers(2, 300))
        a = rng.integers(0, int(rng.integers(1, 6)), n)
        b = rng.integers(0, int(rng.integers(1, 6)), n)
        assert metrics.rand_index(a, b) == pytest.approx(rand_score(a, b))
        assert metrics.adjusted_rand_index(a, b) == pytest.approx(adjusted_rand_score(a, b))


def test_adjusted_rand_index_edge_cases_match_sklearn():
    for a, b in [([0, 0, 0], [1, 1, 1]), ([0, 1, 2], [0, 1, 2]), ([0, 1, 2], [0, 0, 0])]:
        assert metrics.adjusted_rand_index(a, b) == pytest.approx(adjusted_rand_score(a, b))


def test_nicv_squared_euclidean_by_hand():
    X = np.array([[0.0, 0.0], [2.0, 0.0], [10.0, 0.0]])
    C = np.array([[1.0, 0.0], [10.0, 0.0]])
    assert metrics.nicv(X, C) == pytest.approx(2 / 3)
    assert metrics.nicv(X, C, sample_weight=[1, 1, 4]) == pytest.approx(2 / 6)


def test_nicv_hamming_by_hand():
    X = np.array([[0, 1, 1], [1, 1, 1], [2, 0, 0]])
    C = np.array([[0, 1, 1]])
    assert metrics.nicv(X, C, metric="hamming") == pytest.approx((0 + 1 + 3) / 3)


def test_rcp():
    assert metrics.rcp(2.0, 1.5) == pytest.approx(0.25)
    np.testing.assert_allclose(metrics.rcp([2.0, 4.0], [3.0, 1.0]), [-0.5, 0.75])


@pytest.mark.parametrize(
    "call, exc, needle",
    [
        (lambda: metrics.accuracy([0, 1], [0]), ValueError, "entries"),
        (lambda: metrics.accuracy([], []), ValueError, "empty"),
        (lambda: metrics.entropy([0.0, np.nan], [0, 1]), ValueError, "NaN"),
        (lambda: metrics.entropy([0, 1], [0, 1], base=1), ValueError, "base"),
        (lambda: metrics.rand_index([[0, 1]], [[0, 1]]), ValueError, "1-D"),
        (lambda: metrics.nicv(np.ones((3, 2)), np.ones((2, 3))), ValueError, "features"),
        (lambda: metrics.nicv(np.ones((3, 2)), np.ones((1, 2)), metric="cosine"), ValueError, "metric"),
        (lambda: metrics.nicv(np.array([[np.nan, 1.0]]), np.ones((1, 2))), ValueError, "NaN"),
        (lambda: metrics.nicv(np.ones((3, 2)), np.ones((1, 2)), sample_weight=[1, 1]), ValueError, "sample_weight"),
        (lambda: metrics.rcp(0.0, 1.0), ValueError, "nicv_reference"),
    ],
)
def test_metrics_bad_input(call, exc, needle):
    with pytest.raises(exc, match=needle):
        call()


def test_nicv_with_known_nearest_labels_equals_the_search(rng):
    X = rng.random((500, 3))
    C = rng.random((6, 3))
    labels = np.argmin(((X[:, None] - C[None]) ** 2).sum(2), axis=1)
    assert metrics.nicv(X, C, labels=labels) == pytest.approx(metrics.nicv(X, C), rel=1e-12)
    Xc = rng.integers(0, 3, size=(200, 4))
    Cc = rng.integers(0, 3, size=(5, 4))
    lab_c = np.argmin((Xc[:, None] != Cc[None]).sum(2), axis=1)
    assert metrics.nicv(Xc, Cc, "hamming", labels=lab_c) == pytest.approx(metrics.nicv(Xc, Cc, "hamming"))


@pytest.mark.parametrize("labels", [np.zeros(3, dtype=int), np.full(4, 2), np.full(4, -1), np.zeros(4)])
def test_nicv_bad_labels(labels):
    with pytest.raises(ValueError, match="labels must be 4 integers in 0..1"):
        metrics.nicv(np.zeros((4, 2)), np.zeros((2, 2)), labels=labels)

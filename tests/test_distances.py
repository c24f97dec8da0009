"""The chunked distance helpers: the fast squared-Euclidean and Hamming assignments against the direct forms."""

import numpy as np
import pytest

from dpclust_lib import _distances
from dpclust_lib._distances import nearest


def pairwise(X, C, metric):
    """(n, K) distances by their definitions: sum over features of (x - c)^2 or [x != c]."""
    if metric == "hamming":
        return (X[:, None, :] != C[None, :, :]).sum(axis=2)
    diff = X[:, None, :] - C[None, :, :]
    return np.einsum("nkd,nkd->nk", diff, diff)


@pytest.mark.parametrize("k", [4, 37])  # few centres (compared one by one) and many (argmin of a block's scores)
@pytest.mark.parametrize("offset, scale", [(0.0, 1.0), (5e5, 1e6), (-3.0, 1e-3)])
def test_fast_sqeuclidean_matches_direct_form(rng, offset, scale, k):
    X = offset + scale * rng.random((20_000, 3))  # more rows than one block
    C = offset + scale * rng.random((k, 3))
    labels, dist = nearest(X, C, "sqeuclidean")
    D = pairwise(X, C, "sqeuclidean")
    best = D.min(axis=1)
    # The chosen centre is a nearest one up to rounding, and the distance returned is the direct one.
    np.testing.assert_allclose(D[np.arange(len(X)), labels], best, rtol=1e-12, atol=1e-12 * scale**2)
    np.testing.assert_allclose(dist, D[np.arange(len(X)), labels], rtol=1e-9)
    assert (labels == D.argmin(axis=1)).mean() > 0.9999


def test_fast_sqeuclidean_distances_never_negative():
    # A record on a centre: the expanded form can give -1e-10 there; the exact recomputation gives 0.
    X = np.array([[1e6 + 0.1, 1e6 - 0.3], [3.0, 4.0]])
    labels, dist = nearest(X, X.copy(), "sqeuclidean")
    np.testing.assert_array_equal(labels, [0, 1])
    np.testing.assert_array_equal(dist, [0.0, 0.0])


@pytest.mark.parametrize("copies", [1, 4])  # three centres, or twelve: both ways of comparing them
def test_fast_sqeuclidean_exact_ties_go_to_the_lowest_index(copies):
    X = np.array([[0.5, 0.0], [0.0, 0.0]])
    C = np.tile(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]]), (copies, 1))
    labels, _ = nearest(X, C, "sqeuclidean")
    np.testing.assert_array_equal(labels, [0, 0])


def test_fast_sqeuclidean_on_integer_data_with_centres_on_records(rng):
    # birch3's case: integer coordinates up to 10^6, the centres records (k-means++'s start), so exact ties occur.
    X = rng.integers(0, 1_000_000, size=(5_000, 2)).astype(float)
    X[:50] = X[50:100]  # repeated records
    for k in (3, 12):
        C = X[rng.choice(len(X), k, replace=False)]
        D = pairwise(X, C, "sqeuclidean")  # exact here: integers below 2^53
        labels, dist = nearest(X, C, "sqeuclidean")
        np.testing.assert_array_equal(labels, D.argmin(axis=1))
        np.testing.assert_allclose(dist, D.min(axis=1), rtol=1e-12)  # differences of shifted coordinates


def test_labels_only(rng):
    X, C = rng.random((3000, 4)), rng.random((7, 4))
    labels, dist = nearest(X, C, "sqeuclidean", return_distance=False)
    assert dist is None
    np.testing.assert_array_equal(labels, nearest(X, C, "sqeuclidean")[0])


@pytest.mark.parametrize("chunk", [2_000_000, 7])
@pytest.mark.parametrize("d", [4, 130])  # the counts in int8 below 128 attributes, in int32 from there
def test_nearest_hamming_matches_direct_computation_with_ties(monkeypatch, chunk, d):
    monkeypatch.setattr(_distances, "_CHUNK_ELEMENTS", chunk)
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(500, d))
    C = np.vstack([rng.integers(0, 3, size=(5, d)), np.zeros((2, d), dtype=int)])  # duplicate centres: ties
    D = (X[:, None, :] != C[None, :, :]).sum(axis=2)
    labels, dist = _distances.nearest(X, C, "hamming")
    np.testing.assert_array_equal(labels, D.argmin(axis=1))  # argmin: ties go to the lowest index
    np.testing.assert_array_equal(dist, D.min(axis=1))
    assert dist.dtype == float
    np.testing.assert_array_equal(pairwise(X, C, "hamming"), D)


def test_hamming_labels_only(rng):
    X, C = rng.integers(0, 3, size=(300, 4)), rng.integers(0, 3, size=(5, 4))
    labels, dist = nearest(X, C, "hamming", return_distance=False)
    assert dist is None
    np.testing.assert_array_equal(labels, nearest(X, C, "hamming")[0])

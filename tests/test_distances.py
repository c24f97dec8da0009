"""Nearest-centre search: the Hamming fast path against the direct (n, K, d) computation."""
import numpy as np
import pytest

from dpclust_lib import _distances


@pytest.mark.parametrize("chunk", [2_000_000, 7])
def test_nearest_hamming_matches_direct_computation_with_ties(monkeypatch, chunk):
    monkeypatch.setattr(_distances, "_CHUNK_ELEMENTS", chunk)
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(500, 4))
    C = np.vstack([rng.integers(0, 3, size=(5, 4)), [[0, 0, 0, 0], [0, 0, 0, 0]]])  # duplicate centres: ties
    D = (X[:, None, :] != C[None, :, :]).sum(axis=2)
    labels, dist = _distances.nearest(X, C, "hamming")
    np.testing.assert_array_equal(labels, D.argmin(axis=1))  # argmin: ties go to the lowest index
    np.testing.assert_array_equal(dist, D.min(axis=1))
    assert dist.dtype == float
    np.testing.assert_array_equal(_distances.pairwise(X, C, "hamming"), D)

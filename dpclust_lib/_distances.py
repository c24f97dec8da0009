"""Distances between records and centres, computed in chunks to bound memory."""

from __future__ import annotations

import numpy as np

_CHUNK_ELEMENTS = 2_000_000  # entries of one Hamming count block (rows * K)
_EXPANDED_CHUNK_ROWS = 16_384  # most rows per block of the expanded form ...
_EXPANDED_CHUNK_ELEMENTS = 131_072  # ... and most scores per block: small products stay in cache and on one BLAS thread


def _nearest_sqeuclidean(X, C, return_distance=True):
    """argmin_k ||x - c_k||^2 via ||c_k||^2 - 2 x.c_k (one matrix product per block).

    Both sides are shifted by the centres' mean first, which keeps the
    cancellation error of the expanded form small when the coordinates are
    large (birch3 lives in [0, 10^6]^2). A column of ones appended to the
    records carries ||c_k||^2 into the same product. The distance to the
    chosen centre is then recomputed directly as a sum of squared
    differences, so it is never negative and is 0 for a record on a centre.
    Only the choice between centres whose distances agree to rounding (about
    1e-15 relative) can differ from the direct form. Blocks keep every
    temporary small. Without ``return_distance`` the distances are skipped (None).
    """
    n, d = X.shape
    k = C.shape[0]
    shift = C.mean(axis=0)
    Cs = C - shift
    weights = np.vstack([-2.0 * Cs.T, np.einsum("kd,kd->k", Cs, Cs)[None, :]])  # (d + 1, K)
    labels = np.empty(n, dtype=np.int64)
    dist = np.empty(n) if return_distance else None
    rows = min(n, max(256, min(_EXPANDED_CHUNK_ROWS, _EXPANDED_CHUNK_ELEMENTS // max(k, d))))
    augmented = np.ones((rows, d + 1))
    scores = np.empty((rows, k))
    for start in range(0, n, rows):
        m = min(rows, n - start)
        block = augmented[:m, :d]
        np.subtract(X[start : start + m], shift, out=block)
        np.matmul(augmented[:m], weights, out=scores[:m])
        lab = scores[:m].argmin(axis=1)
        labels[start : start + m] = lab
        if return_distance:
            diff = block - np.take(Cs, lab, axis=0)
            dist[start : start + m] = np.einsum("nd,nd->n", diff, diff)
    return labels, dist


def _nearest_hamming(X, C, return_distance=True):
    """Hamming case of :func:`nearest`, one attribute at a time into a (K, rows) count array.

    Adding d comparisons of length n is several times faster than summing an
    (n, K, d) block over its short last axis.
    """
    n, d = X.shape
    labels = np.empty(n, dtype=np.int64)
    dist = np.empty(n)
    step = max(1, _CHUNK_ELEMENTS // max(1, C.shape[0]))
    for start in range(0, n, step):
        block = X[start : start + step]
        D = np.zeros((C.shape[0], block.shape[0]), dtype=np.int32)
        for j in range(d):
            D += block[:, j] != C[:, j, None]
        lab = D.argmin(axis=0)
        labels[start : start + step] = lab
        dist[start : start + step] = D[lab, np.arange(block.shape[0])]
    return labels, dist if return_distance else None


def nearest(X, C, metric, return_distance=True):
    """Index of the nearest centre for each record and its distance (None if not ``return_distance``).

    ``"hamming"``: exact, ties go to the lowest index. ``"sqeuclidean"``: the
    expanded form (see :func:`_nearest_sqeuclidean`); the distances returned
    are computed directly, and ties go to the lowest index up to rounding.
    """
    if metric == "hamming":
        return _nearest_hamming(X, C, return_distance)
    X = np.ascontiguousarray(X, dtype=float)  # row blocks of a column-major array are slow to read
    C = np.asarray(C, dtype=float)
    return _nearest_sqeuclidean(X, C, return_distance)

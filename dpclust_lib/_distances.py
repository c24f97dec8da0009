"""Distances between records and centres, computed in chunks to bound memory."""

from __future__ import annotations

import numpy as np

_CHUNK_ELEMENTS = 2_000_000  # entries of one Hamming count block (rows * K)
_EXPANDED_CHUNK_ROWS = 16_384  # most rows per block of the expanded form ...
_EXPANDED_CHUNK_ELEMENTS = 131_072  # ... and most scores per block: small products stay in cache and on one BLAS thread
_FEW_CENTRES = 5  # up to this many centres, compared one after the other (benchmarks/bench_assign.py)
_FEW_CENTRES_ROWS = 8_192  # records per block then: K rows of 64 kB of scores
_DISTANCE_ROWS = 65_536  # records per block of the direct distances


def _nearest_sqeuclidean(X, C, return_distance=True):
    """argmin_k ||x - c_k||^2 via ||c_k||^2 - 2 x.c_k (one matrix product per block of records).

    Both sides are shifted by the centres' mean first, which keeps the
    cancellation error of the expanded form small when the coordinates are
    large (birch3 lives in [0, 10^6]^2). The distance to the chosen centre is
    then recomputed directly as a sum of squared differences, so it is never
    negative and is 0 for a record on a centre. Only the choice between
    centres whose distances agree to rounding (about 1e-15 relative) can
    differ from the direct form. Without ``return_distance`` the distances are
    skipped (None).

    Few centres (up to ``_FEW_CENTRES``) are compared one after the other on
    the scores of a block laid out centre by centre (contiguous rows of
    records), which beats ``argmin`` over short rows; more centres take the
    ``argmin`` of record-by-centre scores, the norms carried into the same
    product by a row of ones. Either way the shifted records are written as
    columns, which numpy writes and BLAS reads faster than a strided copy.
    Both give the labels of one product and ``argmin`` bit for bit, and at
    every shape the papers use they take no more time than scikit-learn's
    compiled ``KMeans.predict`` (``benchmarks/bench_assign.py``).
    """
    n, d = X.shape
    shift = C.mean(axis=0)
    Cs = C - shift
    sq_norms = np.einsum("kd,kd->k", Cs, Cs)
    if C.shape[0] <= _FEW_CENTRES:
        labels = _nearest_of_few(X, shift, -2.0 * Cs, sq_norms)
    else:
        labels = _nearest_of_many(X, shift, np.vstack([-2.0 * Cs.T, sq_norms[None, :]]))
    if not return_distance:
        return labels, None
    dist = np.empty(n)
    for start in range(0, n, _DISTANCE_ROWS):
        part = slice(start, start + _DISTANCE_ROWS)
        diff = (X[part] - shift) - np.take(Cs, labels[part], axis=0)
        dist[part] = np.einsum("nd,nd->n", diff, diff)
    return labels, dist


def sq_distances_to(X, centre, out):
    """``out[i] = ||X[i] - centre||^2``, ``_DISTANCE_ROWS`` rows at a time; returns ``out``.

    The values are one ``einsum`` over all rows, bit for bit (each row's sum does not depend on the
    others), without its n x d temporary: k-means++ seeding on a grid of 5^10 cells in 10-D (DPk-means++
    on MAGIC at large epsilon) scores 10^7 rows per centre, where a 780 MB temporary costs more in page
    faults than in arithmetic.
    """
    for start in range(0, X.shape[0], _DISTANCE_ROWS):
        diff = X[start : start + _DISTANCE_ROWS] - centre
        np.einsum("nd,nd->n", diff, diff, out=out[start : start + _DISTANCE_ROWS])
    return out


def _nearest_of_few(X, shift, weights, sq_norms):
    """Labels from (K, rows) scores, each centre's row compared with the best so far (:func:`_lowest_rows`)."""
    n, d = X.shape
    k = weights.shape[0]
    labels = np.empty(n, dtype=np.int64)
    rows = min(n, _FEW_CENTRES_ROWS)
    shifted, scores = np.empty((d, rows)), np.empty((k, rows))  # records as columns: contiguous rows of scores
    best, closer = np.empty(rows), np.empty(rows, dtype=bool)
    for start in range(0, n, rows):
        m = min(rows, n - start)
        np.subtract(X[start : start + m].T, shift[:, None], out=shifted[:, :m])
        s = scores[:, :m]
        np.matmul(weights, shifted[:, :m], out=s)
        s += sq_norms[:, None]
        _lowest_rows(s, labels[start : start + m], best[:m], closer[:m])
    return labels


def _lowest_rows(scores, labels, low, closer):
    """In place: ``labels[i]`` the row of the lowest ``scores[:, i]`` (the first on a tie, as ``argmin``), ``low[i]``
    that score; ``closer`` is scratch. Each row is compared with the best so far, which beats ``argmin`` down a short
    first axis."""
    labels.fill(0)
    np.copyto(low, scores[0])
    for j in range(1, scores.shape[0]):
        np.less(scores[j], low, out=closer)
        np.minimum(low, scores[j], out=low)
        np.copyto(labels, j, where=closer)


def _nearest_of_many(X, shift, weights):
    """Labels from (rows, K) scores, ``||c||^2`` carried into the product by a row of ones; argmin per row."""
    n, d = X.shape
    k = weights.shape[1]
    labels = np.empty(n, dtype=np.int64)
    rows = min(n, max(256, min(_EXPANDED_CHUNK_ROWS, _EXPANDED_CHUNK_ELEMENTS // max(k, d))))
    augmented = np.ones((d + 1, rows))  # records as columns (the shift writes contiguous rows), the last row ones
    scores = np.empty((rows, k))
    for start in range(0, n, rows):
        m = min(rows, n - start)
        np.subtract(X[start : start + m].T, shift[:, None], out=augmented[:d, :m])
        np.matmul(augmented[:, :m].T, weights, out=scores[:m])
        labels[start : start + m] = scores[:m].argmin(axis=1)
    return labels


def _nearest_hamming(X, C, return_distance=True):
    """Hamming case of :func:`nearest`: one attribute at a time into a (K, rows) count array.

    Adding d comparisons of length n is several times faster than summing an (n, K, d) block over
    its short last axis. The records are read as attribute rows (one contiguous copy per block), the
    counts are small integers (int8 below 128 attributes), and the nearest centre is kept as in
    :func:`_lowest_rows`.
    """
    n, d = X.shape
    k = C.shape[0]
    labels = np.empty(n, dtype=np.int64)
    dist = np.empty(n)
    count_type = np.int8 if d < 128 else np.int32
    step = max(1, _CHUNK_ELEMENTS // max(1, k))
    for start in range(0, n, step):
        block = np.ascontiguousarray(X[start : start + step].T)
        m = block.shape[1]
        D = np.zeros((k, m), dtype=count_type)
        for j in range(d):
            D += block[j] != C[:, j, None]
        low = np.empty(m, dtype=count_type)
        _lowest_rows(D, labels[start : start + m], low, np.empty(m, dtype=bool))
        dist[start : start + m] = low
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

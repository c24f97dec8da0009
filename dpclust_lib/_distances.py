"""Distances between records and centres, computed in chunks to bound memory."""
from __future__ import annotations

import numpy as np

_CHUNK_ELEMENTS = 2_000_000  # n_chunk * K * d entries per block


def _rows_per_chunk(n_centres, n_features):
    return max(1, _CHUNK_ELEMENTS // max(1, n_centres * n_features))


def pairwise(X, C, metric):
    """(n, K) distances: ``"sqeuclidean"`` or ``"hamming"`` (number of differing attributes)."""
    n, d = X.shape
    out = np.empty((n, C.shape[0]))
    step = _rows_per_chunk(C.shape[0], d)
    for start in range(0, n, step):
        block = X[start:start + step, None, :]
        if metric == "hamming":
            out[start:start + step] = (block != C[None, :, :]).sum(axis=2)
        else:
            diff = block - C[None, :, :]
            out[start:start + step] = np.einsum("nkd,nkd->nk", diff, diff)
    return out


def _nearest_hamming(X, C):
    """Hamming case of :func:`nearest`, one attribute at a time into a (K, rows) count array.

    Adding d comparisons of length n is several times faster than summing an
    (n, K, d) block over its short last axis.
    """
    n, d = X.shape
    labels = np.empty(n, dtype=np.int64)
    dist = np.empty(n)
    step = max(1, _CHUNK_ELEMENTS // max(1, C.shape[0]))
    for start in range(0, n, step):
        block = X[start:start + step]
        D = np.zeros((C.shape[0], block.shape[0]), dtype=np.int32)
        for j in range(d):
            D += block[:, j] != C[:, j, None]
        lab = D.argmin(axis=0)
        labels[start:start + step] = lab
        dist[start:start + step] = D[lab, np.arange(block.shape[0])]
    return labels, dist


def nearest(X, C, metric):
    """Index of the nearest centre for each record (ties go to the lowest index) and its distance."""
    if metric == "hamming":
        return _nearest_hamming(X, C)
    n, d = X.shape
    labels = np.empty(n, dtype=np.int64)
    dist = np.empty(n)
    step = _rows_per_chunk(C.shape[0], d)
    for start in range(0, n, step):
        D = pairwise(X[start:start + step], C, metric)
        lab = D.argmin(axis=1)
        labels[start:start + step] = lab
        dist[start:start + step] = D[np.arange(D.shape[0]), lab]
    return labels, dist

"""Pieces shared by the categorical estimators: input checks and weighted mode updates."""
from __future__ import annotations

import warnings

import numpy as np

from .._distances import nearest
from .._validation import PrivacyLeakWarning, check_categorical, check_domain_sizes


def categorical_input(X, domain_sizes, private, name="X"):
    """Check integer-coded records against the declared domain; return (X int64, domain sizes).

    Without ``domain_sizes`` the domain is taken from the data (max code + 1 per
    attribute). For a private estimator that reads something private from the
    data, so it warns with :class:`PrivacyLeakWarning`.
    """
    if domain_sizes is None:
        arr = np.asarray(X)
        if arr.ndim != 2 or arr.size == 0 or arr.dtype.kind not in "iu":
            # Let the full check produce the precise message.
            check_categorical(arr, [2] * (arr.shape[1] if arr.ndim == 2 else 1), name=name)
        if np.any(arr < 0):
            i, j = (int(v) for v in np.argwhere(arr < 0)[0])
            raise ValueError(f"{name}[{i}, {j}]={int(arr[i, j])} is negative; category codes start at 0")
        sizes = tuple(int(max(k, 2)) for k in arr.max(axis=0) + 1)
        if private:
            warnings.warn(
                "domain_sizes not given: the attribute domains are taken from the data, which is not "
                "covered by the privacy guarantee. Pass domain_sizes=... (the public schema) to avoid this.",
                PrivacyLeakWarning, stacklevel=3)
    else:
        sizes = check_domain_sizes(domain_sizes)
    return check_categorical(X, sizes, name=name), sizes


def unique_rows(X):
    """``np.unique(X, axis=0, return_inverse=True, return_counts=True)`` for non-negative integer codes.

    Same rows in the same (lexicographic) order, computed through one mixed-radix
    key per row, which is many times faster than numpy's row-wise unique.
    Returns (rows int64, inverse, counts).
    """
    X = np.asarray(X)
    dims = tuple(int(v) for v in X.max(axis=0) + 1)
    if float(np.prod(dims, dtype=float)) >= 2.0 ** 62:  # the key would overflow: numpy's row-wise unique
        rows, inverse, counts = np.unique(X, axis=0, return_inverse=True, return_counts=True)
        return rows.astype(np.int64), inverse.ravel(), counts
    key = np.ravel_multi_index(tuple(X.T), dims)
    ukey, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    return np.stack(np.unravel_index(ukey, dims), axis=-1).astype(np.int64), inverse, counts


def value_counts(X, labels, weights, n_clusters, domain_sizes):
    """Per cluster g, attribute j and value v: the total weight of records with X[:, j] = v in g.

    Returns a list over attributes of arrays of shape (n_clusters, k_j).
    """
    out = []
    for j, k in enumerate(domain_sizes):
        flat = np.bincount(labels * k + X[:, j], weights=weights, minlength=n_clusters * k)
        out.append(flat.reshape(n_clusters, k))
    return out


def modes_from_counts(counts):
    """Centres from per-cluster value counts: the most frequent value (ties: the smallest code)."""
    return np.column_stack([c.argmax(axis=1) for c in counts]).astype(np.int64)


class CategoricalClusterMixin:
    """``predict`` and ``fit_predict`` of the categorical estimators: nearest centre by Hamming distance."""

    def predict(self, X):
        if not hasattr(self, "cluster_centers_"):
            raise AttributeError(f"this {type(self).__name__} instance is not fitted yet; call fit first")
        X, _ = categorical_input(X, self.domain_sizes_, private=False)
        return nearest(X, self.cluster_centers_, "hamming")[0]

    def fit_predict(self, X, y=None):
        return self.fit(X).labels_

"""Pieces shared by the categorical estimators: the estimator base, input checks, k-modes steps.

Records are integer codes, ``X[:, j]`` in ``0 .. k_j - 1``; ``k_j`` is attribute j's
domain size (the public schema).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import sparse
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils import Bunch
from sklearn.utils.validation import check_is_fitted, validate_data

from .._distances import nearest
from ..validation import DomainSizes, PrivacyLeakWarning, PublicInput, check_categorical, check_domain_sizes
from ._base import is_from_data, require_public

DOMAIN_SIZES_WHAT = "domain_sizes=(k_1, ..., k_m), the public number of categories of each attribute"

PRIVATE_DOMAIN_SIZES = PublicInput(DOMAIN_SIZES_WHAT, DomainSizes())
"""The constraint on ``domain_sizes`` of a private estimator: required, declared sizes >= 2, or "data"."""


def check_records_shape(X, name="X"):
    """Refuse, before anything else reads ``X``: sparse input, complex numbers, not 2-D, no attribute.

    The messages say what scikit-learn's own checks say for the same mistakes.
    """
    if sparse.issparse(X):
        raise TypeError(
            f"{name} is a sparse matrix: sparse input is not supported; pass a dense array of integer category codes"
        )
    try:
        arr = np.asarray(X.to_numpy() if hasattr(X, "to_numpy") else X)
    except ValueError as exc:  # ragged lists
        raise TypeError(f"{name} could not be read as an array: {exc}") from exc
    if arr.dtype.kind == "c":
        raise ValueError(f"{name} holds complex numbers: Complex data not supported; pass integer category codes")
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D array (n records x m attributes), got shape {arr.shape}. Reshape "
            "your data with X.reshape(-1, 1) for one attribute or X.reshape(1, -1) for one record"
        )
    if arr.shape[1] == 0:
        raise ValueError(f"{name} has 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required.")


def domain_from_data(X, name="X"):
    """The domain sizes read off the records: max code + 1 per attribute (at least 2).

    Returns (X int64, sizes). The message of a bad record names its row and
    column, never its value.
    """
    arr = np.asarray(X.to_numpy() if hasattr(X, "to_numpy") else X)
    if arr.dtype.kind in "iuf" and np.any(arr < 0):  # before the dtype check: the more useful message
        i, j = (int(v) for v in np.argwhere(arr < 0)[0])
        raise ValueError(f"Negative values in data: {name}[{i}, {j}] is negative; category codes start at 0")
    if arr.ndim != 2 or arr.size == 0 or arr.dtype.kind not in "iu":
        # Let the full check produce the precise message (shape, emptiness, dtype, NaN).
        check_categorical(arr, [2] * (arr.shape[1] if arr.ndim == 2 and arr.shape[1] else 1), name=name)
    sizes = tuple(int(max(k, 2)) for k in arr.max(axis=0) + 1)
    return check_categorical(arr, sizes, name=name), sizes


def categorical_input(X, domain_sizes, name="X", allow_empty=False, outside="raise"):
    """Check integer-coded records against a declared domain; return (X int64, domain sizes).

    ``outside="clamp"``: a private estimator's records, whose codes outside the domain are clamped into it
    (:func:`~dpclust_lib.validation.clamp_codes`) rather than refused.
    """
    sizes = check_domain_sizes(domain_sizes)
    return check_categorical(X, sizes, name=name, allow_empty=allow_empty, outside=outside), sizes


def unique_rows(X):
    """``np.unique(X, axis=0, return_inverse=True, return_counts=True)`` for non-negative integer codes.

    Same rows in the same (lexicographic) order, computed through one mixed-radix
    key per row, which is many times faster than numpy's row-wise unique.
    Returns (rows int64, inverse, counts).
    """
    X = np.asarray(X)
    if X.shape[0] == 0:
        return np.zeros(X.shape, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    dims = tuple(int(v) for v in X.max(axis=0) + 1)
    if float(np.prod(dims, dtype=float)) >= 2.0**62:  # the key would overflow: numpy's row-wise unique
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


def distinct_weighted_rows(X, weights, n_clusters, rng):
    """``n_clusters`` distinct records drawn one by one with probability proportional to weight."""
    uniq, inverse, _ = unique_rows(X)
    w = np.bincount(inverse, weights=weights, minlength=len(uniq))
    available = int(np.count_nonzero(w > 0))
    if n_clusters > available:
        raise ValueError(f"n_clusters={n_clusters} is larger than the number of distinct records ({available})")
    chosen = rng.choice(len(uniq), size=n_clusters, replace=False, p=w / w.sum())
    return uniq[chosen].astype(np.int64)


def domain_centres(sizes, k, rng):
    """K distinct points drawn uniformly from the declared domain (no budget: it does not read the data)."""
    cells = math.prod(sizes)
    if k > cells:
        raise ValueError(f"n_clusters={k} is larger than the number of points in the domain ({cells})")
    centres, seen = [], set()
    while len(centres) < k:  # distinct points; cells >= k, so this ends
        point = tuple(int(v) for v in rng.integers(0, sizes))
        if point not in seen:
            seen.add(point)
            centres.append(point)
    return np.array(centres, dtype=np.int64)


def frequent_value_draw(X, k, rng, w, domain_sizes=None, max_draws=100_000):
    """:func:`~dpclust_lib.cluster.kmodes.frequent_value_centres` on checked input.

    ``w`` may be signed (an unbiased estimate): without a domain, a value counts
    as observed when its total weight is > 0.
    """
    m = X.shape[1]
    f = math.ceil(k ** (1.0 / m) - 1e-12)  # 1e-12: K^(1/m) = 2.0000000000000004 for K = 8, m = 3
    tops = []
    for j in range(m):
        counts = np.bincount(X[:, j], weights=w, minlength=0 if domain_sizes is None else domain_sizes[j])
        order = np.argsort(-counts, kind="stable")  # ties: the smaller code first
        eligible = len(counts) if domain_sizes is not None else int(np.count_nonzero(counts > 0))
        tops.append(order[: min(f, eligible)])
    n_candidates = math.prod(len(t) for t in tops)
    if n_candidates < k:
        where = (
            "some attribute has fewer than f values"
            if domain_sizes is not None
            else "some attribute has fewer than f observed values"
        )
        raise ValueError(
            f"n_clusters={k} is larger than the number of frequent-value candidates ({n_candidates}): "
            f"with f={f} {where}"
        )
    centres, seen = [], set()
    for _ in range(max_draws):
        candidate = tuple(int(t[rng.integers(len(t))]) for t in tops)
        if candidate not in seen:
            seen.add(candidate)
            centres.append(candidate)
            if len(centres) == k:
                return np.array(centres, dtype=np.int64)
    raise RuntimeError(f"no {k} distinct candidates after {max_draws} draws")  # pragma: no cover


def lloyd(X, w, centres, max_iter, sizes):
    """At most ``max_iter`` k-modes update steps from ``centres``; stops when the centres repeat.

    ``w`` may be signed (an unbiased estimate of counts): the per-cluster value
    counts are linear in the weights. A cluster without a record of non-zero
    weight keeps its centre. Returns (centres, n_iter).
    """
    k = centres.shape[0]
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        labels, _ = nearest(X, centres, "hamming")
        counts = value_counts(X, labels, w, k, sizes)
        new = modes_from_counts(counts)
        empty = np.bincount(labels, weights=np.abs(w), minlength=k) == 0
        new[empty] = centres[empty]  # an empty cluster keeps its centre
        if np.array_equal(new, centres):
            break
        centres = new
    return centres, n_iter


class CategoricalClusterer(ClusterMixin, BaseEstimator):
    """Base of the categorical estimators: input checks, ``predict``, ``fit_predict``.

    Subclasses set ``_private``: a private estimator requires ``domain_sizes``
    (the public schema); ``domain_sizes="data"`` reads it off the records, warns
    with :class:`~dpclust_lib.PrivacyLeakWarning` and makes ``epsilon_guaranteed_`` inf.
    """

    _private = False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True  # integer codes; scikit-learn's checks then pass codes
        tags.input_tags.positive_only = True  # codes start at 0
        return tags

    def _fit_input(self, X, allow_no_records=False):
        """Check X at fit; return (X int64, domain sizes, whether the domain was read off the records).

        ``allow_no_records``: accept X of shape (0, m) with a declared domain (a central private
        estimator must: the empty data set is a neighbour of every one-record data set).
        """
        check_records_shape(X)
        validate_data(self, X, skip_check_array=True, reset=True)  # n_features_in_, feature_names_in_
        if self._private:
            require_public(self.domain_sizes, "domain_sizes", DOMAIN_SIZES_WHAT)
        if self.domain_sizes is None or is_from_data(self.domain_sizes):
            if self._private:
                warnings.warn(
                    "domain_sizes='data': the attribute domains are read off the private records, which is not "
                    "covered by the privacy guarantee (epsilon_guaranteed_ = inf). Pass " + DOMAIN_SIZES_WHAT + ".",
                    PrivacyLeakWarning,
                    stacklevel=3,
                )
            X, sizes = domain_from_data(X)
            return X, sizes, self._private
        # A private estimator's records outside the declared domain are clamped into it: no refusal can depend on them.
        outside = "clamp" if self._private else "raise"
        X, sizes = categorical_input(X, self.domain_sizes, allow_empty=allow_no_records, outside=outside)
        return X, sizes, False

    def _input(self, X):
        """Check X against the fitted estimator (number of features, names, domain)."""
        check_is_fitted(self, "cluster_centers_")
        check_records_shape(X)
        validate_data(self, X, skip_check_array=True, reset=False)
        return check_categorical(X, self.domain_sizes_)

    def predict(self, X):
        """Index of the nearest centre (Hamming distance; ties: the lowest index) of each record.

        Parameters
        ----------
        X : array-like of shape (n_samples, m), integer codes inside the fitted domain

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        return nearest(self._input(X), self.cluster_centers_, "hamming")[0]

    def fit_predict(self, X, y=None):
        """``fit(X).predict(X)``: the nearest centre of each record.

        For a private estimator the labels are computed from the exact records:
        they are not covered by the privacy guarantee.
        """
        return self.fit(X).predict(X)


class PrivateCategoricalClusterer(CategoricalClusterer):
    """A private categorical estimator: the fitted object holds the release only."""

    _private = True

    def exact_diagnostics(self, X):
        """Evaluation quantities computed from the exact records -- NOT private.

        Parameters
        ----------
        X : array-like of shape (n_samples, m), integer codes (typically the fitted data)

        Returns
        -------
        sklearn.utils.Bunch with
            labels : (n_samples,) nearest centre of each record;
            cluster_sizes : (n_clusters,) records per centre;
            cost : the sum of Hamming distances to the nearest centre;
            private : False (a reminder: none of this is covered by epsilon).
        """
        X = self._input(X)
        labels, dist = nearest(X, self.cluster_centers_, "hamming")
        return Bunch(
            labels=labels,
            cluster_sizes=np.bincount(labels, minlength=len(self.cluster_centers_)),
            cost=float(dist.sum()),
            private=False,
        )

    def _leaky(self, why):
        """Warn that a setting is not covered by epsilon (the fitted estimator then guarantees nothing)."""
        warnings.warn(
            why + " It is not covered by epsilon: epsilon_guaranteed_ = inf.", PrivacyLeakWarning, stacklevel=3
        )

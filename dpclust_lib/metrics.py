"""Clustering quality measures used by the five papers.

Each paper defines its own F-measure; the two formulas in use are named after
what they compute:

* :func:`f_measure_one_to_one` -- Peng et al. (2021) Eq. 12-14: clusters and
  classes matched one to one (the best matching), AC and RE from the matching.
* :func:`f_measure_best_match` -- the class-wise best-match F-measure of
  Zhang & Cheng (2021) and Li et al. (2013): every class (or reference cluster)
  takes the F score of its best cluster, weighted by its size.

Also :func:`nicv`, :func:`accuracy` (AC) and :func:`entropy` (E) of Zhang et
al. (2022), :func:`rand_index`, :func:`adjusted_rand_index` and :func:`rcp`.
In every function ``labels_true`` is the reference partition (class labels
or a non-private clustering) and ``labels_pred`` the clustering being judged.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from ._distances import nearest
from .validation import check_array, check_choice, check_positive, check_sample_weight

__all__ = [
    "contingency_table",
    "nicv",
    "f_measure_one_to_one",
    "f_measure_best_match",
    "accuracy",
    "entropy",
    "rand_index",
    "adjusted_rand_index",
    "rcp",
]


def _labels(labels, name):
    """Labels as a 1-D array; a list mixing numbers and strings is refused (numpy would cast all to str)."""
    if labels is None or isinstance(labels, (str, bytes)):
        raise TypeError(f"{name} must be a 1-D sequence of labels, got {type(labels).__name__}")
    arr = np.asarray(labels)
    if arr.dtype.kind in "USO":
        kinds = {isinstance(v, (str, bytes, np.str_)) for v in np.asarray(labels, dtype=object).ravel()}
        if len(kinds) > 1:
            raise TypeError(f"{name} mixes strings and other values; use one type of label")
    return arr


def contingency_table(labels_true, labels_pred):
    """Counts n[i, j] = |class i and cluster j| (rows: classes, columns: clusters).

    Parameters
    ----------
    labels_true : array_like of shape (n_samples,)
        The classes.
    labels_pred : array_like of shape (n_samples,)
        The clusters.

    Returns
    -------
    ndarray of shape (n_classes, n_clusters), int64

    Examples
    --------
    >>> contingency_table([0, 0, 1, 1], [1, 1, 1, 0]).tolist()
    [[0, 2], [1, 1]]
    """
    a = _labels(labels_true, "labels_true")
    b = _labels(labels_pred, "labels_pred")
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"labels must be 1-D, got shapes {a.shape} and {b.shape}")
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"labels_true has {a.shape[0]} entries but labels_pred has {b.shape[0]}")
    if a.shape[0] == 0:
        raise ValueError("labels are empty")
    for name, arr in (("labels_true", a), ("labels_pred", b)):
        if arr.dtype.kind == "f" and np.isnan(arr).any():
            raise ValueError(f"{name} contains NaN")
    ia, rows = _codes(a)
    ib, cols = _codes(b)
    # One pass of bincount over the cell index; counts are integers, so the table is exact.
    return np.bincount(ia * cols + ib, minlength=rows * cols).reshape(rows, cols).astype(np.int64)


def _codes(labels):
    """(codes, number of distinct labels): each label's rank among the distinct labels, as ``np.unique`` ranks them.

    Non-negative integer labels no larger than a few times their number (cluster indices, class codes) are
    ranked by a table of the values present, in O(n): ``np.unique`` sorts, which costs most of the time on
    10^5..10^6 labels. Other labels (strings, floats, negative or sparse integers) go through ``np.unique``.
    """
    n = labels.shape[0]
    if labels.dtype.kind in "iu" and labels.min() >= 0 and labels.max() <= 4 * n + 1024:
        present = np.zeros(int(labels.max()) + 1, dtype=bool)
        present[labels] = True
        rank = np.cumsum(present, dtype=np.intp) - 1  # rank[v] = number of distinct labels below v
        return rank[labels], int(rank[-1]) + 1
    _, inverse = np.unique(labels, return_inverse=True)
    inverse = inverse.ravel()  # numpy 2.0.x returns the inverse in the input's shape
    return inverse, int(inverse.max()) + 1


def nicv(X, centers, metric="sqeuclidean", sample_weight=None, labels=None):
    """Normalised intra-cluster variance: (1/N) sum_i min_g d(x_i, c_g).

    ``metric="sqeuclidean"`` for numeric data (Zhang & Cheng 2021), or
    ``"hamming"`` (number of differing attributes; Peng et al. 2021 Eq. 11) for
    categorical codes. With ``sample_weight``, N is the total weight.
    ``labels``: the index of each record's nearest centre when it is already
    known (an estimator's ``labels_``); it saves the search, and must be the
    nearest centre for the result to be the NICV.

    Parameters
    ----------
    X : array_like of shape (n_samples, n_features)
    centers : array_like of shape (K, n_features)
    metric : str, default="sqeuclidean"
        The distance d (see :mod:`dpclust_lib._distances`).
    sample_weight : None or array_like of shape (n_samples,), default=None
    labels : None or array_like of shape (n_samples,), default=None
        The centre of each record; None: the nearest one.

    Returns
    -------
    float

    Examples
    --------
    >>> X = np.array([[0.0], [2.0], [10.0], [12.0]])
    >>> nicv(X, np.array([[1.0], [11.0]]))
    1.0
    """
    check_choice(metric, "metric", {"sqeuclidean", "hamming"})
    X = check_array(X, "X")
    C = check_array(centers, "centers")
    if C.shape[1] != X.shape[1]:
        raise ValueError(f"centers have {C.shape[1]} features but X has {X.shape[1]}")
    w = check_sample_weight(sample_weight, X.shape[0])
    if metric == "sqeuclidean":
        X, C = X.astype(float, copy=False), C.astype(float, copy=False)
    else:  # Hamming distance compares category codes: a non-integral float is not one
        for name, arr in (("X", X), ("centers", C)):
            if arr.dtype.kind == "f" and not np.all(arr == np.round(arr)):
                raise TypeError(
                    f"{name} must hold integer category codes for metric='hamming', got non-integral floats"
                )
    if labels is None:
        _, dist = nearest(X, C, metric)
    else:
        lab = np.asarray(labels)
        if lab.shape != (X.shape[0],) or lab.dtype.kind not in "iu" or lab.min() < 0 or lab.max() >= C.shape[0]:
            raise ValueError(
                f"labels must be {X.shape[0]} integers in 0..{C.shape[0] - 1}, got shape {lab.shape}, dtype {lab.dtype}"
            )
        if metric == "hamming":
            dist = (X != np.take(C, lab, axis=0)).sum(axis=1)
        else:
            diff = X - np.take(C, lab, axis=0)
            dist = np.einsum("nd,nd->n", diff, diff)
    # Not np.dot: a BLAS call on one vector can cost milliseconds when its threads compete for busy cores.
    return float(np.sum(w * dist) / w.sum())


def f_measure_one_to_one(labels_true, labels_pred):
    """Peng et al. (2021) Eq. 12-14 with alpha = 1.

    n_ij = |C_i and P_j| for cluster C_i and class P_j. The clusters are matched
    one to one with classes so that sum_i n_{i j_i} is largest (Hungarian
    method); AC = that sum / N (Eq. 12), RE = (1/K) sum_i n_{i j_i} / |C_i| over
    the K clusters (Eq. 13, a cluster left without a class scores 0), and
    F = 2 AC RE / (AC + RE) (Eq. 14).

    Parameters
    ----------
    labels_true : array_like of shape (n_samples,)
        The classes.
    labels_pred : array_like of shape (n_samples,)
        The clusters.

    Returns
    -------
    float
        In [0, 1].

    Examples
    --------
    >>> f_measure_one_to_one([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    """
    table = contingency_table(labels_true, labels_pred).T  # rows: clusters
    rows, cols = linear_sum_assignment(table, maximize=True)
    matched = table[rows, cols]
    n = table.sum()
    ac = matched.sum() / n
    sizes = table.sum(axis=1)
    re = np.sum(matched / sizes[rows]) / table.shape[0]
    return float(0.0 if ac + re == 0 else 2 * ac * re / (ac + re))


def f_measure_best_match(labels_true, labels_pred, beta=1.0):
    """Class-wise best-match F-measure (Zhang & Cheng 2021; Li et al. 2013).

    For class i and cluster j: P = n_ij / n_j, R = n_ij / n_i,
    F(i, j) = (1 + beta^2) P R / (beta^2 P + R); the score is
    sum_i (n_i / N) max_j F(i, j).

    Parameters
    ----------
    labels_true : array_like of shape (n_samples,)
        The classes.
    labels_pred : array_like of shape (n_samples,)
        The clusters.
    beta : float, default=1.0
        The weight of recall against precision.

    Returns
    -------
    float
        In [0, 1].

    Examples
    --------
    >>> round(f_measure_best_match([0, 0, 1, 1], [0, 0, 0, 1]), 4)
    0.7333
    """
    beta = check_positive(beta, "beta")
    table = contingency_table(labels_true, labels_pred).astype(float)
    n_i = table.sum(axis=1, keepdims=True)
    n_j = table.sum(axis=0, keepdims=True)
    precision = table / n_j
    recall = table / n_i
    b2 = float(beta) ** 2
    denom = b2 * precision + recall
    with np.errstate(invalid="ignore", divide="ignore"):
        f = np.where(denom > 0, (1 + b2) * precision * recall / denom, 0.0)
    return float(np.sum(n_i[:, 0] / table.sum() * f.max(axis=1)))


def accuracy(labels_true, labels_pred):
    """AC of Zhang et al. (2022) Eq. 20: sum_j h_j / N, h_j = size of the majority class in cluster j.

    Parameters
    ----------
    labels_true : array_like of shape (n_samples,)
        The classes.
    labels_pred : array_like of shape (n_samples,)
        The clusters.

    Returns
    -------
    float
        In [0, 1].

    Examples
    --------
    >>> accuracy([0, 0, 1, 1], [0, 0, 0, 1])
    0.75
    """
    table = contingency_table(labels_true, labels_pred)
    return float(table.max(axis=0).sum() / table.sum())


def entropy(labels_true, labels_pred, base=2.0):
    """E of Zhang et al. (2022) Eq. 21: sum_j (|c_j| / N) * (-sum_i p_ij log p_ij).

    p_ij is the share of class i in cluster j. The paper does not state the
    base of the logarithm; the default is 2 (bits), ``base=np.e`` gives nats.

    Parameters
    ----------
    labels_true : array_like of shape (n_samples,)
        The classes.
    labels_pred : array_like of shape (n_samples,)
        The clusters.
    base : float, default=2.0
        The base of the logarithm.

    Returns
    -------
    float
        0 when every cluster holds one class.

    Examples
    --------
    >>> entropy([0, 0, 1, 1], [1, 1, 0, 0])
    0.0
    """
    base = check_positive(base, "base")
    if not base > 1:
        raise ValueError(f"base must be > 1, got base={base!r}")
    table = contingency_table(labels_true, labels_pred).astype(float)
    size_j = table.sum(axis=0)
    p = table / size_j
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log(p), 0.0)
    h_j = terms.sum(axis=0) / np.log(base)
    return float(np.sum(size_j / size_j.sum() * h_j))


def _pair_counts(labels_true, labels_pred):
    table = contingency_table(labels_true, labels_pred).astype(np.float64)
    n = table.sum()
    sum_comb = np.sum(table * (table - 1)) / 2
    sum_a = np.sum(table.sum(axis=1) * (table.sum(axis=1) - 1)) / 2
    sum_b = np.sum(table.sum(axis=0) * (table.sum(axis=0) - 1)) / 2
    return n, sum_comb, sum_a, sum_b


def rand_index(labels_true, labels_pred):
    """Share of record pairs on which the two partitions agree (together / apart).

    Parameters
    ----------
    labels_true : array_like of shape (n_samples,)
        The classes.
    labels_pred : array_like of shape (n_samples,)
        The clusters.

    Returns
    -------
    float
        In [0, 1].

    Examples
    --------
    >>> rand_index([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    """
    n, both, a, b = _pair_counts(labels_true, labels_pred)
    pairs = n * (n - 1) / 2
    if pairs == 0:
        return 1.0
    return float((pairs + 2 * both - a - b) / pairs)


def adjusted_rand_index(labels_true, labels_pred):
    """Hubert & Arabie's adjusted Rand index (1 = identical, ~0 = chance).

    Parameters
    ----------
    labels_true : array_like of shape (n_samples,)
        The classes.
    labels_pred : array_like of shape (n_samples,)
        The clusters.

    Returns
    -------
    float
        1 for identical partitions, about 0 for chance.

    Examples
    --------
    >>> adjusted_rand_index([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    """
    n, both, a, b = _pair_counts(labels_true, labels_pred)
    pairs = n * (n - 1) / 2
    if pairs == 0:
        return 1.0
    expected = a * b / pairs
    maximum = (a + b) / 2
    if maximum == expected:  # both partitions trivial (one cluster, or all singletons)
        return 1.0
    return float((both - expected) / (maximum - expected))


def rcp(nicv_reference, nicv_method):
    """Relative clustering performance (Zhang & Cheng 2021): (NICV_ref - NICV_method) / NICV_ref.

    Positive when the method has the lower (better) NICV.

    Parameters
    ----------
    nicv_reference : float or array_like
        The NICV of the reference (non-private) clustering (> 0).
    nicv_method : float or array_like
        The NICV of the method.

    Returns
    -------
    float or ndarray
        > 0 when the method does better than the reference.

    Examples
    --------
    >>> round(rcp(0.5, 0.4), 6)
    0.2
    """
    ref, other = np.asarray(nicv_reference), np.asarray(nicv_method)
    for name, arr in (("nicv_reference", ref), ("nicv_method", other)):
        if arr.dtype.kind not in "iuf":
            raise TypeError(f"{name} must be a number or an array of numbers, got dtype {arr.dtype}")
    ref, other = ref.astype(float), other.astype(float)
    if np.any(ref <= 0) or not np.all(np.isfinite(ref)) or not np.all(np.isfinite(other)):
        raise ValueError("nicv_reference must be finite and > 0, nicv_method finite")
    try:
        np.broadcast_shapes(ref.shape, other.shape)
    except ValueError:
        raise ValueError(
            f"nicv_reference (shape {ref.shape}) and nicv_method (shape {other.shape}) "
            "must have the same shape (or one be a scalar)"
        ) from None
    out = (ref - other) / ref
    return float(out) if out.ndim == 0 else out

"""What the numeric estimators (k-means family, DPQT, BIRCH family) share.

Input validation with scikit-learn's bookkeeping (``n_features_in_``,
``feature_names_in_``), the public inputs (bounds, N) and the privacy
attributes, and the small numeric kernels (weighted means, nearest centre).
Names here are public within this private module, so that the estimator
modules import no private names of one another.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
from sklearn.utils import Bunch
from sklearn.utils.validation import check_is_fitted, validate_data

from .._distances import nearest
from ..validation import PrivacyLeakWarning, check_array, check_bounds, check_int, check_n_clusters, clamp_records
from ._base import CENTRAL, is_from_data, require_public

BOUNDS_WHAT = "bounds=(lower, upper), the public domain of the data (scalars or one value per feature)"
"""What a missing ``bounds`` asks for (the text of :func:`~dpclust_lib.validation.check_bounds`)."""


def n_public_what(needed_for="to size the grid or tree"):
    """What a missing ``n_public`` asks for (the text of :func:`resolve_n`)."""
    return f"n_public=<the public number of records> (needed {needed_for})"


def check_init_shape(init, n_clusters, n_features):
    """An init array (already checked numeric) must have shape (n_clusters, n_features): the data-dependent step."""
    if init.shape != (n_clusters, n_features):
        raise ValueError(f"init array must have shape ({n_clusters}, {n_features}), got {init.shape}")
    return init


def numeric_input(est, X, *, reset=True, allow_no_records=False, finite=True):
    """X as a C-contiguous float array, checked with our messages; records n_features_in_ (reset) or checks it.

    Our :func:`check_array` runs first (its messages name the parameter and
    never echo a value); scikit-learn's ``validate_data`` then only does the
    feature bookkeeping: it sets ``n_features_in_`` and ``feature_names_in_``
    at fit, and at predict refuses a different number of features.

    ``allow_no_records``: a private estimator under add/remove-one neighbours accepts X of shape
    (0, d). The empty data set is the neighbour of every one-record data set, so refusing it would
    be an observable difference that depends on the private number of records; its release is
    noise alone. A shape without a feature (d = 0) is still refused: d is public.
    """
    arr = check_array(X, allow_empty=allow_no_records, finite=finite)
    if arr.ndim == 2 and arr.shape[1] == 0:
        raise ValueError(f"X is empty: 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required.")
    arr = np.ascontiguousarray(arr, dtype=float)  # row blocks are read in the distance loops
    validate_data(est, X, skip_check_array=True, reset=reset)
    return arr


def predict_input(est, X):
    """X for predict: the estimator must be fitted (NotFittedError) and X must have its features."""
    check_is_fitted(est)
    return numeric_input(est, X, reset=False)


def resolve_bounds(bounds, X):
    """(lower, upper, leaky): the declared domain, or the data's own with ``bounds="data"`` (leaky)."""
    lower, upper = check_bounds(bounds, X.shape[1], X)
    return lower, upper, is_from_data(bounds)


def private_records(est, X, *, reset=True):
    """(X, lower, upper, leaky) of a private estimator's fit: the records checked for their public shape and dtype,
    then clamped into the bounds (:func:`~dpclust_lib.validation.clamp_records`: NaN to the box's centre).

    Only public properties of X (its shape, its dtype) can make this refuse; a record outside the bounds, inf or
    NaN gets the declared treatment, so no exception or message depends on a record's value. X of shape (0, d)
    is accepted: the empty data set is a neighbour of every one-record data set.
    """
    X = numeric_input(est, X, reset=reset, allow_no_records=True, finite=False)
    lower, upper, leaky = resolve_bounds(est.bounds, X)
    return clamp_records(X, lower, upper), lower, upper, leaky


def resolve_n(n_public, X, needed_for="to size the grid or tree"):
    """(N, leaky): the public record count, or the true one with ``n_public="data"`` (leaky, warns)."""
    require_public(n_public, "n_public", n_public_what(needed_for))
    if is_from_data(n_public):
        if X.shape[0] == 0:
            raise ValueError("n_public='data' needs at least one record to count: X is empty; pass n_public=<int>")
        warnings.warn(
            "n_public='data': the grid/tree is sized from the true number of records, "
            "which is not covered by the privacy guarantee (epsilon_guaranteed_ = inf; the papers "
            "treat N as public). Pass n_public=<int> to declare it.",
            PrivacyLeakWarning,
            stacklevel=4,
        )
        return X.shape[0], True
    return check_int(n_public, "n_public", minimum=1), False


def record_privacy(est, epsilon_spent, leaky, epsilon_guaranteed=None):
    """Set the privacy attributes every private estimator exposes after fit.

    ``epsilon_spent_`` is what this run's releases spent (the ledger);
    ``epsilon_guaranteed_`` is the ex-ante guarantee of the configured mechanism
    under add/remove-one neighbours (``neighbouring_``), the same for every data
    set and every run: ``epsilon_guaranteed`` (default: ``epsilon_spent``, for an
    estimator whose releases do not depend on the outcome), or inf when a leaky
    option read the data outside the budget. Replace-one neighbours cost up to twice as much.
    """
    est.epsilon_spent_ = float(epsilon_spent)
    guaranteed = epsilon_spent if epsilon_guaranteed is None else epsilon_guaranteed
    est.epsilon_guaranteed_ = math.inf if leaky else float(guaranteed)
    est.neighbouring_ = CENTRAL


def check_n_clusters_public(n_clusters, n_public):
    """K >= 1, and K <= n_public when a public record count is declared (an int); never the true count.

    Under add/remove-one neighbours the number of records is private: a refusal that compared K
    with it would tell a data set of K records from its neighbour of K - 1. Without a declared
    count, K larger than the number of records is allowed: the surplus clusters get noisy counts
    of zero, which the release already accounts for.
    """
    k = check_n_clusters(n_clusters)
    if isinstance(n_public, numbers.Integral) and not isinstance(n_public, bool) and k > n_public:
        raise ValueError(f"n_clusters={k} is larger than n_public={int(n_public)}, the declared number of records")
    return k


def weighted_means(X, labels, weights, n_clusters, previous):
    """Weighted mean of each cluster; an empty (zero-weight) cluster keeps its previous centre."""
    mass = np.bincount(labels, weights=weights, minlength=n_clusters)
    sums = np.column_stack(
        [np.bincount(labels, weights=weights * X[:, j], minlength=n_clusters) for j in range(X.shape[1])]
    )
    centres = previous.copy()
    full = mass > 0
    centres[full] = sums[full] / mass[full, None]
    return centres


def assign(X, centres):
    """The nearest centre of each record (squared Euclidean; no distances); none for no records."""
    if X.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    return nearest(X, centres, "sqeuclidean", return_distance=False)[0]


def nearest_centre(X, centers, sq_norms):
    """Index of the nearest centre of each row: argmin ||c||^2 - 2 x.c (ties: lowest index).

    scikit-learn's Birch formula, unshifted, so that ``Birch`` labels records
    exactly as scikit-learn does (``_distances.nearest`` shifts by the centres'
    mean first, which can break a near-tie the other way). Rows go in blocks
    of about 2^20 scores (8 MB), which stay in cache: a noisy tree has ~18,000
    centres, and 4,096-row blocks of 600 MB ran at half the speed.
    """
    out = np.empty(X.shape[0], dtype=np.int64)
    minus_two_c = -2.0 * centers.T  # scaling by a power of two is exact: the same sums as -2 (x.c)
    chunk = max(8, 2**20 // max(1, centers.shape[0]))
    for start in range(0, X.shape[0], chunk):
        d = X[start : start + chunk] @ minus_two_c
        d += sq_norms
        out[start : start + chunk] = d.argmin(axis=1)
    return out


def centroid_diagnostics(X, centres, **extra):
    """Exact-data evaluation of a centroid clustering: labels, cluster sizes, inertia (NOT private)."""
    labels = assign(X, centres)
    diff = X - centres[labels]
    return Bunch(
        labels=labels,
        cluster_sizes=np.bincount(labels, minlength=centres.shape[0]),
        inertia=float(np.einsum("nd,nd->", diff, diff)),
        **extra,
    )


class NearestCentrePredict:
    """predict of the centroid estimators: each record goes to its nearest centre in ``cluster_centers_``."""

    def predict(self, X):
        """Index of the nearest centre of each row of X.

        Parameters
        ----------
        X : array_like (n, d)

        Returns
        -------
        labels : ndarray of int (n,)
        """
        return assign(predict_input(self, X), self.cluster_centers_)


class PrivateCentroidMixin(NearestCentrePredict):
    """fit_predict and exact_diagnostics of the private centroid estimators (which keep no labels_)."""

    def fit_predict(self, X, y=None):
        """fit(X), then predict(X): the nearest released centre of each record.

        The labels are computed from the private records: they are not a private output.
        """
        return self.fit(X).predict(X)

    def exact_diagnostics(self, X):
        """Exact-data evaluation on X: NOT private (reads every record outside the budget).

        Returns
        -------
        sklearn.utils.Bunch with ``labels`` (nearest released centre),
        ``cluster_sizes`` and ``inertia`` (sum of squared distances to it), and
        any estimator-specific exact quantity.
        """
        X = predict_input(self, X)
        return centroid_diagnostics(X, self.cluster_centers_, **self._exact_extra(X))

    def _exact_extra(self, X):
        return {}

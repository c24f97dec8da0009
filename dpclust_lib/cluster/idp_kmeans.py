"""IDP k-means: DP k-means with improved initial centres.

Li Y., Hao Z., Wen W., Xie G. *Research on differential privacy preserving
k-means clustering.* Computer Science (计算机科学), 2013, Sec. 4.2: the records
are split into K parts, the noisy centroid of each part is an initial centre,
then SuLQ DP k-means (:class:`~dpclust_lib.cluster.kmeans.DPKMeans`) iterates.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..mechanisms import laplace_scale
from ..validation import (
    Choice,
    PrivacyLeakWarning,
    check_random_state,
)
from .kmeans import (
    LLOYD_CONSTRAINTS,
    DPLloyd,
    budget_shares,
    noisy_centres,
    sum_count_sensitivity,
)

__all__ = ["IDPKMeans"]


class IDPKMeans(DPLloyd):
    """IDP k-means (Li et al. 2013, Sec. 4.2): noisy centroids of K parts as initial centres.

    The records are split into K parts, and the noisy centroid of each part
    (noisy sum / noisy count, one SuLQ release with sensitivity d + 1, see
    :func:`noisy_centres`) is an initial centre. DP k-means iterations follow.

    Budget: the initial step is the first of the ``max_iter`` releases of the
    schedule (epsilon / N with "fixed", epsilon / 2 with "halving"), and
    ``max_iter - 1`` Lloyd iterations take the rest. So IDP k-means and
    :class:`DPKMeans` with the same ``max_iter`` add the same noise per release
    and spend the same epsilon, as the paper's argument has it ("the noise
    added and epsilon unchanged"); ``ledger_`` lists the initial release first.

    The split ("random", default): each record goes to one of the K parts
    independently and uniformly at random, so the parts are equal in
    expectation (n/K records each, give or take sqrt(n/K)), and adding or
    removing one record changes one part only: sensitivity d + 1, as in the
    paper. ("order"): K contiguous equal parts in the order of the rows, the
    literal reading of "split into K equal parts". Then inserting one record
    moves up to K - 1 boundary records between parts, so the initial release
    has sensitivity up to (2K - 1)(d + 1), not d + 1, and the result depends on
    how the file is sorted; it warns with PrivacyLeakWarning and
    ``epsilon_guaranteed_`` is inf.

    Privacy: epsilon-DP under add/remove-one neighbours (``neighbouring_``;
    replacing a record costs up to 2 epsilon). The number of records is private:
    K may exceed it (the empty parts release noisy zeros), and an empty X, of
    shape (0, d), releases noise alone.

    Parameters
    ----------
    n_clusters : int, default=8
        K, the number of clusters (>= 1). It is not compared with the number of records, which
        is private under add/remove-one neighbours: a cluster without records releases noisy zeros.
    epsilon : float, default=1.0
        The total privacy budget (> 0).
    max_iter : int, default=5
        N, the number of releases (>= 1), the initial one included (1 = the initial step only).
    schedule : {"fixed", "halving"}, default="fixed"
        The budgets of the releases (:func:`~dpclust_lib.cluster.kmeans.budget_shares`), as :class:`DPKMeans`.
    random_state : None, int, SeedSequence, numpy Generator or "os", default=None
        The randomness of the noise and of the draws; an int gives the same release every time.
    bounds : (lower, upper) or "data", required
        The public data domain (scalars or length-d arrays). "data" reads it
        off the records: not private (PrivacyLeakWarning, epsilon_guaranteed_ = inf).
    split : {"random", "order"}, default="random"
        How the records are cut into K parts (see above; "order" is leaky).
    noise : {"exact", "float"}, default="exact"
        The Laplace noise drawn: exact discrete Laplace on a grid, or textbook
        floating-point Laplace (leaks through its low bits: PrivacyLeakWarning,
        epsilon_guaranteed_ = inf).

    accountant : BudgetAccountant or None, default=None
        A budget shared with other fits (:class:`~dpclust_lib.accounting.BudgetAccountant`): charged this fit's
        whole guarantee before any record is read; a fit that would pass its budget is refused.
    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        The released centres.
    initial_centers_ : ndarray of shape (n_clusters, n_features)
        The centres the Lloyd iterations started from.
    n_iter_ : int
        max_iter - 1, the Lloyd iterations after the initial step.
    noise_scales_ : list of float
        The Laplace scale of each Lloyd iteration's release.
    sensitivity_ : float
        The L1 sensitivity d + 1 of one release.
    bounds_ : tuple of two ndarrays of shape (n_features,)
        The domain (lower, upper) used.
    initial_noise_scale_ : float
        The Laplace scale of the initial release.
    ledger_ : PrivacyLedger
        One entry per release.
    epsilon_spent_ : float
        What this run's releases spent: the sum of ``ledger_``.
    epsilon_guaranteed_ : float
        The ex-ante guarantee of the configured mechanism, the same for every data set and every
        run: epsilon-DP under add/remove-one neighbours (inf with a leaky option). The figure to publish.
    neighbouring_ : str
        "add/remove one record" (replacing one record costs up to 2 epsilon).
    n_features_in_ : int
        The number of features seen in fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        The column names, when X is a DataFrame with string column names.

    Notes
    -----
    No ``labels_``: use ``predict``. The true part sizes are exact data:
    ``exact_diagnostics(X).part_sizes`` (NOT private; replayed from an int
    ``random_state``, or with split="order").

    Examples
    --------
    >>> X = np.random.default_rng(0).random((200, 2))
    >>> est = IDPKMeans(2, epsilon=1.0, max_iter=3, bounds=(0, 1), random_state=0).fit(X)
    >>> est.cluster_centers_.shape, est.n_iter_, est.epsilon_spent_
    ((2, 2), 2, 1.0)
    >>> len(est.ledger_.entries)
    3
    """

    # Checked by validate_params at the start of fit; with the data, fit then checks
    # bounds against X (never n_clusters against the private n).
    _parameter_constraints = {**LLOYD_CONSTRAINTS, "split": Choice("random", "order")}

    def __init__(
        self,
        n_clusters=8,
        *,
        epsilon=1.0,
        max_iter=5,
        schedule="fixed",
        random_state=None,
        bounds=None,
        split="random",
        noise="exact",
        accountant=None,
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.max_iter = max_iter
        self.schedule = schedule
        self.random_state = random_state
        self.bounds = bounds
        self.split = split
        self.noise = noise
        self.accountant = accountant

    def _start(self, X, k, lower, upper, eps, rng, ledger, noise):
        n, d = X.shape
        shares = budget_shares(self.schedule, eps, self.max_iter)
        if self.split == "order":
            warnings.warn(
                "split='order' cuts the rows into K contiguous parts: one added record can move K - 1 "
                "others between parts (sensitivity up to (2K-1)(d+1), not d+1), so epsilon does not "
                "cover it (epsilon_guaranteed_ = inf), and the parts depend on how the file is sorted. "
                "split='random' is exact.",
                PrivacyLeakWarning,
                stacklevel=4,
            )
        parts = _split_parts(self.split, n, k, rng)
        fallback = rng.uniform(lower, upper, size=(k, d))  # for a part whose noisy count is below 1
        sensitivity = sum_count_sensitivity(X.shape[1])
        ledger.spend(
            shares[0],
            f"initial centres: noisy sum and count of each of {k} parts, L1 sensitivity "
            f"{sensitivity:g}, Laplace scale {laplace_scale(sensitivity, shares[0]):.4g}",
        )
        centres = noisy_centres(X, parts, k, lower, upper, shares[0], fallback, rng, noise)
        self.initial_noise_scale_ = laplace_scale(sensitivity, shares[0])
        return centres, shares[1:], self.split == "order"

    def _exact_extra(self, X):
        # The parts are replayed: the split is the first draw of the fit's generator.
        k = self.cluster_centers_.shape[0]
        if self.split == "order" or isinstance(self.random_state, (int, np.integer)):
            rng = check_random_state(self.random_state)
            return {"part_sizes": np.bincount(_split_parts(self.split, X.shape[0], k, rng), minlength=k)}
        return {"part_sizes": None}  # a Generator or None cannot be replayed


def _split_parts(split, n, k, rng):
    """The part of each of n records: uniform at random ("random") or K contiguous blocks ("order")."""
    if split == "random":
        return rng.integers(0, k, size=n)
    return (np.arange(n) * k) // n

"""DPk-means++: k-means++ seeding on a noisy grid histogram, then DP Lloyd steps.

The baseline "DPk-means++" of Zhang & Cheng (2021), after Hu et al., whose
budget split and seeding details are not published; this is our reading.
"""

from __future__ import annotations

import fractions

import numpy as np

from ..accounting import share_at_most
from ..mechanisms import laplace_mechanism, laplace_scale
from ..noise import double_at_most
from ..validation import Fraction, Int, PublicInput
from ._numeric import n_public_what, resolve_n
from .eug_kmeans import check_grid_cells, eug_grid_size
from .kmeans import (
    LLOYD_CONSTRAINTS,
    DPLloyd,
    budget_shares,
    grid_histogram,
    kmeans_plusplus,
)

__all__ = ["DPKMeansPP"]


class DPKMeansPP(DPLloyd):
    """k-means++ seeding on a noisy grid histogram, then DP Lloyd iterations.

    Zhang & Cheng (2021) compare with "DPk-means++" (Hu et al.), whose budget
    split and seeding details are not published. Our reading: k-means++ needs
    records drawn with probability proportional to their squared distance to
    the centres so far, and drawing private records that way is not
    differentially private. So the seeding runs on a synopsis instead: a
    ``seeding_share`` of epsilon (default 1/2) buys an equal-width grid
    histogram with Laplace noise (sensitivity 1; the grid sized by
    :func:`eug_grid_size` for that budget), and k-means++ draws the K initial
    centres among the cell centres, weighted by the noisy counts (negatives
    as 0). That is post-processing of an epsilon_seed-DP release. The rest of
    epsilon goes to ``max_iter`` SuLQ iterations under ``schedule``.

    Privacy: epsilon-DP under add/remove-one neighbours (``neighbouring_``;
    replacing a record costs up to 2 epsilon). K is checked against the
    declared ``n_public`` only, never against the private number of records;
    an empty X, of shape (0, d), releases noise alone.

    Parameters
    ----------
    n_clusters : int, default=8
        K, the number of clusters (>= 1, at most ``n_public`` when that is an int). It is never
        compared with the true number of records, which is private under add/remove-one neighbours.
    epsilon : float, default=1.0
        The total privacy budget (> 0).
    max_iter : int, default=5
        The number of SuLQ iterations after the seeding (>= 1).
    schedule : {"fixed", "halving"}, default="fixed"
        The budgets of the releases (:func:`~dpclust_lib.cluster.kmeans.budget_shares`), as :class:`DPKMeans`.
    random_state : None, int, SeedSequence, numpy Generator or "os", default=None
        The randomness of the noise and of the draws; an int gives the same release every time.
    bounds : (lower, upper) or "data", required
        The public data domain (scalars or length-d arrays). "data" reads it
        off the records: not private (PrivacyLeakWarning, epsilon_guaranteed_ = inf).
    seeding_share : float, default=0.5
        The part of epsilon spent on the seeding histogram, in (0, 1).
    n_public : int or "data", required
        The public record count that sizes the grid ("data": the true N, not
        private: PrivacyLeakWarning, epsilon_guaranteed_ = inf).
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
        The number of noisy Lloyd iterations run.
    noise_scales_ : list of float
        The Laplace scale of each Lloyd iteration's release.
    sensitivity_ : float
        The L1 sensitivity d + 1 of one release.
    bounds_ : tuple of two ndarrays of shape (n_features,)
        The domain (lower, upper) used.
    grid_size_ : int
        Cells per dimension of the seeding histogram.
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
    No ``labels_``: labels of the private records are not a release. Use
    ``predict``, or ``exact_diagnostics(X)`` (NOT private).

    Examples
    --------
    >>> X = np.random.default_rng(0).random((200, 2))
    >>> est = DPKMeansPP(2, epsilon=1.0, bounds=(0, 1), n_public=200, random_state=0).fit(X)
    >>> est.cluster_centers_.shape, est.grid_size_, round(est.epsilon_spent_, 6)
    ((2, 2), 3, 1.0)
    """

    # Checked by validate_params at the start of fit; with the data, fit then checks
    # n_clusters <= n_public (an int) and bounds against X, and reads N with n_public="data".
    _parameter_constraints = {
        **LLOYD_CONSTRAINTS,
        "seeding_share": Fraction(),
        "n_public": PublicInput(n_public_what(), Int(minimum=1)),
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        epsilon=1.0,
        max_iter=5,
        schedule="fixed",
        random_state=None,
        bounds=None,
        seeding_share=0.5,
        n_public=None,
        noise="exact",
        accountant=None,
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.max_iter = max_iter
        self.schedule = schedule
        self.random_state = random_state
        self.bounds = bounds
        self.seeding_share = seeding_share
        self.n_public = n_public
        self.noise = noise
        self.accountant = accountant

    def _start(self, X, k, lower, upper, eps, rng, ledger, noise):
        eps_seed = share_at_most(eps, fractions.Fraction(float(self.seeding_share)))  # rounded down, checked
        n, leaky = resolve_n(self.n_public, X)
        m = check_grid_cells(eug_grid_size(n, eps_seed, X.shape[1]), X.shape[1], "n_public, epsilon and seeding_share")
        cells, counts = grid_histogram(X, lower, upper, m)
        ledger.spend(
            eps_seed,
            f"seeding: grid histogram of {m}^{X.shape[1]} cells, L1 sensitivity 1, "
            f"Laplace scale {laplace_scale(1.0, eps_seed):.4g}",
        )
        noisy = laplace_mechanism(counts, 1.0, eps_seed, rng, noise=noise)
        self.grid_size_ = m
        centres = kmeans_plusplus(cells, k, rng, np.maximum(noisy, 0.0))
        rest = double_at_most(fractions.Fraction(eps) - fractions.Fraction(eps_seed))  # seeding + Lloyd <= eps
        return centres, budget_shares(self.schedule, rest, self.max_iter), leaky

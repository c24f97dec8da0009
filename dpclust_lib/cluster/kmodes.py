"""k-modes without privacy, and DP-modes-Lloyd (central DP k-modes).

:class:`KModes` -- weighted Hamming k-modes (Huang 1998), with random,
frequent-value (Peng et al. 2021, Alg. 4 lines 1-15) or given initial centres.

:class:`DPKModes` -- DP-modes-Lloyd (Nguyen, Computers & Security 78:60-75,
2018), the central-DP baseline of Peng et al. (2021) and, as "DPK", of Zhang
et al. (2022): per-cluster per-attribute value counts with Laplace noise, and
the noisy argmax as the new mode.

Records are integer codes, ``X[:, j]`` in ``0 .. k_j - 1``.
"""

from __future__ import annotations

import fractions

import numpy as np

from .._distances import nearest
from ..accounting import PrivacyLedger, compose, share_at_most
from ..mechanisms import laplace_mechanism, laplace_scale
from ..noise import NOISE_KINDS
from ..validation import (
    MAX_RELEASES,
    Choice,
    ChoiceOrArray,
    DomainSizes,
    Epsilon,
    Int,
    NClusters,
    Optional,
    PublicInput,
    RandomState,
    check_int,
    check_n_clusters,
    check_random_state,
    check_sample_weight,
    validate_params,
)
from ._base import ACCOUNTANT, CENTRAL, charge_accountant, resolve_noise
from ._common import (
    DOMAIN_SIZES_WHAT,
    PRIVATE_DOMAIN_SIZES,
    CategoricalClusterer,
    PrivateCategoricalClusterer,
    categorical_input,
    distinct_weighted_rows,
    domain_centres,
    domain_from_data,
    frequent_value_draw,
    lloyd,
    modes_from_counts,
    unique_rows,
    value_counts,
)

__all__ = ["KModes", "DPKModes", "frequent_value_centres"]


def frequent_value_centres(X, n_clusters, random_state=None, sample_weight=None, domain_sizes=None, max_draws=100_000):
    """Initial centres of Peng et al. (2021), Alg. 4 lines 1-15, with the errata fixed.

    For every attribute take its f most frequent values (weighted), with
    f = ceil(K^(1/m)) (the text's floor makes D1 and D4 loop forever); then draw
    candidates whose j-th value is one of attribute j's f values, uniformly,
    and keep each new one until there are K (the text's ``|C0| <= K`` would
    produce K + 1). Ties go to the smaller code.

    Without ``domain_sizes`` only values that occur in ``X`` are ranked; with
    it, every value of the declared domain is (one that does not occur has
    frequency 0), which the text leaves open.

    Parameters
    ----------
    X : array-like (n, m), integer codes
    n_clusters : int >= 1, K
    random_state : None, int or Generator
    sample_weight : None or (n,) non-negative weights
    domain_sizes : None or m ints, the public schema
    max_draws : int, the most candidate draws

    Returns
    -------
    centres : int64 (K, m)

    Raises ValueError when fewer than K distinct candidates exist.

    Examples
    --------
    >>> X = np.array([[0, 0], [0, 0], [0, 1], [2, 2], [2, 2], [1, 2]])
    >>> frequent_value_centres(X, 2, random_state=0).shape
    (2, 2)
    """
    X, sizes = domain_from_data(X) if domain_sizes is None else categorical_input(X, domain_sizes)
    k = check_n_clusters(n_clusters)
    w = check_sample_weight(sample_weight, X.shape[0])
    return frequent_value_draw(
        X,
        k,
        check_random_state(random_state),
        w,
        None if domain_sizes is None else sizes,
        check_int(max_draws, "max_draws", minimum=1),
    )


class KModes(CategoricalClusterer):
    """Weighted k-modes with Hamming distance (not private).

    Parameters
    ----------
    n_clusters : int, default=8
        K, the number of clusters (>= 1, at most the number of records).
    init : {"random", "frequent"} or array_like of shape (n_clusters, m), default="random"
        "random": distinct records drawn with probability proportional to weight;
        "frequent": :func:`frequent_value_centres` (Peng et al. Alg. 4).
    max_iter : int, default=100
        The most update steps (>= 1; T in Peng et al.).
    n_init : int, default=1
        Runs from different initial centres (>= 1); the lowest cost wins.
    domain_sizes : sequence of m ints, "data" or None, default=None
        The attribute domains; None or "data" takes them from the data.
    random_state : None, int, SeedSequence, numpy Generator or "os", default=None
        The randomness of the noise and of the draws; an int gives the same release every time.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, m), int64
        The modes of the best run.
    labels_ : ndarray of shape (n_samples,)
        The nearest centre of each fitted record (ties: lowest index).
    cost_ : float
        The weighted sum of Hamming distances to the nearest centre.
    n_iter_ : int
        Update steps of the best run (it stops early when the centres repeat).
    domain_sizes_ : tuple of int
        The domain used.
    n_features_in_ : int
        The number of attributes seen in fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        The column names, when X is a DataFrame with string column names.

    Examples
    --------
    >>> X = np.array([[0, 0], [0, 0], [0, 1], [2, 2], [2, 2], [1, 2]])
    >>> km = KModes(2, domain_sizes=(3, 3), random_state=0).fit(X)
    >>> sorted(km.cluster_centers_.tolist())
    [[0, 0], [2, 2]]
    >>> km.cost_
    2.0
    """

    # Checked by validate_params at the start of fit; with the data, fit then checks
    # n_clusters <= n_samples, X against domain_sizes and an init array's shape and codes.
    _parameter_constraints = {
        "n_clusters": NClusters(),
        "init": ChoiceOrArray("random", "frequent", numeric=False),
        "max_iter": Int(minimum=1),
        "n_init": Int(minimum=1),
        "domain_sizes": Optional(PublicInput(DOMAIN_SIZES_WHAT, DomainSizes())),  # None: read off the data
        "random_state": RandomState(),
    }

    def __init__(self, n_clusters=8, *, init="random", max_iter=100, n_init=1, domain_sizes=None, random_state=None):
        self.n_clusters = n_clusters
        self.init = init
        self.max_iter = max_iter
        self.n_init = n_init
        self.domain_sizes = domain_sizes
        self.random_state = random_state

    def _initial_centres(self, X, w, sizes, rng):
        if isinstance(self.init, str):  # "random" or "frequent", checked by the table
            if self.init == "random":
                return distinct_weighted_rows(X, w, self.n_clusters, rng)
            return frequent_value_draw(X, self.n_clusters, rng, w)
        centres = np.asarray(self.init)
        if centres.shape != (self.n_clusters, len(sizes)):
            raise ValueError(f"init array must have shape ({self.n_clusters}, {len(sizes)}), got {centres.shape}")
        return categorical_input(centres, sizes, name="init")[0]

    def fit(self, X, y=None, sample_weight=None):
        """Fit k-modes to integer-coded records.

        Parameters
        ----------
        X : array-like of shape (n_samples, m), integer codes
        y : ignored
        sample_weight : None or (n_samples,) non-negative weights

        Returns
        -------
        self
        """
        params = validate_params(self)
        X, sizes, _ = self._fit_input(X)
        check_n_clusters(self.n_clusters, X.shape[0])
        max_iter, n_init = params["max_iter"], params["n_init"]
        w = check_sample_weight(sample_weight, X.shape[0])
        rng = check_random_state(self.random_state)
        best = None
        for _ in range(n_init):
            centres, n_iter = lloyd(X, w, self._initial_centres(X, w, sizes, rng), max_iter, sizes)
            labels, dist = nearest(X, centres, "hamming")
            cost = float(np.dot(w, dist))
            if best is None or cost < best[0]:
                best = (cost, centres, labels, n_iter)
        self.cost_, self.cluster_centers_, self.labels_, self.n_iter_ = best
        self.domain_sizes_ = sizes
        return self

    def fit_predict(self, X, y=None, sample_weight=None):
        """``fit(X, sample_weight=...)``, then the nearest centre of each record.

        Returns
        -------
        labels_ : ndarray of shape (n_samples,)
        """
        return self.fit(X, sample_weight=sample_weight).labels_


def _noisy_modes_lloyd(rows, multiplicity, centres, sizes, T, eps_iter, rng, noise, ledger):
    """(centres, iterations run): up to T noisy-count mode updates, until the released modes repeat."""
    k, m = centres.shape[0], len(sizes)
    n_iter = 0
    for n_iter in range(1, T + 1):
        labels, _ = nearest(rows, centres, "hamming")
        counts = value_counts(rows, labels, multiplicity, k, sizes)
        ledger.spend(
            eps_iter,
            f"iteration {n_iter}: value counts per cluster and attribute, "
            f"L1 sensitivity {m}, Laplace scale {laplace_scale(m, eps_iter):.4g}",
        )
        # One release per iteration: all m attributes' counts, L1 sensitivity m together.
        noisy = laplace_mechanism(np.concatenate([c.ravel() for c in counts]), m, eps_iter, rng, noise=noise)
        noisy = np.split(noisy, np.cumsum([c.size for c in counts])[:-1])
        new = modes_from_counts([v.reshape(c.shape) for v, c in zip(noisy, counts)])
        if np.array_equal(new, centres):
            break
        centres = new
    return centres, n_iter


class DPKModes(PrivateCategoricalClusterer):
    """DP-modes-Lloyd: k-modes whose every update is epsilon-DP (Nguyen 2018).

    Each of at most T = ``max_iter`` iterations assigns records to the nearest
    centre and releases, per cluster g, attribute j and value v, the count
    n_gj(v) + Lap(m T / epsilon) (through :func:`~dpclust_lib.mechanisms.laplace_mechanism`);
    the new mode is the noisy argmax. Adding or removing one record changes one
    count in each of the m attributes, so the L1 sensitivity of an iteration's
    counts is m, and with epsilon / T per iteration (sequential composition) the
    scale is m T / epsilon. Stopping early (centres unchanged) is decided on
    released values only; the budget of the iterations not run is not spent
    (``epsilon_spent_``), but the guarantee is that of all T
    (``epsilon_guaranteed_`` = epsilon, the same for every run).

    Privacy: epsilon-DP under add/remove-one neighbours (``neighbouring_``;
    replacing a record costs up to 2 epsilon). The number of records is private:
    K is not compared with it (a cluster without records releases noisy zeros),
    and an empty X, of shape (0, m), releases noise alone.

    Parameters
    ----------
    n_clusters : int, default=8
        K, the number of clusters (>= 1, at most the number of points of the domain). It
        is not compared with the number of records, which is private.
    epsilon : float, default=1.0
        The total privacy budget (> 0).
    max_iter : int, default=5
        T, the most iterations (>= 1); each gets epsilon / T.
    init : {"domain", "records"}, default="domain"
        "domain": K distinct points drawn uniformly from the declared domain,
        independent of the data (costs no budget). "records": K distinct records
        of the data, as Peng et al. describe the baseline; not covered by epsilon
        (warns with :class:`PrivacyLeakWarning`; ``epsilon_guaranteed_`` = inf).
    domain_sizes : sequence of m ints or "data", required
        The public schema, k_j >= 2 categories of attribute j. "data" reads it
        off the records (not private: PrivacyLeakWarning, epsilon_guaranteed_ = inf).
    random_state : None, int, SeedSequence, numpy Generator or "os", default=None
        The randomness of the noise and of the draws; an int gives the same release every time.
    noise : {"exact", "float"}, default="exact"
        The Laplace noise drawn: exact discrete Laplace on a grid, or textbook
        floating-point Laplace (leaks through its low bits: PrivacyLeakWarning,
        epsilon_guaranteed_ = inf).

    accountant : BudgetAccountant or None, default=None
        A budget shared with other fits (:class:`~dpclust_lib.accounting.BudgetAccountant`): charged this fit's
        whole guarantee before any record is read; a fit that would pass its budget is refused.
    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, m), int64
        The released modes.
    initial_centers_ : ndarray of shape (n_clusters, m), int64
        The modes the iterations started from.
    n_iter_ : int
        Iterations run (it stops early when the released modes repeat).
    ledger_ : PrivacyLedger
        One entry per iteration.
    noise_scale_ : float
        m T / epsilon, the Laplace scale of every count.
    epsilon_spent_ : float
        What this run's releases spent, n_iter_ * epsilon / T (less than epsilon when it stops
        early). It bounds the loss of this outcome only.
    epsilon_guaranteed_ : float
        The ex-ante guarantee of the configured mechanism, T * (epsilon / T) = epsilon-DP under
        add/remove-one neighbours, the same for every data set and every run (inf with a leaky
        option). The figure to publish.
    neighbouring_ : str
        "add/remove one record" (replacing one record costs up to 2 epsilon).
    domain_sizes_ : tuple of int
        The domain used.
    n_features_in_ : int
        The number of attributes seen in fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        The column names, when X is a DataFrame with string column names.

    Notes
    -----
    Labels of the fitted records are not kept (they are not private): use
    ``predict(X)`` or :meth:`exact_diagnostics`.

    Examples
    --------
    >>> X = np.random.default_rng(0).integers(0, 3, size=(200, 4))
    >>> est = DPKModes(2, epsilon=1.0, domain_sizes=(3, 3, 3, 3), random_state=0).fit(X)
    >>> est.cluster_centers_.shape, est.noise_scale_
    ((2, 4), 20.0)
    >>> est.epsilon_spent_ <= 1.0, est.neighbouring_
    (True, 'add/remove one record')
    """

    # Checked by validate_params at the start of fit; with the data, fit then checks
    # X against domain_sizes (or reads them with "data"), never n_clusters against the private n.
    _parameter_constraints = {
        "n_clusters": NClusters(),
        "epsilon": Epsilon(),
        "max_iter": Int(minimum=1, maximum=MAX_RELEASES),
        "init": Choice("domain", "records"),
        "domain_sizes": PRIVATE_DOMAIN_SIZES,
        "random_state": RandomState(),
        "noise": Choice(*NOISE_KINDS),
        "accountant": ACCOUNTANT,
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        epsilon=1.0,
        max_iter=5,
        init="domain",
        domain_sizes=None,
        random_state=None,
        noise="exact",
        accountant=None,
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.max_iter = max_iter
        self.init = init
        self.domain_sizes = domain_sizes
        self.random_state = random_state
        self.noise = noise
        self.accountant = accountant

    def fit(self, X, y=None):
        """Run DP-modes-Lloyd on integer-coded records.

        Parameters
        ----------
        X : array-like of shape (n_samples, m), integer codes inside ``domain_sizes``
        y : ignored

        Returns
        -------
        self
        """
        params = validate_params(self)
        eps = params["epsilon"]
        charge_accountant(self, eps)  # before any record is read
        noise, leaky_noise = resolve_noise(self.noise)
        X, sizes, leaky = self._fit_input(X, allow_no_records=True)
        leaky = leaky or leaky_noise
        k = check_n_clusters(self.n_clusters)  # never against the number of records: it is private
        T = params["max_iter"]
        rng = check_random_state(self.random_state)
        m = len(sizes)
        eps_iter = share_at_most(eps, fractions.Fraction(1, T))  # rounded down: T iterations spend <= eps
        ledger = PrivacyLedger(eps)
        # The value counts only depend on how many records are equal: work on the
        # distinct records with their multiplicities (same counts, far fewer distances).
        rows, _, multiplicity = unique_rows(X)
        if self.init == "records":
            self._leaky(
                "init='records' picks the initial centres among the private records; "
                "init='domain' draws them from the public domain instead."
            )
            leaky = True
            centres = distinct_weighted_rows(rows, multiplicity, k, rng)
        else:
            centres = domain_centres(sizes, k, rng)
        self.initial_centers_ = centres
        centres, n_iter = _noisy_modes_lloyd(rows, multiplicity, centres, sizes, T, eps_iter, rng, noise, ledger)
        self.cluster_centers_ = centres
        self.n_iter_ = n_iter
        self.ledger_ = ledger
        self.epsilon_spent_ = ledger.spent
        # Ex ante: the T iterations the configuration allows, however many this run needed.
        self.epsilon_guaranteed_ = float("inf") if leaky else compose([eps_iter] * T)
        self.neighbouring_ = CENTRAL
        self.noise_scale_ = laplace_scale(m, eps_iter)
        self.domain_sizes_ = sizes
        return self

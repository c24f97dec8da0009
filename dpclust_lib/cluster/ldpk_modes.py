"""LDPK-modes: k-modes under local d-privacy (Peng, Chen, Xun, Computer Science 2021).

The protocol, split the way it runs:

User side
    :func:`user_perturb` -- Alg. 1: each user perturbs their own record with the
    Hamming-distance randomized response and sends only the report.
Server side (sees the reports and the public schema, nothing else)
    :func:`server_aggregate` -- Alg. 2: histogram of the reports over the joint
    class index (line 3, corrected), the unbiased estimate P^-1 c* (line 11, one
    attribute at a time, P being a Kronecker product), then the paper's
    projection back to counts (lines 12-17: negatives to 0, rescale to n, round up);
    :func:`server_synthetic_data` -- Alg. 3: the synthetic data set (lines 4-9,
    corrected), kept as weighted unique records (:func:`materialise` expands it
    into rows);
    :func:`server_cluster` -- Alg. 4: frequent-value initial centres (lines 1-15),
    then k-modes (lines 16-30).

:class:`LDPKModes` runs the whole protocol on a data set, simulating its users.
Records are integer codes, ``X[:, j]`` in ``0 .. k_j - 1``.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd

from ..accounting import PrivacyLedger, compose, share_at_most
from ..frequency import LDPFO, clip_and_normalise, joint_records
from ..validation import (
    Bool,
    Choice,
    Epsilon,
    Int,
    NClusters,
    RandomState,
    check_array,
    check_bool,
    check_categorical,
    check_choice,
    check_domain_sizes,
    check_int,
    check_n_clusters,
    check_random_state,
    validate_params,
)
from ._base import ACCOUNTANT, LOCAL, charge_accountant
from ._common import PRIVATE_DOMAIN_SIZES, PrivateCategoricalClusterer, frequent_value_draw, lloyd, unique_rows

__all__ = ["LDPKModes", "user_perturb", "server_aggregate", "server_synthetic_data", "server_cluster", "materialise"]

ROUNDINGS = ("ceil", "none", "largest_remainder")


def user_perturb(X, domain_sizes, epsilon, random_state=None):
    """User side, Alg. 1: every row is one user's record; returns the reports, shape (n, m).

    Pr[report y | record x] is proportional to e^{-epsilon d(x, y)} (Eq. 4), sampled
    as m independent k_j-ary randomized responses (:class:`~dpclust_lib.frequency.LDPFO`).

    Parameters
    ----------
    X : array_like of shape (n_users, m)
        Integer codes, one record per user.
    domain_sizes : sequence of m ints
        The public schema.
    epsilon : float
        Privacy per unit of Hamming distance (> 0).
    random_state : None, int, SeedSequence, numpy Generator or "os", default=None

    Returns
    -------
    ndarray of shape (n_users, m), int64
        The reports, one perturbed record per user.

    Examples
    --------
    >>> X = np.array([[0, 1], [2, 0]])
    >>> reports = user_perturb(X, (3, 2), 1.0, random_state=0)
    >>> reports.shape, bool(np.all((reports >= 0) & (reports < [3, 2])))
    ((2, 2), True)
    """
    return LDPFO(domain_sizes, epsilon).perturb(X, random_state)


def _check_projection(projection):
    return check_bool(projection, "projection")


def server_aggregate(reports, domain_sizes, epsilon, projection=True, rounding="ceil"):
    """Server side, Alg. 2: estimate how many users hold each record of the joint domain.

    Parameters
    ----------
    reports : (n, m) perturbed records from :func:`user_perturb`
    domain_sizes : the public schema (m ints)
    epsilon : the users' privacy parameter per unit of Hamming distance
    projection : bool
        True: the paper's lines 12-17 (negatives set to 0, rescaled to total n,
        rounded by ``rounding``). False: the raw unbiased estimate is kept.
    rounding : {"ceil", "none", "largest_remainder"}, see
        :func:`~dpclust_lib.frequency.clip_and_normalise` ("ceil" is the paper's)

    Returns
    -------
    raw : ndarray of shape ``domain_sizes``, the unbiased estimate P^-1 c* (line 11)
    counts : what the synthetic data is built from (a copy of ``raw`` without projection)

    Examples
    --------
    >>> X = np.random.default_rng(0).integers(0, 2, size=(1000, 2))
    >>> reports = user_perturb(X, (2, 2), 2.0, random_state=0)
    >>> raw, counts = server_aggregate(reports, (2, 2), 2.0)
    >>> raw.shape, round(float(raw.sum()))
    ((2, 2), 1000)
    >>> bool(np.all(counts >= 0))
    True
    """
    projection = _check_projection(projection)
    check_choice(rounding, "rounding", set(ROUNDINGS))
    oracle = LDPFO(domain_sizes, epsilon)
    tally = oracle.count(reports)
    raw = oracle.estimate(tally)
    if not projection:
        return raw, raw.copy()
    return raw, clip_and_normalise(raw, tally.n, rounding=rounding)


def server_synthetic_data(counts, domain_sizes):
    """Server side, Alg. 3: the synthetic data set as weighted unique records.

    Every cell of the joint domain with a non-zero count becomes one record (the
    mixed-radix decoding of its index, Alg. 3 lines 4-9 corrected) whose weight
    is the count. Never materialises the rows; :func:`materialise` does.

    Parameters
    ----------
    counts : array_like of shape ``domain_sizes``
        The counts of the joint domain (from :func:`server_aggregate`).
    domain_sizes : sequence of m ints
        The public schema.

    Returns
    -------
    records : int64 (r, m), in joint-index order
    weights : float (r,), the counts (negative ones only if ``counts`` is an unprojected estimate)

    Examples
    --------
    >>> records, weights = server_synthetic_data(np.array([[3.0, 0.0], [0.0, 2.0]]), (2, 2))
    >>> records.tolist(), weights.tolist()
    ([[0, 0], [1, 1]], [3.0, 2.0])
    """
    sizes = check_domain_sizes(domain_sizes)
    flat = check_array(np.ravel(counts), "counts", ndim=1).astype(float)
    if flat.size != int(np.prod(sizes)):
        raise ValueError(f"counts has {flat.size} cells but domain_sizes={sizes} has {int(np.prod(sizes))}")
    cells = np.flatnonzero(flat)
    return joint_records(cells, sizes), flat[cells]


def materialise(records, weights):
    """The synthetic data as rows, each record repeated ``weight`` times (Alg. 3's literal output).

    The weights must be non-negative integers (a projection with rounding "ceil"
    or "largest_remainder").

    Parameters
    ----------
    records : array_like of shape (r, m)
    weights : array_like of shape (r,)
        Non-negative integer counts.

    Returns
    -------
    ndarray of shape (sum(weights), m)
        Each record repeated weight times.

    Examples
    --------
    >>> materialise(np.array([[0, 1], [1, 1]]), np.array([2.0, 1.0])).tolist()
    [[0, 1], [0, 1], [1, 1]]
    """
    w = check_array(weights, "weights", ndim=1)
    if np.any(w < 0) or np.any(w != np.round(w)):
        i = int(np.argmax((w < 0) | (w != np.round(w))))
        raise ValueError(f"weights must be non-negative integers to materialise rows, got weights[{i}]={w[i]!r}")
    records = np.asarray(records)
    if records.ndim != 2 or records.shape[0] != w.shape[0]:
        raise ValueError(
            f"records must be 2-D with one row per weight, got shape {records.shape} for {w.shape[0]} weights"
        )
    return np.repeat(records, w.astype(np.int64), axis=0)


def server_cluster(records, weights, domain_sizes, n_clusters, max_iter, random_state=None):
    """Server side, Alg. 4: frequent-value initial centres (lines 1-15), then k-modes (16-30).

    f = ceil(K^(1/m)) and |C0| < K (the text's floor and <= are errata); the f
    most frequent values of an attribute are ranked among all values of the public
    domain (one missing from the synthetic data has frequency 0); at most
    ``max_iter`` = T update steps, stopping early when the centres repeat. The
    weights may be signed (an unprojected estimate): the value counts are linear in them.

    Parameters
    ----------
    records : array_like of shape (r, m)
        The distinct synthetic records.
    weights : array_like of shape (r,)
        Their counts (signed when unprojected).
    domain_sizes : sequence of m ints
        The public schema.
    n_clusters : int
        K.
    max_iter : int
        T, the most update steps.
    random_state : None, int, SeedSequence, numpy Generator or "os", default=None

    Returns
    -------
    centres : int64 (K, m); initial_centres : int64 (K, m); n_iter : int

    Examples
    --------
    >>> records = np.array([[0, 0], [0, 1], [2, 2], [1, 2]])
    >>> weights = np.array([5.0, 1.0, 5.0, 1.0])
    >>> centres, initial, n_iter = server_cluster(records, weights, (3, 3), 2, 10, random_state=0)
    >>> sorted(centres.tolist())
    [[0, 0], [2, 2]]
    """
    sizes = check_domain_sizes(domain_sizes)
    records = check_categorical(records, sizes, name="records")
    w = check_array(weights, "weights", ndim=1)
    if w.shape[0] != records.shape[0]:
        raise ValueError(f"weights has {w.shape[0]} entries but there are {records.shape[0]} records")
    if not np.any(w > 0):
        raise ValueError("weights has no positive entry: the synthetic data set is empty")
    k = check_n_clusters(n_clusters)
    distinct = len(unique_rows(records[w != 0])[0])
    if k > distinct:
        raise ValueError(f"n_clusters={k} is larger than the number of distinct synthetic records ({distinct})")
    T = check_int(max_iter, "max_iter", minimum=1)
    rng = check_random_state(random_state)
    initial = frequent_value_draw(records, k, rng, w.astype(float), sizes)
    centres, n_iter = lloyd(records, w.astype(float), initial, T, sizes)
    return centres, initial, n_iter


class LDPKModes(PrivateCategoricalClusterer):
    """LDPK-modes (Peng et al. 2021): k-modes on a synthetic data set built from LDP reports.

    ``fit(X)`` simulates the protocol: every row of ``X`` is one user, who sends
    only a perturbed record (:func:`user_perturb`); the server estimates the
    histogram of records (:func:`server_aggregate`), builds the synthetic data
    (:func:`server_synthetic_data`) and clusters it (:func:`server_cluster`). The
    server touches the users once, so the number of k-modes iterations costs no
    privacy.

    Privacy: each report satisfies epsilon_d-local d-privacy with the Hamming
    distance, Pr[y | x] <= e^{epsilon_d d(x, x')} Pr[y | x']. Two records that differ
    in all m attributes are m * epsilon_d apart, so the plain LDP level of a
    report, for any two records of one user, is m * epsilon_d
    (``epsilon_guaranteed_``). With ``budget="total"`` (the default) ``epsilon`` is
    that plain LDP level, and epsilon_d = epsilon / m (rounded down); with
    ``budget="per_attribute"`` (the paper's parameter, asked for by name)
    ``epsilon`` is epsilon_d and the guarantee is m * epsilon. The neighbouring relation is local
    (``neighbouring_``): any two records of one user. The number of users is
    public in the local model (the server receives a report from each), so K is
    checked against it; nothing else observable depends on the records but the
    reports.

    Parameters
    ----------
    n_clusters : int, default=8
        K, the number of clusters (>= 1, at most the number of users, which is public in the local model).
    epsilon : float, default=1.0
        The total LDP guarantee of a user's report (> 0), or with ``budget="per_attribute"`` the paper's
        epsilon, per unit of Hamming distance.
    budget : {"total", "per_attribute"}, default="total"
        What ``epsilon`` is: the whole guarantee (``epsilon_guaranteed_ <= epsilon``), or the paper's
        per-unit d-privacy parameter (``epsilon_guaranteed_ = m * epsilon``, rounded up).
    max_iter : int, default=5
        T, the most k-modes update steps (>= 1).
    projection : bool, default=True
        Which counts the synthetic data is built from. True: the paper's
        post-processing of the unbiased estimate (Alg. 2 lines 12-17: negatives
        to 0, rescaled to n, rounded by ``rounding``), so the synthetic data is a
        data set of about n rows. False: the raw unbiased estimate itself, kept as
        signed weights; every per-cluster value count k-modes computes is then an
        unbiased estimate of the count on the users' true records.
    rounding : {"ceil", "none", "largest_remainder"}, default="ceil"
        Used when ``projection``: "ceil" (the paper's) rounds every positive cell
        up, so the synthetic data can hold more than n rows.
    domain_sizes : sequence of m ints or "data", required
        The public schema, k_j >= 2 categories of attribute j. "data" reads it
        off the records (not private: PrivacyLeakWarning, epsilon_guaranteed_ = inf).
    random_state : None, int, SeedSequence, numpy Generator or "os", default=None
        Used for the users' noise, then the initial centres.

    accountant : BudgetAccountant or None, default=None
        A budget shared with other fits (:class:`~dpclust_lib.accounting.BudgetAccountant`): charged this fit's
        whole guarantee before any record is read; a fit that would pass its budget is refused.
    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, m), int64
        The modes found on the synthetic data.
    initial_centers_ : ndarray of shape (n_clusters, m), int64
        Alg. 4 lines 1-15.
    n_iter_ : int
        k-modes update steps run (<= max_iter).
    epsilon_spent_ : float
        m * epsilon_d rounded up (one report per user; the clustering is post-processing): equal to the guarantee.
    epsilon_guaranteed_ : float
        m * epsilon_d rounded up, the plain LDP level of a report for any two records of one user, the same
        for every data set and every run (inf with domain_sizes="data"). The figure to publish.
    d_epsilon_ : float
        epsilon_d, the d-privacy parameter per unit of Hamming distance the users' reports were drawn with.
    ldp_epsilon_ : float
        m * epsilon_d (the d-privacy arithmetic alone).
    neighbouring_ : str
        "any two records of one user".
    ledger_ : PrivacyLedger
        The one release: a report per user.
    raw_estimate_ : ndarray of shape ``domain_sizes``
        The unbiased estimate of the histogram of records.
    estimate_ : ndarray of shape ``domain_sizes``
        The counts the synthetic data was built from (projected or raw).
    synthetic_data_ : pandas.DataFrame
        One row per distinct synthetic record, with its ``count``.
    domain_sizes_ : tuple of int
        The domain used.
    n_features_in_ : int
        The number of attributes seen in fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        The column names, when X is a DataFrame with string column names.

    Notes
    -----
    The labels of the users' true records are not something the server can
    know, and are not kept: use ``predict(X)`` or :meth:`exact_diagnostics`.

    Examples
    --------
    >>> X = np.random.default_rng(0).integers(0, 3, size=(300, 2))
    >>> est = LDPKModes(2, epsilon=2.0, budget="per_attribute", domain_sizes=(3, 3), random_state=0).fit(X)
    >>> est.cluster_centers_.shape, est.d_epsilon_, est.epsilon_spent_, est.epsilon_guaranteed_
    ((2, 2), 2.0, 4.0, 4.0)
    >>> LDPKModes(2, epsilon=4.0, domain_sizes=(3, 3), random_state=0).fit(X).d_epsilon_  # the same reports
    2.0
    >>> list(est.synthetic_data_.columns)
    ['x0', 'x1', 'count']
    """

    # Checked by validate_params at the start of fit; with the data, fit then checks
    # n_clusters <= n_samples and X against domain_sizes (or reads them with "data").
    _parameter_constraints = {
        "n_clusters": NClusters(),
        "epsilon": Epsilon(),
        "budget": Choice("total", "per_attribute"),
        "max_iter": Int(minimum=1),
        "projection": Bool(),
        "rounding": Choice(*ROUNDINGS),
        "domain_sizes": PRIVATE_DOMAIN_SIZES,
        "random_state": RandomState(),
        "accountant": ACCOUNTANT,
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        epsilon=1.0,
        budget="total",
        max_iter=5,
        projection=True,
        rounding="ceil",
        domain_sizes=None,
        random_state=None,
        accountant=None,
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.budget = budget
        self.max_iter = max_iter
        self.projection = projection
        self.rounding = rounding
        self.domain_sizes = domain_sizes
        self.random_state = random_state
        self.accountant = accountant

    def fit(self, X, y=None):
        """Simulate the protocol on the users' records.

        Parameters
        ----------
        X : array-like of shape (n_users, m), integer codes inside ``domain_sizes``, one row per user
        y : ignored

        Returns
        -------
        self
        """
        params = validate_params(self)
        total, projection, T = params["epsilon"], params["projection"], params["max_iter"]
        per_attribute = params["budget"] == "per_attribute"
        declared = params["domain_sizes"]  # "data" is leaky: the accountant is charged inf whatever is passed
        charge_accountant(self, compose([total] * len(declared)) if per_attribute else total)  # before any record
        X, sizes, leaky = self._fit_input(X)
        k = check_n_clusters(self.n_clusters, X.shape[0])
        rng = check_random_state(self.random_state)
        m = len(sizes)
        # budget="total": epsilon_d = epsilon / m rounded down, so that m epsilon_d <= epsilon exactly (m is public)
        eps = total if per_attribute else share_at_most(total, Fraction(1, m))

        reports = user_perturb(X, sizes, eps, rng)  # what leaves the users' devices
        raw, counts = server_aggregate(reports, sizes, eps, projection, self.rounding)
        records, weights = server_synthetic_data(counts, sizes)
        centres, initial, n_iter = server_cluster(records, weights, sizes, k, T, rng)

        ldp_epsilon = compose([eps] * m)
        ledger = PrivacyLedger(ldp_epsilon)
        ledger.spend(
            ldp_epsilon,
            f"one report per user (Alg. 1): {eps:g} per unit of Hamming distance, "
            f"{ldp_epsilon:g}-LDP; aggregation and clustering are post-processing",
        )
        names = [str(c) for c in getattr(self, "feature_names_in_", [f"x{j}" for j in range(m)])]
        synthetic = pd.DataFrame(records, columns=names)
        synthetic["count" if "count" not in names else "synthetic_count"] = weights

        self.cluster_centers_ = centres
        self.initial_centers_ = initial
        self.n_iter_ = n_iter
        self.ledger_ = ledger
        self.epsilon_spent_ = ledger.spent
        self.d_epsilon_ = eps
        self.ldp_epsilon_ = ldp_epsilon
        self.epsilon_guaranteed_ = float("inf") if leaky else ldp_epsilon
        self.neighbouring_ = LOCAL
        self.raw_estimate_ = raw
        self.estimate_ = counts
        self.synthetic_data_ = synthetic
        self.domain_sizes_ = sizes
        return self

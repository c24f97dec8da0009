"""SamplingLDPKModes: LDP k-modes with attribute sampling (Zhang et al. 2022).

ZHANG Shao-bo, YUAN Liu-jie, MAO Xue-jie, ZHU Guo-ming. Privacy Protection
Method for K-modes Clustering Data with Local Differential Privacy. Acta
Electronica Sinica, 2022, 50(9): 2181-2188. The paper calls the method LDPK.

One round of the protocol:

User side, :func:`user_reports` (Alg. 1)
    Each user finds the nearest of the K public centres (Hamming), r, and samples
    one attribute j uniformly (line 1); one-hot encodes its value of j (line 2)
    and sends every bit through optimised unary encoding (p = 1/2,
    q = 1/(e^eps + 1); lines 3-7); reports (r, j, b') (line 8). The cluster
    index r goes in the clear, as in the paper (the server's estimator needs
    |C_r|). With ``index_epsilon`` it is randomised with k-ary randomized
    response (GRR over the K indices) instead.
Server side, :func:`server_update` (Alg. 2)
    Per cluster r and attribute j (lines 1-2), value w: the bit sum s (line 3)
    and the estimate g' = (s - |C_r| q / d) / (p - q) (lines 4-5, Eq. 9,
    :func:`server_estimates`); the new mode of (r, j) is argmax_w g' (line 6),
    and the new centres are returned (lines 7-8). With a randomised index the
    bit sums are first un-mixed with the inverse GRR matrix (the correction
    derived in :func:`server_estimates`).

:func:`report_distribution` gives the exact distribution of one report (for
testing the user side against its definition). :class:`SamplingLDPKModes`
runs rounds until the centres stop changing or T rounds, and accounts the
budget explicitly (``budget="per_round"`` or ``"split"``).
"""

from __future__ import annotations

import fractions
from dataclasses import dataclass

import numpy as np

from .._distances import nearest
from ..accounting import PrivacyLedger, compose, share_at_most
from ..mechanisms import grr_perturb, grr_probabilities, oue_pq, ue_perturb, unary_encode
from ..noise import double_at_most
from ..validation import (
    MAX_RELEASES,
    Bool,
    Choice,
    ChoiceOrArray,
    Epsilon,
    Fraction,
    Int,
    NClusters,
    RandomState,
    check_choice,
    check_domain_sizes,
    check_epsilon,
    check_n_clusters,
    check_random_state,
    validate_params,
)
from ._base import ACCOUNTANT, LOCAL, charge_accountant
from ._common import (
    PRIVATE_DOMAIN_SIZES,
    PrivateCategoricalClusterer,
    categorical_input,
    distinct_weighted_rows,
    domain_centres,
)

# Exported at the package top level (star import): the estimator and its report type. The protocol
# functions keep their module namespace, dpclust_lib.cluster.sampling_kmodes, where their names are clear.
__all__ = ["SamplingLDPKModes", "SamplingReports"]


@dataclass(frozen=True)
class SamplingReports:
    """What the users of one round send to the server.

    Attributes
    ----------
    cluster : (n,) int64, the index r of the user's nearest centre (or its
        GRR-randomised version when the index is protected)
    attribute : (n,) int64, the sampled attribute j
    bits : (n, max_j k_j) uint8, the perturbed one-hot vector b'. A user sends
        only the first k_j bits of its row; the rest are zero padding, never sent.

    Examples
    --------
    >>> X = np.array([[0, 1], [2, 0], [1, 1]])
    >>> reports = user_reports(X, np.array([[0, 1], [2, 0]]), (3, 2), 1.0, index_epsilon=1.0, random_state=0)
    >>> len(reports), reports.bits.shape
    (3, (3, 3))
    """

    cluster: np.ndarray
    attribute: np.ndarray
    bits: np.ndarray

    def __len__(self):
        return int(self.cluster.shape[0])


def _check_centres(centres, sizes, name="centres"):
    C = np.asarray(centres)
    if C.ndim != 2 or C.shape[1] != len(sizes):
        raise ValueError(f"{name} must have shape (n_clusters, {len(sizes)}), got {C.shape}")
    return categorical_input(C, sizes, name=name)[0]


def _check_index_epsilon(index_epsilon, n_clusters):
    if index_epsilon is None:
        return None
    if n_clusters < 2:
        raise ValueError(f"a randomised cluster index needs n_clusters >= 2, got n_clusters={n_clusters}")
    return check_epsilon(index_epsilon, name="index_epsilon")


def user_reports(X, centres, domain_sizes, epsilon, index_epsilon=None, random_state=None):
    """User side of one round (Alg. 1), vectorised over the users.

    Parameters
    ----------
    X : (n, d) int codes, one row per user (stays on the user's device)
    centres : (K, d) int codes, the current public centres
    domain_sizes : d ints, the public schema
    epsilon : float > 0, the LDP level of the bit vector (p = 1/2, q = 1/(e^eps + 1))
    index_epsilon : None (the index goes in the clear, as in the paper) or
        float > 0 (the index goes through K-ary randomized response at that level)
    random_state : None, int or Generator

    Returns
    -------
    SamplingReports

    Examples
    --------
    >>> X = np.array([[0, 1], [2, 0], [1, 1]])
    >>> reports = user_reports(X, np.array([[0, 1], [2, 0]]), (3, 2), 1.0, random_state=0)
    >>> reports.cluster.tolist()
    [0, 1, 0]
    >>> reports.bits.shape
    (3, 3)
    """
    X, sizes = categorical_input(X, domain_sizes)
    C = _check_centres(centres, sizes)
    eps = check_epsilon(epsilon)
    index_eps = _check_index_epsilon(index_epsilon, C.shape[0])
    return _user_side(X, C, sizes, eps, index_eps, check_random_state(random_state))


def _user_side(X, C, sizes, eps, index_eps, rng):
    """:func:`user_reports` on checked input (the estimator checks once per fit, not per round)."""
    n, d = X.shape
    p, q = oue_pq(eps)
    r = nearest(X, C, "hamming")[0]
    j = rng.integers(0, d, size=n)
    bits = np.zeros((n, max(sizes)), dtype=np.uint8)
    for a, k in enumerate(sizes):  # one OUE batch per attribute: the bit vectors differ in length
        users = np.flatnonzero(j == a)
        if users.size:
            bits[users, :k] = ue_perturb(unary_encode(X[users, a], k), p, q, rng)
    if index_eps is not None:
        r = grr_perturb(r, C.shape[0], index_eps, rng)
    return SamplingReports(r.astype(np.int64), j.astype(np.int64), bits)


def report_distribution(record, centres, domain_sizes, epsilon, index_epsilon=None, max_outputs=100_000):
    """Exact distribution of one user's report (r, j, b'), by enumeration (small domains only).

    Pr[(r', j, b') | x] = Pr[r' | r(x)] * (1/d) * prod_w Pr[b'[w] | x_j], with
    Pr[b'[w] = 1] = p if w = x_j else q, and Pr[r' | r] = 1 if r' = r (index in
    the clear) or the K-ary GRR probability. Computed from the formula, not by
    sampling, so that the sampler of :func:`user_reports` can be tested against it.

    Parameters
    ----------
    record : array_like of shape (d,)
        One user's record (integer codes).
    centres : array_like of shape (K, d)
        The public centres.
    domain_sizes : sequence of d ints
        The public schema.
    epsilon : float
        The LDP level of the bit vector (> 0).
    index_epsilon : None or float, default=None
        None: the index goes in the clear; a float > 0: through K-ary GRR at that level.
    max_outputs : int, default=100_000
        The most outputs enumerated (a larger domain is refused).

    Returns
    -------
    dict {(r', j, bits as a tuple of k_j ints): probability}; outputs of
    probability 0 are left out.

    Examples
    --------
    >>> dist = report_distribution(np.array([0, 1]), np.array([[0, 1], [1, 0]]), (2, 2), 1.0)
    >>> len(dist), round(float(sum(dist.values())), 12)
    (8, 1.0)
    """
    sizes = check_domain_sizes(domain_sizes)
    x = categorical_input(np.asarray(record).reshape(1, -1), sizes, name="record")[0][0]
    C = _check_centres(centres, sizes)
    K = C.shape[0]
    p, q = oue_pq(check_epsilon(epsilon))
    index_eps = _check_index_epsilon(index_epsilon, K)
    n_outputs = (K if index_eps is not None else 1) * sum(2**k for k in sizes)
    if n_outputs > max_outputs:
        raise ValueError(f"the report space has {n_outputs} outputs, more than max_outputs={max_outputs}")
    r = int(nearest(x[None, :], C, "hamming")[0][0])
    if index_eps is None:
        index_pmf = {r: 1.0}
    else:
        pk, qk = grr_probabilities(K, index_eps)
        index_pmf = {c: (pk if c == r else qk) for c in range(K)}
    out = {}
    for j, k in enumerate(sizes):
        one_hot = np.arange(k) == x[j]
        for code in range(2**k):
            bits = (code >> np.arange(k)) & 1
            pr_bits = np.prod(np.where(one_hot, np.where(bits == 1, p, 1 - p), np.where(bits == 1, q, 1 - q)))
            for c, pr_c in index_pmf.items():
                out[(c, j, tuple(int(b) for b in bits))] = pr_c * pr_bits / len(sizes)
    return out


def tallies(reports, n_clusters, sizes):
    """Bit sums S[r, j, w] and report counts M[r, j] per (cluster label, attribute), reports checked.

    Parameters
    ----------
    reports : SamplingReports
    n_clusters : int, K
    sizes : d ints, the public schema

    Returns
    -------
    S : (K, d, max_j k_j) float; M : (K, d) float

    Examples
    --------
    >>> X = np.array([[0, 1], [1, 0], [1, 1]])
    >>> reports = user_reports(X, np.array([[0, 1], [1, 0]]), (2, 2), 1.0, random_state=0)
    >>> S, M = tallies(reports, 2, (2, 2))
    >>> S.shape, int(M.sum())
    ((2, 2, 2), 3)
    """
    sizes = check_domain_sizes(sizes, name="sizes")
    n_clusters = check_n_clusters(n_clusters)
    if not isinstance(reports, SamplingReports):
        raise TypeError(f"reports must be SamplingReports from user_reports(), got {type(reports).__name__}")
    n, d, width = len(reports), len(sizes), max(sizes)
    if n == 0:
        raise ValueError("reports is empty; at least one report is needed")
    if reports.attribute.shape != (n,) or reports.bits.shape != (n, width):
        raise ValueError(
            f"reports do not match the schema {sizes}: attribute {reports.attribute.shape}, "
            f"bits {reports.bits.shape}, expected ({n},) and ({n}, {width})"
        )
    for name, values, upper in (("cluster", reports.cluster, n_clusters), ("attribute", reports.attribute, d)):
        if values.dtype.kind not in "iu" or values.min() < 0 or values.max() >= upper:
            raise ValueError(f"reports.{name} must hold integers in 0..{upper - 1}")
    if reports.bits.dtype.kind not in "biu" or reports.bits.min() < 0 or reports.bits.max() > 1:
        raise ValueError("reports.bits must hold only 0 and 1")
    cell = reports.cluster * d + reports.attribute
    counts = np.bincount(cell, minlength=n_clusters * d).reshape(n_clusters, d).astype(float)
    sums = np.stack(
        [np.bincount(cell, weights=reports.bits[:, w], minlength=n_clusters * d) for w in range(width)], axis=1
    ).reshape(n_clusters, d, width)
    for j, k in enumerate(sizes):  # bits are >= 0, so a zero sum means zero padding in every report
        if np.any(sums[:, j, k:]):
            raise ValueError(f"reports.bits has a 1 past the {k} bits of attribute {j} (padding must be zero)")
    return sums, counts


def server_estimates(reports, n_clusters, domain_sizes, epsilon, index_epsilon=None, reporters="expected"):
    """Server side: the estimate g' of Eq. 9 per cluster r, attribute j and value w.

    With the index in the clear, s is the sum of bit w over the reports
    (r, j, .), and g' = (s - N q) / (p - q) with N = |C_r| / d (the paper:
    the expected number of reporters of j in cluster r; ``reporters="expected"``)
    or N = the observed number of reports (r, j) (``reporters="observed"``).
    E[g'] = (number of users of C_r whose value of j is w) / d in the first
    case, and the number of such users among the reporters in the second.

    With a randomised index (``index_epsilon``), a report labelled r' came from
    cluster r with GRR probability P[r, r']. Since r' and b' are drawn
    independently given the record, E[S'[r', j, w]] = sum_r P[r, r'] E[S[r, j, w]],
    and the same holds for the report counts. The inverse (P^T)^{-1} =
    (I - q_K J) / (p_K - q_K) therefore gives unbiased estimates of the clear-index
    sums and counts, which go into the same formula.

    Parameters
    ----------
    reports : SamplingReports
    n_clusters : int
        K.
    domain_sizes : sequence of d ints
        The public schema.
    epsilon : float
        The bits' LDP level (> 0).
    index_epsilon : None or float, default=None
        None: the index came in the clear; a float: its GRR level.
    reporters : {"expected", "observed"}, default="expected"
        The N of Eq. 9 (see above).

    Returns
    -------
    list over attributes j of (n_clusters, k_j) float arrays

    Examples
    --------
    >>> X = np.random.default_rng(0).integers(0, 2, size=(500, 2))
    >>> C = np.array([[0, 0], [1, 1]])
    >>> reports = user_reports(X, C, (2, 2), 2.0, random_state=0)
    >>> [g.shape for g in server_estimates(reports, 2, (2, 2), 2.0)]
    [(2, 2), (2, 2)]
    """
    sizes = check_domain_sizes(domain_sizes)
    K = check_n_clusters(n_clusters)
    eps = check_epsilon(epsilon)
    index_eps = _check_index_epsilon(index_epsilon, K)
    check_choice(reporters, "reporters", {"expected", "observed"})
    return estimates_from_tallies(*tallies(reports, K, sizes), sizes, eps, index_eps, reporters)


def estimates_from_tallies(S, M, sizes, eps, index_eps, reporters="expected"):
    """Eq. 9 from the tallies (bit sums S, report counts M, from :func:`tallies`), un-mixing a randomised index first.

    Parameters
    ----------
    S, M : the output of :func:`tallies`
    sizes : d ints, the public schema; eps : the bits' epsilon
    index_eps : None (index in the clear) or the index's GRR epsilon
    reporters : "expected" or "observed", see :func:`server_estimates`

    Returns
    -------
    list over attributes j of (K, k_j) float arrays

    Examples
    --------
    >>> X = np.random.default_rng(0).integers(0, 2, size=(500, 2))
    >>> reports = user_reports(X, np.array([[0, 0], [1, 1]]), (2, 2), 2.0, random_state=0)
    >>> S, M = tallies(reports, 2, (2, 2))
    >>> [g.shape for g in estimates_from_tallies(S, M, (2, 2), 2.0, None)]
    [(2, 2), (2, 2)]
    """
    K = S.shape[0]
    p, q = oue_pq(eps)
    if index_eps is not None:
        pk, qk = grr_probabilities(K, index_eps)
        S = (S - qk * S.sum(axis=0, keepdims=True)) / (pk - qk)
        M = (M - qk * M.sum(axis=0, keepdims=True)) / (pk - qk)
    N = M.sum(axis=1, keepdims=True) / len(sizes) if reporters == "expected" else M  # (K, 1) or (K, d)
    g = (S - (N * q)[:, :, None]) / (p - q)
    return [g[:, a, :k] for a, k in enumerate(sizes)]


def server_update(reports, centres, domain_sizes, epsilon, index_epsilon=None):
    """Server side of one round (Alg. 2): new centres from the round's reports.

    The new value of attribute j in centre r is argmax_w g'[r, j, w] (ties: the
    smallest code). A (cluster label, attribute) pair that received no report
    keeps its current value.

    Parameters
    ----------
    reports : SamplingReports
        The round's reports.
    centres : array_like of shape (K, d)
        The current public centres.
    domain_sizes : sequence of d ints
        The public schema.
    epsilon : float
        The bits' LDP level (> 0).
    index_epsilon : None or float, default=None
        None: the index came in the clear; a float: its GRR level.

    Returns
    -------
    (K, d) int64 array, the new centres

    Examples
    --------
    >>> X = np.random.default_rng(0).integers(0, 2, size=(500, 2))
    >>> C = np.array([[0, 0], [1, 1]])
    >>> reports = user_reports(X, C, (2, 2), 2.0, random_state=0)
    >>> server_update(reports, C, (2, 2), 2.0).shape
    (2, 2)
    """
    sizes = check_domain_sizes(domain_sizes)
    C = _check_centres(centres, sizes)
    eps = check_epsilon(epsilon)
    index_eps = _check_index_epsilon(index_epsilon, C.shape[0])
    return _server_side(reports, C, sizes, eps, index_eps)


def _server_side(reports, C, sizes, eps, index_eps):
    """:func:`server_update` with checked parameters (the reports are still checked)."""
    S, M = tallies(reports, C.shape[0], sizes)
    g = estimates_from_tallies(S, M, sizes, eps, index_eps)
    new = np.column_stack([ga.argmax(axis=1) for ga in g]).astype(np.int64)
    return np.where(M > 0, new, C)  # M: reports received per (label, attribute), before any correction


def _rounds(X, centres, sizes, T, bit_eps, index_eps, rng, ledger):
    """(centres, rounds run): up to T rounds of user reports and server updates, until the centres repeat."""
    p, q = oue_pq(bit_eps)
    k = centres.shape[0]
    n_iter = 0
    for n_iter in range(1, T + 1):
        reports = _user_side(X, centres, sizes, bit_eps, index_eps, rng)
        ledger.spend(bit_eps, f"round {n_iter}: one sampled attribute per user, OUE bits p={p:g}, q={q:.4g}")
        if index_eps is not None:
            ledger.spend(index_eps, f"round {n_iter}: cluster index, GRR over {k} values")
        new = _server_side(reports, centres, sizes, bit_eps, index_eps)
        if np.array_equal(new, centres):
            break
        centres = new
    return centres, n_iter


class SamplingLDPKModes(PrivateCategoricalClusterer):
    """LDP k-modes with attribute sampling (Zhang et al. 2022, "LDPK").

    Every round each user sends (r, j, b') (:func:`user_reports`) and the server
    computes the new centres (:func:`server_update`); rounds stop when the
    centres no longer change, or after T = ``max_iter`` rounds.

    Privacy accounting. Users report in every round, so the rounds compose.
    ``budget="split"`` (the default): each round spends epsilon / T (rounded down),
    so the whole run is epsilon-LDP: ``epsilon`` is the total guarantee.
    ``budget="per_round"`` (asked for by name): each round's report is epsilon-LDP,
    and T rounds cost up to T * epsilon (what the paper appears to do; it does not
    discuss rounds). Within a round, the bit vector gets the share
    ``1 - index_share`` of the round budget and the cluster index the share
    ``index_share``, through K-ary randomized response (sequential composition
    within the report). ``epsilon_guaranteed_`` is what all T rounds compose to,
    fixed before the data is seen; ``epsilon_spent_`` is what the rounds this run
    needed spent (less when the centres stop changing early).

    Privacy: each user's reports together are ``epsilon_guaranteed_``-LDP: any
    two records of one user (``neighbouring_``) give reports whose probabilities
    differ by at most that factor in the exponent. The number of users is public
    in the local model (the server receives a report from each), so K is
    checked against it.

    The cluster index. In the paper r travels in the clear: it is a function of
    the user's whole record and the public centres, so it is not covered by
    epsilon at all (two records with different nearest centres are told apart
    with certainty). ``protect_cluster_index=True`` (the default) randomises it;
    ``protect_cluster_index=False`` reproduces the paper, warns with
    :class:`PrivacyLeakWarning` and gives ``epsilon_guaranteed_`` = inf
    (``epsilon_spent_`` then covers (j, b') only, the paper's arithmetic).

    Parameters
    ----------
    n_clusters : int, default=8
        K, the number of clusters (>= 1; >= 2 with ``protect_cluster_index``; at most the number
        of users, which is public in the local model).
    epsilon : float, default=1.0
        The budget (> 0): the total of one fit, or per round with ``budget="per_round"``.
    max_iter : int, default=5
        T, the most rounds (>= 1).
    budget : {"split", "per_round"}, default="split"
        "split": epsilon / T per round, epsilon in all; "per_round": epsilon per round, up to T * epsilon in all.
    protect_cluster_index : bool, default=True
        Randomise the cluster index r (GRR); False sends it in the clear as the paper does (leaky).
    index_share : float, default=0.5
        The share of each round's budget spent on the index when it is protected, in (0, 1).
    init : {"domain", "records"} or array_like of shape (n_clusters, d), default="domain"
        "domain": K distinct points drawn uniformly from the public domain,
        independent of the data (the same draw as ``DPKModes(init="domain")``
        with the same seed). "records": K distinct records (not covered by
        epsilon: warns, ``epsilon_guaranteed_`` = inf). An array: given public centres.
    domain_sizes : sequence of m ints or "data", required
        The public schema, k_j >= 2 categories of attribute j. "data" reads it
        off the records (not private: PrivacyLeakWarning, epsilon_guaranteed_ = inf).
    random_state : None, int, SeedSequence, numpy Generator or "os", default=None
        The randomness of the noise and of the draws; an int gives the same release every time.

    accountant : BudgetAccountant or None, default=None
        A budget shared with other fits (:class:`~dpclust_lib.accounting.BudgetAccountant`): charged this fit's
        whole guarantee before any record is read; a fit that would pass its budget is refused.
    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, d), int64
        The released centres.
    initial_centers_ : ndarray of shape (n_clusters, d), int64
        The centres of the first round.
    n_iter_ : int
        Rounds run.
    ledger_ : PrivacyLedger
        One entry per round and mechanism.
    round_epsilon_ : float
        The budget of one round.
    bit_epsilon_ : float
        The budget of a round's perturbed bits.
    index_epsilon_ : float or None
        The budget of a round's cluster index (None when it goes in the clear).
    epsilon_spent_ : float
        What the rounds this run needed spent (the sum of ``ledger_``); it bounds this outcome only.
    epsilon_guaranteed_ : float
        The ex-ante LDP guarantee of the configured protocol for any two records of one user, all T
        rounds composed (T * epsilon with "per_round", epsilon with "split"), the same for every
        data set and every run; inf for a leaking setting. The figure to publish.
    neighbouring_ : str
        "any two records of one user".
    domain_sizes_ : tuple of int
        The domain used.
    n_features_in_ : int
        The number of attributes seen in fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        The column names, when X is a DataFrame with string column names.

    Notes
    -----
    Labels of the users' records are not kept (not private): use ``predict(X)``
    or :meth:`exact_diagnostics`.

    Examples
    --------
    >>> X = np.random.default_rng(0).integers(0, 3, size=(300, 3))
    >>> est = SamplingLDPKModes(2, epsilon=1.0, domain_sizes=(3, 3, 3), random_state=0).fit(X)
    >>> est.cluster_centers_.shape, est.epsilon_guaranteed_
    ((2, 3), 1.0)
    >>> est.round_epsilon_, est.index_epsilon_  # 1/5 and 1/10, each rounded down: the parts never sum past 1
    (0.19999999999999998, 0.09999999999999999)
    """

    # Checked by validate_params at the start of fit; with the data, fit then checks
    # n_clusters <= n_samples, X against domain_sizes and an init array's shape and codes; then the
    # cross-parameter rule n_clusters >= 2 with protect_cluster_index.
    _parameter_constraints = {
        "n_clusters": NClusters(),
        "epsilon": Epsilon(),
        "max_iter": Int(minimum=1, maximum=MAX_RELEASES),
        "budget": Choice("split", "per_round"),
        "protect_cluster_index": Bool(),
        "index_share": Fraction(),
        "init": ChoiceOrArray("domain", "records", numeric=False),
        "domain_sizes": PRIVATE_DOMAIN_SIZES,
        "random_state": RandomState(),
        "accountant": ACCOUNTANT,
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        epsilon=1.0,
        max_iter=5,
        budget="split",
        protect_cluster_index=True,
        index_share=0.5,
        init="domain",
        domain_sizes=None,
        random_state=None,
        accountant=None,
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.max_iter = max_iter
        self.budget = budget
        self.protect_cluster_index = protect_cluster_index
        self.index_share = index_share
        self.init = init
        self.domain_sizes = domain_sizes
        self.random_state = random_state
        self.accountant = accountant

    def _initial_centres(self, X, sizes, k, rng):
        """(centres, leaky): the initial centres and whether they were read off the records."""
        if isinstance(self.init, str):  # "domain" or "records", checked by the table
            if self.init == "domain":
                return domain_centres(sizes, k, rng), False
            self._leaky(
                "init='records' picks the initial centres among the private records; "
                "init='domain' draws them from the public domain instead."
            )
            return distinct_weighted_rows(X, np.ones(X.shape[0]), k, rng), True
        C = np.asarray(self.init)
        if C.shape != (k, len(sizes)):
            raise ValueError(f"init array must have shape ({k}, {len(sizes)}), got {C.shape}")
        return _check_centres(C, sizes, name="init"), False

    def fit(self, X, y=None):
        """Run the rounds of the protocol on the users' records.

        Parameters
        ----------
        X : array-like of shape (n_users, d), integer codes inside ``domain_sizes``, one row per user
        y : ignored

        Returns
        -------
        self
        """
        params = validate_params(self)
        eps, share = params["epsilon"], params["index_share"]
        T, protect = params["max_iter"], params["protect_cluster_index"]
        charge_accountant(self, compose([eps] * T) if params["budget"] == "per_round" else eps)  # before any record
        X, sizes, leaky = self._fit_input(X)
        k = check_n_clusters(self.n_clusters, X.shape[0])
        if protect and k < 2:
            raise ValueError(f"protect_cluster_index=True needs n_clusters >= 2, got n_clusters={k}")
        if not protect:
            self._leaky(
                "protect_cluster_index=False: the cluster index r of every report is sent in the clear "
                "(as in the paper); it is a function of the whole record."
            )
            leaky = True
        rng = check_random_state(self.random_state)
        # Each part rounded down, so that the parts of a round, and the T rounds, sum to at most their budget exactly.
        round_eps = eps if self.budget == "per_round" else share_at_most(eps, fractions.Fraction(1, T))
        index_eps = share_at_most(round_eps, fractions.Fraction(share)) if protect else None
        bit_eps = (
            double_at_most(fractions.Fraction(round_eps) - fractions.Fraction(index_eps)) if protect else round_eps
        )
        ledger = PrivacyLedger(compose([eps] * T) if self.budget == "per_round" else eps)
        centres, from_records = self._initial_centres(X, sizes, k, rng)
        leaky = leaky or from_records
        self.initial_centers_ = centres
        centres, n_iter = _rounds(X, centres, sizes, T, bit_eps, index_eps, rng, ledger)
        self.cluster_centers_ = centres
        self.n_iter_ = n_iter
        self.ledger_ = ledger
        self.epsilon_spent_ = ledger.spent
        # Every round is a fresh report of every user, and the rounds compose sequentially. The number
        # of rounds run is decided on released centres, so the guarantee, fixed before the data is seen,
        # is that of all T rounds the configuration allows: the same for every run.
        per_round = [bit_eps] if index_eps is None else [bit_eps, index_eps]
        self.epsilon_guaranteed_ = float("inf") if leaky else compose(per_round * T)
        self.neighbouring_ = LOCAL
        self.round_epsilon_ = round_eps
        self.bit_epsilon_ = bit_eps
        self.index_epsilon_ = index_eps
        self.domain_sizes_ = sizes
        return self

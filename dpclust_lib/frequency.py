"""Local frequency oracles, split the way the protocol is split.

User side
    ``oracle.perturb(values, random_state)`` -> reports (what leaves the device).
Server side
    ``oracle.count(reports)`` -> :class:`Tally` (a histogram of reports; tallies
    of report chunks add up, so a large population can stream through);
    ``oracle.estimate(tally)`` -> raw unbiased count estimates;
    ``oracle.aggregate(reports)`` = ``estimate(count(reports))``.
Post-processing (separate, optional; the raw estimate is never overwritten)
    :func:`clip_and_normalise` -- Peng et al. (2021) Alg. 2 lines 12-17;
    :func:`norm_sub` -- Euclidean projection onto {c >= 0, sum c = n}.

Oracles: :class:`GRR` (k-ary randomized response), :class:`UnaryEncoding`
(with :meth:`UnaryEncoding.oue` and :meth:`UnaryEncoding.sue`; ``OUE`` is the
former), and :class:`LDPFO`, the Hamming-distance randomized response over
a multi-attribute domain whose aggregation uses the Kronecker structure of
its transition matrix and never builds the prod(k_j) x prod(k_j) matrix.

Limits, checked before anything is allocated: a domain (k, or prod(k_j) for
LDPFO) has at most ``MAX_CELLS`` = 2^22 cells, since the server's histogram and
the estimate's intermediate tensors hold a few doubles per cell (32 MiB each),
and an attribute of LDPFO at most ``mechanisms.MAX_DENSE_CELLS`` values (its k x k
GRR inverse is dense). The numerically safe epsilon ranges are those of
:mod:`dpclust_lib.mechanisms` (about 27.7 for GRR, OUE and LDPFO, 55.5 for SUE).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .mechanisms import (
    MAX_DENSE_CELLS,
    grr_matrix,
    grr_perturb,
    grr_probabilities,
    hamming_rr_perturb,
    oue_pq,
    sue_pq,
    ue_epsilon,
    ue_perturb,
    unary_encode,
)
from .validation import (
    check_categorical,
    check_choice,
    check_domain_sizes,
    check_epsilon,
    check_int,
)

__all__ = [
    "MAX_CELLS",
    "Tally",
    "GRR",
    "UnaryEncoding",
    "OUE",
    "LDPFO",
    "aggregate_stream",
    "joint_index",
    "joint_records",
    "clip_and_normalise",
    "norm_sub",
]


# Largest domain an oracle tallies (cells of its histogram); see the module docstring.
MAX_CELLS = 2**22


def _check_cells(cells, what):
    if cells > MAX_CELLS:
        raise ValueError(
            f"{what} gives {cells} cells, more than the cap of {MAX_CELLS} (frequency.MAX_CELLS): the "
            "histogram and the estimate would not fit in a reasonable memory; coarsen the domain"
        )
    return cells


def _check_true_counts(true_counts, n, shape):
    """True counts for a variance: finite, >= 0, of the oracle's shape, summing to n."""
    try:
        c = np.asarray(true_counts)
    except Exception as exc:
        raise TypeError("true_counts must be an array of numbers") from exc
    if c.dtype.kind not in "iuf":
        raise TypeError(f"true_counts must hold numbers, got dtype {c.dtype}")
    if c.shape != tuple(shape):
        raise ValueError(f"true_counts must have shape {tuple(shape)} (one count per cell), got shape {c.shape}")
    c = c.astype(float)
    if not np.all(np.isfinite(c)) or np.any(c < 0):
        raise ValueError("true_counts must be finite and >= 0")
    if not np.isclose(c.sum(), n, rtol=1e-9, atol=1e-9):
        raise ValueError(f"true_counts sums to {c.sum():g}, but n={n}: they must be the counts of all n users")
    return c


@dataclass(frozen=True)
class Tally:
    """What the server keeps of a batch of reports: a histogram and the number of reports.

    Tallies of disjoint batches add up (``t1 + t2``), so reports can be
    aggregated chunk by chunk as they arrive.

    Examples
    --------
    >>> oracle = GRR(3, 1.0)
    >>> t = oracle.count(np.array([0, 1, 1])) + oracle.count(np.array([2]))
    >>> t.counts.tolist(), t.n
    ([1.0, 2.0, 1.0], 4)
    """

    counts: np.ndarray
    n: int

    def __add__(self, other):
        if not isinstance(other, Tally):
            raise TypeError(f"only a Tally can be added to a Tally, got {type(other).__name__}")
        if other.counts.shape != self.counts.shape:
            raise ValueError(f"cannot merge tallies of shapes {self.counts.shape} and {other.counts.shape}")
        return Tally(self.counts + other.counts, self.n + other.n)


def joint_index(X, domain_sizes):
    """Index of each record in the joint domain, mixed radix, first attribute most significant.

    This is the (corrected, 0-based) class index of Peng et al. Eq. 6:
    l = sum_j (prod_{i>j} k_i) x_j.

    Parameters
    ----------
    X : array_like of shape (n, m)
        Integer codes inside ``domain_sizes``.
    domain_sizes : sequence of m ints

    Returns
    -------
    ndarray of shape (n,)
        The joint-domain index of each record.

    Examples
    --------
    >>> joint_index(np.array([[0, 0], [0, 2], [1, 0]]), (2, 3)).tolist()
    [0, 2, 3]
    """
    sizes = check_domain_sizes(domain_sizes)
    X = check_categorical(X, sizes)
    return np.ravel_multi_index(tuple(X.T), sizes)


def joint_records(index, domain_sizes):
    """Inverse of :func:`joint_index`: records (n, m) from joint-domain indices.

    Parameters
    ----------
    index : array_like of int
        Indices in 0 .. prod(domain_sizes) - 1.
    domain_sizes : sequence of m ints

    Returns
    -------
    ndarray of shape index.shape + (m,), int64
        The records.

    Examples
    --------
    >>> joint_records(np.array([0, 2, 3]), (2, 3)).tolist()
    [[0, 0], [0, 2], [1, 0]]
    """
    sizes = check_domain_sizes(domain_sizes)
    idx = np.asarray(index)
    cells = int(np.prod(sizes))
    if idx.dtype.kind not in "iu" or np.any(idx < 0) or np.any(idx >= cells):
        raise ValueError(f"index must hold integers in 0..{cells - 1}")
    return np.stack(np.unravel_index(idx, sizes), axis=-1).astype(np.int64)


def apply_along_axes(tensor, matrices):
    """(A_1 (x) ... (x) A_m) vec(tensor), one axis at a time: O(sum_j k_j * prod k)."""
    out = tensor
    for axis, A in enumerate(matrices):
        out = np.moveaxis(np.tensordot(A, out, axes=([1], [axis])), 0, axis)
    return out


def _variance_from_kernel(counts, inverses, matrices):
    """Exact per-cell variance of the unbiased estimate A c* given the true counts c.

    With A = (P^T)^{-1} and one independent categorical report per user,
    Var(c_hat_l) = sum_x c_x sum_y A[l, y]^2 P[x, y] - c_l, and for Kronecker
    structured P and A the kernel factorises into M_j = (A_j * A_j) P_j^T.
    """
    kernels = [(A * A) @ P.T for A, P in zip(inverses, matrices)]
    return apply_along_axes(counts, kernels) - counts


class _Oracle:
    @property
    def ldp_epsilon(self):
        """The plain epsilon-LDP level of one user's report."""
        return self.epsilon

    def aggregate(self, reports):
        """Raw unbiased estimate of the true counts from a batch of reports."""
        return self.estimate(self.count(reports))

    def _check_tally(self, tally, shape):
        if not isinstance(tally, Tally):
            raise TypeError(f"tally must be a Tally from count(), got {type(tally).__name__}")
        if tally.counts.shape != shape:
            raise ValueError(f"tally has counts of shape {tally.counts.shape}, expected {shape}")


class GRR(_Oracle):
    """k-ary (generalised) randomized response frequency oracle.

    Wang, Blocki, Li, Jha, "Locally differentially private protocols for
    frequency estimation", USENIX Security 2017.

    Parameters
    ----------
    k : int >= 2, domain size (values coded 0..k-1)
    epsilon : float > 0, the LDP level of each report

    Examples
    --------
    >>> oracle = GRR(4, 1.0)
    >>> reports = oracle.perturb(np.zeros(1000, dtype=int), random_state=0)
    >>> estimate = oracle.estimate(oracle.count(reports))
    >>> estimate.shape, round(float(estimate.sum()))
    ((4,), 1000)
    """

    def __init__(self, k, epsilon):
        self.k = check_int(k, "k", minimum=2, maximum=MAX_CELLS)
        self.epsilon = check_epsilon(epsilon)
        self.p, self.q = grr_probabilities(self.k, self.epsilon)

    def matrix(self):
        return grr_matrix(self.k, self.epsilon)

    def perturb(self, values, random_state=None):
        """User side: each user reports one value in 0..k-1."""
        return grr_perturb(values, self.k, self.epsilon, random_state)

    def count(self, reports):
        r = np.asarray(reports)
        if r.ndim != 1:
            raise ValueError(f"reports must be 1-D, got shape {r.shape}")
        check_categorical(r.reshape(-1, 1), [self.k], name="reports")
        return Tally(np.bincount(r, minlength=self.k).astype(float), int(r.shape[0]))

    def estimate(self, tally):
        self._check_tally(tally, (self.k,))
        return (tally.counts - tally.n * self.q) / (self.p - self.q)

    def variance(self, n, true_counts=None):
        """Variance of each count estimate.

        With ``true_counts`` (shape (k,), >= 0, summing to n) the exact value
        [c p(1-p) + (n-c) q(1-q)] / (p-q)^2 per cell; without, the usual
        approximation for a rare value (c = 0): n q(1-q) / (p-q)^2.
        """
        n = check_int(n, "n", minimum=1)
        c = 0.0 if true_counts is None else _check_true_counts(true_counts, n, (self.k,))
        p, q = self.p, self.q
        return (c * p * (1 - p) + (n - c) * q * (1 - q)) / (p - q) ** 2


class UnaryEncoding(_Oracle):
    """Unary-encoding frequency oracle with bit probabilities (p, q).

    Each user one-hot encodes their value and reports every bit through
    Pr[1 -> 1] = p, Pr[0 -> 1] = q. The LDP level is ln[p(1-q)/((1-p)q)].
    Use :meth:`oue` (p = 1/2, q = 1/(e^eps + 1), optimal variance) or
    :meth:`sue` (symmetric, basic RAPPOR).

    Examples
    --------
    >>> oracle = UnaryEncoding.oue(3, 1.0)
    >>> oracle.p, round(oracle.q, 4), round(oracle.epsilon, 6)
    (0.5, 0.2689, 1.0)
    >>> oracle.perturb(np.array([0, 2]), random_state=0).shape
    (2, 3)
    """

    def __init__(self, k, p, q):
        self.k = check_int(k, "k", minimum=2, maximum=MAX_CELLS)
        self.epsilon = ue_epsilon(p, q)
        self.p, self.q = float(p), float(q)

    @classmethod
    def oue(cls, k, epsilon):
        return cls(k, *oue_pq(epsilon))

    @classmethod
    def sue(cls, k, epsilon):
        return cls(k, *sue_pq(epsilon))

    def perturb(self, values, random_state=None):
        """User side: each user reports k bits."""
        return ue_perturb(unary_encode(values, self.k), self.p, self.q, random_state)

    def count(self, reports):
        b = np.asarray(reports)
        if b.ndim != 2 or b.shape[1] != self.k:
            raise ValueError(f"reports must have shape (n, {self.k}), got {b.shape}")
        if np.any((b != 0) & (b != 1)):
            raise ValueError("reports must hold only 0 and 1")
        return Tally(b.sum(axis=0, dtype=float), int(b.shape[0]))

    def estimate(self, tally):
        self._check_tally(tally, (self.k,))
        return (tally.counts - tally.n * self.q) / (self.p - self.q)

    def variance(self, n, true_counts=None):
        """[c p(1-p) + (n-c) q(1-q)] / (p-q)^2 per cell (c = 0 when not given).

        ``true_counts``: shape (k,), >= 0, summing to n.
        """
        n = check_int(n, "n", minimum=1)
        c = 0.0 if true_counts is None else _check_true_counts(true_counts, n, (self.k,))
        p, q = self.p, self.q
        return (c * p * (1 - p) + (n - c) * q * (1 - q)) / (p - q) ** 2


def OUE(k, epsilon):
    """Optimised unary encoding oracle: ``UnaryEncoding.oue(k, epsilon)``.

    Parameters
    ----------
    k : int
        The domain size (>= 2).
    epsilon : float
        The LDP level of each report (> 0).

    Returns
    -------
    UnaryEncoding
        With p = 1/2, q = 1/(e^epsilon + 1).

    Examples
    --------
    >>> oracle = OUE(4, 2.0)
    >>> oracle.k, oracle.p
    (4, 0.5)
    """
    return UnaryEncoding.oue(k, epsilon)


class LDPFO(_Oracle):
    """LDP-FO: frequency oracle of Peng et al. (2021) over a multi-attribute domain.

    The user perturbs the whole record with the Hamming-distance randomized
    response (Alg. 1, Eq. 4): Pr[y | x] proportional to e^{eps (m - d(x, y))}.
    Its transition matrix is P = P_1 (x) ... (x) P_m with P_j the k_j-ary GRR
    matrix at eps, so the server inverts it one attribute at a time along the
    axes of the histogram tensor (Alg. 2 line 11, without the dense matrix).

    Parameters
    ----------
    domain_sizes : sequence of m integers >= 2, at most MAX_CELLS = 2^22 cells in all
    epsilon : float > 0, privacy per unit of Hamming distance (numerically safe up
        to ln(2^40 - max k_j + 1), about 27.7). Two records that
        differ in all m attributes are only ``m * epsilon`` apart: that is the
        plain LDP level of a report (:attr:`ldp_epsilon`).

    Examples
    --------
    >>> oracle = LDPFO((2, 3), 1.0)
    >>> oracle.n_cells, oracle.ldp_epsilon
    (6, 2.0)
    >>> reports = oracle.perturb(np.array([[0, 1], [1, 2]]), random_state=0)
    >>> oracle.count(reports).counts.shape
    (2, 3)
    """

    def __init__(self, domain_sizes, epsilon):
        self.domain_sizes = check_domain_sizes(domain_sizes)
        # Before any allocation; Python ints, since np.prod wraps around silently.
        _check_cells(math.prod(self.domain_sizes), f"domain_sizes={self.domain_sizes}")
        if max(self.domain_sizes) > MAX_DENSE_CELLS:
            j = self.domain_sizes.index(max(self.domain_sizes))
            raise ValueError(
                f"domain_sizes[{j}]={self.domain_sizes[j]} exceeds {MAX_DENSE_CELLS} "
                "(mechanisms.MAX_DENSE_CELLS): each attribute's GRR inverse is a dense matrix"
            )
        self.epsilon = check_epsilon(epsilon)
        self._matrices = [grr_matrix(k, self.epsilon) for k in self.domain_sizes]
        # GRR: P = (p - q) I + q J, so (P^T)^{-1} = (I - q J) / (p - q).
        self._inverses = []
        for k in self.domain_sizes:
            p, q = grr_probabilities(k, self.epsilon)
            self._inverses.append((np.eye(k) - q * np.ones((k, k))) / (p - q))

    @property
    def n_cells(self):
        return math.prod(self.domain_sizes)

    @property
    def ldp_epsilon(self):
        """The plain epsilon-LDP level of one report (worst case: all m attributes differ)."""
        return self.epsilon * len(self.domain_sizes)

    def perturb(self, values, random_state=None):
        """User side: records (n, m) -> perturbed records (n, m)."""
        return hamming_rr_perturb(values, self.domain_sizes, self.epsilon, random_state)

    def count(self, reports):
        """Histogram tensor of shape ``domain_sizes`` (C order = mixed radix)."""
        idx = joint_index(reports, self.domain_sizes)
        flat = np.bincount(idx, minlength=self.n_cells).astype(float)
        return Tally(flat.reshape(self.domain_sizes), int(idx.shape[0]))

    def estimate(self, tally):
        """Raw unbiased estimate of the true count tensor (may hold negatives)."""
        self._check_tally(tally, self.domain_sizes)
        return apply_along_axes(tally.counts, self._inverses)

    def variance(self, n, true_counts=None):
        """Exact variance of each cell's estimate, given the true count tensor.

        It depends on the whole distribution (every user's report is spread
        over every cell), so ``true_counts`` is required.
        """
        n = check_int(n, "n", minimum=1)
        if true_counts is None:
            raise ValueError(
                "true_counts is required: the variance of an LDPFO estimate depends on the true "
                "distribution over the whole domain"
            )
        c = _check_true_counts(true_counts, n, self.domain_sizes)
        return _variance_from_kernel(c, self._inverses, self._matrices)


def aggregate_stream(oracle, report_chunks):
    """Server side for a population too large for memory: tally chunks of reports as they arrive.

    Counts are mergeable, so the server keeps one histogram, never the reports.
    Returns the total :class:`Tally`; ``oracle.estimate(tally)`` gives the same
    estimate as aggregating all reports at once.

    Parameters
    ----------
    oracle : GRR, UnaryEncoding or LDPFO
    report_chunks : iterable of arrays
        Batches of reports, as they arrive.

    Returns
    -------
    Tally
        The histogram of all the reports and their number.

    Examples
    --------
    >>> oracle = GRR(3, 1.0)
    >>> chunks = (oracle.perturb(np.full(100, v), random_state=v) for v in range(3))
    >>> tally = aggregate_stream(oracle, chunks)
    >>> tally.n, int(tally.counts.sum())
    (300, 300)
    """
    if not isinstance(oracle, _Oracle):
        raise TypeError(f"oracle must be a frequency oracle (GRR, UnaryEncoding, LDPFO), got {type(oracle).__name__}")
    if isinstance(report_chunks, np.ndarray) or not hasattr(report_chunks, "__iter__"):
        raise TypeError("report_chunks must be an iterable of report batches (e.g. a list or generator of arrays)")
    total = None
    for chunk in report_chunks:
        tally = oracle.count(chunk)
        total = tally if total is None else total + tally
    if total is None:
        raise ValueError("report_chunks is empty: no reports arrived")
    return total


# ---------------------------------------------------------------------------
# Post-processing
# ---------------------------------------------------------------------------


def _check_estimate_and_n(estimate, n):
    try:
        raw = np.asarray(estimate)
    except Exception as exc:  # ragged input
        raise TypeError("estimate must be an array of numbers") from exc
    if raw.dtype.kind not in "iuf":
        raise TypeError(f"estimate must hold numbers, got dtype {raw.dtype}")
    est = raw.astype(float)
    if est.size == 0 or not np.all(np.isfinite(est)):
        raise ValueError("estimate must be a non-empty array of finite numbers")
    n = check_int(n, "n", minimum=1)
    return est, n


def clip_and_normalise(estimate, n, rounding="ceil"):
    """Peng et al. Alg. 2 lines 12-17: set negatives to 0, rescale to total n.

    Parameters
    ----------
    estimate : array, the raw unbiased estimate (not modified)
    n : int, the number of users
    rounding : {"ceil", "none", "largest_remainder"}
        "ceil" is the paper's c <- ceil(c / sum(c) * n): the result can sum to
        more than n (by up to the number of non-zero cells). "none" keeps real
        values that sum to n. "largest_remainder" gives integers summing to n.

    Returns
    -------
    ndarray of the shape of ``estimate``
        int64 with "ceil" and "largest_remainder", float with "none".

    Examples
    --------
    >>> clip_and_normalise(np.array([2.5, -1.0, 1.5]), 4).tolist()
    [3, 0, 2]
    >>> clip_and_normalise(np.array([2.5, -1.0, 1.5]), 4, rounding="none").tolist()
    [2.5, 0.0, 1.5]
    """
    check_choice(rounding, "rounding", {"ceil", "none", "largest_remainder"})
    est, n = _check_estimate_and_n(estimate, n)
    clipped = np.clip(est, 0.0, None)
    total = clipped.sum()
    if total <= 0:
        raise ValueError("every estimate is <= 0; there is nothing to normalise")
    scaled = clipped / total * n
    if rounding == "none":
        return scaled
    if rounding == "ceil":
        # Guard against 3.0000000000000004 -> 4 from the division above.
        return np.ceil(np.round(scaled, 9)).astype(np.int64)
    base = np.floor(scaled).astype(np.int64)
    short = n - int(base.sum())
    order = np.argsort(-(scaled - base).ravel(), kind="stable")[:short]
    flat = base.ravel().copy()
    flat[order] += 1
    return flat.reshape(base.shape)


def norm_sub(estimate, n):
    """Euclidean projection of the estimate onto {c >= 0, sum c = n}.

    Equivalent to Norm-Sub of Wang et al. (NDSS 2020): subtract one common
    delta from every cell and clip at zero, delta chosen so the total is n.

    Parameters
    ----------
    estimate : array_like
        The raw unbiased estimate (not modified).
    n : int
        The number of users (>= 1).

    Returns
    -------
    ndarray of the shape of ``estimate``
        Non-negative floats summing to n.

    Examples
    --------
    >>> norm_sub(np.array([3.0, -1.0, 2.0]), 4).tolist()
    [2.5, 0.0, 1.5]
    """
    est, n = _check_estimate_and_n(estimate, n)
    v = est.ravel()
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - n
    ind = np.arange(1, u.size + 1)
    rho = np.nonzero(u - css / ind > 0)[0][-1]
    theta = css[rho] / (rho + 1.0)
    return np.clip(v - theta, 0.0, None).reshape(est.shape)

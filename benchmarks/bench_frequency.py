"""LDP-FO aggregation: the Kronecker (axis-by-axis) inverse against a dense-matrix inverse."""

import numpy as np
from run import best_of

from dpclust_lib import mechanisms
from dpclust_lib.frequency import LDPFO, Tally
from dpclust_lib.mechanisms import grr_matrix
from dpclust_lib.validation import check_categorical

DENSE_LIMIT = 8192  # cells; the dense reference is run up to here (0.5 GB; a 10^6-cell matrix would need 8 TB)
MEMORY_BYTES = 24 * 2**30  # this machine: the largest dense matrix that fits has about 56,000 cells
CASES = [  # (domain sizes, target seconds)
    ((2,) * 10, None),  # 1024 cells
    ((2,) * 12, None),  # 4096 cells
    ((2,) * 13, None),  # 8192 cells: the largest dense case run
    ((3, 5, 4, 4, 3, 2, 3, 3), 0.05),  # Nursery's original domain, 12,960 cells
    ((10,) * 6, 1.0),  # 10^6 cells
    ((2,) * 20, 1.0),  # 2^20 cells
]


def _tally(sizes, rng):
    counts = rng.poisson(3.0, size=sizes).astype(float)
    return Tally(counts, int(counts.sum()))


def _cases(n):
    """``CASES`` with at most ``n`` cells (all when None); below the smallest, one binary domain of <= n cells."""
    if n is None:
        return CASES
    cases = [(sizes, target) for sizes, target in CASES if np.prod(sizes) <= n]
    return cases or [((2,) * max(1, n.bit_length() - 1), None)]


def bench_ldpfo_aggregation(n=None):
    """One row per domain of ``CASES``; ``n`` caps the number of cells (None: all cases)."""
    rng = np.random.default_rng(0)
    rows = []
    for sizes, target in _cases(n):
        oracle = LDPFO(sizes, 1.0)
        tally = _tally(sizes, rng)
        cells = int(np.prod(sizes))
        kron = best_of(lambda: oracle.estimate(tally), repeat=3)
        reference = None
        note = f"{cells:,} cells"
        if cells <= DENSE_LIMIT:
            P = np.ones((1, 1))
            for k in sizes:
                P = np.kron(P, grr_matrix(k, 1.0))  # the k^m x k^m matrix Alg. 2 inverts
            reference = best_of(lambda: np.linalg.solve(P.T, tally.counts.ravel()), repeat=1, min_seconds=0.0)
            note += f"; reference: dense solve of the {cells * cells * 8 / 1e9:.2f} GB matrix"
        else:
            fits = cells * cells * 8 <= MEMORY_BYTES
            note += f"; dense reference not run: its matrix alone is {cells * cells * 8 / 1e9:,.1f} GB" + (
                " (fits in memory, but an O(cells^3) solve)" if fits else ", more than this machine's memory"
            )
        rows.append(
            {
                "benchmark": "LDPFO aggregation",
                "case": "x".join(map(str, sizes)),
                "seconds": kron,
                "target_seconds": target,
                "reference_seconds": reference,
                "note": note,
            }
        )
    return rows


def _former_grr_perturb(values, k, epsilon, rng):
    """The former grr_perturb, checks included: a uniform double compared with p (p rounded up to 2^-53)."""
    p, _ = mechanisms.grr_probabilities(k, epsilon)
    x = mechanisms._check_codes(values, k)
    keep = rng.random(x.shape[0]) < p
    other = rng.integers(0, k - 1, size=x.shape[0])
    return np.where(keep, x, other + (other >= x))


def _former_ue_perturb(bits, p, q, rng):
    """The former ue_perturb, checks included."""
    p, q = mechanisms._check_pq(p, q)
    b = np.asarray(bits)
    if b.ndim != 2 or b.dtype.kind not in "biu" or np.any((b != 0) & (b != 1)):
        raise ValueError("bits must be a 2-D 0/1 array")
    mechanisms._check_report_bits(*b.shape)
    return (rng.random(b.shape) < np.where(b == 1, p, q)).astype(np.uint8)


def _former_hamming_rr_perturb(X, sizes, epsilon, rng):
    """The former hamming_rr_perturb, checks included."""
    X = check_categorical(X, sizes)
    p_keep = np.array([mechanisms.grr_probabilities(kj, epsilon)[0] for kj in sizes])
    keep = rng.random(X.shape) < p_keep
    other = np.floor(rng.random(X.shape) * (np.asarray(sizes) - 1)).astype(np.int64)
    return np.where(keep, X, other + (other >= X))


def bench_exact_coins(n=None):
    """The local randomisers with exact Bernoulli coins against the former floating-point comparison.

    Users: 10^6 for GRR (k = 10), 10^5 for OUE (k = 16, 1.6 million bits) and for the Hamming-distance
    RR on Nursery's domain (8 attributes); epsilon = 1. The reference is the former sampler, checks
    included, which compared a uniform double with each probability (``rng.random() < p``).
    """
    rng = np.random.default_rng(0)
    nursery = (3, 5, 4, 4, 3, 2, 3, 3)
    users = {"grr": 10**6, "oue": 10**5, "hamming": 10**5}
    if n is not None:
        users = {key: min(value, n) for key, value in users.items()}
    x = rng.integers(0, 10, users["grr"])
    bits = mechanisms.unary_encode(rng.integers(0, 16, users["oue"]), 16)
    X = rng.integers(0, nursery, (users["hamming"], len(nursery)))
    p, q = mechanisms.oue_pq(1.0)
    cases = [
        ("GRR, k = 10", users["grr"], mechanisms.grr_perturb, _former_grr_perturb, (x, 10, 1.0, rng)),
        ("OUE, k = 16", users["oue"], mechanisms.ue_perturb, _former_ue_perturb, (bits, p, q, rng)),
        (
            "Hamming-distance RR, Nursery's domain",
            users["hamming"],
            mechanisms.hamming_rr_perturb,
            _former_hamming_rr_perturb,
            (X, nursery, 1.0, rng),
        ),
    ]
    return [
        {
            "benchmark": "exact Bernoulli coins",
            "case": f"{name}, {count:,} users",
            "seconds": best_of(lambda: exact(*args), repeat=5),
            "target_seconds": None,
            "reference_seconds": best_of(lambda: former(*args), repeat=5),
            "note": "reference: the former sampler, rng.random() < p",
        }
        for name, count, exact, former, args in cases
    ]

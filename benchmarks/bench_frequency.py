"""LDP-FO aggregation: the Kronecker (axis-by-axis) inverse against a dense-matrix inverse."""

import numpy as np
from run import best_of

from dpclust_lib.frequency import LDPFO, Tally
from dpclust_lib.mechanisms import grr_matrix

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

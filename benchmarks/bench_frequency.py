"""LDP-FO aggregation: the Kronecker (axis-by-axis) inverse against a dense-matrix inverse."""
import numpy as np

from dpclust_lib import privacy
from dpclust_lib.frequency import LDPFO, Tally
from run import best_of

DENSE_LIMIT = 4096  # cells; the dense reference is run up to here (a 10^6-cell matrix would need 8 TB)


def _tally(sizes, rng):
    counts = rng.poisson(3.0, size=sizes).astype(float)
    return Tally(counts, int(counts.sum()))


def bench_ldpfo_aggregation():
    rng = np.random.default_rng(0)
    rows = []
    cases = [
        ((2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2), None),        # 4096 cells: dense still fits
        ((3, 5, 4, 4, 3, 2, 3, 3), 0.05),                    # Nursery's original domain, 12,960 cells
        ((10,) * 6, 1.0),                                    # 10^6 cells
        ((2,) * 20, 1.0),                                    # 2^20 cells
    ]
    for sizes, target in cases:
        oracle = LDPFO(sizes, 1.0)
        tally = _tally(sizes, rng)
        cells = int(np.prod(sizes))
        kron = best_of(lambda: oracle.estimate(tally), repeat=3)
        reference = None
        note = f"{cells:,} cells"
        if cells <= DENSE_LIMIT:
            P = privacy.hamming_rr_matrix(sizes, 1.0)
            reference = best_of(lambda: np.linalg.solve(P.T, tally.counts.ravel()), repeat=3)
            note += "; reference: dense solve"
        else:
            note += f"; dense reference not run (its matrix alone is {cells * cells * 8 / 1e9:,.1f} GB)"
        rows.append({"benchmark": "LDPFO aggregation", "case": "x".join(map(str, sizes)), "seconds": kron,
                     "target_seconds": target, "reference_seconds": reference, "note": note})
    return rows

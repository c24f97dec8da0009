"""Laplace noise: numpy's textbook float sampler, our exact sampler and OpenDP's, per number of draws.

All three release n = 10^3, 10^5, 10^6 values of a scalar query (sensitivity 1, epsilon 1, scale 1).
The reference is ``rng.laplace`` (fast, but its low-order bits leak: Mironov 2012). Ours is
``laplace_release(..., noise="exact")``: exact discrete Laplace on a grid of 2^-20, drawn from a
seeded numpy Generator (Canonne, Kamath & Steinke 2020, Algorithms 1 and 2, vectorised). OpenDP's
``make_laplace`` on a vector of floats does the same mathematically (its own grid, big-integer
arithmetic, OS randomness, no seed); it is timed when ``opendp`` is installed. No target: the exact
sampler is expected to cost about ten times numpy's float sampler.

The notebooks' common case is different: tens of thousands of small releases (a cluster's count and sums, 15 to
42 entries in notebook 04), where the cost is per call, not per draw. :func:`bench_small_releases` times one
release of 1 and of 30 entries through :func:`dpclust_lib.mechanisms.laplace_mechanism`, the path every
estimator takes, against the same release with ``noise="float"``.
"""

import warnings

import numpy as np
from run import best_of

from dpclust_lib import DPBirch, DPKMeans, DPQTKMeans
from dpclust_lib.mechanisms import laplace_mechanism
from dpclust_lib.noise import laplace_release

SIZES = (1_000, 100_000, 1_000_000)
OPENDP_MAX = 1_000_000  # OpenDP's float Laplace takes about 30 s for 10^6 draws on this machine


def _opendp_laplace(n):
    """OpenDP's vector float Laplace (scale 1) as a callable, or None when opendp is not importable."""
    try:
        import opendp.prelude as dp
    except ImportError:
        return None
    dp.enable_features("contrib")
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float)
    measurement = dp.m.make_laplace(*space, scale=1.0)
    data = [0.0] * n
    return lambda: measurement(data)


def _row(case, seconds, reference, note):
    return {
        "benchmark": "Laplace noise",
        "case": case,
        "seconds": seconds,
        "target_seconds": None,
        "reference_seconds": reference,
        "note": note,
    }


def bench_noise(n=None):
    """One row per sampler and size; ``n`` runs that one size only (a smoke test runs every bench at small n)."""
    rows = []
    for size in SIZES if n is None else (n,):
        rng = np.random.default_rng(0)
        zeros = np.zeros(size)
        repeat = 3 if size <= 100_000 else 1
        ref = best_of(lambda: rng.laplace(0.0, 1.0, size), repeat=repeat, min_seconds=0.0)
        rows.append(_row(f"numpy rng.laplace, n={size:,}", ref, ref, "textbook float Laplace (leaks low-order bits)"))
        # Sensitivity n and epsilon n over n entries: per entry the grid (2^-20) and scale (1 + 2^-20) of a
        # scalar release with sensitivity 1 and epsilon 1, drawn in one vectorised call.
        exact = best_of(
            lambda: laplace_release(zeros, float(size), float(size), rng, noise="exact"), repeat=repeat, min_seconds=0.0
        )
        rows.append(_row(f"exact (ours), n={size:,}", exact, ref, "seeded numpy Generator; reference: rng.laplace"))
        opendp = _opendp_laplace(size) if size <= OPENDP_MAX else None
        if opendp is None:
            rows.append(_row(f"OpenDP make_laplace, n={size:,}", np.nan, ref, "not run: opendp not installed"))
        else:
            seconds = best_of(opendp, repeat=repeat, min_seconds=0.0)
            rows.append(_row(f"OpenDP make_laplace, n={size:,}", seconds, ref, "OS randomness; reference: rng.laplace"))
    return rows


SMALL_SIZES = (1, 30)
SMALL_CALLS = 2_000


def bench_small_releases(n=None):
    """Seconds per release of 1 and 30 entries (the loop of ``SMALL_CALLS`` releases, divided); ``n`` calls."""
    calls = SMALL_CALLS if n is None else max(n // 10, 1)
    rows = []
    for size in SMALL_SIZES:
        value = np.zeros(size)
        rng = np.random.default_rng(0)

        def loop(noise, value=value, rng=rng):
            for _ in range(calls):
                laplace_mechanism(value, 1.0, 1.0, rng, noise=noise)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exact = best_of(lambda: loop("exact"), repeat=3, min_seconds=0.0) / calls
            textbook = best_of(lambda: loop("float"), repeat=3, min_seconds=0.0) / calls
        rows.append(_row(f"one release of {size} entries (per call)", exact, textbook, "reference: noise='float'"))
    return rows


FIT_N = 100_000


def _fits(n):
    X = np.random.default_rng(0).random((n, 2))
    box = ((0.0, 0.0), (1.0, 1.0))
    return {
        "DPKMeans (K=5, 5 iterations)": (lambda noise: DPKMeans(5, epsilon=1.0, bounds=box, noise=noise), X),
        "DPQTKMeans (K=5)": (lambda noise: DPQTKMeans(5, epsilon=1.0, bounds=box, n_public=n, noise=noise), X),
        # The literal reading draws noise at every insertion: the heaviest user of the sampler.
        "DPBirch, literal (T=0.1)": (
            lambda noise: DPBirch(5, epsilon=1.0, threshold=0.1, bounds=box, noise=noise),
            X[: max(n // 10, 50)],
        ),
    }


def bench_noise_in_fits(n=None):
    """A fit with the exact sampler (the default) against the same fit with textbook noise (the reference)."""
    rows = []
    for case, (make, X) in _fits(FIT_N if n is None else n).items():
        with warnings.catch_warnings():  # noise="float" and DPBirch warn by design; the timing is the point here
            warnings.simplefilter("ignore")
            exact = best_of(lambda: make("exact").set_params(random_state=0).fit(X), repeat=3, min_seconds=0.0)
            textbook = best_of(lambda: make("float").set_params(random_state=0).fit(X), repeat=3, min_seconds=0.0)
        rows.append(
            {
                "benchmark": "Laplace noise in a fit",
                "case": f"{case}, n={len(X):,}",
                "seconds": exact,
                "target_seconds": None,
                "reference_seconds": textbook,
                "note": "exact noise (default); reference: the same fit with noise='float'",
            }
        )
    return rows

"""How the cost of each main estimator grows with the number of records, n = 10^3 .. 10^6.

Synthetic data: a mixture of 10 Gaussian blobs in [0, 1]^2 (numeric estimators) and records with
m = 6 attributes of 4 values drawn from a mixture of 4 prototypes (categorical estimators). Each row
gives one fit's best time and, per estimator, the fitted exponent of time ~ n^a over the grid. The
log-log plot is written to ``data/results/benchmarks/scaling.png`` (``OUT``).

The paper's DPBirch is left out: its cost is the Ward global step over the leaves of its noisy tree,
which grows with the number of leaves squared, not with n.
"""

import warnings
from pathlib import Path

import numpy as np
from run import best_of

import dpclust_lib as dp

SIZES = [1_000, 10_000, 100_000, 1_000_000]
K = 10
UNIT = ((0.0, 0.0), (1.0, 1.0))
DOMAIN = (4,) * 6
OUT = Path(__file__).resolve().parents[1] / "data" / "results" / "benchmarks" / "scaling.png"


def _numeric(n, rng):
    centres = rng.random((K, 2))
    X = centres[rng.integers(0, K, n)] + rng.normal(0, 0.03, (n, 2))
    return np.clip(X, 0.0, 1.0)


def _categorical(n, rng):
    prototypes = rng.integers(0, 4, (4, len(DOMAIN)))
    X = prototypes[rng.integers(0, 4, n)]
    noise = rng.random(X.shape) < 0.2
    return np.where(noise, rng.integers(0, 4, X.shape), X)


ESTIMATORS = {
    "KMeans (no privacy)": ("numeric", lambda n: dp.KMeans(K, n_init=1, max_iter=5, random_state=0)),
    "DPKMeans": ("numeric", lambda n: dp.DPKMeans(K, epsilon=1.0, max_iter=5, bounds=UNIT, random_state=0)),
    "IDPKMeans": ("numeric", lambda n: dp.IDPKMeans(K, epsilon=1.0, max_iter=5, bounds=UNIT, random_state=0)),
    "DPKMeansPP": (
        "numeric",
        lambda n: dp.DPKMeansPP(K, epsilon=1.0, max_iter=5, bounds=UNIT, n_public=n, random_state=0),
    ),
    "EUGKMeans": ("numeric", lambda n: dp.EUGKMeans(K, epsilon=1.0, bounds=UNIT, n_public=n, random_state=0)),
    "DPQTKMeans": ("numeric", lambda n: dp.DPQTKMeans(K, epsilon=1.0, bounds=UNIT, n_public=n, random_state=0)),
    "Birch (no privacy)": ("numeric", lambda n: dp.Birch(K, threshold=0.05, branching_factor=50)),
    "DPBirchPublicTree": (
        "numeric",
        lambda n: dp.DPBirchPublicTree(
            K, epsilon=1.0, threshold=0.05, branching_factor=50, bounds=UNIT, random_state=0
        ),
    ),
    "KModes (no privacy)": ("categorical", lambda n: dp.KModes(4, max_iter=5, domain_sizes=DOMAIN, random_state=0)),
    "DPKModes": (
        "categorical",
        lambda n: dp.DPKModes(4, epsilon=1.0, max_iter=5, domain_sizes=DOMAIN, random_state=0),
    ),
    "LDPKModes": (
        "categorical",
        lambda n: dp.LDPKModes(4, epsilon=1.0, max_iter=5, domain_sizes=DOMAIN, random_state=0),
    ),
    "SamplingLDPKModes": (
        "categorical",
        lambda n: dp.SamplingLDPKModes(4, epsilon=1.0, max_iter=5, budget="split", domain_sizes=DOMAIN, random_state=0),
    ),
}


def _sizes(n):
    """``SIZES`` when ``n`` is None, else two sizes up to ``n`` (the exponent needs two points)."""
    return SIZES if n is None else [max(n // 10, 2 * K), max(n, 4 * K)]


def bench_scaling(n=None):
    """Each estimator of ``ESTIMATORS`` over ``SIZES``; ``n`` is the largest size instead of 10^6 (None: ``SIZES``)."""
    sizes = _sizes(n)
    rng = np.random.default_rng(0)
    data = {size: {"numeric": _numeric(size, rng), "categorical": _categorical(size, rng)} for size in sizes}
    rows, curves = [], {}
    for name, (kind, make) in ESTIMATORS.items():
        times = []
        for size in sizes:
            X = data[size][kind]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                seconds = best_of(lambda: make(size).fit(X), repeat=3 if size <= 10_000 else 1, min_seconds=0.0)
            times.append(seconds)
        slope = np.polyfit(np.log10(sizes), np.log10(times), 1)[0]
        curves[name] = times
        for size, seconds in zip(sizes, times):
            rows.append(
                {
                    "benchmark": f"scaling: {name}",
                    "case": f"n={size:,}",
                    "seconds": seconds,
                    "target_seconds": None,
                    "reference_seconds": None,
                    "note": f"time ~ n^{slope:.2f} over n = {sizes[0]:,}..{sizes[-1]:,}",
                }
            )
    _plot(sizes, curves)
    return rows


def _plot(sizes, curves):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 5))
    for name, times in curves.items():
        style = "--" if ESTIMATORS[name][0] == "categorical" else "-"
        ax.loglog(sizes, times, marker="o", linestyle=style, label=name)
    ax.set_xlabel("records n")
    ax.set_ylabel("fit time (s, best of runs)")
    ax.set_title("Cost against n (synthetic data, eps = 1, 5 iterations; dashed: categorical)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(OUT, dpi=110, bbox_inches="tight")
    plt.close(fig)

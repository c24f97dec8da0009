"""Chang et al. 2021 and Google's LSH clustering, notebook 06: UCI Letter centred as the benchmarks centred it, and
the benchmarks' synthetic mixture of 64 Gaussians in the unit ball, generated here from its published description.

Letter's file, reader and registry entry are notebook 04's (:mod:`.idp_kmeans`); this module adds its centred
variant to that entry (:func:`~._registry.add_variant`).
"""

from __future__ import annotations

import math

import numpy as np

from dpclust_lib.validation import check_int, check_random_state

from . import idp_kmeans
from ._registry import Dataset, add_variant, register

__all__ = ["NOTEBOOK", "PAPER", "make_gaussian_mixture_ball"]

NOTEBOOK = "06_lsh_coreset"
PAPER = "Chang et al. 2021 (one-round local k-means); Google's LSH clustering"

CENTRED_NOTE = (
    "the box of the centred data's own minima and maxima, read off the data as the benchmarks read theirs "
    "('computed exactly (non-privately)'): not a public domain"
)


def _letter_centred(raw_dir, **kw):
    """UCI Letter with every feature minus its mean, as the benchmarks centred it (non-privately)."""
    raw = idp_kmeans._LETTER(raw_dir, **kw)
    X = raw.X - raw.X.mean(axis=0)
    return Dataset(
        raw.name,
        "centred",
        np.ascontiguousarray(X),
        raw.y,
        raw.feature_names,
        raw.label_name,
        f"UCI letter: {len(X)} records, {X.shape[1]} numeric features, each centred on its mean (non-privately, "
        "as Google's clustering benchmarks did); label: class.",
        raw.provenance,
        bounds=(X.min(axis=0), X.max(axis=0)),
        bounds_note=CENTRED_NOTE,
    )


def _uniform_in_ball(rng, n, d, radius):
    """n points uniform in the d-ball of ``radius``: a Gaussian direction, a radius radius * U^(1/d)."""
    g = rng.standard_normal((n, d))
    r = radius * rng.uniform(0.0, 1.0, n) ** (1.0 / d)
    return g * (r / np.linalg.norm(g, axis=1))[:, None]


def make_gaussian_mixture_ball(
    n_samples=100_000, n_features=100, n_clusters=64, cluster_ratio=8.0, radius=1.0, random_state=0
):
    """The synthetic set of Google's clustering benchmarks, from its published description.

    ``n_clusters`` centres uniform in the ball of radius ``radius (1 - 1/cluster_ratio)`` (0.875), ``n_samples //
    n_clusters`` points around each (the remainder around the last) with standard deviation ``sqrt(radius) /
    (cluster_ratio sqrt(n_features))`` (0.0125) per dimension, and every point outside the ball of ``radius``
    projected onto its sphere. The defaults are the README's: 100,000 points, 100 dimensions, 64 Gaussians.

    Parameters
    ----------
    n_samples, n_features, n_clusters : int >= 1
    cluster_ratio : float > 1
    radius : float > 0
        The public ball: its box ``[-radius, radius]^d`` is the declared bounds.
    random_state : int, Generator or None

    Returns
    -------
    Dataset
        Labelled by component.

    Examples
    --------
    >>> data = make_gaussian_mixture_ball(640, n_features=10, random_state=0)
    >>> data.X.shape, bool(np.linalg.norm(data.X, axis=1).max() <= 1.0), np.bincount(data.y).tolist()[:3]
    ((640, 10), True, [10, 10, 10])
    """
    n = check_int(n_samples, "n_samples", minimum=1)
    d = check_int(n_features, "n_features", minimum=1)
    k = check_int(n_clusters, "n_clusters", minimum=1)
    if not (math.isfinite(cluster_ratio) and cluster_ratio > 1.0):
        raise ValueError(f"cluster_ratio must be a finite number > 1, got cluster_ratio={cluster_ratio!r}")
    if not (math.isfinite(radius) and radius > 0.0):
        raise ValueError(f"radius must be a finite number > 0, got radius={radius!r}")
    rng = check_random_state(random_state)
    centres = _uniform_in_ball(rng, k, d, radius * (1.0 - 1.0 / cluster_ratio))
    sizes = np.full(k, n // k)
    sizes[-1] += n % k
    y = np.repeat(np.arange(k), sizes)
    X = centres[y] + rng.normal(0.0, math.sqrt(radius) / (cluster_ratio * math.sqrt(d)), size=(n, d))
    norms = np.linalg.norm(X, axis=1)
    outside = norms > radius
    X[outside] *= (radius / norms[outside])[:, None]
    sd = math.sqrt(radius) / (cluster_ratio * math.sqrt(d))
    return Dataset(
        "lsh_synthetic",
        "gaussians",
        X,
        y,
        [f"x{i}" for i in range(d)],
        "component",
        f"Synthetic: {n} points in {d} dimensions, a mixture of {k} Gaussians (sd {sd:.4g} per dimension) with "
        f"centres uniform in the ball of radius {radius * (1 - 1 / cluster_ratio):g}; {int(outside.sum())} points "
        f"outside the ball of radius {radius:g} projected onto it; seed {random_state!r}.",
        [
            {
                "file": None,
                "generator": "make_gaussian_mixture_ball",
                "n_samples": n,
                "n_features": d,
                "n_clusters": k,
                "cluster_ratio": cluster_ratio,
                "radius": radius,
                "random_state": random_state,
            }
        ],
        bounds=(np.full(d, -float(radius)), np.full(d, float(radius))),
        bounds_note="the box around the generator's ball (public)",
    )


# The registry ----------------------------------------------------------------------------------------

add_variant("letter", "centred", _letter_centred, "16 features centred on their means (non-private)", PAPER)
register(
    "lsh_synthetic",
    "Synthetic mixture of 64 Gaussians in the unit ball (Google's clustering benchmarks)",
    (),
    (PAPER,),
    "Google differential-privacy library, learning/clustering (Chang & Kamath 2021)",
    {"gaussians": (lambda raw_dir, **kw: make_gaussian_mixture_ball(**kw), "100,000 x 100, 64 Gaussians")},
    "gaussians",
)

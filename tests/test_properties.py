"""Property tests (hypothesis) for every estimator: random shapes, domains, epsilon and K.

Every estimator of ``dpclust_lib.cluster`` has at least one configuration below (a test fails for one
that has none). For every draw: the fit does not crash (or refuses with a ValueError that names
the parameter at fault), the centres lie inside the declared domain (all but
DPBirch's, which the paper releases unclipped), the budget spent is within the
budget given, and the same seed gives the same result, bit for bit.
"""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import dpclust_lib as dp
from dpclust_lib import PrivacyLeakWarning

from . import discover

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
EPSILON = st.floats(min_value=0.05, max_value=20.0, allow_nan=False, allow_infinity=False)
SEED = st.integers(min_value=0, max_value=2**32 - 1)


@st.composite
def categorical_data(draw):
    m = draw(st.integers(1, 5))
    sizes = tuple(draw(st.lists(st.integers(2, 5), min_size=m, max_size=m)))
    n = draw(st.integers(1, 80))
    seed = draw(SEED)
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, k, n) for k in sizes]).astype(np.int64)
    k = draw(st.integers(1, 4))
    return X, sizes, k


@st.composite
def numeric_data(draw, dims=None):
    d = draw(st.integers(1, 4)) if dims is None else dims
    n = draw(st.integers(2, 120))
    rng = np.random.default_rng(draw(SEED))
    X = rng.random((n, d))
    k = draw(st.integers(1, 4))
    return X, k


def _fit_or_refuse(make, X, refusable=("n_clusters",)):
    """Fit; a refusal is fine only as a ValueError naming one of ``refusable``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            return make().fit(X)
    except ValueError as exc:
        assert any(name in str(exc) for name in refusable), f"unexpected refusal: {exc}"
        assume(False)


def _same_seed_same_result(make, X, fitted):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        again = make().fit(X)
    np.testing.assert_array_equal(fitted.cluster_centers_, again.cluster_centers_)


def _inside_domain(centres, sizes):
    centres = np.asarray(centres)
    assert centres.dtype.kind in "iu"
    assert np.all(centres >= 0) and np.all(centres < np.asarray(sizes))


CATEGORICAL = {
    "KModes": (lambda k, eps, sizes, seed: dp.KModes(k, init="random", domain_sizes=sizes, random_state=seed), None),
    "KModes frequent": (
        lambda k, eps, sizes, seed: dp.KModes(k, init="frequent", domain_sizes=sizes, random_state=seed),
        None,
    ),
    "DPKModes": (lambda k, eps, sizes, seed: dp.DPKModes(k, epsilon=eps, domain_sizes=sizes, random_state=seed), 1),
    "LDPKModes": (lambda k, eps, sizes, seed: dp.LDPKModes(k, epsilon=eps, domain_sizes=sizes, random_state=seed), 1),
    "LDPKModes raw": (
        lambda k, eps, sizes, seed: dp.LDPKModes(
            k, epsilon=eps, projection=False, domain_sizes=sizes, random_state=seed
        ),
        1,
    ),
    "SamplingLDPKModes split": (
        lambda k, eps, sizes, seed: dp.SamplingLDPKModes(
            k, epsilon=eps, budget="split", domain_sizes=sizes, random_state=seed
        ),
        1,
    ),
    "SamplingLDPKModes per round": (
        lambda k, eps, sizes, seed: dp.SamplingLDPKModes(
            k, epsilon=eps, max_iter=3, budget="per_round", domain_sizes=sizes, random_state=seed
        ),
        3,
    ),
    "SamplingLDPKModes protected index": (
        lambda k, eps, sizes, seed: dp.SamplingLDPKModes(
            max(k, 2), epsilon=eps, budget="split", protect_cluster_index=True, domain_sizes=sizes, random_state=seed
        ),
        1,
    ),
}


@pytest.mark.parametrize("name", list(CATEGORICAL))
@SETTINGS
@given(data=categorical_data(), eps=EPSILON, seed=SEED)
def test_categorical_estimator_properties(name, data, eps, seed):
    factory, budget_multiple = CATEGORICAL[name]
    X, sizes, k = data

    def make():
        return factory(k, eps, sizes, seed)

    fitted = _fit_or_refuse(make, X)
    _inside_domain(fitted.cluster_centers_, sizes)
    labels = fitted.labels_ if hasattr(fitted, "labels_") else fitted.predict(X)
    assert labels.shape == (X.shape[0],)
    if budget_multiple is not None:
        # The budget given: epsilon, or epsilon per round for the paper's per-round accounting.
        assert fitted.epsilon_spent_ <= eps * budget_multiple * (1 + 1e-9)
    _same_seed_same_result(make, X, fitted)


BALL_RADIUS = 1.0
BOX = (0.0, 1.0)  # numeric_data draws from [0, 1)^d, the bounds every private estimator is given
NUMERIC = {
    # name: (factory, the budget multiple epsilon_spent_ must not pass; None for the non-private ones)
    "KMeans": (lambda k, eps, seed: dp.KMeans(k, random_state=seed), None),
    "DPKMeans": (lambda k, eps, seed: dp.DPKMeans(k, epsilon=eps, bounds=BOX, random_state=seed), 1),
    "DPKMeans halving": (
        lambda k, eps, seed: dp.DPKMeans(k, epsilon=eps, schedule="halving", bounds=BOX, random_state=seed),
        1,
    ),
    "IDPKMeans": (lambda k, eps, seed: dp.IDPKMeans(k, epsilon=eps, bounds=BOX, random_state=seed), 1),
    # n_public: a declared public record count (it need not equal the true N)
    "DPKMeansPP": (lambda k, eps, seed: dp.DPKMeansPP(k, epsilon=eps, bounds=BOX, n_public=100, random_state=seed), 1),
    "EUGKMeans": (lambda k, eps, seed: dp.EUGKMeans(k, epsilon=eps, bounds=BOX, n_public=100, random_state=seed), 1),
    "DPQTKMeans": (lambda k, eps, seed: dp.DPQTKMeans(k, epsilon=eps, bounds=BOX, n_public=100, random_state=seed), 1),
    "Birch": (lambda k, eps, seed: dp.Birch(k, threshold=0.2, branching_factor=5, random_state=seed), None),
    # The paper's accounting: epsilon on LS plus epsilon on SS (what its release guarantees is another matter).
    "DPBirch": (
        lambda k, eps, seed: dp.DPBirch(
            k, epsilon=eps, threshold=0.2, branching_factor=5, bounds=BOX, random_state=seed
        ),
        2,
    ),
    "DPBirchPublicTree": (
        lambda k, eps, seed: dp.DPBirchPublicTree(
            k, epsilon=eps, threshold=0.2, branching_factor=5, n_skeleton=200, bounds=BOX, random_state=seed
        ),
        1,
    ),
    # The ball of radius 1 around the box's centre holds [0, 1)^d for every d <= 4 that numeric_data draws.
    "LSHCoresetKMeans": (
        lambda k, eps, seed: dp.LSHCoresetKMeans(
            k, epsilon=eps, radius=BALL_RADIUS, center=0.5, max_depth=6, random_state=seed
        ),
        1,
    ),
    "OneRoundLocalKMeans": (
        lambda k, eps, seed: dp.OneRoundLocalKMeans(k, epsilon=eps, bounds=BOX, random_state=seed),
        1,
    ),
}


@pytest.mark.parametrize("name", list(NUMERIC))
@SETTINGS
@given(data=numeric_data(), eps=EPSILON, seed=SEED)
def test_numeric_estimator_properties(name, data, eps, seed):
    factory, budget_multiple = NUMERIC[name]
    X, k = data

    def make():
        return factory(k, eps, seed)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # BIRCH's "fewer subclusters than K" and noisy-radius notes
        fitted = _fit_or_refuse(make, X)
        centres = np.asarray(fitted.cluster_centers_)
        assert centres.ndim == 2 and centres.shape[1] == X.shape[1] and 1 <= centres.shape[0]
        assert np.all(np.isfinite(centres))
        if name == "LSHCoresetKMeans":  # its domain is the declared ball: its centres are averages of points in it
            assert np.all(np.linalg.norm(centres - 0.5, axis=1) <= BALL_RADIUS)
        elif name != "DPBirch":  # the paper's noisy centroids are released unclipped; every other centre is clipped
            assert np.all((centres >= BOX[0]) & (centres <= BOX[1]))
        labels = fitted.predict(X)  # private estimators keep no labels_
        assert labels.shape == (X.shape[0],)
        assert np.all((labels >= 0) & (labels < centres.shape[0]))
        if budget_multiple is None:
            np.testing.assert_array_equal(fitted.labels_, fitted.fit_predict(X))
        else:
            assert not hasattr(fitted, "labels_")
            # ex ante: at least what the run spent (more when it stopped early), or inf for a leaky setting
            assert fitted.epsilon_spent_ <= fitted.epsilon_guaranteed_ * (1 + 1e-12)
        np.testing.assert_array_equal(fitted.predict(X[:5]), fitted.predict(X[:5]))
        if budget_multiple is not None:
            assert fitted.epsilon_spent_ <= eps * budget_multiple * (1 + 1e-9)
        _same_seed_same_result(make, X, fitted)


def test_every_estimator_has_its_properties_tested():
    covered = {type(make(2, 1.0, (2, 2), 0)) for make, _ in CATEGORICAL.values()}
    covered |= {type(make(2, 1.0, 0)) for make, _ in NUMERIC.values()}
    missing = [cls.__name__ for cls in discover.estimators() if cls not in covered]
    assert not missing, f"give CATEGORICAL or NUMERIC a configuration of: {missing}"

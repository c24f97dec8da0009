"""scikit-learn's estimator contract for the numeric estimators.

``parametrize_with_checks`` runs scikit-learn's own battery of checks on every numeric estimator of
``dpclust_lib.cluster`` (found, not listed). The private estimators are built with the named leaky options
(``bounds="data"``, ``n_public="data"``) because the checks feed them arbitrary data whose domain no
caller declared; ``expected_failed_checks`` lists each check an estimator legitimately fails, with the
reason, strictly: everything else must pass, and an expected failure that passes fails the test.
"""

import inspect
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.metrics import adjusted_rand_score
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils.estimator_checks import parametrize_with_checks

from dpclust_lib import PrivacyLeakWarning

from . import discover

UNIT = (0.0, 1.0)
PUBLIC = (
    "bounds",
    "n_public",
    "radius",
)  # the public quantities a numeric estimator may take; the checks' data declare none

# Every numeric estimator, found in dpclust_lib.cluster: a new one is checked without being listed here.
NUMERIC = [cls for cls in discover.estimators() if not discover.is_categorical(cls)]
PRIVATE = [cls for cls in NUMERIC if discover.is_private(cls)]


def _as_the_checks_need_it(cls):
    """One instance for scikit-learn's checks, which feed any data: every public quantity read off it, by name."""
    return cls(**{name: "data" for name in PUBLIC if name in cls().get_params()})


CHECKED = [_as_the_checks_need_it(cls) for cls in NUMERIC]

NO_LABELS = (
    "a private estimator keeps no labels_: the labels of the fitted records are computed from the "
    "private data and are not part of the release (predict / exact_diagnostics give them)"
)

CLAMPS = (
    "a private estimator never refuses a record for its value (the refusal would depend on the private data): NaN and "
    "inf get the declared treatment of clamp_records; tests/test_bad_input_numeric.py checks it"
)
EXPECTED_FAILURES = {
    "KMeans": {
        "check_sample_weight_equivalence_on_dense_data": (
            "k-means++ draws its seeds in the order of the rows: integer weights and repeated (shuffled) rows give "
            "the same distribution of seeds, not the same draws (scikit-learn's BisectingKMeans is listed for the "
            "same reason)"
        ),
    },
}


def _expected_failed_checks(estimator):
    # Every private estimator fails check_clustering (no labels_); beyond that, only the listed ones.
    private = {"check_clustering": NO_LABELS, "check_estimators_nan_inf": CLAMPS} if type(estimator) in PRIVATE else {}
    return private | EXPECTED_FAILURES.get(type(estimator).__name__, {})


# xfail_strict: an expected failure that passes fails too, so the list of expected failures cannot go stale.
@parametrize_with_checks(CHECKED, expected_failed_checks=_expected_failed_checks, xfail_strict=True)
def test_scikit_learn_checks(estimator, check):
    with warnings.catch_warnings():
        # The leaky options warn by design; BIRCH notes small trees and noisy radii.
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        warnings.simplefilter("ignore", UserWarning)
        check(estimator)


def test_the_estimators_are_found():
    names = {cls.__name__ for cls in NUMERIC}
    assert {"KMeans", "DPKMeans", "DPQTKMeans", "Birch", "DPBirch"} <= names and "KModes" not in names


def _private(cls, **kw):
    params = cls().get_params()
    extra = {"n_public": 300} if "n_public" in params else {}
    # A ball's estimator (LSHCoresetKMeans) declares the ball around [0, 1]^2 instead of the box.
    domain = {"radius": 0.75, "center": 0.5} if "radius" in params else {"bounds": UNIT}
    return cls(3, random_state=0, **domain, **extra, **kw)


def _blobs(n=300, seed=0):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.2, 0.2], [0.8, 0.3], [0.5, 0.8]])
    y = rng.integers(0, 3, n)
    return np.clip(centres[y] + rng.normal(0, 0.04, (n, 2)), 0, 1), y


@pytest.mark.parametrize("cls", NUMERIC)
def test_only_n_clusters_is_positional(cls):
    params = list(inspect.signature(cls).parameters.values())
    assert params[0].name == "n_clusters" and params[0].kind == inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert all(p.kind == inspect.Parameter.KEYWORD_ONLY for p in params[1:])
    with pytest.raises(TypeError):
        cls(3, 0.5)


@pytest.mark.parametrize("cls", PRIVATE)
def test_private_estimators_report_their_guarantee(cls):
    X, _ = _blobs()
    with warnings.catch_warnings(record=True) as first:  # the BIRCH estimators warn about the toy tree
        warnings.simplefilter("always")
        est = _private(cls).fit(X)
    local = cls.__name__ == "OneRoundLocalKMeans"  # the numeric local protocol: its budget is each user's
    assert est.neighbouring_ == ("any two records of one user" if local else "add/remove one record")
    if cls.__name__ == "DPBirch":  # the paper's algorithm releases exact N: never DP
        assert est.epsilon_guaranteed_ == float("inf") and est.epsilon_spent_ == pytest.approx(2.0)
    else:
        assert est.epsilon_spent_ <= est.epsilon_guaranteed_ <= 1.0 + 1e-12
    assert not hasattr(est, "labels_")
    diag = est.exact_diagnostics(X)
    np.testing.assert_array_equal(diag.labels, est.predict(X))
    with warnings.catch_warnings(record=True) as again:  # a refit warns as the first fit did, and no more
        warnings.simplefilter("always")
        np.testing.assert_array_equal(est.fit_predict(X), est.predict(X))
    assert [w.category for w in again] == [w.category for w in first]


@pytest.mark.parametrize("cls", NUMERIC)
def test_feature_names_and_not_fitted(cls):
    X, _ = _blobs()
    frame = pd.DataFrame(X, columns=["a", "b"])
    est = _private(cls) if cls in PRIVATE else cls(3)
    with pytest.raises(NotFittedError):
        est.predict(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        est.fit(frame)
    assert est.n_features_in_ == 2
    np.testing.assert_array_equal(est.feature_names_in_, ["a", "b"])
    with pytest.warns(UserWarning, match="feature names"):
        est.predict(X)  # fitted with names, predicted without: scikit-learn's warning


def _tenth(X):
    return np.asarray(X) / 10.0


@pytest.mark.parametrize("cls", NUMERIC)
def test_clone_get_params_pipeline_and_grid_search(cls):
    X, y = _blobs()
    est = _private(cls) if cls in PRIVATE else cls(3)
    if "threshold" in est.get_params():
        est.set_params(threshold=0.05)  # BIRCH's default 0.5 makes one subcluster of [0, 1]^2
    assert clone(est).get_params() == est.get_params()
    # A public, data-independent rescaling in front: the domain [0, 10] becomes the declared [0, 1].
    pipe = Pipeline([("scale", FunctionTransformer(_tenth)), ("cluster", est)])
    grid = GridSearchCV(
        pipe,
        {"cluster__n_clusters": [2, 3]},
        cv=2,
        scoring=lambda model, Xs, ys: adjusted_rand_score(ys, model.predict(Xs)),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        if cls in PRIVATE:
            pipe.set_params(cluster__epsilon=1e3)  # enough budget that K is what decides
        grid.fit(X * 10, y)
    assert grid.best_params_ == {"cluster__n_clusters": 3}
    assert grid.predict(X * 10).shape == (len(X),)

"""The categorical estimators follow scikit-learn's estimator contract.

``parametrize_with_checks`` runs every scikit-learn check on each categorical estimator of
``dpclust_lib.cluster`` (found, not listed); the checks an estimator legitimately fails are named in
``EXPECTED_FAILURES`` with the reason, strictly: an expected failure that passes fails the test too (so
the list cannot go stale), and an estimator without an entry fails. The private estimators are checked
with ``domain_sizes="data"``: the checks' data sets have no declared schema.
"""

import inspect
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.metrics import adjusted_rand_score
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OrdinalEncoder
from sklearn.utils import Bunch
from sklearn.utils.estimator_checks import parametrize_with_checks

from dpclust_lib import PrivacyLeakWarning

from . import discover

FLOATS = "integer category codes only: float data is refused, never rounded or cast"
OBJECT = "integer category codes only: an object array (mixed or ragged input) is refused, never cast"
NO_LABELS = (
    "integer category codes only (the check clusters standardised floats); and a private "
    "estimator keeps no labels_ (labels of the private records are not a release: predict(X))"
)
K1 = (
    "the check sets n_clusters=1, and protect_cluster_index=True (the default) randomises the cluster "
    "index over K >= 2 values: n_clusters=1 is refused with a ValueError naming both parameters"
)

COMMON = {
    "check_estimators_dtypes": FLOATS,
    "check_dtype_object": OBJECT,
    "check_clustering": NO_LABELS,
}
EXPECTED_FAILURES = {
    "KModes": COMMON
    | {
        "check_clustering": FLOATS + " (the check clusters standardised floats)",
        "check_sample_weights_not_overwritten": FLOATS,
        "check_sample_weight_equivalence_on_dense_data": FLOATS,
    },
    "DPKModes": COMMON,
    "LDPKModes": COMMON,
    "SamplingLDPKModes": COMMON
    | {
        "check_dont_overwrite_parameters": K1,
        "check_methods_subset_invariance": K1,
        "check_fit2d_1sample": K1,
        "check_fit2d_1feature": K1,
        "check_fit2d_predict1d": K1,
    },
}


# Every categorical estimator, found in dpclust_lib.cluster.
CATEGORICAL = [cls for cls in discover.estimators() if discover.is_categorical(cls)]


def _estimators():
    # n_clusters=2: several checks fit data with only two distinct rows; the private ones read the domains off
    # the data, by name (the non-private KModes does so by default).
    return [
        cls(2, random_state=0, **({"domain_sizes": "data"} if discover.is_private(cls) else {})) for cls in CATEGORICAL
    ]


def test_every_categorical_estimator_lists_its_expected_failures():
    names = {cls.__name__ for cls in CATEGORICAL}
    assert {"KModes", "LDPKModes"} <= names and "DPKMeans" not in names
    assert names == set(EXPECTED_FAILURES), (
        f"give EXPECTED_FAILURES an entry for: {sorted(names - set(EXPECTED_FAILURES))}"
    )


def _expected(estimator):
    return EXPECTED_FAILURES.get(type(estimator).__name__, {})


# xfail_strict: exactly the expected checks fail (an expected failure that passes fails the test).
@pytest.mark.filterwarnings("ignore::dpclust_lib.PrivacyLeakWarning")
@parametrize_with_checks(_estimators(), expected_failed_checks=_expected, xfail_strict=True)
def test_sklearn_check(estimator, check):
    check(estimator)


# --------------------------------------------------------------------------- the contract, by hand

SIZES = (3, 2, 4)


def _data(seed=0, n=240):
    """Two groups of integer-coded records with 10% of the values replaced at random; and the group."""
    gen = np.random.default_rng(seed)
    group = gen.integers(0, 2, n)
    X = np.array([[0, 0, 0], [2, 1, 3]])[group]
    noise = gen.random(X.shape) < 0.1
    return np.where(noise, gen.integers(0, SIZES, size=X.shape), X), group


# The budget at which each private estimator recovers the two groups of _data (its noise is that of its mechanism).
EPSILON = {"DPKModes": 50.0, "LDPKModes": 5.0, "SamplingLDPKModes": 20.0}


def _factory(cls):
    epsilon = {"epsilon": EPSILON[cls.__name__]} if discover.is_private(cls) else {}
    return lambda **kw: cls(2, domain_sizes=SIZES, random_state=0, **epsilon, **kw)


PRIVATE_CLASSES = [cls for cls in CATEGORICAL if discover.is_private(cls)]
NAMES = [cls.__name__ for cls in PRIVATE_CLASSES]
PRIVATE = [_factory(cls) for cls in PRIVATE_CLASSES if cls.__name__ in EPSILON]
ALL = [_factory(cls) for cls in CATEGORICAL if cls.__name__ in EPSILON or not discover.is_private(cls)]


def test_every_private_categorical_estimator_has_a_budget_for_the_contract_tests():
    assert set(NAMES) == set(EPSILON), f"give EPSILON an entry for: {sorted(set(NAMES) - set(EPSILON))}"


@pytest.mark.parametrize("cls", CATEGORICAL)
def test_only_n_clusters_is_positional(cls):
    params = list(inspect.signature(cls).parameters.values())
    assert params[0].name == "n_clusters" and params[0].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params[1:])
    with pytest.raises(TypeError):
        cls(2, 1.0)


@pytest.mark.parametrize("make", ALL)
def test_get_params_clone_and_not_fitted(make):
    est = make()
    twin = clone(est)
    assert twin is not est and twin.get_params() == est.get_params()
    assert est.set_params(n_clusters=3) is est and est.n_clusters == 3
    with pytest.raises(NotFittedError):
        est.predict(_data()[0])


@pytest.mark.parametrize("make", ALL)
def test_n_features_in_and_feature_names_in(make):
    X, _ = _data()
    est = make().fit(X)
    assert est.n_features_in_ == 3 and not hasattr(est, "feature_names_in_")
    frame = pd.DataFrame(X, columns=["colour", "size", "shape"])
    est = make().fit(frame)
    assert list(est.feature_names_in_) == ["colour", "size", "shape"]
    with pytest.warns(UserWarning, match="does not have valid feature names"):  # scikit-learn's own warning
        np.testing.assert_array_equal(est.predict(frame), est.predict(X))
        with pytest.raises(ValueError, match="X has 2 features, but"):
            est.predict(X[:, :2])
    with pytest.raises(ValueError, match="feature names should match"):
        est.predict(frame.rename(columns={"size": "weight"}))


@pytest.mark.parametrize("make", PRIVATE, ids=[name for name in NAMES if name in EPSILON])
def test_private_release_keeps_no_exact_data(make):
    X, _ = _data()
    est = make().fit(X)
    assert not hasattr(est, "labels_")
    # Every fitted attribute is computed from the release: none has one entry per record.
    for name, value in vars(est).items():
        if name.endswith("_") and hasattr(value, "shape"):
            assert len(value.shape) == 0 or value.shape[0] != len(X) or name == "synthetic_data_", name
    d = est.exact_diagnostics(X)
    assert isinstance(d, Bunch) and d.private is False
    dist = (X[:, None, :] != est.cluster_centers_[None, :, :]).sum(axis=2)
    np.testing.assert_array_equal(d.labels, dist.argmin(axis=1))
    np.testing.assert_array_equal(est.fit_predict(X), dist.argmin(axis=1))
    assert d.cost == dist.min(axis=1).sum() and d.cluster_sizes.sum() == len(X)
    assert "NOT private" in type(est).exact_diagnostics.__doc__


@pytest.mark.parametrize("make", ALL)
def test_pipeline_from_strings_to_clusters(make):
    """Category names -> OrdinalEncoder codes -> the estimator, as one scikit-learn pipeline."""
    X, _ = _data()
    names = [np.array(list("abc")), np.array(["s", "l"]), np.array(list("wxyz"))]
    strings = np.column_stack([names[j][X[:, j]] for j in range(3)])
    pipe = Pipeline(
        [("codes", OrdinalEncoder(categories=[list(n) for n in names], dtype=np.int64)), ("cluster", make())]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        labels = pipe.fit(strings).predict(strings)
    np.testing.assert_array_equal(labels, make().fit(X).predict(X))


@pytest.mark.parametrize("make", ALL)
def test_grid_search_scores_are_the_fold_by_fold_scores(make):
    """GridSearchCV clones, sets, fits and predicts: its scores are those of a hand-written fold loop."""
    X, group = _data(n=300)
    cv = KFold(3)
    search = GridSearchCV(make(), {"n_clusters": [2, 4]}, scoring="adjusted_rand_score", cv=cv).fit(X, group)
    for k, score in zip(search.cv_results_["param_n_clusters"], search.cv_results_["mean_test_score"]):
        by_hand = [
            adjusted_rand_score(group[test], make().set_params(n_clusters=k).fit(X[train]).predict(X[test]))
            for train, test in cv.split(X)
        ]
        assert score == pytest.approx(np.mean(by_hand))
    assert search.best_estimator_.n_clusters == search.best_params_["n_clusters"]

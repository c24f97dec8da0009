"""Bad input to the numeric estimators and their validation: a clear error naming the parameter, never a
silent result, a raw numpy traceback, or a record's value in the message (error text is an output too).
"""

import warnings

import numpy as np
import pytest
from scipy import sparse
from sklearn.exceptions import NotFittedError

import dpclust_lib as dp
from dpclust_lib.cluster.dpqt_kmeans import MAX_HEIGHT, MAX_NODES
from dpclust_lib.cluster.kmeans import budget_shares
from dpclust_lib.validation import check_bounds, check_categorical, refuse_outside, refuse_outside_domain

SECRET = 0.7316842  # a record value no message may repeat
X = np.random.default_rng(0).random((40, 2))
X_SECRET = X.copy()
X_SECRET[3, 1] = SECRET * 3  # outside [0, 1]
UNIT = (0.0, 1.0)
PRIVATE = {
    "DPKMeans": lambda **kw: dp.DPKMeans(2, **kw),
    "IDPKMeans": lambda **kw: dp.IDPKMeans(2, **kw),
    "DPKMeansPP": lambda **kw: dp.DPKMeansPP(2, **({"n_public": 40} | kw)),
    "EUGKMeans": lambda **kw: dp.EUGKMeans(2, **({"n_public": 40} | kw)),
    "DPQTKMeans": lambda **kw: dp.DPQTKMeans(2, **({"n_public": 40} | kw)),
    "DPBirch": lambda **kw: dp.DPBirch(2, **kw),
    "DPBirchPublicTree": lambda **kw: dp.DPBirchPublicTree(2, **kw),
    "OneRoundLocalKMeans": lambda **kw: dp.OneRoundLocalKMeans(2, **kw),
}
# LSHCoresetKMeans takes a ball (radius, center), not bounds: its own cases are in tests/test_lsh_coreset.py.
BALL = {"LSHCoresetKMeans": lambda **kw: dp.LSHCoresetKMeans(2, **({"radius": 1.0} | kw))}
ALL = PRIVATE | BALL | {"KMeans": lambda **kw: dp.KMeans(2, **kw), "Birch": lambda **kw: dp.Birch(2, **kw)}
# Under add/remove-one neighbours the number of records is private: these accept an empty X and any K
# (tests/test_privacy.py checks what they release); only the non-private and the never-private refuse.
ACCEPT_ANY_N = {
    "DPKMeans",
    "IDPKMeans",
    "DPKMeansPP",
    "EUGKMeans",
    "DPQTKMeans",
    "DPBirchPublicTree",
    "DPBirch",
    "OneRoundLocalKMeans",
    "LSHCoresetKMeans",
}


def _fit(make, data=X, **kw):
    return lambda: make(**kw).fit(data)


CASES = []
for name, make in PRIVATE.items():
    CASES += [
        (f"{name} bounds missing", _fit(make), ValueError, ["bounds is required", "bounds='data'"]),
        (f"{name} bounds word", _fit(make, bounds="domain"), ValueError, ["bounds", "'domain'"]),
        (f"{name} bounds triple", _fit(make, bounds=(0, 1, 2)), ValueError, ["bounds", "pair"]),
        (f"{name} bounds inverted", _fit(make, bounds=(1, 0)), ValueError, ["bounds", "upper must exceed lower"]),
        (f"{name} bounds infinite", _fit(make, bounds=(0, np.inf)), ValueError, ["bounds", "finite"]),
        (f"{name} bounds overflow", _fit(make, bounds=(-1e308, 1e308)), ValueError, ["bounds", "overflows"]),
        (f"{name} bounds text", _fit(make, bounds=("a", "b")), TypeError, ["bounds lower"]),
        (f"{name} bounds width", _fit(make, bounds=([0, 0, 0], [1, 1, 1])), ValueError, ["bounds", "2 lower"]),
        (f"{name} epsilon 0", _fit(make, bounds=UNIT, epsilon=0.0), ValueError, ["epsilon"]),
        (f"{name} epsilon nan", _fit(make, bounds=UNIT, epsilon=np.nan), ValueError, ["epsilon"]),
        (f"{name} epsilon text", _fit(make, bounds=UNIT, epsilon="1"), TypeError, ["epsilon"]),
    ]
for name, make in {"KMeans": ALL["KMeans"], "Birch": ALL["Birch"]}.items():  # the private ones: see below
    CASES += [
        (f"{name} NaN", _fit(make, np.array([[0.1, np.nan], [0.2, 0.3]])), ValueError, ["X", "NaN"]),
        (f"{name} inf", _fit(make, np.array([[0.1, np.inf], [0.2, 0.3]])), ValueError, ["X", "inf"]),
    ]
for name, make in ALL.items():
    kw = {"bounds": UNIT} if name in PRIVATE else {}
    CASES += [
        (f"{name} no features", _fit(make, np.zeros((5, 0)), **kw), ValueError, ["X", "0 feature"]),
        (f"{name} 1-D", _fit(make, np.zeros(5), **kw), ValueError, ["X", "2-D", "Reshape"]),
        (f"{name} 3-D", _fit(make, np.zeros((2, 2, 2)), **kw), ValueError, ["X", "2-D"]),
        (f"{name} text", _fit(make, np.array([["a", "b"], ["c", "d"]]), **kw), TypeError, ["X", "numeric"]),
        (f"{name} complex", _fit(make, X + 1j, **kw), ValueError, ["X", "Complex"]),
        (f"{name} sparse", _fit(make, sparse.csr_matrix(X), **kw), TypeError, ["X", "sparse"]),
        (
            f"{name} object",
            _fit(make, np.array([[0.1, {"a": 1}], [0.2, 0.3]], dtype=object), **kw),
            TypeError,
            ["X", "dict"],
        ),
        (f"{name} ragged", _fit(make, [[0.1, 0.2], [0.3]], **kw), TypeError, ["X"]),
        (
            f"{name} n_clusters 0",
            lambda make=make, kw=kw: make(**kw).set_params(n_clusters=0).fit(X),
            ValueError,
            ["n_clusters"],
        ),
        (
            f"{name} n_clusters float",
            lambda make=make, kw=kw: make(**kw).set_params(n_clusters=2.0).fit(X),
            TypeError,
            ["n_clusters"],
        ),
        (f"{name} predict unfitted", lambda make=make, kw=kw: make(**kw).predict(X), NotFittedError, ["not fitted"]),
        (f"{name} positional", lambda make=make: type(make(**kw))(2, 0.5), TypeError, ["positional"]),
    ]
CASES += [
    *[
        (f"{name} empty", _fit(make, np.zeros((0, 2)), **kw), ValueError, ["X", "empty"])
        for name, make in ALL.items()
        if name not in ACCEPT_ANY_N
        for kw in [{"bounds": UNIT} if name in PRIVATE else {}]
    ],
    *[
        (f"{name} empty, domain from data", _fit(make, np.zeros((0, 2)), bounds="data"), ValueError, ["bounds='data'"])
        for name, make in PRIVATE.items()
        if name in ACCEPT_ANY_N
    ],
    # BIRCH with more clusters than records warns and keeps each subcluster (scikit-learn's behaviour).
    ("KMeans n_clusters > n", lambda: dp.KMeans(3).fit(X[:2]), ValueError, ["n_clusters=3", "n_samples=2"]),
    *[
        (
            f"{name} n_clusters > n_public",
            lambda make=make: make(bounds=UNIT, n_public=2).set_params(n_clusters=3).fit(X),
            ValueError,
            ["n_clusters=3", "n_public=2"],
        )
        for name, make in PRIVATE.items()
        if "n_public" in make(bounds=UNIT).get_params()
    ],
    (
        "n_public missing DPKMeansPP",
        _fit(lambda **kw: dp.DPKMeansPP(2, **kw), bounds=UNIT),
        ValueError,
        ["n_public is required", "n_public='data'"],
    ),
    (
        "n_public missing EUGKMeans",
        _fit(lambda **kw: dp.EUGKMeans(2, **kw), bounds=UNIT),
        ValueError,
        ["n_public is required", "grid_size"],
    ),
    (
        "n_public missing DPQTKMeans",
        _fit(lambda **kw: dp.DPQTKMeans(2, **kw), bounds=UNIT),
        ValueError,
        ["n_public is required", "max_height and threshold"],
    ),
    ("n_public 0", _fit(PRIVATE["EUGKMeans"], bounds=UNIT, n_public=0), ValueError, ["n_public"]),
    ("n_public float", _fit(PRIVATE["EUGKMeans"], bounds=UNIT, n_public=2.5), TypeError, ["n_public"]),
    ("n_public word", _fit(PRIVATE["EUGKMeans"], bounds=UNIT, n_public="many"), TypeError, ["n_public"]),
    (
        "dpqt max_height cap",
        _fit(PRIVATE["DPQTKMeans"], bounds=UNIT, max_height=MAX_HEIGHT + 1),
        ValueError,
        ["max_height", f"<= {MAX_HEIGHT}"],
    ),
    ("dpqt max_height huge", _fit(PRIVATE["DPQTKMeans"], bounds=UNIT, max_height=10**9), ValueError, ["max_height"]),
    (
        "dpqt node cap",
        _fit(
            PRIVATE["DPQTKMeans"],
            # 2,000 records: the root's count clears its noise whatever the draw, and about half of its 4,096
            # children would split again (see test_dpqt.test_node_cap_refuses_before_allocating)
            np.random.default_rng(1).random((2000, 12)),
            bounds=(0, 1),
            max_height=12,
            threshold=0.0,
            random_state=0,
        ),
        ValueError,
        ["quadtree", f"{MAX_NODES:,}", "threshold"],
    ),
    (
        "halving underflow",
        _fit(PRIVATE["DPKMeans"], bounds=UNIT, schedule="halving", max_iter=5000),
        ValueError,
        ["halving", "max_iter", "underflow"],
    ),
    ("halving underflow shares", lambda: budget_shares("halving", 1.0, 1100), ValueError, ["halving"]),
    ("idp split", _fit(PRIVATE["IDPKMeans"], bounds=UNIT, split="sorted"), ValueError, ["split", "'sorted'"]),
    ("dpkmeans init word", _fit(PRIVATE["DPKMeans"], bounds=UNIT, init="data"), ValueError, ["init", "'data'"]),
    ("dpkmeans init shape", _fit(PRIVATE["DPKMeans"], bounds=UNIT, init=np.zeros((3, 2))), ValueError, ["init array"]),
    (
        "eug grid too dense",
        _fit(PRIVATE["EUGKMeans"], bounds=UNIT, grid_size=4000),
        ValueError,
        ["grid_size", "10,000,000"],
    ),
    ("birch threshold nan", _fit(ALL["Birch"], threshold=np.nan), ValueError, ["threshold"]),
    ("birch branching 2.5", _fit(ALL["Birch"], branching_factor=2.5), TypeError, ["branching_factor"]),
    (
        "public tree skeleton width",
        _fit(PRIVATE["DPBirchPublicTree"], bounds=UNIT, skeleton=np.zeros((3, 5))),
        ValueError,
        ["skeleton has 5 features"],
    ),
    (
        "public tree budget_split",
        _fit(PRIVATE["DPBirchPublicTree"], bounds=UNIT, budget_split=(1, 0, 1)),
        ValueError,
        ["budget_split"],
    ),
    ("bounds none direct", lambda: check_bounds(None, 2, X), ValueError, ["bounds is required"]),
    (
        "categorical outside",
        lambda: check_categorical(np.array([[0, 1], [2, 7]]), (3, 3)),
        ValueError,
        ["X[1, 1]", "domain_sizes[1]=3"],
    ),
]


def _fitted(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return ALL[name](**({"bounds": UNIT} if name in PRIVATE else {})).fit(X)


for name in ALL:
    CASES += [
        (
            f"{name} predict width",
            lambda name=name: _fitted(name).predict(np.zeros((3, 3))),
            ValueError,
            ["X has 3 features", "expecting 2"],
        ),
        (f"{name} predict NaN", lambda name=name: _fitted(name).predict([[np.nan, 0.1]]), ValueError, ["NaN"]),
    ]
for name in PRIVATE:
    CASES += [
        (
            f"{name} diagnostics unfitted",
            lambda name=name: PRIVATE[name](bounds=UNIT).exact_diagnostics(X),
            NotFittedError,
            ["not fitted"],
        ),
        (
            f"{name} diagnostics width",
            lambda name=name: _fitted(name).exact_diagnostics(np.zeros((3, 1))),
            ValueError,
            ["X has 1 features"],
        ),
    ]
for name in ("DPBirch", "DPBirchPublicTree"):
    CASES.append((f"{name} relabel needs X", lambda name=name: _fitted(name).relabel(2), ValueError, ["X is required"]))


@pytest.mark.parametrize("call, exc, words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_refused_clearly(call, exc, words):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # BIRCH's small-tree notes; leaky options are not used here
        with pytest.raises(exc) as err:
            call()
    message = str(err.value)
    for word in words:
        assert word in message, f"{word!r} missing from: {message}"
    for secret in (repr(SECRET * 3), f"{SECRET * 3:g}", "7]"):
        assert secret not in message, f"a record value is echoed: {message}"


def test_catalogue_size():
    assert len(CASES) >= 180


# Private values: a record outside the bounds, inf or NaN is clamped (NaN to the box's centre), never refused.
TREATED = {
    "outside": (X_SECRET, np.clip(X_SECRET, 0.0, 1.0)),
    "inf": (np.vstack([X, [[np.inf, -np.inf]]]), np.vstack([X, [[1.0, 0.0]]])),
    "NaN": (np.vstack([X, [[np.nan, 0.25]]]), np.vstack([X, [[0.5, 0.25]]])),
}


@pytest.mark.parametrize("case", sorted(TREATED))
@pytest.mark.parametrize("name", sorted(PRIVATE))
def test_private_values_get_the_declared_treatment(name, case):
    """The fit on records with a bad value is the fit on the records as the declared rule maps them, seed for seed,
    with no exception and no warning beyond those of the configuration itself (DPBirch's, which never changes)."""
    given, mapped = TREATED[case]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a = PRIVATE[name](bounds=UNIT, random_state=3).fit(given)
    with warnings.catch_warnings(record=True) as expected:
        warnings.simplefilter("always")
        b = PRIVATE[name](bounds=UNIT, random_state=3).fit(mapped)
    assert [str(w.message) for w in caught] == [str(w.message) for w in expected]
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    assert a.epsilon_guaranteed_ == b.epsilon_guaranteed_


def test_a_refusal_is_asked_for_by_name_and_warns():
    with pytest.warns(dp.PrivacyLeakWarning, match="not covered"), pytest.raises(ValueError) as err:
        refuse_outside(X_SECRET, UNIT)
    assert "X[3, 1]" in str(err.value) and f"{SECRET * 3:g}" not in str(err.value)
    with pytest.warns(dp.PrivacyLeakWarning), pytest.raises(ValueError, match=r"X\[1, 1\]"):
        refuse_outside_domain(np.array([[0, 1], [2, 7]]), (3, 3))

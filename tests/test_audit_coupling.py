"""The coupling audit of the central estimators (dpclust_lib.audit.coupling).

The audited loss of each private setting is checked against the loss its own analysis predicts
for the record that differs (closed forms below: one count per release, or a sum of scaled
coordinates plus a count), which is epsilon_spent_ exactly where the analysis is tight. Each
documented leaky option must be caught. The harness itself is checked on toy estimators whose
loss is known by construction.
"""

import copy

import numpy as np
import pytest

from dpclust_lib import DPBirch, DPBirchPublicTree, DPKMeans, DPKMeansPP, DPKModes, DPQTKMeans, EUGKMeans, IDPKMeans
from dpclust_lib.audit import audit_neighbours, audit_table, coupled_loss
from dpclust_lib.audit.coupling import domain_points, neighbours, public_differences
from dpclust_lib.cluster.eug_kmeans import eug_grid_size
from dpclust_lib.mechanisms import laplace_mechanism

FROM_DATA = "data"  # bounds / n_public / domain_sizes read off the private records (leaky, by name)

EPS = 1.0
UNIT = (0.0, 1.0)
SEEDS = (0, 1)
SIZES = (3, 4, 2)
# The exact sampler adds its noise to the answer rounded to a grid, and pays for the rounding of all d
# entries in its scale (d gamma <= 2^-10 of the sensitivity): the coupled loss of a release then lies
# within a relative 2^-9 of the analysis' |v_D - v_D'| / b, and never above the claim (BUDGET_REL).
REL = 2.0**-9
BUDGET_REL = 1e-12


def _numeric(n=41, seed=7):
    """n records in [0, 1]^2, half of them dense near the upper corner; n odd (IDP's random split couples)."""
    rng = np.random.default_rng(seed)
    return np.vstack([0.9 + 0.1 * rng.random((n // 2, 2)), rng.random((n - n // 2, 2))])


def _categorical(n=41, seed=7):
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.integers(0, k, n) for k in SIZES]).astype(np.int64)


X = _numeric()
C = _categorical()
BOX = domain_points([0.0, 0.0], [1.0, 1.0])
WIDE = (-1.0, 2.0)  # bounds off the unit box: scaled sums, and |x| up to 2
XW = 3.0 * X - 1.0
BOXW = domain_points([-1.0, -1.0], [2.0, 2.0])
CAT = domain_points([0, 0, 0], [k - 1 for k in SIZES], integer=True)
BIRCH = dict(threshold=0.2, branching_factor=4, n_clusters=2)


def _u1(x, lower=0.0, upper=1.0):
    """L1 norm of the record scaled to [0, 1]^d by the bounds, u = (x - lower) / (upper - lower)."""
    return float(np.abs((np.asarray(x, dtype=float) - lower) / (upper - lower)).sum())


def _quadtree_loss(est, x, gamma):
    """Loss of one record in DPQT: the tree levels its node is counted at, then the leaf counts.

    The record sits in one node per released level down to its leaf; a leaf at depth h < maxH
    released its own count (and stopped), a leaf at depth maxH did not.
    """
    tree, max_h = est.tree_, est.max_height_
    inside = tree.is_leaf & np.all(tree.lower <= x, axis=1) & np.all((x < tree.upper) | (tree.upper == 1.0), axis=1)
    (leaf,) = np.flatnonzero(inside)
    levels = min(int(tree.depth[leaf]) + 1, max_h)
    return levels * gamma * EPS / max_h + (1 - gamma) * EPS


# name, unfitted estimator, data, points, expected loss of a record x (None: compare with epsilon_spent_)
PRIVATE = [
    (
        "DPKMeans",
        DPKMeans(n_clusters=2, epsilon=EPS, max_iter=3, bounds=UNIT),
        X,
        BOX,
        lambda est, x: (_u1(x) + 1) / 3 * EPS,
    ),
    (
        "DPKMeans halving",
        DPKMeans(n_clusters=2, epsilon=EPS, max_iter=3, schedule="halving", bounds=UNIT),
        X,
        BOX,
        lambda est, x: (_u1(x) + 1) / 3 * EPS * (1 - 2.0**-3),
    ),
    (
        "DPKMeans wide bounds",
        DPKMeans(n_clusters=2, epsilon=EPS, max_iter=3, bounds=WIDE),
        XW,
        BOXW,
        lambda est, x: (_u1(x, *WIDE) + 1) / 3 * EPS,
    ),
    (
        "IDPKMeans",
        IDPKMeans(n_clusters=2, epsilon=EPS, max_iter=3, bounds=UNIT),
        X,
        BOX,
        lambda est, x: (_u1(x) + 1) / 3 * EPS,
    ),
    (
        "DPKMeansPP",
        DPKMeansPP(n_clusters=2, epsilon=EPS, max_iter=2, bounds=UNIT, n_public=41),
        X,
        BOX,
        lambda est, x: 0.5 * EPS + 0.5 * EPS * (_u1(x) + 1) / 3,
    ),
    (
        "EUGKMeans",
        EUGKMeans(n_clusters=2, epsilon=EPS, max_iter=10, bounds=UNIT, n_public=41),
        X,
        BOX,
        lambda est, x: EPS,
    ),
    (
        "DPQTKMeans",
        DPQTKMeans(
            n_clusters=2, epsilon=EPS, gamma=0.3, max_height=3, threshold=3.0, n_public=41, bounds=UNIT, max_iter=10
        ),
        X,
        BOX,
        lambda est, x: _quadtree_loss(est, x, 0.3),
    ),
    ("DPKModes", DPKModes(n_clusters=2, epsilon=EPS, max_iter=3, domain_sizes=SIZES), C, CAT, None),
    (
        "DPBirchPublicTree",
        DPBirchPublicTree(epsilon=EPS, n_skeleton=100, bounds=UNIT, **BIRCH),
        X,
        BOX,
        # shares (N, LS, SS) = (1/4, 1/2, 1/4); sensitivities 1, sum max|x_j| = 2, sum max x_j^2 = 2
        lambda est, x: EPS * (0.25 + 0.5 * _u1(x) / 2 + 0.25 * float(np.dot(x, x)) / 2),
    ),
    # on [-1, 2]^2 the sensitivities are sum max|x_j| = 4 and sum max x_j^2 = 8
    (
        "DPBirchPublicTree wide bounds",
        DPBirchPublicTree(epsilon=EPS, n_skeleton=100, bounds=WIDE, **BIRCH),
        XW,
        BOXW,
        lambda est, x: EPS * (0.25 + 0.5 * float(np.abs(x).sum()) / 4 + 0.25 * float(np.dot(x, x)) / 8),
    ),
]


def _with(est, **params):
    """A copy of an unfitted estimator with some parameters changed."""
    est = copy.deepcopy(est)
    for key, value in params.items():
        setattr(est, key, value)
    return est


def _fitted(est, data, seed):
    """A plain fit with the seed the audit uses (its run on D returns every release unchanged)."""
    return _with(est, random_state=np.random.default_rng(seed)).fit(data)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name, est, data, points, expected", PRIVATE, ids=[p[0] for p in PRIVATE])
def test_private_add_remove_loss_is_the_analysis(name, est, data, points, expected):
    frame = audit_neighbours(est, data, points, relations=("add", "remove"), seeds=SEEDS)
    assert (frame["verdict"] == "ok").all(), frame[frame["verdict"] != "ok"].to_string()
    assert not frame["warnings"].str.contains("PrivacyLeakWarning|RuntimeWarning").any()
    assert (frame["loss"] <= frame["epsilon_spent"] * (1 + BUDGET_REL)).all()
    guaranteed = frame["epsilon_guaranteed"].dropna()  # where the estimator states it
    assert (frame.loc[guaranteed.index, "loss"] <= guaranteed * (1 + BUDGET_REL)).all()
    for row in frame.itertuples():
        x = dict(points)[row.point]
        if expected is None:  # every record costs the same: the full spend
            want = row.epsilon_spent
        else:
            base = neighbours(data, x, row.relation)[0]
            want = expected(_fitted(est, base, row.seed), x)
        assert row.loss == pytest.approx(want, rel=REL), (row.relation, row.point, row.seed)
    # The analysis is tight somewhere in the domain (the upper corner, or anywhere):
    assert frame["loss"].max() == pytest.approx(frame["epsilon_spent"].max(), rel=REL)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name, est, data, points, expected", PRIVATE, ids=[p[0] for p in PRIVATE])
def test_private_replace_one_costs_at_most_twice(name, est, data, points, expected):
    frame = audit_neighbours(est, data, points, relations=("replace",), seeds=SEEDS)
    assert (frame["verdict"] == "ok").all(), frame[frame["verdict"] != "ok"].to_string()
    assert (frame["loss"] <= 2 * frame["epsilon_spent"] * (1 + REL)).all()
    assert (frame["loss"] > 0).any()


def _grid_flip(eps, d=2, start=30):
    """A record count n at which EUG's grid size changes between n and n + 1."""
    n = start
    while eug_grid_size(n, eps, d) == eug_grid_size(n + 1, eps, d):
        n += 1
    return n


N_FLIP = _grid_flip(EPS)
QUICK = [p for p in BOX if p[0].startswith(("corner", "centre"))]

# name, unfitted estimator, data, points, expected verdict, a reason (regex) that must appear in the detail
LEAKY = [
    (f"{name} bounds from data", _with(est, bounds=FROM_DATA), X, QUICK, "leak", "bounds_|shape|scale")
    for name, est, data, points, _ in PRIVATE
    if data is X and "halving" not in name
] + [
    (
        "DPKMeans init=records",
        DPKMeans(n_clusters=2, epsilon=EPS, max_iter=3, bounds=UNIT, init="records"),
        X,
        QUICK,
        "leak",
        "initial_centers_",
    ),
    (
        "IDPKMeans split=order",
        IDPKMeans(n_clusters=2, epsilon=EPS, max_iter=1, bounds=UNIT, split="order"),
        X[:-1],
        QUICK,
        "over budget",
        "^$",
    ),  # n even: adding one record moves the boundary record
    (
        "DPQTKMeans init=kmeans-on-data",
        DPQTKMeans(
            n_clusters=2,
            epsilon=EPS,
            max_height=3,
            threshold=3.0,
            n_public=41,
            bounds=UNIT,
            max_iter=10,
            init="kmeans-on-data",
        ),
        X,
        QUICK,
        "leak",
        "cluster_centers_",
    ),
    (
        "DPQTKMeans n from data",
        DPQTKMeans(n_clusters=2, epsilon=EPS, max_height=3, bounds=UNIT, max_iter=10, n_public=FROM_DATA),
        X,
        QUICK,
        "leak",
        "threshold_",
    ),
    (
        "EUGKMeans n from data",
        EUGKMeans(n_clusters=2, epsilon=EPS, max_iter=10, bounds=UNIT, n_public=FROM_DATA),
        _numeric(N_FLIP),
        QUICK,
        "leak",
        "shape",
    ),
    (
        "DPKMeansPP n from data",
        DPKMeansPP(n_clusters=2, epsilon=2 * EPS, max_iter=2, bounds=UNIT, n_public=FROM_DATA),
        _numeric(N_FLIP),
        QUICK,
        "leak",
        "shape",
    ),
    (
        "DPKModes init=records",
        DPKModes(n_clusters=2, epsilon=EPS, max_iter=3, domain_sizes=SIZES, init="records"),
        C,
        CAT,
        "leak",
        "initial_centers_",
    ),
    (
        "DPKModes domain sizes from data",
        DPKModes(n_clusters=2, epsilon=EPS, max_iter=3, domain_sizes=FROM_DATA),
        C[C[:, 1] < 3],
        CAT,
        "leak",
        "domain_sizes_|shape",
    ),
    (
        "DPBirchPublicTree skeleton=data",
        DPBirchPublicTree(epsilon=EPS, skeleton="data", bounds=UNIT, **BIRCH),
        X,
        QUICK,
        "leak",
        "shape",
    ),
    ("DPBirch (the paper's)", DPBirch(epsilon=EPS, bounds=UNIT, **BIRCH), X, QUICK, "leak", "subcluster_|shape"),
]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("label, est, data, points, verdict, reason", LEAKY, ids=[p[0] for p in LEAKY])
def test_leaky_option_is_detected(label, est, data, points, verdict, reason):
    # One seed is one path: a data-dependent choice shows only on the paths where it changes.
    frame = audit_neighbours(est, data, points, relations=("add", "remove"), seeds=(0, 1, 2))
    caught = frame[frame["verdict"] == verdict]
    assert len(caught), frame.to_string()
    assert caught["detail"].str.contains(reason, regex=True).any(), caught["detail"].tolist()
    # Where the estimator states its guarantee, it must own up to the leak.
    owned = (frame["epsilon_guaranteed"].dropna() == np.inf).all()
    assert owned, frame["epsilon_guaranteed"].tolist()
    if verdict == "over budget":
        assert (caught["loss"] > caught["epsilon_spent"] * (1 + 1e-6)).all()


WARNING = [c for c in LEAKY if "Birch (the paper" not in c[0]]


@pytest.mark.parametrize("label, est, data, points, verdict, reason", WARNING, ids=[c[0] for c in WARNING])
def test_leaky_option_warns(label, est, data, points, verdict, reason):
    x = points[-1][1]
    result = coupled_loss(est, *neighbours(data, x, "add"))
    assert "PrivacyLeakWarning" in result.warnings


def test_idp_random_split_couples_only_with_odd_n():
    """numpy draws the split two parts per 64-bit word: n and n + 1 draws leave the same state iff n is odd."""
    est = IDPKMeans(n_clusters=2, epsilon=EPS, max_iter=3, bounds=UNIT)
    corner = np.array([1.0, 1.0])
    odd = coupled_loss(est, *neighbours(X, corner, "add"))
    even = coupled_loss(est, *neighbours(X[:-1], corner, "add"))
    assert odd.stream_diverged_at is None
    assert even.stream_diverged_at is not None


# ---------------------------------------------------------------------------
# The harness on toy estimators whose loss is known by construction
# ---------------------------------------------------------------------------


class _Toy:
    """Releases the sum of a 1-D data set in [0, 1] (sensitivity 1) with a chosen Laplace scale.

    leak="none": cluster_centers_ = the noisy sum; "raw": also the exact count; "count": one release
    per record (a data-dependent number of releases); "scale": a noise scale read off the data.
    """

    def __init__(self, scale=1.0, leak="none", random_state=None):
        self.scale, self.leak, self.random_state = scale, leak, random_state

    def fit(self, X):
        x = np.asarray(X, dtype=float).ravel()
        rng = self.random_state
        if self.leak == "count":
            noisy = [laplace_mechanism(v, 1.0, 1.0 / self.scale, rng) for v in x]
            self.cluster_centers_ = np.array(noisy)[:1]
        else:
            scale = self.scale * (1 + x.max()) if self.leak == "scale" else self.scale
            self.cluster_centers_ = np.array([laplace_mechanism(x.sum(), 1.0, 1.0 / scale, rng)])
        if self.leak == "raw":
            self.n_ = x.size
        self.epsilon_spent_ = 1.0
        return self


TOY = np.array([[0.2], [0.4], [0.9]])


def test_toy_loss_is_shift_over_scale():
    r = coupled_loss(_Toy(scale=2.0), *neighbours(TOY, [0.5], "add"))
    assert r.loss == pytest.approx(0.5 / 2.0, rel=REL) and r.verdict() == "ok"
    r = coupled_loss(_Toy(scale=0.5), *neighbours(TOY, [1.0], "remove"))
    assert r.loss == pytest.approx(2.0, rel=REL) and r.verdict() == "over budget"
    r = coupled_loss(_Toy(scale=1.0), *neighbours(TOY, [1.0], "replace"))  # 0.9 -> 1.0
    assert r.loss == pytest.approx(0.1, abs=2.0**-19)  # the grid rounds each answer by up to 2^-21 here


@pytest.mark.parametrize("leak, reason", [("raw", "n_"), ("count", "release"), ("scale", "scale")])
def test_toy_leaks_are_caught(leak, reason):
    r = coupled_loss(_Toy(leak=leak), *neighbours(TOY, [1.0], "add"))
    assert r.loss == np.inf and r.verdict() == "leak"
    assert any(reason in d for d in r.differences), r.differences


def test_public_differences_skip_diagnostics_and_see_nesting():
    a, b = _Toy(), _Toy()
    a.cluster_centers_, b.cluster_centers_ = np.zeros(2), np.zeros(2)
    a.labels_, b.labels_ = np.zeros(3), np.ones(4)  # a documented diagnostic: not compared
    a.ledger_, b.ledger_ = {"x": [1.0, (2.0, np.nan)]}, {"x": [1.0, (2.0, np.nan)]}
    assert public_differences(a, b) == []
    b.ledger_ = {"x": [1.0, (2.5, np.nan)]}
    assert public_differences(a, b) == ["ledger_['x'][1][0]"]


def test_domain_points_and_neighbours():
    names = [n for n, _ in domain_points([0, 0], [1, 1])]
    assert len(names) == 9 and sum(n.startswith("corner") for n in names) == 4
    cat = dict(domain_points([0, 0], [2, 3], integer=True))
    assert cat["centre(mid,mid)"].tolist() == [1, 1]
    D, Dp = neighbours(TOY, [0.5], "remove")
    assert D.shape == (4, 1) and Dp.shape == (3, 1) and D[-1, 0] == 0.5
    with pytest.raises(ValueError, match="relation"):
        neighbours(TOY, [0.5], "swap")


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_audit_table_has_every_estimator_and_no_failing_private_setting():
    table = audit_table()
    assert set(table.columns) >= {"estimator", "setting", "neighbours", "epsilon_spent", "audited_loss", "verdict"}
    assert {
        "DPKMeans",
        "DPKMeansPP",
        "IDPKMeans",
        "EUGKMeans",
        "DPQTKMeans",
        "DPKModes",
        "DPBirchPublicTree",
        "DPBirch",
    } <= set(table["estimator"])
    private = table[table["setting"] == "private"]
    assert (private["verdict"] == "ok").all(), private.to_string()
    leaky = table[(table["setting"] != "private") & (table["neighbours"] == "add/remove one")]
    assert len(leaky) >= 8 and (leaky["verdict"].isin(["leak", "over budget"])).all(), leaky.to_string()

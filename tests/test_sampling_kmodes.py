"""SamplingLDPKModes (Zhang et al. 2022): protocol, Theorem 1, Eq. 9, accounting, contract.

Statistical tests use a fixed seed and a stated family-wise alpha (Bonferroni
over cells and tests); each has a companion showing that it can fail.
"""

import itertools
import warnings

import numpy as np
import pytest
from scipy import stats

from dpclust_lib import DPKModes, PrivacyLeakWarning, SamplingLDPKModes, mechanisms
from dpclust_lib.cluster.sampling_kmodes import (
    SamplingReports,
    report_distribution,
    server_estimates,
    server_update,
    user_reports,
)

from .conftest import bonferroni

ALPHA = 1e-3
R = 2000
SIZES = (3, 4, 2)


def _population(rng, n=400):
    X = np.column_stack(
        [rng.choice(3, n, p=[0.5, 0.3, 0.2]), rng.choice(4, n, p=[0.1, 0.2, 0.3, 0.4]), rng.choice(2, n, p=[0.6, 0.4])]
    )
    return X, np.array([[0, 3, 0], [2, 0, 1]])


def _true_g(X, centres):
    """g[r][j][w] = users of cluster r whose attribute j has value w; the nearest centre by Hamming."""
    r = (X[:, None, :] != centres[None, :, :]).sum(axis=2).argmin(axis=1)
    return [
        np.stack([np.bincount(X[r == c, j], minlength=k) for c in range(len(centres))]).astype(float)
        for j, k in enumerate(SIZES)
    ], np.bincount(r, minlength=len(centres))


def _fit(**kw):
    kw.setdefault("domain_sizes", SIZES)
    kw.setdefault("protect_cluster_index", False)  # these tests were written for the paper's index in the clear
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return SamplingLDPKModes(**kw)


def _fitted(X, **kw):
    est = _fit(**kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return est.fit(X)


# --------------------------------------------------------------------------- Theorem 1, exactly


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0, 5.0])
def test_theorem_1_bit_ratio_is_e_to_the_epsilon(eps):
    p, q = mechanisms.oue_pq(eps)
    assert p == 0.5 and q == pytest.approx(1 / (np.exp(eps) + 1))
    assert p * (1 - q) / ((1 - p) * q) == pytest.approx(np.exp(eps), rel=1e-12)
    assert mechanisms.ue_epsilon(p, q) == pytest.approx(eps, rel=1e-12)


def _worst_ratio(sizes, centres, eps, index_eps):
    records = list(itertools.product(*[range(k) for k in sizes]))
    pmfs = [report_distribution(x, centres, sizes, eps, index_eps) for x in records]
    worst = 1.0
    for a, b in itertools.permutations(range(len(records)), 2):
        for out, pa in pmfs[a].items():
            pb = pmfs[b].get(out, 0.0)
            worst = max(worst, np.inf if pb == 0 else pa / pb)
    return worst


def test_report_distribution_sums_to_one():
    for index_eps in (None, 0.5):
        pmf = report_distribution([1, 2, 0], np.array([[0, 3, 0], [2, 0, 1]]), SIZES, 1.0, index_eps)
        assert sum(pmf.values()) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("eps", [0.3, 1.0, 2.5])
def test_whole_report_worst_case_ratio_enumerated(eps):
    sizes, centres = (3, 2), np.array([[0, 0], [2, 1]])
    # (j, b') alone, one cluster: exactly e^eps, attained.
    assert _worst_ratio(sizes, centres[:1], eps, None) == pytest.approx(np.exp(eps), rel=1e-12)
    # (r, j, b') with r in the clear: two records with different nearest centres are told apart surely.
    assert _worst_ratio(sizes, centres, eps, None) == np.inf
    # r through GRR at eps_r and bits at eps: exactly e^(eps_r + eps).
    assert _worst_ratio(sizes, centres, eps, 0.4) == pytest.approx(np.exp(eps + 0.4), rel=1e-12)


@pytest.mark.parametrize("index_eps", [None, 0.7])
def test_user_side_sampler_matches_the_exact_distribution(index_eps):
    """Chi-square goodness of fit of 200,000 reports of one record, alpha = 0.001."""
    centres, x = np.array([[0, 3, 0], [2, 0, 1]]), np.array([1, 0, 1])
    n = 200_000
    rep = user_reports(np.tile(x, (n, 1)), centres, SIZES, 1.0, index_eps, random_state=5)

    def pvalue(pmf):
        keys = list(pmf)
        index = {key: i for i, key in enumerate(keys)}
        observed = np.zeros(len(keys))
        for c, j, bits in zip(rep.cluster, rep.attribute, rep.bits):
            observed[index[(int(c), int(j), tuple(int(b) for b in bits[: SIZES[j]]))]] += 1
        expected = np.array([pmf[k] for k in keys]) * n
        return stats.chisquare(observed, expected).pvalue

    assert pvalue(report_distribution(x, centres, SIZES, 1.0, index_eps)) > ALPHA
    # The test can fail: the same reports against the distribution at a different epsilon.
    assert pvalue(report_distribution(x, centres, SIZES, 1.2, index_eps)) < ALPHA


# --------------------------------------------------------------------------- Eq. 9: unbiased, Eq. 12 corrected


def _tiled_estimates(X, centres, eps, reporters, seed=1):
    """R independent rounds at once: repetition t's clusters are relabelled t*K .. t*K + K-1."""
    K, n = len(centres), len(X)
    rep = user_reports(np.tile(X, (R, 1)), centres, SIZES, eps, random_state=seed)
    relabelled = SamplingReports(rep.cluster + K * np.repeat(np.arange(R), n), rep.attribute, rep.bits)
    g = server_estimates(relabelled, K * R, SIZES, eps, reporters=reporters)
    return [ga.reshape(R, K, -1) for ga in g]


@pytest.mark.parametrize("reporters", ["expected", "observed"])
def test_eq9_is_unbiased_for_g_over_d(rng, reporters):
    """Mean: z-test per (r, j, w); variance (expected reporters): chi-square ratio test; alpha 0.001 family-wise."""
    X, centres = _population(rng)
    eps, d = 1.0, len(SIZES)
    p, q = mechanisms.oue_pq(eps)
    g_true, N = _true_g(X, centres)
    est = _tiled_estimates(X, centres, eps, reporters)
    cells = sum(ga.size for ga in g_true)
    level = bonferroni(ALPHA, 2 * cells)
    for j in range(d):
        g = g_true[j]
        variance = (g * (p / d) * (1 - p / d) + (N[:, None] - g) * (q / d) * (1 - q / d)) / (p - q) ** 2
        mean = est[j].mean(axis=0)
        sd = np.sqrt(variance) if reporters == "expected" else est[j].std(axis=0, ddof=1)
        z = (mean - g / d) / (sd / np.sqrt(R))
        assert np.all(np.abs(z) < stats.norm.isf(level / 2)), f"attribute {j}: z = {z}"
        if reporters == "expected":
            ratio = est[j].var(axis=0, ddof=1) / variance
            lo, hi = stats.chi2.ppf(level / 2, R - 1) / (R - 1), stats.chi2.isf(level / 2, R - 1) / (R - 1)
            assert np.all((ratio > lo) & (ratio < hi)), f"attribute {j}: variance ratio {ratio}"


def test_eq9_test_detects_a_wrong_q(rng):
    """The mean test can fail: estimates computed with q of a different epsilon are biased."""
    X, centres = _population(rng)
    d = len(SIZES)
    g_true, _ = _true_g(X, centres)
    K, n = len(centres), len(X)
    rep = user_reports(np.tile(X, (R, 1)), centres, SIZES, 1.0, random_state=1)
    relabelled = SamplingReports(rep.cluster + K * np.repeat(np.arange(R), n), rep.attribute, rep.bits)
    wrong = server_estimates(relabelled, K * R, SIZES, 1.3)
    level = bonferroni(ALPHA, sum(g.size for g in g_true))
    z = [
        (w.reshape(R, K, -1).mean(0) - g / d) / (w.reshape(R, K, -1).std(0, ddof=1) / np.sqrt(R))
        for w, g in zip(wrong, g_true)
    ]
    assert max(np.abs(zj).max() for zj in z) > stats.norm.isf(level / 2)


def test_paper_eq12_is_not_the_variance_of_eq9(rng):
    """Eq. 12 as printed, [n p(1-p)/d + n (1-1/d) q(1-q)] / (p-q)^2, differs from the simulated variance."""
    X, centres = _population(rng)
    eps, d = 1.0, len(SIZES)
    p, q = mechanisms.oue_pq(eps)
    g_true, N = _true_g(X, centres)
    est = _tiled_estimates(X, centres, eps, "expected")
    eq12 = (N * p * (1 - p) / d + N * (1 - 1 / d) * q * (1 - q)) / (p - q) ** 2
    ratio = est[1].var(axis=0, ddof=1) / eq12[:, None]
    lo, hi = stats.chi2.ppf(ALPHA / 2, R - 1) / (R - 1), stats.chi2.isf(ALPHA / 2, R - 1) / (R - 1)
    assert np.any((ratio < lo) | (ratio > hi))


def test_grr_index_correction_is_unbiased_and_needed(rng):
    """Protected index: corrected estimates pass a z-test (alpha 0.001 family-wise); uncorrected ones fail it."""
    X, centres = _population(rng, n=300)
    eps, index_eps, d = 1.0, 0.8, len(SIZES)
    g_true, _ = _true_g(X, centres)
    gen = np.random.default_rng(3)
    corrected, plain = [[] for _ in SIZES], [[] for _ in SIZES]
    for _ in range(R):
        rep = user_reports(X, centres, SIZES, eps, index_eps, random_state=gen)
        for j, (a, b) in enumerate(
            zip(server_estimates(rep, 2, SIZES, eps, index_eps), server_estimates(rep, 2, SIZES, eps))
        ):
            corrected[j].append(a)
            plain[j].append(b)
    level = bonferroni(ALPHA, sum(g.size for g in g_true))

    def max_z(samples):
        out = 0.0
        for s, g in zip(samples, g_true):
            s = np.array(s)
            out = max(out, np.max(np.abs((s.mean(0) - g / d) / (s.std(0, ddof=1) / np.sqrt(R)))))
        return out

    assert max_z(corrected) < stats.norm.isf(level / 2)
    assert max_z(plain) > stats.norm.isf(level / 2)


def test_server_side_matches_a_listing_loop(rng):
    """Alg. 2 written as loops over the reports gives the library's estimates and centres exactly."""
    X, centres = _population(rng, n=150)
    eps, d = 0.9, len(SIZES)
    p, q = mechanisms.oue_pq(eps)
    rep = user_reports(X, centres, SIZES, eps, random_state=2)
    S = [np.zeros((2, k)) for k in SIZES]
    size = np.zeros(2)
    for r, j, bits in zip(rep.cluster, rep.attribute, rep.bits):
        size[r] += 1
        for w in range(SIZES[j]):
            S[j][r, w] += bits[w]
    for j, g in enumerate(server_estimates(rep, 2, SIZES, eps)):
        np.testing.assert_allclose(g, (S[j] - size[:, None] * q / d) / (p - q), rtol=1e-12)
    new = server_update(rep, centres, SIZES, eps)
    np.testing.assert_array_equal(new, np.column_stack([S[j].argmax(axis=1) for j in range(d)]))


def test_unheard_cluster_attribute_keeps_its_value():
    centres = np.array([[0, 1, 0], [2, 3, 1]])
    bits = np.zeros((2, 4), dtype=np.uint8)
    bits[0, 2] = 1
    rep = SamplingReports(np.array([0, 0]), np.array([0, 0]), bits)
    new = server_update(rep, centres, SIZES, 1.0)
    np.testing.assert_array_equal(new, [[2, 1, 0], [2, 3, 1]])


# --------------------------------------------------------------------------- the estimator


def test_contract_and_shapes(rng):
    X, _ = _population(rng)
    params = dict(
        n_clusters=2,
        epsilon=1.0,
        max_iter=4,
        budget="split",
        protect_cluster_index=True,
        index_share=0.25,
        init="domain",
        domain_sizes=SIZES,
        random_state=7,
    )
    est = SamplingLDPKModes(**params)
    assert {k: getattr(est, k) for k in params} == params
    assert not hasattr(est, "cluster_centers_")
    assert est.fit(X) is est
    assert est.cluster_centers_.shape == (2, 3) and est.predict(X).shape == (len(X),)
    assert not hasattr(est, "labels_")
    np.testing.assert_array_equal(SamplingLDPKModes(**params).fit_predict(X), est.predict(X))
    assert 1 <= est.n_iter_ <= 4


def test_same_seed_same_result_and_generator_accepted(rng):
    X, _ = _population(rng)
    a = _fitted(X, n_clusters=3, epsilon=0.5, random_state=11)
    b = _fitted(X, n_clusters=3, epsilon=0.5, random_state=11)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    assert a.ledger_.entries == b.ledger_.entries
    c = _fitted(X, n_clusters=3, epsilon=0.5, random_state=np.random.default_rng(11))
    np.testing.assert_array_equal(a.cluster_centers_, c.cluster_centers_)


def test_initial_centres_are_dpkmodes_domain_draw_and_data_independent(rng):
    X, _ = _population(rng)
    ours = _fitted(X, n_clusters=3, random_state=4).initial_centers_
    other_data = _fitted(X[:50], n_clusters=3, random_state=4).initial_centers_
    dpk = DPKModes(3, domain_sizes=SIZES, random_state=4).fit(X).initial_centers_
    np.testing.assert_array_equal(ours, dpk)
    np.testing.assert_array_equal(ours, other_data)


def test_finds_two_clear_groups():
    gen = np.random.default_rng(0)
    X = np.vstack([np.tile([0, 0, 0], (3000, 1)), np.tile([2, 3, 1], (3000, 1))])
    X = np.where(gen.random(X.shape) < 0.1, gen.integers(0, 2, X.shape), X)
    est = _fitted(X, n_clusters=2, epsilon=2.0, max_iter=10, init=np.array([[0, 0, 1], [2, 3, 0]]), random_state=0)
    assert sorted(map(tuple, est.cluster_centers_)) == [(0, 0, 0), (2, 3, 1)]
    assert est.n_iter_ < 10  # stopped because the centres stopped changing


@pytest.mark.parametrize(
    "budget, protect", [("per_round", False), ("split", False), ("per_round", True), ("split", True)]
)
def test_accounting(rng, budget, protect):
    X, _ = _population(rng)
    eps, T, share = 0.8, 6, 0.3
    est = _fitted(
        X,
        n_clusters=2,
        epsilon=eps,
        max_iter=T,
        budget=budget,
        protect_cluster_index=protect,
        index_share=share,
        random_state=1,
    )
    round_eps = eps if budget == "per_round" else eps / T
    total = T * eps if budget == "per_round" else eps
    assert est.round_epsilon_ == pytest.approx(round_eps)
    assert est.ledger_.budget == pytest.approx(total)
    assert est.epsilon_spent_ == pytest.approx(est.n_iter_ * round_eps)
    assert est.epsilon_spent_ <= total * (1 + 1e-12)
    if budget == "split":
        assert est.epsilon_spent_ <= eps * (1 + 1e-12)
    assert len(est.ledger_.entries) == est.n_iter_ * (2 if protect else 1)
    assert est.neighbouring_ == "any two records of one user"
    if protect:
        assert est.index_epsilon_ == pytest.approx(share * round_eps)
        assert est.bit_epsilon_ == pytest.approx((1 - share) * round_eps)
        assert est.epsilon_guaranteed_ == pytest.approx(total)  # ex ante: all T rounds, however many ran
    else:
        assert est.index_epsilon_ is None and est.bit_epsilon_ == pytest.approx(round_eps)
        assert est.epsilon_guaranteed_ == np.inf  # the index in the clear tells records apart surely


def test_split_budget_runs_all_rounds_at_eps_over_t(rng):
    X, _ = _population(rng)
    est = _fitted(X, n_clusters=2, epsilon=0.05, max_iter=5, budget="split", random_state=2)
    assert est.bit_epsilon_ == pytest.approx(0.01)
    assert est.epsilon_spent_ <= 0.05 * (1 + 1e-12)


def test_warnings(rng):
    X, _ = _population(rng)
    with pytest.warns(PrivacyLeakWarning, match="cluster index"):
        est = SamplingLDPKModes(2, protect_cluster_index=False, domain_sizes=SIZES, random_state=0).fit(X)
    assert est.epsilon_guaranteed_ == np.inf
    with pytest.raises(ValueError, match="domain_sizes is required"):
        SamplingLDPKModes(2, random_state=0).fit(X)
    with pytest.warns(PrivacyLeakWarning, match="domain_sizes"):
        est = SamplingLDPKModes(2, domain_sizes="data", random_state=0).fit(X)
    assert est.epsilon_guaranteed_ == np.inf
    with pytest.warns(PrivacyLeakWarning, match="records"):
        est = SamplingLDPKModes(2, init="records", protect_cluster_index=True, domain_sizes=SIZES, random_state=0).fit(
            X
        )
    assert est.epsilon_guaranteed_ == np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the default protects the index: no warning, a finite guarantee
        est = SamplingLDPKModes(2, domain_sizes=SIZES, random_state=0).fit(X)
    assert est.protect_cluster_index is True and np.isfinite(est.epsilon_guaranteed_)


_X = np.array([[0, 1, 0], [2, 3, 1], [1, 0, 1]])


@pytest.mark.parametrize(
    "kw, X, exc, needle",
    [
        (dict(epsilon=0.0), _X, ValueError, "epsilon"),
        (dict(epsilon=float("nan")), _X, ValueError, "epsilon"),
        (dict(epsilon="1"), _X, TypeError, "epsilon"),
        (dict(budget="total"), _X, ValueError, "budget"),
        (dict(protect_cluster_index="yes"), _X, TypeError, "protect_cluster_index"),
        (dict(index_share=0.0), _X, ValueError, "index_share"),
        (dict(index_share=1.0), _X, ValueError, "index_share"),
        (dict(max_iter=0), _X, ValueError, "max_iter"),
        (dict(max_iter=2.0), _X, TypeError, "max_iter"),
        (dict(n_clusters=0), _X, ValueError, "n_clusters"),
        (dict(n_clusters=4), _X, ValueError, "n_clusters=4 is larger than the number of records"),
        (dict(n_clusters=1, protect_cluster_index=True), _X, ValueError, "n_clusters >= 2"),
        (dict(init="random"), _X, ValueError, "init"),
        (dict(init=np.zeros((3, 3), dtype=int)), _X, ValueError, "init array"),
        (dict(init=np.array([[0, 0, 0], [3, 0, 0]])), _X, ValueError, "outside the declared domain"),
        (dict(), np.array([[0.0, np.nan, 0.0]]), TypeError, "integer category codes"),
        (dict(), np.zeros((0, 3), dtype=int), ValueError, "empty"),
        (dict(), np.array([[0, 1]]), ValueError, "2 attributes but domain_sizes has 3"),
        (
            dict(n_clusters=5, domain_sizes=(2, 2)),
            np.array([[0, 1], [1, 0], [1, 1]] * 2),
            ValueError,
            "points in the domain",
        ),
    ],
)
def test_bad_input(kw, X, exc, needle):
    kw = {"n_clusters": 2, "random_state": 0} | kw
    with pytest.raises(exc, match=needle):
        _fitted(X, **kw)


def _reports(**changes):
    base = dict(cluster=np.array([0, 1]), attribute=np.array([0, 2]), bits=np.zeros((2, 4), dtype=np.uint8))
    return SamplingReports(**(base | changes))


@pytest.mark.parametrize(
    "call, exc, needle",
    [
        (lambda: server_estimates("reports", 2, SIZES, 1.0), TypeError, "SamplingReports"),
        (lambda: server_estimates(_reports(cluster=np.array([0, 2])), 2, SIZES, 1.0), ValueError, "reports.cluster"),
        (
            lambda: server_estimates(_reports(attribute=np.array([0, 3])), 2, SIZES, 1.0),
            ValueError,
            "reports.attribute",
        ),
        (
            lambda: server_estimates(_reports(bits=np.full((2, 4), 2, dtype=np.uint8)), 2, SIZES, 1.0),
            ValueError,
            "only 0 and 1",
        ),
        (
            lambda: server_estimates(_reports(bits=np.eye(2, 4, 3, dtype=np.uint8)), 2, SIZES, 1.0),
            ValueError,
            "padding",
        ),
        (
            lambda: server_estimates(_reports(bits=np.zeros((2, 3), dtype=np.uint8)), 2, SIZES, 1.0),
            ValueError,
            "schema",
        ),
        (lambda: server_estimates(_reports(), 2, SIZES, 1.0, reporters="all"), ValueError, "reporters"),
        (
            lambda: server_estimates(_reports(cluster=np.array([0, 0])), 1, SIZES, 1.0, 0.5),
            ValueError,
            "n_clusters >= 2",
        ),
        (lambda: server_estimates(_reports(), 2, SIZES, 1.0, index_epsilon=-1.0), ValueError, "index_epsilon"),
        (lambda: server_update(_reports(), np.zeros((2, 2), dtype=int), SIZES, 1.0), ValueError, "centres"),
        (lambda: user_reports(_X, np.zeros((2, 3), dtype=int), SIZES, 0.0), ValueError, "epsilon"),
        (lambda: user_reports(_X, np.array([[0, 0, 2]]), SIZES, 1.0), ValueError, "outside the declared domain"),
        (
            lambda: report_distribution([0, 0, 0], np.zeros((1, 3), dtype=int), (16, 16, 16), 1.0),
            ValueError,
            "max_outputs",
        ),
    ],
)
def test_protocol_functions_bad_input(call, exc, needle):
    with pytest.raises(exc, match=needle):
        call()


def test_unfitted_predict():
    with pytest.raises(AttributeError, match="not fitted"):
        SamplingLDPKModes(2).predict(_X)


@pytest.mark.parametrize("protect", [True, False])
def test_epsilon_guaranteed_is_the_enumerated_worst_ratio_of_a_round(protect):
    """One round: e^epsilon_guaranteed_ is the largest Pr[report | x] / Pr[report | x'] over all records and
    reports of the fitted round, enumerated from the report's exact distribution (inf: index in the clear)."""
    sizes = (3, 2)
    X = np.array([[0, 0], [2, 1], [1, 0], [2, 0]] * 5)
    est = _fitted(
        X,
        n_clusters=2,
        epsilon=0.9,
        max_iter=1,
        domain_sizes=sizes,
        protect_cluster_index=protect,
        index_share=0.3,
        random_state=5,
    )
    worst = _worst_ratio(sizes, est.initial_centers_, est.bit_epsilon_, est.index_epsilon_)
    assert len({tuple(c) for c in est.initial_centers_}) == 2
    if protect:
        assert np.log(worst) == pytest.approx(est.epsilon_guaranteed_, rel=1e-12)
        assert est.epsilon_guaranteed_ == pytest.approx(est.epsilon_spent_)
    else:
        assert worst == np.inf and est.epsilon_guaranteed_ == np.inf

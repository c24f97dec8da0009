"""Every mechanism against its definition, and every estimator's guarantee against its configuration.

Finite output spaces: the exact output distribution is enumerated (rows sum to
one; the largest ratio over neighbouring inputs is e^eps, or e^{eps d} for the
Hamming mechanism). Samplers: chi-square goodness of fit to the exact
distribution, fixed seed, family-wise alpha = 0.001 (Bonferroni over inputs),
so a correct sampler fails for at most 1 in 1000 seeds.
"""

import itertools
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpclust_lib import (
    DPBirch,
    DPBirchPublicTree,
    DPKMeans,
    DPKMeansPP,
    DPKModes,
    DPQTKMeans,
    EUGKMeans,
    IDPKMeans,
    LDPKModes,
    LSHCoresetKMeans,
    OneRoundLocalKMeans,
    PrivacyLeakWarning,
    SamplingLDPKModes,
    mechanisms,
)
from dpclust_lib.accounting import BudgetAccountant, BudgetExceededError, PrivacyLedger, compose, share_at_most
from dpclust_lib.audit.blackbox import private_estimators
from dpclust_lib.validation import check_random_state

from .conftest import bonferroni

ALPHA = 1e-3


# --------------------------------------------------------------------------- Laplace


def test_laplace_samples_follow_laplace_with_scale_sensitivity_over_epsilon():
    out = mechanisms.laplace_mechanism(np.zeros(200_000), sensitivity=2.0, epsilon=0.5, random_state=1)
    p = stats.kstest(out, stats.laplace(scale=4.0).cdf).pvalue
    assert p > ALPHA


def test_laplace_scalar_in_scalar_out():
    assert isinstance(mechanisms.laplace_mechanism(3.0, 1.0, 1.0, random_state=0), float)


def test_laplace_same_seed_same_noise():
    a = mechanisms.laplace_mechanism(np.arange(5.0), 1.0, 1.0, random_state=7)
    b = mechanisms.laplace_mechanism(np.arange(5.0), 1.0, 1.0, random_state=7)
    np.testing.assert_array_equal(a, b)


def _neighbour_violation(release, sensitivity, epsilon, n=400_000, seed=3):
    """Largest z-score of Pr[M(D) in B] - e^eps Pr[M(D') in B] over bins B (and the reverse).

    f(D) = 0 and f(D') = sensitivity are neighbouring answers. Under eps-DP both
    differences are <= 0 for every bin; the z-score measures how far above 0
    the empirical difference lies.
    """
    rng = np.random.default_rng(seed)
    a = release(np.zeros(n), rng)
    b = release(np.full(n, float(sensitivity)), rng)
    edges = np.linspace(-4, 5, 19)
    pa = np.histogram(a, edges)[0] / n
    pb = np.histogram(b, edges)[0] / n
    e = math.exp(epsilon)
    worst = -np.inf
    for p1, p2 in ((pa, pb), (pb, pa)):
        diff = p1 - e * p2
        se = np.sqrt(p1 * (1 - p1) / n + e * e * p2 * (1 - p2) / n)
        worst = max(worst, np.max(diff / se))
    return worst, len(edges) - 1


def test_laplace_neighbour_ratio_bounded_by_e_to_the_epsilon():
    eps = 1.0
    z, bins = _neighbour_violation(lambda v, r: mechanisms.laplace_mechanism(v, 1.0, eps, r), 1.0, eps)
    # One-sided test per bin and direction, Bonferroni over 2 * bins: family-wise alpha 0.001.
    assert z < stats.norm.isf(bonferroni(ALPHA, 2 * bins))


def test_neighbour_test_detects_too_little_noise():
    """The test above can fail: a mechanism with half the required noise is caught."""
    eps = 1.0
    z, bins = _neighbour_violation(lambda v, r: v + r.laplace(0, 0.5 / eps, v.shape), 1.0, eps)
    assert z > stats.norm.isf(bonferroni(ALPHA, 2 * bins))


@pytest.mark.parametrize(
    "kwargs, exc, needle",
    [
        (dict(sensitivity=0.0, epsilon=1.0), ValueError, "sensitivity"),
        (dict(sensitivity=-1.0, epsilon=1.0), ValueError, "sensitivity"),
        (dict(sensitivity=1.0, epsilon=0.0), ValueError, "epsilon"),
        (dict(sensitivity=1.0, epsilon=-0.5), ValueError, "epsilon"),
        (dict(sensitivity=1.0, epsilon=float("nan")), ValueError, "epsilon"),
        (dict(sensitivity=1.0, epsilon=float("inf")), ValueError, "epsilon"),
        (dict(sensitivity=1.0, epsilon="1"), TypeError, "epsilon"),
        (dict(sensitivity=1.0, epsilon=True), TypeError, "epsilon"),
    ],
)
def test_laplace_bad_parameters(kwargs, exc, needle):
    with pytest.raises(exc, match=needle):
        mechanisms.laplace_mechanism(1.0, **kwargs)


def test_laplace_rejects_nan_value():
    with pytest.raises(ValueError, match="value"):
        mechanisms.laplace_mechanism([1.0, np.nan], 1.0, 1.0)


def test_laplace_rejects_non_numeric_value():
    with pytest.raises(TypeError, match="value"):
        mechanisms.laplace_mechanism(["a"], 1.0, 1.0)


def test_laplace_rejects_legacy_random_state():
    with pytest.raises(TypeError, match="random_state"):
        mechanisms.laplace_mechanism(1.0, 1.0, 1.0, random_state=np.random.RandomState(0))


# --------------------------------------------------------------------------- GRR


@pytest.mark.parametrize("k, eps", [(2, 0.5), (5, 1.0), (16, 2.0)])
def test_grr_exact_distribution(k, eps):
    P = mechanisms.grr_matrix(k, eps)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    ratios = P[:, None, :] / P[None, :, :]  # [x, x', y]
    assert np.isclose(ratios.max(), math.exp(eps))


def test_grr_sampler_matches_exact_distribution():
    k, eps, n = 5, 1.0, 20_000
    P = mechanisms.grr_matrix(k, eps)
    rng = np.random.default_rng(11)
    level = bonferroni(ALPHA, k)
    for x in range(k):
        out = mechanisms.grr_perturb(np.full(n, x), k, eps, rng)
        observed = np.bincount(out, minlength=k)
        assert stats.chisquare(observed, P[x] * n).pvalue > level


@pytest.mark.parametrize(
    "values, k, exc, needle",
    [
        ([0, 5], 5, ValueError, "outside the declared domain"),
        ([-1, 0], 5, ValueError, "outside the declared domain"),
        ([0.0, 1.0], 5, TypeError, "integer"),
        ([[0, 1]], 5, ValueError, "1-D"),
        ([0, 1], 1, ValueError, "k"),
        ([], 3, ValueError, "empty"),
    ],
)
def test_grr_bad_input(values, k, exc, needle):
    with pytest.raises(exc, match=needle):
        mechanisms.grr_perturb(np.asarray(values), k, 1.0, 0)


# --------------------------------------------------------------------------- unary encoding


def _ue_exact(k, p, q):
    """Pr[report | x] over all 2^k reports, rows = inputs."""
    reports = np.array(list(itertools.product([0, 1], repeat=k)))
    onehot = np.eye(k)
    prob = np.where(
        onehot[:, None, :] == 1, np.where(reports[None] == 1, p, 1 - p), np.where(reports[None] == 1, q, 1 - q)
    ).prod(axis=2)
    return reports, prob


@pytest.mark.parametrize("pq", [mechanisms.oue_pq, mechanisms.sue_pq])
@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0])
def test_unary_encoding_exact_distribution(pq, eps):
    p, q = pq(eps)
    assert math.isclose(p * (1 - q) / ((1 - p) * q), math.exp(eps))
    assert math.isclose(mechanisms.ue_epsilon(p, q), eps)
    _, prob = _ue_exact(4, p, q)
    np.testing.assert_allclose(prob.sum(axis=1), 1.0)
    ratios = prob[:, None, :] / prob[None, :, :]
    assert np.isclose(ratios.max(), math.exp(eps))


def test_oue_sampler_matches_exact_distribution():
    k, eps, n = 3, 1.0, 30_000
    p, q = mechanisms.oue_pq(eps)
    reports, prob = _ue_exact(k, p, q)
    rng = np.random.default_rng(5)
    level = bonferroni(ALPHA, k)
    for x in range(k):
        out = mechanisms.ue_perturb(mechanisms.unary_encode(np.full(n, x), k), p, q, rng)
        code = out @ (2 ** np.arange(k)[::-1])
        observed = np.bincount(code, minlength=2**k)
        assert stats.chisquare(observed, prob[x] * n).pvalue > level


@pytest.mark.parametrize("p, q, needle", [(0.3, 0.5, "p must exceed q"), (1.0, 0.2, "p"), (0.5, 0.0, "q")])
def test_ue_bad_probabilities(p, q, needle):
    with pytest.raises(ValueError, match=needle):
        mechanisms.ue_perturb(np.eye(3, dtype=int), p, q)


def test_ue_rejects_non_binary_bits():
    with pytest.raises(ValueError, match="0 and 1"):
        mechanisms.ue_perturb(np.array([[0, 2, 1]]), 0.5, 0.2)


# --------------------------------------------------------------------------- Hamming-distance RR


@pytest.mark.parametrize("m, k, eps", [(1, 2, 1.0), (3, 2, 0.3), (4, 5, 1.5), (8, 3, 2.0)])
def test_eq4_normaliser_identity_and_pmf(m, k, eps):
    total = sum(math.exp(eps * w) * math.comb(m, w) * (k - 1) ** (m - w) for w in range(m + 1))
    assert math.isclose(total, (math.exp(eps) + k - 1) ** m, rel_tol=1e-12)
    pmf = mechanisms.hamming_rr_distance_pmf(m, k, eps)
    assert math.isclose(pmf.sum(), 1.0)


def test_table_1_of_peng_et_al_exactly():
    e = math.e
    expected = np.array([[e * e, e, e, 1], [e, e * e, 1, e], [e, 1, e * e, e], [1, e, e, e * e]]) / (e * e + 2 * e + 1)
    np.testing.assert_allclose(mechanisms.hamming_rr_matrix((2, 2), 1.0), expected, rtol=1e-14)


@pytest.mark.parametrize("sizes", [(2, 2, 2), (3, 3), (3, 2, 3), (4, 2)])
def test_hamming_rr_exact_distribution(sizes):
    eps = 0.8
    P = mechanisms.hamming_rr_matrix(sizes, eps)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    records = np.array(list(itertools.product(*[range(k) for k in sizes])))
    dist = (records[:, None, :] != records[None, :, :]).sum(axis=2)
    # Each output's probability is e^{eps (m - d(x, y))} / prod_j (e^eps + k_j - 1).
    norm = np.prod([math.exp(eps) + k - 1 for k in sizes])
    np.testing.assert_allclose(P, np.exp(eps * (len(sizes) - dist)) / norm, rtol=1e-12)
    # Local d-privacy: the worst ratio between x and x' over outputs is exactly e^{eps d(x, x')}.
    worst = (P[:, None, :] / P[None, :, :]).max(axis=2)
    np.testing.assert_allclose(worst, np.exp(eps * dist), rtol=1e-12)


def test_hamming_rr_inputs_at_distance_m_are_m_epsilon_apart():
    """What local d-privacy means in plain LDP terms: two records differing in all m
    attributes can be told apart with likelihood ratio e^{m eps}, so one report is
    (m eps)-LDP, not eps-LDP."""
    sizes, eps = (2, 2, 2), 1.0
    P = mechanisms.hamming_rr_matrix(sizes, eps)
    x, x_far = 0, 7  # (0,0,0) and (1,1,1)
    assert np.isclose((P[x] / P[x_far]).max(), math.exp(len(sizes) * eps))


def test_eq4_distance_pmf_matches_matrix():
    m, k, eps = 3, 3, 0.7
    P = mechanisms.hamming_rr_matrix((k,) * m, eps)
    records = np.array(list(itertools.product(range(k), repeat=m)))
    dist = (records[0] != records).sum(axis=1)
    by_distance = np.bincount(dist, weights=P[0], minlength=m + 1)
    np.testing.assert_allclose(by_distance, mechanisms.hamming_rr_distance_pmf(m, k, eps))


def test_hamming_rr_sampler_matches_exact_distribution():
    sizes, eps, n = (3, 2, 3), 0.9, 12_000
    P = mechanisms.hamming_rr_matrix(sizes, eps)
    records = np.array(list(itertools.product(*[range(k) for k in sizes])))
    rng = np.random.default_rng(17)
    level = bonferroni(ALPHA, len(records))
    for i, x in enumerate(records):
        out = mechanisms.hamming_rr_perturb(np.tile(x, (n, 1)), sizes, eps, rng)
        observed = np.bincount(np.ravel_multi_index(tuple(out.T), sizes), minlength=len(records))
        assert stats.chisquare(observed, P[i] * n).pvalue > level


@pytest.mark.parametrize(
    "X, sizes, exc, needle",
    [
        ([[0, 2]], (2, 2), ValueError, "outside the declared domain"),
        ([[0, -1]], (2, 2), ValueError, "outside the declared domain"),
        ([[0, np.nan]], (2, 2), ValueError, "NaN"),
        ([[0.0, 1.0]], (2, 2), TypeError, "integer"),
        ([[0, 1, 1]], (2, 2), ValueError, "3 attributes"),
        (np.zeros((0, 2), dtype=int), (2, 2), ValueError, "empty"),
        ([0, 1], (2, 2), ValueError, "2-D"),
        ([[0, 1]], (2, 1), ValueError, "domain_sizes"),
        ([[0, 1]], (2.0, 2.0), TypeError, "domain_sizes"),
    ],
)
def test_hamming_rr_bad_input(X, sizes, exc, needle):
    with pytest.raises(exc, match=needle):
        mechanisms.hamming_rr_perturb(np.asarray(X), sizes, 1.0, 0)


def test_dense_matrix_refused_for_large_domains():
    with pytest.raises(ValueError, match="LDPFO"):
        mechanisms.hamming_rr_matrix((10,) * 4, 1.0)


# --------------------------------------------------------------------------- budget ledger


def test_ledger_records_spends_and_totals():
    ledger = PrivacyLedger(1.0)
    ledger.spend(0.3, "tree")
    ledger.spend(0.7, "leaf counts")
    assert math.isclose(ledger.spent, 1.0)
    df = ledger.to_frame()
    assert list(df.columns) == ["what", "epsilon", "cumulative"]
    assert df["what"].tolist() == ["tree", "leaf counts"]
    assert math.isclose(df["cumulative"].iloc[-1], 1.0)


def test_ledger_raises_past_budget_and_records_nothing():
    ledger = PrivacyLedger(1.0)
    ledger.spend(0.6, "first")
    with pytest.raises(BudgetExceededError, match="past the budget"):
        ledger.spend(0.5, "second")
    assert len(ledger.entries) == 1


def test_ledger_allows_equal_split_despite_rounding():
    ledger = PrivacyLedger(1.0)
    for t in range(7):
        ledger.spend(1.0 / 7, f"iteration {t}")
    assert ledger.remaining < 1e-12


@pytest.mark.parametrize("budget", [0.0, -1.0, float("nan"), float("inf")])
def test_ledger_bad_budget(budget):
    with pytest.raises(ValueError, match="budget"):
        PrivacyLedger(budget)


def test_ledger_bad_spend():
    ledger = PrivacyLedger(1.0)
    with pytest.raises(ValueError, match="epsilon"):
        ledger.spend(0.0, "nothing")
    with pytest.raises(TypeError, match="what"):
        ledger.spend(0.1, "")


# --------------------------------------------------------------------------- numerical safety


def test_grr_at_epsilon_710_is_refused_not_silently_truthful():
    """Once: e^710 overflowed to inf, p = inf/inf = NaN, and every report was the truth."""
    with pytest.raises(ValueError, match="epsilon=710.0"):
        mechanisms.grr_perturb(np.zeros(10**5, int), 3, 710.0, 0)


# The caps written out from 1 / (e^eps + k - 1) >= 2^-40 (GRR, per attribute for the
# Hamming RR), 1 / (e^eps + 1) >= 2^-40 (OUE) and 1 / (e^{eps/2} + 1) >= 2^-40 (SUE).
CAPS = [
    ("grr k=3", lambda e: mechanisms.grr_probabilities(3, e), math.log(2.0**40 - 2)),
    ("grr k=1000", lambda e: mechanisms.grr_probabilities(1000, e), math.log(2.0**40 - 999)),
    ("oue", mechanisms.oue_pq, math.log(2.0**40 - 1)),
    ("sue", mechanisms.sue_pq, 2 * math.log(2.0**40 - 1)),
    ("hamming pmf", lambda e: mechanisms.hamming_rr_distance_pmf(4, 3, e), math.log(2.0**40 - 2)),
    (
        "hamming perturb",
        lambda e: mechanisms.hamming_rr_perturb(np.zeros((5, 2), int), (2, 7), e, 0),
        math.log(2.0**40 - 6),
    ),
    ("hamming matrix", lambda e: mechanisms.hamming_rr_matrix((2, 3), e), math.log(2.0**40 - 2)),
]


@pytest.mark.parametrize("name, call, cap", CAPS, ids=[c[0] for c in CAPS])
def test_epsilon_cap_is_where_the_docstring_says(name, call, cap):
    out = call(cap * (1 - 1e-9))  # just inside: finite, no NaN
    assert all(np.all(np.isfinite(np.asarray(v, dtype=float))) for v in (out if isinstance(out, tuple) else (out,)))
    for eps in (cap * (1 + 1e-9), 100.0, 710.0, 1e308):
        with pytest.raises(ValueError, match=r"epsilon=.*numerically safe range"):
            call(eps)


@pytest.mark.parametrize("k", [2, 3, 50])
@pytest.mark.parametrize("eps", [1e-8, 0.5, 5.0, 20.0, 27.0])
def test_grr_probabilities_stable_over_the_safe_range(k, eps):
    p, q = mechanisms.grr_probabilities(k, eps)
    assert math.isclose(math.log(p) - math.log(q), eps, rel_tol=1e-12, abs_tol=1e-15)
    assert math.isclose(p + (k - 1) * q, 1.0, rel_tol=1e-15)


@pytest.mark.parametrize("eps", [1e-8, 1.0, 20.0, 27.0])
def test_unary_encoding_epsilon_stable_over_the_safe_range(eps):
    assert math.isclose(mechanisms.ue_epsilon(*mechanisms.oue_pq(eps)), eps, rel_tol=1e-7, abs_tol=1e-12)
    assert math.isclose(mechanisms.ue_epsilon(*mechanisms.sue_pq(eps)), eps, rel_tol=1e-7, abs_tol=1e-12)


def test_grr_sampler_at_large_epsilon_still_lies_sometimes():
    """At eps = ln(1e4) with k = 2 the lie rate is 1/(1e4 + 1): a million reports hold ~100 lies."""
    reports = mechanisms.grr_perturb(np.zeros(10**6, int), 2, math.log(1e4), 3)
    lies = int(reports.sum())
    lo, hi = stats.binom.ppf([ALPHA / 2, 1 - ALPHA / 2], 10**6, 1 / (1e4 + 1))
    assert lo <= lies <= hi


def test_hamming_pmf_in_logs_for_large_m():
    pmf = mechanisms.hamming_rr_distance_pmf(2000, 5, 3.0)
    assert np.all(np.isfinite(pmf)) and math.isclose(pmf.sum(), 1.0, rel_tol=1e-12)
    # Mode of Binomial(m, 1 - p): each attribute changes with 1 - p = 4 / (e^3 + 4).
    assert abs(int(np.argmax(pmf)) - 2000 * 4 / (math.exp(3) + 4)) <= 1


@pytest.mark.parametrize("p, q", [(0.5, 1e-13), (1 - 1e-13, 0.5), (0.5, 0.0), (1.0, 0.5)])
def test_ue_probabilities_outside_the_safe_range_refused(p, q):
    with pytest.raises(ValueError, match="safe range"):
        mechanisms.ue_perturb(np.eye(2, dtype=int), p, q)


def test_unary_report_size_capped_before_allocating():
    values = np.zeros(2**20, dtype=np.int64)
    with pytest.raises(ValueError, match="MAX_REPORT_BITS"):
        mechanisms.unary_encode(values, 32)


def test_dense_matrix_cap_counts_cells_without_wrapping():
    """np.prod((2**32, 2**32)) wraps to 0 in int64; the cap must still refuse it."""
    with pytest.raises(ValueError, match="cells"):
        mechanisms.hamming_rr_matrix((2**32, 2**32), 1.0)
    with pytest.raises(ValueError, match="k"):
        mechanisms.grr_matrix(mechanisms.MAX_DENSE_CELLS + 1, 1.0)


@pytest.mark.parametrize("sensitivity, epsilon, word", [(1e300, 1e-10, "inf"), (1e-300, 1e300, "0.0")])
def test_laplace_scale_must_be_finite_and_positive(sensitivity, epsilon, word):
    with pytest.raises(ValueError, match=f"scale.*{word}"):
        mechanisms.laplace_mechanism(1.0, sensitivity, epsilon, 0)


@pytest.mark.parametrize(
    "value",
    ["1.5", b"1", True, None, ["1.5", "2"], [1, "a"], {"a": 1}, 1 + 2j, np.array([1, 2], dtype=object), [[1, 2], [3]]],
)
def test_laplace_value_must_be_numeric_not_cast(value):
    with pytest.raises(TypeError, match="value"):
        mechanisms.laplace_mechanism(value, 1.0, 1.0, 0)


def test_laplace_errors_do_not_echo_the_value():
    secret = 12345.678
    with pytest.raises(ValueError) as err:
        mechanisms.laplace_mechanism([secret, np.inf], 1.0, 1.0, 0)
    assert "12345" not in str(err.value) and "index (1,)" in str(err.value)
    with pytest.raises(TypeError) as err:
        mechanisms.laplace_mechanism([str(secret)], 1.0, 1.0, 0)
    assert "12345" not in str(err.value)


def test_laplace_release_near_the_largest_double_saturates():
    noisy = mechanisms.laplace_mechanism(np.full(1000, 1.7e308), 1e307, 1.0, 0)
    assert np.all(np.isfinite(noisy))


def test_laplace_integer_and_empty_values_accepted():
    assert mechanisms.laplace_mechanism(np.array([1, 2], dtype=np.int32), 1.0, 1.0, 0).dtype == float
    assert mechanisms.laplace_mechanism(np.zeros(0), 1.0, 1.0, 0).shape == (0,)


# --------------------------------------------------------------------------- the estimators' guarantees

# One configuration of every private estimator, each with a setting where a run can stop early (the
# tree, the modes, the rounds), on numeric or categorical data.
CONFIGURED = {
    "DPKMeans": (lambda: DPKMeans(3, epsilon=0.7, max_iter=4, bounds=(0, 1)), "numeric"),
    "IDPKMeans": (lambda: IDPKMeans(3, epsilon=0.7, max_iter=4, bounds=(0, 1)), "numeric"),
    "DPKMeansPP": (lambda: DPKMeansPP(3, epsilon=0.7, bounds=(0, 1), n_public=50), "numeric"),
    "EUGKMeans": (lambda: EUGKMeans(3, epsilon=0.7, bounds=(0, 1), n_public=50), "numeric"),
    "DPQTKMeans": (lambda: DPQTKMeans(3, epsilon=0.7, bounds=(0, 1), max_height=4, threshold=2.0), "numeric"),
    "DPBirchPublicTree": (lambda: DPBirchPublicTree(3, epsilon=0.7, threshold=0.2, bounds=(0, 1)), "numeric"),
    "DPBirch": (lambda: DPBirch(3, epsilon=0.7, threshold=0.2, bounds=(0, 1)), "numeric"),
    "DPKModes": (lambda: DPKModes(3, epsilon=0.7, max_iter=6, domain_sizes=(3, 4, 2)), "categorical"),
    "LDPKModes": (lambda: LDPKModes(3, epsilon=0.7, max_iter=6, domain_sizes=(3, 4, 2)), "categorical"),
    "SamplingLDPKModes": (lambda: SamplingLDPKModes(3, epsilon=0.7, max_iter=6, domain_sizes=(3, 4, 2)), "categorical"),
    "LSHCoresetKMeans": (lambda: LSHCoresetKMeans(3, epsilon=0.7, radius=0.75, center=0.5, max_depth=8), "numeric"),
    "OneRoundLocalKMeans": (lambda: OneRoundLocalKMeans(3, epsilon=0.7, bounds=(0, 1)), "numeric"),
}


def _data_sets(kind):
    """Five data sets of one schema: clustered, uniform, one repeated record, a handful, many."""
    rng = np.random.default_rng(11)
    if kind == "numeric":
        centres = np.array([[0.2, 0.2], [0.8, 0.3], [0.5, 0.8]])
        blobs = np.clip(centres[rng.integers(0, 3, 300)] + rng.normal(0, 0.05, (300, 2)), 0, 1)
        return [blobs, rng.random((40, 2)), np.full((60, 2), 0.3), rng.random((4, 2)), rng.random((2000, 2))]
    sizes = np.array([3, 4, 2])
    return [
        rng.integers(0, sizes, (300, 3)),
        np.tile([[0, 1, 1], [2, 3, 0]], (50, 1)),
        np.full((60, 3), 1),
        rng.integers(0, sizes, (4, 3)),
        rng.integers(0, sizes, (2000, 3)),
    ]


def test_every_private_estimator_is_configured_here():
    assert set(CONFIGURED) == set(private_estimators())


@pytest.mark.parametrize("name", sorted(CONFIGURED))
def test_epsilon_guaranteed_is_the_same_for_every_run_and_data_set(name):
    """The ex-ante guarantee depends on the configuration alone; what a run spent may be less (early stops)."""
    make, kind = CONFIGURED[name]
    guaranteed, spent = set(), set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # BIRCH's notes on small trees; DPBirch's noisy radii
        for X in _data_sets(kind):
            for seed in range(8):
                est = make().set_params(random_state=seed).fit(X)
                guaranteed.add(est.epsilon_guaranteed_)
                spent.add(est.epsilon_spent_)
    assert len(guaranteed) == 1, (name, guaranteed)
    (value,) = guaranteed
    if math.isfinite(value):  # exactly: both are rounded outward from exact sums; epsilon is the total of one fit
        assert Fraction(max(spent)) <= Fraction(value) <= Fraction(0.7)
    if name in ("DPQTKMeans", "DPKModes", "SamplingLDPKModes"):  # these stop early: spent varies, the claim does not
        assert len(spent) > 1 and min(spent) < value


CENTRAL_PRIVATE = [
    name for name in CONFIGURED if name not in ("DPBirch", "LDPKModes", "SamplingLDPKModes", "OneRoundLocalKMeans")
]


@pytest.mark.parametrize("name", CENTRAL_PRIVATE)
def test_central_estimators_take_any_number_of_records_without_a_word(name):
    """Under add/remove-one neighbours n is private: 0, 1 or 2 records with K = 3 fit like 300, with the same
    released attributes and the same warnings, and no message names a count."""
    make, kind = CONFIGURED[name]
    big = _data_sets(kind)[0]

    def fit(X):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est = make().set_params(random_state=0).fit(X)
        return est, sorted({(w.category.__name__, str(w.message)) for w in caught})

    reference, reference_warnings = fit(big)
    for n in (0, 1, 2):
        est, caught = fit(big[:n])
        assert sorted(vars(est)) == sorted(vars(reference)), (name, n)
        assert est.epsilon_guaranteed_ == reference.epsilon_guaranteed_
        if name != "DPBirchPublicTree":  # its leaves kept, hence its K and its note, read the released counts only
            assert est.cluster_centers_.shape == reference.cluster_centers_.shape
            assert caught == reference_warnings, (name, n, caught)


@pytest.mark.parametrize("name", ["DPKMeansPP", "EUGKMeans", "DPQTKMeans"])
def test_k_is_checked_against_the_declared_n_public_only(name):
    make = {"DPKMeansPP": DPKMeansPP, "EUGKMeans": EUGKMeans, "DPQTKMeans": DPQTKMeans}[name]
    X = np.random.default_rng(0).random((50, 2))
    with pytest.raises(ValueError, match=r"n_clusters=3 is larger than n_public=2") as info:
        make(3, bounds=(0, 1), n_public=2).fit(X)
    assert "50" not in str(info.value)  # the true count is never named
    make(3, bounds=(0, 1), n_public=100, random_state=0).fit(X[:1])  # one record, K = 3: not refused


# --------------------------------------------------------------------------- accounting across fits


def _fit_quietly(est, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X)


@pytest.mark.parametrize("name", sorted(CONFIGURED))
def test_an_accountant_refuses_the_fit_past_its_budget_before_reading_the_data(name):
    """Budget 2 epsilon: two fits pass, the third is refused before its records are read (X=None would otherwise
    be refused as input), and a leaky configuration (DPBirch) is refused at once."""
    make, kind = CONFIGURED[name]
    X = _data_sets(kind)[0]
    accountant = BudgetAccountant(2 * 0.7)
    if name == "DPBirch":
        with pytest.raises(BudgetExceededError, match="no finite epsilon"):
            make().set_params(accountant=accountant).fit(None)
        assert accountant.entries == []
        return
    for seed in (0, 1):
        est = _fit_quietly(make().set_params(accountant=accountant, random_state=seed), X)
        assert Fraction(est.epsilon_guaranteed_) <= Fraction(0.7)
    with pytest.raises(BudgetExceededError, match="past the budget"):
        make().set_params(accountant=accountant).fit(None)
    assert len(accountant.entries) == 2 and accountant.spent == 1.4


def test_a_leaky_option_is_declared_from_the_parameters():
    """Every configuration whose fit guarantees nothing is one the accountant refuses ex ante (declared_leaky), and
    its fit says so with a PrivacyLeakWarning."""
    from dpclust_lib.cluster._base import declared_leaky

    options = {
        "DPKMeans": [dict(init="records"), dict(noise="float"), dict(bounds="data")],
        "IDPKMeans": [dict(split="order"), dict(noise="float")],
        "DPKMeansPP": [dict(n_public="data")],
        "EUGKMeans": [dict(n_public="data")],
        "DPQTKMeans": [dict(init="kmeans-on-data"), dict(max_height=None, threshold=None, n_public="data")],
        "DPBirchPublicTree": [dict(skeleton="data"), dict(noise="float")],
        "DPBirch": [{}],
        "DPKModes": [dict(init="records"), dict(domain_sizes="data")],
        "LDPKModes": [dict(domain_sizes="data")],
        "SamplingLDPKModes": [dict(protect_cluster_index=False), dict(init="records")],
        "LSHCoresetKMeans": [dict(radius="data")],
        "OneRoundLocalKMeans": [dict(bounds="data")],
    }
    for name, settings in options.items():
        make, kind = CONFIGURED[name]
        for setting in settings:
            with pytest.warns(PrivacyLeakWarning):
                est = make().set_params(random_state=0, **setting).fit(_data_sets(kind)[0])
            assert est.epsilon_guaranteed_ == math.inf and declared_leaky(est), (name, setting)
        if name != "DPBirch":
            assert not declared_leaky(make()), name


def test_composition_is_exact_and_rounded_outward():
    assert compose([0.1] * 10) > 1.0 and Fraction(compose([0.1] * 10)) >= 10 * Fraction(0.1)
    fifths = PrivacyLedger(1.0)
    for _ in range(5):
        fifths.spend(share_at_most(1.0, Fraction(1, 5)), "a fifth")
    assert fifths.spent <= 1.0
    ledger = PrivacyLedger(1.0)
    ledger.spend(0.5, "a half")
    ledger.spend(0.5, "the other half")
    with pytest.raises(BudgetExceededError):  # no slack: 2^-60 past the budget is past it
        ledger.spend(2.0**-60, "a sliver")


def test_the_operating_system_generator_is_asked_for_by_name():
    X = _data_sets("numeric")[0]
    a = DPKMeans(2, bounds=(0, 1), random_state="os").fit(X).cluster_centers_
    b = DPKMeans(2, bounds=(0, 1), random_state="os").fit(X).cluster_centers_
    assert not np.array_equal(a, b)  # keyed afresh from the operating system: no run repeats
    rng = check_random_state("os")
    assert type(rng.bit_generator).__name__ == "ChaCha" and rng.bit_generator.state["state"]["rounds"] == 20
    seeded = DPKMeans(2, bounds=(0, 1), random_state=3).fit(X).cluster_centers_
    np.testing.assert_array_equal(seeded, DPKMeans(2, bounds=(0, 1), random_state=3).fit(X).cluster_centers_)

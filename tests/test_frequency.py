"""Frequency oracles: unbiasedness and variance by simulation, Kronecker aggregation, post-processing.

Simulation tests use R = 2000 independent repetitions with a fixed seed.
Mean: per-cell z-test against the true count, two-sided. Variance: the ratio
of the sample variance to `variance(n, true_counts)` against the chi-square
quantiles of R - 1 degrees of freedom (the estimate is a sum of n independent
terms, close to normal for n in the hundreds). Family-wise alpha = 0.001,
Bonferroni over cells and over the two tests.
"""

import itertools

import numpy as np
import pytest
from scipy import stats

from dpclust_lib import frequency, mechanisms
from dpclust_lib.frequency import GRR, LDPFO, OUE, Tally, UnaryEncoding

from .conftest import bonferroni

ALPHA = 1e-3
R = 2000


def _simulate(oracle, values, reps, rng):
    """R independent protocol runs over the same users; one estimate per row."""
    n = len(values)
    tiled = np.concatenate([values] * reps) if np.ndim(values) == 1 else np.tile(values, (reps, 1))
    reports = oracle.perturb(tiled, rng)
    out = []
    for r in range(reps):
        out.append(oracle.aggregate(reports[r * n : (r + 1) * n]).ravel())
    return np.array(out)


def _check_mean_and_variance(estimates, true_counts, variance):
    cells = true_counts.size
    level = bonferroni(ALPHA, 2 * cells)
    mean = estimates.mean(axis=0)
    z = (mean - true_counts) / np.sqrt(variance / estimates.shape[0])
    assert np.all(np.abs(z) < stats.norm.isf(level / 2)), f"biased: z = {z}"
    ratio = estimates.var(axis=0, ddof=1) / variance
    df = estimates.shape[0] - 1
    lo, hi = stats.chi2.ppf(level / 2, df) / df, stats.chi2.isf(level / 2, df) / df
    assert np.all((ratio > lo) & (ratio < hi)), f"variance ratio {ratio} outside [{lo:.3f}, {hi:.3f}]"


def test_grr_unbiased_with_the_stated_variance():
    k, n = 4, 400
    values = np.repeat(np.arange(k), [200, 120, 80, 0])
    oracle = GRR(k, 1.0)
    est = _simulate(oracle, values, R, np.random.default_rng(1))
    truth = np.bincount(values, minlength=k).astype(float)
    _check_mean_and_variance(est, truth, oracle.variance(n, truth))


def test_oue_unbiased_with_the_stated_variance():
    k, n = 5, 300
    values = np.repeat(np.arange(k), [100, 100, 50, 50, 0])
    oracle = OUE(k, 0.8)
    est = _simulate(oracle, values, R, np.random.default_rng(2))
    truth = np.bincount(values, minlength=k).astype(float)
    _check_mean_and_variance(est, truth, oracle.variance(n, truth))


def test_ldpfo_unbiased_with_the_stated_variance():
    sizes = (3, 2, 3)
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.integers(0, k, 300) for k in sizes])
    oracle = LDPFO(sizes, 1.2)
    est = _simulate(oracle, X, R, np.random.default_rng(4))
    truth = oracle.count(X).counts
    _check_mean_and_variance(est, truth.ravel(), oracle.variance(len(X), truth).ravel())


def test_variance_check_detects_a_wrong_formula():
    """The variance test can fail: halving the stated variance is caught."""
    k, n = 4, 400
    values = np.repeat(np.arange(k), [200, 120, 80, 0])
    oracle = GRR(k, 1.0)
    est = _simulate(oracle, values, R, np.random.default_rng(1))
    truth = np.bincount(values, minlength=k).astype(float)
    with pytest.raises(AssertionError, match="variance"):
        _check_mean_and_variance(est, truth, oracle.variance(n, truth) / 2)


def test_grr_rare_value_variance_is_wang_et_al_formula():
    k, eps, n = 10, 1.5, 1000
    e = np.exp(eps)
    assert np.isclose(GRR(k, eps).variance(n), n * (e + k - 2) / (e - 1) ** 2)


def test_oue_rare_value_variance_is_wang_et_al_formula():
    eps, n = 1.5, 1000
    e = np.exp(eps)
    assert np.isclose(OUE(8, eps).variance(n), n * 4 * e / (e - 1) ** 2)


@pytest.mark.parametrize("sizes", [(3, 2, 3), (2, 2, 2, 2), (5,), (4, 3)])
def test_ldpfo_kronecker_aggregation_equals_dense_inverse(sizes):
    eps = 0.7
    rng = np.random.default_rng(5)
    X = np.column_stack([rng.integers(0, k, 500) for k in sizes])
    oracle = LDPFO(sizes, eps)
    tally = oracle.count(oracle.perturb(X, rng))
    dense = np.linalg.solve(mechanisms.hamming_rr_matrix(sizes, eps).T, tally.counts.ravel())
    np.testing.assert_allclose(oracle.estimate(tally).ravel(), dense, rtol=1e-9, atol=1e-9)


def test_ldpfo_estimate_sums_to_n():
    oracle = LDPFO((2, 3, 4), 0.5)
    X = np.array(list(itertools.product(range(2), range(3), range(4))))
    est = oracle.aggregate(oracle.perturb(X, 0))
    assert np.isclose(est.sum(), len(X))


def test_ldpfo_variance_needs_the_true_counts():
    with pytest.raises(ValueError, match="true_counts"):
        LDPFO((2, 2), 1.0).variance(10)


def test_ldpfo_plain_ldp_level_is_m_times_epsilon():
    assert LDPFO((2, 3, 4), 0.5).ldp_epsilon == pytest.approx(1.5)


@pytest.mark.parametrize(
    "make, values",
    [
        (lambda: GRR(4, 1.0), np.arange(1000) % 4),
        (lambda: OUE(4, 1.0), np.arange(1000) % 4),
        (lambda: LDPFO((2, 3), 1.0), np.column_stack([np.arange(1000) % 2, np.arange(1000) % 3])),
    ],
)
def test_tallies_of_chunks_add_up_to_the_whole(make, values):
    oracle = make()
    reports = oracle.perturb(values, 9)
    whole = oracle.count(reports)
    merged = oracle.count(reports[:300]) + oracle.count(reports[300:700]) + oracle.count(reports[700:])
    assert merged.n == whole.n
    np.testing.assert_array_equal(merged.counts, whole.counts)
    np.testing.assert_allclose(oracle.estimate(merged), oracle.estimate(whole))


def test_tallies_of_different_shapes_do_not_merge():
    with pytest.raises(ValueError, match="shapes"):
        Tally(np.zeros(3), 1) + Tally(np.zeros(4), 1)


def test_sue_constructor():
    oracle = UnaryEncoding.sue(4, 1.0)
    assert np.isclose(oracle.p + oracle.q, 1.0)
    assert np.isclose(oracle.epsilon, 1.0)


# --------------------------------------------------------------------------- post-processing


def test_clip_and_normalise_paper_rounding():
    raw = np.array([-2.0, 3.0, 1.0])
    out = frequency.clip_and_normalise(raw, 4)
    np.testing.assert_array_equal(out, [0, 3, 1])
    np.testing.assert_array_equal(raw, [-2.0, 3.0, 1.0])  # the raw estimate is kept


def test_clip_and_normalise_ceil_can_exceed_n():
    out = frequency.clip_and_normalise(np.array([1.0, 1.0, 1.0]), 4)
    assert out.tolist() == [2, 2, 2] and out.sum() > 4


def test_clip_and_normalise_real_and_exact_totals():
    raw = np.array([5.2, -1.0, 2.9, 0.4])
    real = frequency.clip_and_normalise(raw, 10, rounding="none")
    assert np.isclose(real.sum(), 10) and np.all(real >= 0) and real[1] == 0
    ints = frequency.clip_and_normalise(raw, 10, rounding="largest_remainder")
    assert ints.sum() == 10 and ints.dtype.kind == "i"


def test_clip_and_normalise_keeps_shape():
    raw = np.arange(6.0).reshape(2, 3) - 1
    assert frequency.clip_and_normalise(raw, 5).shape == (2, 3)


def test_clip_and_normalise_all_negative_is_an_error():
    with pytest.raises(ValueError, match="<= 0"):
        frequency.clip_and_normalise(np.array([-1.0, -2.0]), 3)


def test_clip_and_normalise_bad_rounding():
    with pytest.raises(ValueError, match="rounding"):
        frequency.clip_and_normalise(np.array([1.0]), 1, rounding="floor")


def test_norm_sub_is_the_projection_onto_the_scaled_simplex():
    raw = np.array([6.0, -1.0, 3.0, 0.5])
    out = frequency.norm_sub(raw, 8)
    assert np.isclose(out.sum(), 8) and np.all(out >= 0)
    # KKT: every positive cell is shifted by the same delta; zeroed cells were below it.
    delta = raw[out > 0] - out[out > 0]
    assert np.allclose(delta, delta[0]) and np.all(raw[out == 0] <= delta[0])
    # A valid histogram is its own projection.
    np.testing.assert_allclose(frequency.norm_sub(np.array([1.0, 2.0, 5.0]), 8), [1.0, 2.0, 5.0])


def test_joint_index_round_trip_and_mixed_radix():
    sizes = (3, 2, 3)
    X = np.array(list(itertools.product(*[range(k) for k in sizes])))
    idx = frequency.joint_index(X, sizes)
    np.testing.assert_array_equal(idx, np.arange(18))  # first attribute most significant
    np.testing.assert_array_equal(frequency.joint_records(idx, sizes), X)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "call, exc, needle",
    [
        (lambda: GRR(1, 1.0), ValueError, "k"),
        (lambda: GRR(3, 0.0), ValueError, "epsilon"),
        (lambda: GRR(3, float("nan")), ValueError, "epsilon"),
        (lambda: OUE(3, -1.0), ValueError, "epsilon"),
        (lambda: LDPFO((2, 1), 1.0), ValueError, "domain_sizes"),
        (lambda: LDPFO((), 1.0), ValueError, "domain_sizes"),
        (lambda: LDPFO((2, 2), float("inf")), ValueError, "epsilon"),
        (lambda: GRR(3, 1.0).count(np.array([0, 3])), ValueError, "reports"),
        (lambda: GRR(3, 1.0).count(np.array([[0, 1]])), ValueError, "1-D"),
        (lambda: OUE(3, 1.0).count(np.ones((2, 4), dtype=int)), ValueError, r"\(n, 3\)"),
        (lambda: LDPFO((2, 2), 1.0).count(np.array([[0, 2]])), ValueError, "outside the declared domain"),
        (lambda: LDPFO((2, 2), 1.0).estimate(Tally(np.zeros(4), 1)), ValueError, "shape"),
        (lambda: LDPFO((2, 2), 1.0).estimate(np.zeros((2, 2))), TypeError, "Tally"),
        (lambda: GRR(3, 1.0).variance(0), ValueError, "n"),
        (lambda: frequency.joint_records(np.array([5]), (2, 2)), ValueError, "index"),
        (lambda: frequency.clip_and_normalise(np.array([1.0, np.nan]), 2), ValueError, "finite"),
        (lambda: frequency.clip_and_normalise(np.array([1.0]), 0), ValueError, "n"),
    ],
)
def test_frequency_bad_input(call, exc, needle):
    with pytest.raises(exc, match=needle):
        call()


def test_streamed_aggregation_equals_aggregating_everything():
    oracle = LDPFO((2, 3, 2), 1.0)
    rng = np.random.default_rng(8)
    X = np.column_stack([rng.integers(0, k, 10_000) for k in (2, 3, 2)])
    reports = oracle.perturb(X, rng)
    chunks = (reports[i : i + 999] for i in range(0, len(reports), 999))
    tally = frequency.aggregate_stream(oracle, chunks)
    assert tally.n == len(X)
    np.testing.assert_allclose(oracle.estimate(tally), oracle.aggregate(reports))
    with pytest.raises(ValueError, match="empty"):
        frequency.aggregate_stream(oracle, iter([]))


# --------------------------------------------------------------------------- limits and true counts


@pytest.mark.parametrize("sizes", [(2**12, 2**11), (2**32, 2**32), (2,) * 23])
def test_ldpfo_domain_cap_refused_before_allocating(sizes):
    """(2**32, 2**32) has 2^64 cells, which np.prod wraps to 0: the cap must count in Python ints."""
    with pytest.raises(ValueError, match="domain_sizes.*MAX_CELLS"):
        LDPFO(sizes, 1.0)


def test_ldpfo_largest_allowed_domain_and_wide_attribute():
    assert LDPFO((2,) * 22, 1.0).n_cells == frequency.MAX_CELLS
    with pytest.raises(ValueError, match=r"domain_sizes\[1\]=5000"):
        LDPFO((2, 5000), 1.0)


@pytest.mark.parametrize(
    "make", [lambda e: GRR(3, e), lambda e: OUE(3, e), lambda e: UnaryEncoding.sue(3, e), lambda e: LDPFO((2, 3), e)]
)
def test_oracles_refuse_epsilon_past_the_safe_range(make):
    with pytest.raises(ValueError, match="epsilon=710"):
        make(710.0)
    with pytest.raises(ValueError, match="epsilon=60"):
        make(60.0)


@pytest.mark.parametrize("oracle", [GRR(3, 1.0), OUE(3, 1.0)], ids=["GRR", "OUE"])
@pytest.mark.parametrize(
    "true_counts, exc, needle",
    [
        ([5, 5], ValueError, r"shape \(3,\)"),
        ([[5, 3, 2]], ValueError, "shape"),
        ([5, 7, -2], ValueError, ">= 0"),
        ([5, np.nan, 5], ValueError, "finite"),
        ([5, 3, 3], ValueError, "sums to 11"),
        (["5", "3", "2"], TypeError, "true_counts"),
    ],
)
def test_variance_checks_true_counts(oracle, true_counts, exc, needle):
    with pytest.raises(exc, match=needle):
        oracle.variance(10, true_counts)


def test_ldpfo_variance_checks_the_shape_of_true_counts():
    oracle = LDPFO((2, 3), 1.0)
    with pytest.raises(ValueError, match=r"shape \(2, 3\)"):
        oracle.variance(6, np.ones(6))
    assert oracle.variance(6, np.ones((2, 3))).shape == (2, 3)

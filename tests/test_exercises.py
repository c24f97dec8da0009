"""Exercise checkers accept the reference solution and reject typical wrong ones with a hint;
the student export stubs solutions, clears outputs, and runs clean with the solution pasted back."""

import ast
import itertools
import json
import math
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path
from unittest import mock

import nbformat
import numpy as np
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from scipy import stats

from dpclust import assignments, datasets, exercises
from dpclust.exercises import ExerciseError
from dpclust_lib.cluster import birch, eug_kmeans, kmeans
from dpclust_lib.cluster.dp_birch import DPBirch
from dpclust_lib.cluster.dpqt_kmeans import DPQTKMeans
from dpclust_lib.cluster.sampling_kmodes import report_distribution, server_estimates, user_reports
from dpclust_lib.frequency import LDPFO, Tally, clip_and_normalise, joint_records

from . import discover

ROOT = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------- GRR


def grr_reference(values, k, epsilon, rng):
    return mechanisms.grr_perturb(values, k, epsilon, rng)


def grr_binary_p(values, k, epsilon, rng):
    p = np.exp(epsilon) / (np.exp(epsilon) + 1)
    other = rng.integers(0, k - 1, len(values))
    return np.where(rng.random(len(values)) < p, values, other + (other >= values))


def grr_other_includes_self(values, k, epsilon, rng):
    p = np.exp(epsilon) / (np.exp(epsilon) + k - 1)
    return np.where(rng.random(len(values)) < p, values, rng.integers(0, k, len(values)))


def test_grr_checker():
    exercises.check_grr_perturb(grr_reference)
    with pytest.raises(ExerciseError, match="binary formula"):
        exercises.check_grr_perturb(grr_binary_p)
    with pytest.raises(ExerciseError, match="your replacement can be the true value itself"):
        exercises.check_grr_perturb(grr_other_includes_self)


# --------------------------------------------------------------------------- OUE


def oue_reference(values, k, epsilon, rng):
    p, q = mechanisms.oue_pq(epsilon)
    return mechanisms.ue_perturb(mechanisms.unary_encode(values, k), p, q, rng)


def oue_swapped(values, k, epsilon, rng):
    p, q = mechanisms.oue_pq(epsilon)
    bits = mechanisms.unary_encode(values, k)
    return (rng.random(bits.shape) < np.where(bits == 1, q, p)).astype(int)


def oue_is_sue(values, k, epsilon, rng):
    p, q = mechanisms.sue_pq(epsilon)
    return mechanisms.ue_perturb(mechanisms.unary_encode(values, k), p, q, rng)


def test_oue_checker():
    exercises.check_oue_perturb(oue_reference)
    with pytest.raises(ExerciseError, match="swapped"):
        exercises.check_oue_perturb(oue_swapped)
    with pytest.raises(ExerciseError, match="SUE"):
        exercises.check_oue_perturb(oue_is_sue)


# --------------------------------------------------------------------------- LDP-FO aggregation


def estimate_reference(counts, sizes, epsilon):
    return LDPFO(sizes, epsilon).estimate(Tally(counts, int(counts.sum())))


def estimate_without_scaling(counts, sizes, epsilon):
    out = counts
    for axis, k in enumerate(sizes):
        out = out - out.sum(axis=axis, keepdims=True) / (np.exp(epsilon) + k - 1)
    return out


def estimate_post_processed(counts, sizes, epsilon):
    return clip_and_normalise(estimate_reference(counts, sizes, epsilon), int(counts.sum()), rounding="none")


def estimate_p_q_swapped(counts, sizes, epsilon):
    out = counts
    for axis, k in enumerate(sizes):
        p, q = mechanisms.grr_probabilities(k, epsilon)
        out = np.moveaxis(np.tensordot((np.eye(k) - p) / (q - p), out, axes=([1], [axis])), 0, axis)
    return out


def test_ldpfo_checker():
    exercises.check_ldpfo_estimate(estimate_reference)
    with pytest.raises(ExerciseError, match="constant factor"):
        exercises.check_ldpfo_estimate(estimate_without_scaling)
    with pytest.raises(ExerciseError, match="post-processed"):
        exercises.check_ldpfo_estimate(estimate_post_processed)
    with pytest.raises(ExerciseError, match="swapped"):
        exercises.check_ldpfo_estimate(estimate_p_q_swapped)


def test_unwritten_solution_says_so():
    def stub(values, k, epsilon, rng):
        raise NotImplementedError("write stub")

    with pytest.raises(ExerciseError, match="NotImplementedError"):
        exercises.check_grr_perturb(stub)


def test_an_error_in_the_solution_is_reported_with_the_call():
    def crashes(values, k, epsilon, rng):
        return values[:, 1]

    with pytest.raises(ExerciseError, match=r"crashes raised IndexError.*\n  called with: crashes\(array of shape"):
        exercises.check_grr_perturb(crashes)


# --------------------------------------------------------------------------- Hamming-distance RR (Peng et al.)


def hamming_reference(X, sizes, epsilon, rng):
    return mechanisms.hamming_rr_perturb(X, sizes, epsilon, rng)


def _hamming(X, sizes, keep_probability, rng, others="other"):
    X, k = np.asarray(X), np.asarray(sizes)
    keep = rng.random(X.shape) < keep_probability
    if others == "all":
        return np.where(keep, X, rng.integers(0, k, size=X.shape))
    other = rng.integers(0, k - 1, size=X.shape)
    return np.where(keep, X, other + (other >= X))


def hamming_binary_p(X, sizes, epsilon, rng):
    return _hamming(X, sizes, np.exp(epsilon) / (np.exp(epsilon) + 1), rng)


def hamming_eps_over_m(X, sizes, epsilon, rng):
    return hamming_reference(X, sizes, epsilon / len(sizes), rng)


def hamming_other_includes_self(X, sizes, epsilon, rng):
    return _hamming(X, sizes, np.exp(epsilon) / (np.exp(epsilon) + np.asarray(sizes) - 1), rng, others="all")


def hamming_one_coin_per_user(X, sizes, epsilon, rng):
    k = np.asarray(sizes)
    keep = rng.random((len(X), 1)) < np.exp(epsilon) / (np.exp(epsilon) + k - 1)
    other = rng.integers(0, k - 1, size=X.shape)
    return np.where(keep, X, other + (other >= X))


def hamming_first_domain_for_all(X, sizes, epsilon, rng):
    return hamming_reference(X, (sizes[0],) * len(sizes), epsilon, rng)


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (hamming_binary_p, "binary formula"),
        (hamming_eps_over_m, "split eps over the m attributes"),
        (hamming_other_includes_self, "your replacement can be the true value itself"),
        (hamming_one_coin_per_user, "not independent"),
        (hamming_first_domain_for_all, "outside the domain of attribute 1"),
    ],
)
def test_hamming_rr_checker(wrong, hint):
    exercises.check_hamming_rr_perturb(hamming_reference)
    with pytest.raises(ExerciseError, match=hint):
        exercises.check_hamming_rr_perturb(wrong)


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (lambda sizes, eps: eps, "per unit of Hamming distance"),
        (lambda sizes, eps: (len(sizes) - 1) * eps, "you counted m - 1 attributes"),
        (lambda sizes, eps: eps * sum(k - 1 for k in sizes), "you counted differing values"),
    ],
)
def test_hamming_ldp_level_checker(wrong, hint):
    exercises.check_hamming_rr_ldp_level(lambda sizes, eps: LDPFO(sizes, eps).ldp_epsilon)
    with pytest.raises(ExerciseError, match=hint):
        exercises.check_hamming_rr_ldp_level(wrong)


def _changed(sizes, eps):
    k = np.asarray(sizes)
    return (k - 1) / (np.exp(eps) + k - 1)


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (lambda sizes, eps: float(np.sum(1 - _changed(sizes, eps))), "attributes the report KEEPS"),
        (lambda sizes, eps: len(sizes) / (np.exp(eps) + 1), "binary formula"),
        (lambda sizes, eps: len(sizes) * _changed(sizes[:1], eps)[0], "its own domain size"),
        (lambda sizes, eps: float(np.sum(_changed(sizes, eps / len(sizes)))), "you ran each attribute at eps/m"),
    ],
)
def test_hamming_expected_distance_checker(wrong, hint):
    exercises.check_hamming_rr_expected_distance(lambda sizes, eps: float(np.sum(_changed(sizes, eps))))
    with pytest.raises(ExerciseError, match=hint):
        exercises.check_hamming_rr_expected_distance(wrong)


def _hamming_level(sizes, eps):
    """max over x, x', y of ln P[x, y] / P[x', y], by brute force over the library's transition matrix."""
    logP = np.log(mechanisms.hamming_rr_matrix(sizes, eps))
    return float(max((logP[i] - logP).max() for i in range(logP.shape[0])))


def _hamming_mean_distance(sizes, eps):
    """E[d(x, Y)] under the library's transition matrix (row 0: the same for every x)."""
    P = mechanisms.hamming_rr_matrix(sizes, eps)
    records = joint_records(np.arange(P.shape[0]), sizes)
    return float(P[0] @ (records != records[0]).sum(axis=1))


def test_the_hamming_answers_are_the_library_matrixs_worst_ratio_and_mean_distance():
    cases = exercises.ldpk_modes._HAMMING_CASES
    levels, distances = exercises.ldpk_modes.HAMMING_LEVEL_ANSWERS, exercises.ldpk_modes.HAMMING_DISTANCE_ANSWERS
    assert [_hamming_level(*c) for c in cases] == pytest.approx(levels, rel=1e-12)
    assert [_hamming_mean_distance(*c) for c in cases] == pytest.approx(distances, rel=1e-12)
    # and the mean distance agrees with Eq. 4's distance distribution for equal domains
    for m, k, eps in [(3, 2, 1.0), (4, 3, 0.5), (2, 5, 2.0)]:
        pmf = mechanisms.hamming_rr_distance_pmf(m, k, eps)
        assert _hamming_mean_distance((k,) * m, eps) == pytest.approx(np.arange(m + 1) @ pmf, rel=1e-12)


# --------------------------------------------------------------------------- Zhang et al. (2022)


def _oue(eps):
    return mechanisms.oue_pq(eps)


def eq9_reference(bit_sums, cluster_sizes, d, eps):
    p, q = _oue(eps)
    return (bit_sums - cluster_sizes[:, None] / d * q) / (p - q)


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (
            lambda s, n, d, e: (s - n[:, None] * _oue(e)[1]) / (_oue(e)[0] - _oue(e)[1]),
            "subtracted q for every user of the cluster",
        ),
        (lambda s, n, d, e: (s - n[:, None] / d * _oue(e)[0]) / (_oue(e)[1] - _oue(e)[0]), "swapped"),
        (lambda s, n, d, e: s - n[:, None] / d * _oue(e)[1], "not rescaled"),
        (lambda s, n, d, e: eq9_reference(s, n, d, e) / (n[:, None] / d), "share"),
        (lambda s, n, d, e: (s - n / d * _oue(e)[1]) / (_oue(e)[0] - _oue(e)[1]), "wrong axis"),
    ],
)
def test_eq9_estimate_checker(wrong, hint):
    exercises.check_eq9_estimate(eq9_reference)
    with pytest.raises(ExerciseError, match=hint):
        exercises.check_eq9_estimate(wrong)


def unmix_reference(observed, index_epsilon):
    K = observed.shape[0]
    return np.tensordot(np.linalg.inv(mechanisms.grr_matrix(K, index_epsilon).T), observed, axes=1)


def _unmix(observed, eps, K=None, axis=0, swap=False, scale=True):
    p, q = mechanisms.grr_probabilities(K or observed.shape[0], eps)
    if swap:
        p, q = q, p
    out = observed - q * observed.sum(axis=axis, keepdims=True)
    return out / (p - q) if scale else out


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (lambda o, e: _unmix(o, e, swap=True), "swapped"),
        (lambda o, e: _unmix(o, e, axis=-1), "wrong axis"),
        (lambda o, e: _unmix(o, e, K=o.shape[0] + 1), "off by one"),
        (lambda o, e: _unmix(o, e, scale=False), "not rescaled"),
        (lambda o, e: np.tensordot(mechanisms.grr_matrix(o.shape[0], e).T, o, axes=1), "mixes the labels once more"),
    ],
)
def test_index_unmix_checker(wrong, hint):
    exercises.check_index_unmix(unmix_reference)
    exercises.check_index_unmix(_unmix)
    with pytest.raises(ExerciseError, match=hint):
        exercises.check_index_unmix(wrong)


def variance_expected(g, N, d, eps):
    p, q = _oue(eps)
    return (g * p / d * (1 - p / d) + (N - g) * q / d * (1 - q / d)) / (p - q) ** 2


def variance_observed(g, N, d, eps):
    p, q = _oue(eps)
    return (g * p * (1 - p) + (N - g) * q * (1 - q)) / (d * (p - q) ** 2) + g * (d - 1) / d**2


def variance_eq12_as_printed(N, d, eps):
    p, q = _oue(eps)
    return (N * p * (1 - p) / d + N * (1 - 1 / d) * q * (1 - q)) / (p - q) ** 2


def _plain_oue(g, N, d, eps):
    p, q = _oue(eps)
    return (g * p * (1 - p) + (N - g) * q * (1 - q)) / (p - q) ** 2


@pytest.mark.parametrize(
    "reporters, right, wrong, hint",
    [
        ("expected", variance_expected, lambda g, N, d, e: variance_eq12_as_printed(N, d, e), "Eq. 12 as printed"),
        ("expected", variance_expected, _plain_oue, "plain OUE over all N users"),
        (
            "expected",
            variance_expected,
            lambda g, N, d, e: variance_expected(g, N, d, e) * (_oue(e)[0] - _oue(e)[1]) ** 2,
            r"Var\[s\]",
        ),
        ("observed", variance_observed, lambda g, N, d, e: _plain_oue(g, N, d, e) / d, "WHO reports"),
        ("observed", variance_observed, variance_expected, "expected number of reporters"),
    ],
)
def test_eq9_variance_checker(reporters, right, wrong, hint):
    exercises.check_eq9_variance(right, reporters=reporters)
    with pytest.raises(ExerciseError, match=hint):
        exercises.check_eq9_variance(wrong, reporters=reporters)


def _eq9_variance_exact(g, N, d, epsilon, reporters="expected"):
    """Var[g'] from the library's exact report distribution: a sum over independent users.

    User i adds Y_i = B_i - c q to (p - q) g', with B_i the bit for value w of attribute j it sends (0 if it
    reports another attribute) and c = 1/d (``reporters="expected"``: the server subtracts |C_r| q / d) or
    c = 1 if user i reports j, else 0 (``"observed"``: the server subtracts n_rj q).
    """
    d = int(d)
    sizes, centre = (2,) * d, np.zeros((1, d), dtype=np.int64)
    p, q = mechanisms.oue_pq(epsilon)

    def moments(record):  # E[Y], E[Y^2] for one user, value w = 1 of attribute 0
        pmf = report_distribution(np.asarray(record), centre, sizes, epsilon)
        m1 = m2 = 0.0
        for (_, j, bits), pr in pmf.items():
            y = float(j == 0 and bits[1] == 1) - (float(j == 0) if reporters == "observed" else 1.0 / d) * q
            m1, m2 = m1 + pr * y, m2 + pr * y * y
        return m1, m2

    holder = np.zeros(d, dtype=np.int64)
    holder[0] = 1
    (h1, h2), (o1, o2) = moments(holder), moments(np.zeros(d, dtype=np.int64))
    return (g * (h2 - h1**2) + (N - g) * (o2 - o1**2)) / (p - q) ** 2


def test_the_eq9_variance_answers_come_from_the_exact_report_distribution():
    for reporters, answers in exercises.sampling_kmodes.EQ9_VARIANCE_ANSWERS.items():
        want = [_eq9_variance_exact(*case, reporters) for case in exercises.sampling_kmodes._EQ9_VARIANCE_CASES]
        assert answers == pytest.approx(want, rel=1e-12)


def test_eq9_variance_reference_matches_the_library_estimator(rng):
    """The exact variances against the sample variance of server_estimates: a chi-square variance test per
    estimator, alpha = 0.001 each (two tests)."""
    d, N, g, eps, reps = 3, 300, 100, 1.0, 3000
    X = np.zeros((N, d), dtype=np.int64)
    X[:g, 0] = 1  # g users hold value 1 of attribute 0
    centre = np.zeros((1, d), dtype=np.int64)
    low, high = stats.chi2.ppf([0.0005, 0.9995], reps - 1) / (reps - 1)
    for reporters, other in (("expected", "observed"), ("observed", "expected")):
        draws = [
            server_estimates(
                user_reports(X, centre, (2,) * d, eps, random_state=rng), 1, (2,) * d, eps, reporters=reporters
            )[0][0, 1]
            for _ in range(reps)
        ]
        variance = np.var(draws, ddof=1)
        assert low < variance / _eq9_variance_exact(g, N, d, eps, reporters) < high, reporters
        # the test can fail: the other estimator's variance is outside the band
        assert not low < variance / _eq9_variance_exact(g, N, d, eps, other) < high, reporters


def test_eq9_variance_checker_refuses_unknown_reporters():
    with pytest.raises(ValueError, match="reporters"):
        exercises.check_eq9_variance(variance_expected, reporters="sampled")


# --------------------------------------------------------------------------- Li et al. (2013): SuLQ and IDP k-means


def _exact_sums_counts(X, labels, K):
    d = X.shape[1]
    return kmeans.cluster_sums_counts(X, labels, K, np.zeros(d), np.ones(d))


def sums_counts_reference(X, labels, K, eps, rng):
    sums, counts = _exact_sums_counts(X, labels, K)
    out = mechanisms.laplace_mechanism(np.column_stack([sums, counts]), X.shape[1] + 1, eps, rng, noise="float")
    return out[:, :-1], out[:, -1]


def _sums_counts(X, labels, K, eps, rng, sum_scale=None, count_scale=None, draw="laplace"):
    sums, counts = _exact_sums_counts(X, labels, K)
    d = X.shape[1]
    sum_scale = (d + 1) / eps if sum_scale is None else sum_scale
    count_scale = (d + 1) / eps if count_scale is None else count_scale
    noise = getattr(rng, draw)(0.0, 1.0, size=(K, d + 1))
    return sums + sum_scale * noise[:, :d], counts + count_scale * noise[:, d]


def sums_counts_two_draws(X, labels, K, eps, rng):
    sums, counts = _exact_sums_counts(X, labels, K)
    b = (X.shape[1] + 1) / eps
    return sums + rng.laplace(0.0, b, size=sums.shape), counts + rng.laplace(0.0, b, size=K)


def sums_counts_transposed(X, labels, K, eps, rng):
    sums, counts = _exact_sums_counts(X, labels, K)
    d = X.shape[1]
    noise = rng.laplace(0.0, (d + 1) / eps, size=(d + 1, K)).T
    return sums + noise[:, :d], counts + noise[:, d]


def sums_counts_one_draw_per_cluster(X, labels, K, eps, rng):
    sums, counts = _exact_sums_counts(X, labels, K)
    noise = rng.laplace(0.0, (X.shape[1] + 1) / eps, size=K)
    return sums + noise[:, None], counts + noise


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (
            lambda X, l, K, e, rng: _sums_counts(X, l, K, e, rng, X.shape[1] / e, X.shape[1] / e),
            "what else does adding a record change",
        ),
        (lambda X, l, K, e, rng: _sums_counts(X, l, K, e, rng, 1 / e, 1 / e), "sensitivity of a count alone"),
        (
            lambda X, l, K, e, rng: _sums_counts(X, l, K, e, rng, count_scale=0.0),
            "noise on the sums but not on the counts",
        ),
        (lambda X, l, K, e, rng: _sums_counts(X, l, K, e, rng, X.shape[1] / e, 1 / e), "2 eps-DP"),
        (lambda X, l, K, e, rng: _sums_counts(X, l, K, e, rng, draw="normal"), "Gaussian"),
        (sums_counts_one_draw_per_cluster, "its own Laplace draw"),
        (sums_counts_two_draws, "prescribed layout"),
        (sums_counts_transposed, r"shape \(d \+ 1, K\)"),
    ],
)
def test_noisy_sums_counts_checker(wrong, hint):
    exercises.check_noisy_sums_counts(sums_counts_reference)
    with pytest.raises(ExerciseError, match=hint):
        exercises.check_noisy_sums_counts(wrong)


def test_noisy_sums_counts_checker_wants_two_arrays():
    with pytest.raises(ExerciseError, match="must return two arrays"):
        exercises.check_noisy_sums_counts(
            lambda X, l, K, e, rng: np.column_stack(sums_counts_reference(X, l, K, e, rng))
        )


def release_scale_reference(d, eps, N, t, schedule):
    share = eps / N if schedule == "fixed" else eps / 2**t
    return (d + 1) / share


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (lambda d, e, N, t, s: release_scale_reference(d, e, N, t, s) * d / (d + 1), "what else in the release"),
        (lambda d, e, N, t, s: (d + 1) / e, "the N releases share it"),
        (  # halving one step early (from t = 2 on: at t = 1 it is the whole eps, a mistake of its own)
            lambda d, e, N, t, s: release_scale_reference(d, e, N, t, s) / (2 if s == "halving" and t > 1 else 1),
            "off by one release in the halving schedule",
        ),
        (lambda d, e, N, t, s: 1 / release_scale_reference(d, e, N, t, s), "which way round"),
    ],
)
def test_release_scale_checker(wrong, hint):
    exercises.check_release_scale(release_scale_reference)
    with pytest.raises(ExerciseError, match=hint):
        exercises.check_release_scale(wrong)


def total_spent_reference(eps, N, schedule):
    return eps if schedule == "fixed" else eps * (1 - 2.0**-N)


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (lambda e, N, s: e, "never spends all of eps"),
        (
            lambda e, N, s: N * e if s == "fixed" else total_spent_reference(e, N, s),
            "you charged eps for every release",
        ),
        (lambda e, N, s: e if s == "fixed" else e / 2**N, "LAST release"),
    ],
)
def test_total_spent_checker(wrong, hint):
    exercises.check_total_spent(total_spent_reference)
    with pytest.raises(ExerciseError, match=hint):
        exercises.check_total_spent(wrong)


def test_the_release_scale_and_total_answers_are_the_librarys():
    m = exercises.idp_kmeans
    want = [
        mechanisms.laplace_scale(kmeans.sum_count_sensitivity(d), kmeans.budget_shares(s, e, n)[t - 1])
        for d, e, n, t, s in m._SCALE_CASES
    ]
    assert m.RELEASE_SCALE_ANSWERS == pytest.approx(want, rel=1e-12)
    assert m.TOTAL_SPENT_ANSWERS == pytest.approx([sum(kmeans.budget_shares(s, e, n)) for e, n, s in m._TOTAL_CASES])


def _idp_centres(X, K, eps, rng, scale=None, order=False, keep_below_one=False, clip=True, true_count=False):
    n, d = X.shape
    if order == "array_split":  # blocks as np.array_split cuts them
        parts = np.concatenate([np.full(len(b), g) for g, b in enumerate(np.array_split(np.arange(n), K))])
    else:
        parts = (np.arange(n) * K) // n if order else rng.integers(0, K, size=n)
    fallback = rng.uniform(0.0, 1.0, size=(K, d))
    sums, counts = _exact_sums_counts(X, parts, K)
    noise = rng.laplace(0.0, (d + 1) / eps if scale is None else scale(d, eps), size=(K, d + 1))
    noisy_sums, noisy_counts = sums + noise[:, :d], counts + noise[:, d]
    ok = noisy_counts > 0 if keep_below_one else noisy_counts >= 1
    centres = fallback.copy()
    centres[ok] = noisy_sums[ok] / (counts if true_count else noisy_counts)[ok, None]
    return np.clip(centres, 0.0, 1.0) if clip else centres


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (
            lambda X, K, e, rng: _idp_centres(X, K, e, rng, scale=lambda d, e: d / e),
            "what else does one record change in a release",
        ),
        (lambda X, K, e, rng: _idp_centres(X, K, e, rng, order=True), "misconception: the parts may be K contiguous"),
        (lambda X, K, e, rng: _idp_centres(X, K, e, rng, order="array_split"), "K contiguous blocks of the file"),
        (lambda X, K, e, rng: _idp_centres(X, K, e, rng, keep_below_one=True), "whose noisy count is below 0"),
        (lambda X, K, e, rng: _idp_centres(X, K, e, rng, clip=False), "what does the listing do with such a centre"),
        (lambda X, K, e, rng: _idp_centres(X, K, e, rng, true_count=True), "you divided by the true count"),
    ],
)
def test_idp_initial_centres_checker(wrong, hint):
    exercises.check_idp_initial_centres(_idp_centres)
    with pytest.raises(ExerciseError, match=hint):
        exercises.check_idp_initial_centres(wrong)


# --------------------------------------------------------------------------- Zhang & Cheng (2021): DPQTk-means


def release_level_reference(counts, eps_tree, max_height, threshold, rng):
    noisy = mechanisms.laplace_mechanism(counts, 1.0, eps_tree / max_height, rng, noise="float")
    return noisy, noisy > threshold


def _level(counts, scale, rng, split_on="noisy"):
    noisy = counts + rng.laplace(0.0, scale, size=len(counts))
    return noisy, {"noisy": noisy > 10.0, "true": counts > 10.0, "inverted": noisy <= 10.0}[split_on]


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (lambda c, e, h, T, rng: _level(c, 1 / e, rng), "got the whole epsilon_tree"),
        (lambda c, e, h, T, rng: _level(c, (h + 1) / e, rng), "off by one in the depth"),
        (lambda c, e, h, T, rng: _level(c, 2 * h / e, rng), "you used sensitivity 2"),
        (lambda c, e, h, T, rng: _level(c, h / e, rng, split_on="true"), "TRUE count"),
        (lambda c, e, h, T, rng: _level(c, h / e, rng, split_on="inverted"), "inverted"),
        (lambda c, e, h, T, rng: (c, c > T), "came back exact"),
        (lambda c, e, h, T, rng: (c + rng.laplace(0.0, h / e), c > T), "one draw for the whole level"),
    ],
)
def test_quadtree_level_checker(wrong, hint):
    exercises.check_quadtree_level(release_level_reference)
    with pytest.raises(ExerciseError, match=hint):
        exercises.check_quadtree_level(wrong)


def _cells(n, eps, d, rounding=round, theta=10.0, exponent=None, at_least_one=True):
    m = rounding((n * eps / theta) ** (exponent(d) if exponent else 2 / (d + 2)))
    return max(1, m) if at_least_one else m


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (lambda n, e, d: _cells(n, e, d, exponent=lambda d: 2 * d / (d + 2)), "that is M"),
        (lambda n, e, d: _cells(n, e, d, rounding=math.floor), "rounded the wrong way"),
        (lambda n, e, d: _cells(n, e, d, at_least_one=False), "at least one cell"),
        (lambda n, e, d: _cells(n, e, d, theta=1.0), "you left theta out"),
        (lambda n, e, d: _cells(n, e, d, rounding=float), "is an integer"),
    ],
)
def test_eug_grid_size_checker(wrong, hint):
    exercises.check_eug_grid_size(lambda n, e, d: _cells(n, e, d, rounding=lambda x: math.floor(x + 0.5)))
    exercises.check_eug_grid_size(eug_kmeans.eug_grid_size)
    with pytest.raises(ExerciseError, match=hint):
        exercises.check_eug_grid_size(wrong)


def spent_reference(eps, gamma, max_height, levels):
    return gamma * eps * levels / max_height + (1 - gamma) * eps


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (lambda e, g, h, L: e, "charged the whole budget whatever the tree's depth"),
        (lambda e, g, h, L: L * g * e + (1 - g) * e, "got all of the tree's budget"),
        (lambda e, g, h, L: spent_reference(e, g, h, L + 1), "off by one"),
        (lambda e, g, h, L: g * e * L / h, "counted the tree's levels only"),
    ],
)
def test_dpqt_epsilon_spent_checker(wrong, hint):
    exercises.check_dpqt_epsilon_spent(spent_reference)
    with pytest.raises(ExerciseError, match=hint):
        exercises.check_dpqt_epsilon_spent(wrong)


def test_the_dpqt_answers_are_what_fitted_trees_spend_and_the_grid_sizes_the_librarys():
    X = np.random.default_rng([0, 330]).random((400, 2))
    cases, spent = [], []
    for eps, gamma, height, threshold in [
        (1.0, 0.3, 4, 2.0),
        (0.5, 0.5, 3, 1e9),
        (2.0, 0.3, 6, 20.0),
        (0.1, 0.2, 2, 0.0),
        (5.0, 0.7, 7, 3.0),
    ]:
        est = DPQTKMeans(
            2,
            epsilon=eps,
            gamma=gamma,
            max_height=height,
            threshold=threshold,
            random_state=0,
            bounds=(0.0, 1.0),
            max_iter=5,
        ).fit(X)
        cases.append((eps, gamma, height, est.tree_.levels_released))
        spent.append(est.epsilon_spent_)
    assert cases == exercises.dpqt_kmeans.DPQT_SPENT_CASES
    assert exercises.dpqt_kmeans.DPQT_SPENT_ANSWERS == pytest.approx(spent, rel=1e-12)
    assert sorted({c[3] for c in cases}) == [1, 2, 4, 5, 7]  # trees that stop at various depths
    grid = [eug_kmeans.eug_grid_size(*case) for case in exercises.dpqt_kmeans._EUG_CASES]
    assert grid == exercises.dpqt_kmeans.EUG_GRID_ANSWERS


# --------------------------------------------------------------------------- the generic function checker


def test_function_checker_names_the_typical_mistake():
    reference = lambda d: d + 1  # noqa: E731  (the sensitivity of a sum of d bounded coordinates and a count)
    cases = [(2,), (5,)]
    exercises.check_function("sensitivity", reference, reference, cases)
    mistakes = [(lambda d: d, "the count adds one")]
    with pytest.raises(ExerciseError, match="the count adds one"):
        exercises.check_function("sensitivity", lambda d: d, reference, cases, mistakes=mistakes)
    with pytest.raises(ExerciseError, match="recheck the derivation"):
        exercises.check_function("sensitivity", lambda d: 2 * d, reference, cases, mistakes=mistakes)
    with pytest.raises(ExerciseError, match="wrong shape"):
        exercises.check_function("sensitivity", lambda d: [d + 1, d + 1], reference, cases)


# --------------------------------------------------------------------------- numbers and predictions


def test_number_checker():
    exercises.check_number("sensitivity", 4, 4)
    with pytest.raises(ExerciseError, match="expected"):
        exercises.check_number("sensitivity", 3, 4, hint="sum has d coordinates, count one more")
    with pytest.raises(ExerciseError, match="no answer"):
        exercises.check_number("sensitivity", None, 4)


def test_prediction_checker():
    exercises.check_prediction("error when eps doubles", "down", 0.4, 0.2)
    with pytest.raises(ExerciseError, match="other way"):
        exercises.check_prediction("error when eps doubles", "up", 0.4, 0.2)
    with pytest.raises(ExerciseError, match="predict one of"):
        exercises.check_prediction("x", "bigger", 0.4, 0.2)
    with pytest.raises(ExerciseError, match="finite"):
        exercises.check_prediction("x", "up", 0.4, float("nan"))


def test_prediction_checker_takes_the_students_function():
    exercises.check_prediction("error when eps doubles", lambda: "down", 0.4, 0.2)

    def prediction():
        raise NotImplementedError("write prediction")

    with pytest.raises(ExerciseError, match="NotImplementedError"):
        exercises.check_prediction("error when eps doubles", prediction, 0.4, 0.2)


# --------------------------------------------------------------------------- export

SOLUTION = '''import numpy as np


def perturb(values, k, epsilon, rng):
    """Return GRR reports."""
    from dpclust_lib import mechanisms
    return mechanisms.grr_perturb(values, k, epsilon, rng)
'''


def _teacher_notebook(path):
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    params = new_code_cell("import os\nprofile = os.environ.get('DPCLUST_PROFILE', 'paper')")
    params.metadata["tags"] = ["parameters"]
    solution = new_code_cell(SOLUTION)
    solution.metadata["tags"] = ["solution"]
    exercise = new_code_cell("from dpclust import exercises\nexercises.check_grr_perturb(perturb)")
    exercise.metadata["tags"] = ["exercise"]
    nb.cells = [new_markdown_cell("# Demo paper"), params, solution, exercise]
    for i, c in enumerate(nb.cells):
        c["id"] = f"c{i}"
    nb.cells[3].outputs = [nbformat.v4.new_output("stream", name="stdout", text="Correct: ...")]
    nbformat.write(nb, path)
    return path


def test_stub_keeps_signature_and_docstring_and_raises():
    stub = assignments.stub_solution(SOLUTION)
    assert "def perturb(values, k, epsilon, rng):" in stub and "Return GRR reports." in stub
    assert "grr_perturb" not in stub and "raise NotImplementedError('write perturb')" in stub
    namespace = {}
    exec(stub, namespace)
    with pytest.raises(NotImplementedError):
        namespace["perturb"](None, 2, 1.0, None)


def test_student_version_replaces_the_teachers_explanation():
    nb = new_notebook()
    why = new_markdown_cell("**Why.** The error falls because ...")
    why.metadata["tags"] = ["solution"]
    nb.cells = [new_markdown_cell("# Demo"), why, new_markdown_cell("Plain text stays.")]
    student = assignments.student_version(nb, "99_demo.ipynb")
    assert [c.source for c in student.cells[2:]] == [assignments.EXPLANATION_PLACEHOLDER, "Plain text stays."]
    assert student.cells[2].metadata["tags"] == ["solution"]


def test_stub_refuses_anything_but_functions():
    with pytest.raises(ValueError, match="only imports and function definitions"):
        assignments.stub_solution("answer = 4\n")


def test_student_version_and_paste_back_run_clean(tmp_path):
    (tmp_path / "teacher").mkdir()
    teacher = _teacher_notebook(tmp_path / "teacher" / "99_demo.ipynb")
    [student_path] = assignments.export([teacher], tmp_path / "assignments", kind="student")
    student = nbformat.read(student_path, as_version=4)
    assert student.cells[0].source.startswith("# Assignment: Demo paper")
    assert all(not c.get("outputs") for c in student.cells if c.cell_type == "code")
    stubbed = [c for c in student.cells if "solution" in c.metadata.get("tags", [])]
    assert len(stubbed) == 1 and "NotImplementedError" in stubbed[0].source
    # The student version runs clean once the reference solution is pasted back (as handed out, the stub raises
    # NotImplementedError at the check: test_stub_keeps_signature_and_docstring_and_raises).
    stubbed[0].source = SOLUTION
    nbformat.write(student, student_path)
    result = _nbval(student_path)
    assert result.returncode == 0, result.stdout[-2000:]


def test_a_graded_run_draws_other_cases_than_the_public_answers():
    # An answer that knows the public cases' answers by heart (from the package's data) passes the public check
    # and fails a graded run's, which takes its cases from a seed and its answers from the teacher's solutions.
    checks = [
        (
            "01_ldpk_modes",
            "ex3-solution",
            "plain_ldp_level",
            exercises.check_hamming_rr_ldp_level,
            exercises.ldpk_modes._HAMMING_CASES,
            exercises.ldpk_modes.HAMMING_LEVEL_ANSWERS,
        ),
        (
            "03_dpqt_kmeans",
            "ex2-solution",
            "cells_per_dim",
            exercises.check_eug_grid_size,
            exercises.dpqt_kmeans._EUG_CASES,
            exercises.dpqt_kmeans.EUG_GRID_ANSWERS,
        ),
        (
            "04_idp_kmeans",
            "ex5-solution",
            "gaussian_sigma",
            exercises.check_gaussian_sigma,
            exercises.idp_kmeans.GAUSSIAN_SIGMA_CASES,
            exercises.idp_kmeans.GAUSSIAN_SIGMA_ANSWERS,
        ),
        (
            "05_dp_birch",
            "ex6-solution",
            "replacement_sensitivities",
            exercises.check_replacement_sensitivities,
            exercises.dp_birch.REPLACEMENT_BOXES,
            exercises.dp_birch.REPLACEMENT_ANSWERS,
        ),
    ]
    for stem, cell, name, check, cases, answers in checks:
        known = {repr(tuple(np.asarray(a).tolist() for a in case)): answer for case, answer in zip(cases, answers)}

        def by_heart(*args, known=known):
            return known[repr(tuple(np.asarray(a).tolist() for a in args))]

        solutions = _solution(stem, cell)
        check(by_heart)
        check(solutions[name], seed=11, solutions=solutions)
        with pytest.raises(ExerciseError, match="KeyError"):
            check(by_heart, seed=11, solutions=solutions)


def test_no_function_of_the_checkers_answers_an_exercise_the_library_does_not():
    # Every function defined in dpclust.exercises, and every callable of its mistake catalogues, called with the
    # public cases of the exercises whose answers no library function gives: none returns every answer.
    exercises_by_answers = [
        (exercises.idp_kmeans.GAUSSIAN_SIGMA_CASES, exercises.idp_kmeans.GAUSSIAN_SIGMA_ANSWERS),
        (exercises.sampling_kmodes.UNMIXED_VARIANCE_CASES, exercises.sampling_kmodes.UNMIXED_VARIANCE_ANSWERS),
        (exercises.dpqt_kmeans.SPLIT_PROBABILITY_CASES, exercises.dpqt_kmeans.SPLIT_PROBABILITY_ANSWERS),
        (exercises.dpqt_kmeans.REACH_PROBABILITY_CASES, exercises.dpqt_kmeans.REACH_PROBABILITY_ANSWERS),
        (exercises.dp_birch.REPLACEMENT_BOXES, exercises.dp_birch.REPLACEMENT_ANSWERS),
    ]
    candidates = []
    for module in (
        exercises._core,
        exercises.ldpk_modes,
        exercises.sampling_kmodes,
        exercises.dpqt_kmeans,
        exercises.idp_kmeans,
        exercises.dp_birch,
    ):
        for value in vars(module).values():
            rows = value if isinstance(value, (tuple, list)) else [value]
            for row in rows:
                candidates += [
                    v
                    for v in (row if isinstance(row, tuple) else [row])
                    if callable(v) and getattr(v, "__module__", "").startswith("dpclust.exercises")
                ]
    answered = []
    for cases, answers in exercises_by_answers:
        for candidate in candidates:
            try:
                got = [np.asarray(candidate(*case), dtype=float) for case in cases]
            except Exception:
                continue
            if all(g.shape == np.shape(a) and np.allclose(g, a, rtol=1e-9) for g, a in zip(got, answers)):
                answered.append(getattr(candidate, "__name__", candidate))
    assert not answered


def _nbval(path):
    # DPCLUST_DATA_DIR and the rest of the environment pass through; the profile is smoke. The copy
    # lies outside the compendium, so DPCLUST_HOME says where it is (its smoke outputs go there).
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--nbval-lax",
            "--nbval-current-env",
            "-q",
            "-p",
            "no:cacheprovider",
            str(path),
        ],
        capture_output=True,
        text=True,
        cwd=path.parent,
        env={**os.environ, "DPCLUST_PROFILE": "smoke", "DPCLUST_HOME": str(ROOT)},
        timeout=900,
    )


def test_sampler_checker_names_the_typical_mistake():
    # e.g. the Laplace noise of a count with sensitivity 1 at eps = 0.5: scale 2
    cdf = stats.laplace(scale=2.0).cdf
    mistakes = [(stats.laplace(scale=0.5).cdf, "scale eps / sensitivity"), (stats.norm(scale=2.0).cdf, "Gaussian")]
    exercises.check_sampler("noise", lambda rng, n: rng.laplace(0.0, 2.0, n), cdf, mistakes=mistakes)
    with pytest.raises(ExerciseError, match="scale eps / sensitivity"):
        exercises.check_sampler("noise", lambda rng, n: rng.laplace(0.0, 0.5, n), cdf, mistakes=mistakes)
    with pytest.raises(ExerciseError, match="Gaussian"):
        exercises.check_sampler("noise", lambda rng, n: rng.normal(0.0, 2.0, n), cdf, mistakes=mistakes)
    with pytest.raises(ExerciseError, match="wrong shape"):
        exercises.check_sampler("noise", lambda rng, n: rng.laplace(0.0, 2.0, (n, 2)), cdf)


def test_export_refuses_to_overwrite_a_notebook(tmp_path):
    (tmp_path / "teacher").mkdir()
    teacher = _teacher_notebook(tmp_path / "teacher" / "99_demo.ipynb")
    [student_path] = assignments.export([teacher], tmp_path / "out", kind="student")
    student_path.write_text(student_path.read_text().replace("raise NotImplementedError", "return 1  #"))
    before = student_path.read_text()
    assignments.export([teacher], tmp_path / "out")  # the nbgrader source beside it
    with pytest.raises(ValueError, match="not overwriting"):
        assignments.export([teacher], tmp_path / "out", kind="student")
    with pytest.raises(ValueError, match="not overwriting"):
        assignments.export([teacher], tmp_path / "out", kind="nbgrader")
    assert student_path.read_text() == before


def test_cli_assignments_writes_an_nbgrader_course_or_with_student_the_student_versions(tmp_path, capsys):
    from dpclust.__main__ import main

    (tmp_path / "teacher").mkdir()
    teacher = str(_teacher_notebook(tmp_path / "teacher" / "99_demo.ipynb"))
    assert main(["assignments", "--out", str(tmp_path / "course"), teacher]) == 0
    source = nbformat.read(tmp_path / "course" / "source" / "99_demo" / "99_demo.ipynb", as_version=4)
    assert any(assignments.BEGIN in c.source for c in source.cells)
    assert (tmp_path / "course" / "nbgrader_config.py").is_file()
    assert main(["assignments", "--student", "--out", str(tmp_path / "handout"), teacher]) == 0
    student = nbformat.read(tmp_path / "handout" / "99_demo.ipynb", as_version=4)
    assert not any(assignments.BEGIN in c.source for c in student.cells)
    assert any("raise NotImplementedError" in c.source for c in student.cells)
    assert main(["assignments", "--student", "--out", str(tmp_path / "handout"), teacher]) == 2
    assert "not overwriting" in capsys.readouterr().err


def test_a_dependent_exercise_is_graded_with_the_reference_of_the_one_it_builds_on():
    # Notebook 04: Exercise 3 calls the student's Exercise 1 (noisy_sums_counts). With a wrong Exercise 1
    # (sensitivity d instead of d + 1) and a right Exercise 3, only Exercise 1 fails.
    teacher = nbformat.read(ROOT / "notebooks" / "04_idp_kmeans.ipynb", as_version=4)
    sources = {c.get("id"): c.source for c in teacher.cells}
    namespace = {}
    exec(sources["ex1-solution"].replace("(d + 1) / epsilon", "d / epsilon"), namespace)
    exec(sources["ex3-solution"], namespace)
    wrong = namespace["noisy_sums_counts"]
    with pytest.raises(ExerciseError):
        exercises.check_noisy_sums_counts(wrong)
    exercises.check_idp_initial_centres(namespace["idp_initial_centres"])
    assert namespace["noisy_sums_counts"] is wrong  # the student's function is put back


def test_notebook_05s_dependent_exercises_are_graded_with_the_reference_sensitivities():
    # Notebook 05: insertion_epsilon (Exercise 3, second part) calls the student's cf_sensitivities (first part),
    # and a student's noisy_leaves (Exercise 4) may call it too. With a wrong cf_sensitivities (the largest
    # coordinate instead of the L1 sum for LS) and right answers that call it, only the first part fails.
    teacher = nbformat.read(ROOT / "notebooks" / "05_dp_birch.ipynb", as_version=4)
    source = {c.get("id"): c.source for c in teacher.cells}["ex3-solution"]
    right = "float(largest.sum())"
    assert right in source and "cf_sensitivities(lower, upper)" in source.split("def insertion_epsilon")[1]
    namespace = {}
    exec(source.replace(right, "float(largest.max())"), namespace)
    exec(
        "def noisy_leaves(n, ls, ss, epsilon, lower, upper, rng):\n"
        "    scale = np.asarray(cf_sensitivities(lower, upper)) / (np.array([0.25, 0.5, 0.25]) * epsilon)\n"
        "    return tuple(v + rng.laplace(0.0, b, size=v.shape) for v, b in zip((n, ls, ss), scale))\n",
        namespace,
    )
    wrong = namespace["cf_sensitivities"]
    with pytest.raises(ExerciseError, match="the largest change of one coordinate"):
        exercises.check_cf_sensitivities(wrong)
    exercises.check_dpbirch_insertion_epsilon(namespace["insertion_epsilon"])
    exercises.check_public_tree_leaf_noise(namespace["noisy_leaves"])
    assert namespace["cf_sensitivities"] is wrong  # the student's function is put back
    # Outside the checks the student's own (wrong) function is what insertion_epsilon uses: the swap is real.
    unit = (np.zeros(3), np.ones(3))
    assert namespace["insertion_epsilon"](2, *unit, 1.0) != pytest.approx(2 * (3 + 3) * 1.0)


def test_nbgrader_source_marks_solutions_and_fails_its_checks_in_the_kernel():
    teacher = nbformat.read(ROOT / "notebooks" / "04_idp_kmeans.ipynb", as_version=4)
    source = assignments.nbgrader_source(teacher, "04_idp_kmeans.ipynb")
    meta = {c.get("id"): c.metadata.get("nbgrader") for c in source.cells}
    solutions = [c for c in source.cells if (meta[c.get("id")] or {}).get("solution") and c.cell_type == "code"]
    tests = [c for c in source.cells if (meta[c.get("id")] or {}).get("grade") and c.cell_type == "code"]
    assert solutions and all(c.source.count(assignments.BEGIN) >= 1 for c in solutions)
    assert len(tests) == 6 and all(meta[c.get("id")]["locked"] for c in tests)  # Exercise 2 has two parts
    # each test cell raises in the kernel just before its check call (the verdict comes from outside it)
    for c in tests:
        hidden, check = c.source.split(assignments.HIDDEN_END)
        assert assignments.HIDDEN_BEGIN in hidden and "GradedOutsideTheKernel" in hidden
        assert check.strip().startswith("exercises.check_")
    # what Exercise 2 shows after its checks (it calls both parts' functions) is a cell of its own, not graded
    output = source.cells[[c.get("id") for c in source.cells].index("ex2-check-output")]
    assert "print(" in output.source and not meta["ex2-check-output"]["grade"] and meta["ex2-check-output"]["locked"]
    assert all("print(" not in c.source for c in tests if c.get("id").startswith("ex2-check"))
    written = [c for c in source.cells if c.cell_type == "markdown" and (meta[c.get("id")] or {}).get("grade")]
    assert [c.get("id") for c in written] == ["ex2-why", "ex3-why", "ex4-why"]  # every question a prompt asks
    assert all(meta[c.get("id")]["solution"] and meta[c.get("id")]["points"] > 0 for c in written)
    student = assignments.student_version(teacher, "04_idp_kmeans.ipynb")
    assert not any(assignments.HIDDEN_BEGIN in c.source or assignments.BEGIN in c.source for c in student.cells)
    # The locked cell after the parameters runs the small profile unless DPCLUST_PROFILE says otherwise (a
    # JupyterHub launcher cannot set it), and sets the switch that makes experiments.skip_rest_of_notebook raise.
    [outputs] = [c for c in source.cells if c.get("id") == "assignment-outputs"]
    for env, profile in (({}, "smoke"), ({"DPCLUST_PROFILE": "paper"}, "paper")):
        namespace = {"results_dir": None, "figures_dir": None, "profile": "paper"}
        with mock.patch.dict(os.environ, env):
            os.environ.pop("DPCLUST_PROFILE", None) if not env else None
            exec(outputs.source, namespace)
            assert os.environ["DPCLUST_GRADED"] == "1" and namespace["profile"] == profile
    assert meta["assignment-outputs"]["locked"]


# --------------------------------------------------------------------------- the paper notebooks' student versions

PAPER_NOTEBOOKS = [path.stem for path in discover.paper_notebooks()]


def _tagged(nb, tag):
    return [c for c in nb.cells if tag in c.metadata.get("tags", [])]


def _normalised(source):
    try:
        return ast.unparse(ast.parse(source))
    except SyntaxError:  # a cell ast cannot read (e.g. IPython magics) is compared as written
        return source


@pytest.mark.parametrize("stem", PAPER_NOTEBOOKS)
def test_paper_notebook_student_version(stem, tmp_path):
    # Notebook 05's exercises run on MAGIC; without it a graded notebook stops (experiments.skip_rest_of_notebook).
    if (
        stem == "05_dp_birch"
        and not datasets.available().query("dataset == 'magic'")["status"].str.startswith("present").all()
    ):
        pytest.skip("05_dp_birch's exercises need the magic data (python -m dpclust data --fetch, or DPCLUST_DATA_DIR)")
    teacher_path = ROOT / "notebooks" / f"{stem}.ipynb"
    teacher = nbformat.read(teacher_path, as_version=4)
    solutions = {c["id"]: c.source for c in _tagged(teacher, "solution") if c.cell_type == "code"}
    explanations = {c["id"]: c.source for c in _tagged(teacher, "solution") if c.cell_type == "markdown"}
    assert 3 <= len(_tagged(teacher, "exercise")) <= 6 and len(solutions) == len(_tagged(teacher, "exercise"))
    [student_path] = assignments.export([teacher_path], tmp_path, kind="student")
    student = nbformat.read(student_path, as_version=4)

    # As handed out: no outputs, and no reference solution code anywhere in the notebook.
    code_cells = [c for c in student.cells if c.cell_type == "code"]
    assert all(not c.outputs and c.execution_count is None for c in code_cells)
    student_code = "\n".join(_normalised(c.source) for c in code_cells)
    stubs = {c["id"]: c for c in _tagged(student, "solution") if c.cell_type == "code"}
    assert set(stubs) == set(solutions)
    for cid, text in explanations.items():  # the teacher's explanations of the predictions are not handed out
        [placeholder] = [c for c in student.cells if c["id"] == cid]
        assert placeholder.source == assignments.EXPLANATION_PLACEHOLDER
        assert not any(text in c.source for c in student.cells)
    for cid, source in solutions.items():
        for fn in ast.parse(stubs[cid].source).body:
            if isinstance(fn, ast.FunctionDef):
                body = fn.body[1:] if ast.get_docstring(fn) is not None else fn.body
                assert len(body) == 1 and isinstance(body[0], ast.Raise), (cid, fn.name)
        for fn in ast.parse(source).body:
            if isinstance(fn, ast.FunctionDef):
                for statement in fn.body[1 if ast.get_docstring(fn) is not None else 0 :]:
                    text = ast.unparse(statement)  # short ones (`return out`) occur in any notebook
                    assert len(text) < 20 or text not in student_code, (cid, text)


@pytest.mark.parametrize("stem", PAPER_NOTEBOOKS)
def test_paper_notebook_grading_key(stem):
    # Every test cell has its check in the key, with a seed on which the teacher's solutions pass (grading_key
    # runs each check once); a prediction carries the teacher's answer. The graded run's cases differ from the
    # public ones, and the key holds no dpclust import a graded run would refuse.
    teacher = nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)
    key = assignments.grading_key(teacher, f"{stem}.ipynb")
    source = assignments.nbgrader_source(teacher, f"{stem}.ipynb")
    test_ids = {
        c.metadata["nbgrader"]["grade_id"]
        for c in source.cells
        if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"
    }
    assert set(key["checks"]) == test_ids
    for spec in key["checks"].values():
        assert ("seed" in spec) != (spec["kind"] == "prediction")
        assert spec.get("expected", "up") in ("up", "down", "same")
    assert not any("dpclust" in line for line in key["prelude"]) and "import numpy as np" in key["prelude"]
    assert json.loads(json.dumps(key)) == key


# =========================================================================== Wang et al.: DPBIRCH (notebook 05)
# The reference solutions of notebook 05 and typical wrong ones.

from dpclust_lib import mechanisms  # noqa: E402
from dpclust_lib.cluster.birch import ClusteringFeature  # noqa: E402


def cf_of(X):
    X = np.asarray(X, dtype=float)
    return len(X), X.sum(axis=0), float(np.sum(X * X))


def cf_merge(a, b):
    return a[0] + b[0], a[1] + b[1], a[2] + b[2]


def cf_radius(cf):
    n, ls, ss = cf
    return math.sqrt(max(ss / n - (ls / n) @ (ls / n), 0.0))


def cf_diameter(cf):
    n, ls, ss = cf
    return math.sqrt(2 * (n * ss - ls @ ls) / (n * (n - 1)))


def cf_merge_in_place(a, b):
    ls = a[1]
    ls += b[1]
    return a[0] + b[0], ls, a[2] + b[2]


@pytest.mark.parametrize(
    "functions, hint",
    [
        ({"cf_of": lambda X: (len(X), X.sum(axis=0), (X**2).sum(axis=0))}, "SS is not a number"),
        ({"cf_of": lambda X: (len(X), X.mean(axis=0), float(np.sum(X * X)))}, "mean of the points, their centroid"),
        ({"cf_merge": lambda a, b: (a[0] + b[0], (a[1] + b[1]) / 2, (a[2] + b[2]) / 2)}, "you averaged the two CFs"),
        ({"cf_merge": cf_merge_in_place}, "changed its arguments"),
        ({"cf_radius": lambda cf: max(cf[2] / cf[0] - (cf[1] / cf[0]) @ (cf[1] / cf[0]), 0.0)}, r"that is R\^2"),
        (
            {"cf_radius": lambda cf: math.sqrt(cf[2] / cf[0] - (cf[1] / cf[0]) @ (cf[1] / cf[0]))},
            "what does the prompt ask cf_radius to return then",
        ),
        (
            {"cf_radius": lambda cf: float(np.sqrt(cf[2] / cf[0] - (cf[1] / cf[0]) @ (cf[1] / cf[0])))},
            "what does the prompt ask cf_radius to return then",
        ),
        ({"cf_diameter": lambda cf: 2 * cf_radius(cf)}, "not twice the radius"),
        ({"cf_diameter": lambda cf: math.sqrt(2) * cf_radius(cf)}, r"all N\^2 pairs, the pairs \(i, i\) included"),
    ],
)
def test_clustering_feature_checker(functions, hint):
    right = {"cf_of": cf_of, "cf_merge": cf_merge, "cf_radius": cf_radius, "cf_diameter": cf_diameter}
    exercises.check_clustering_feature(**right)
    with pytest.raises(ExerciseError, match=hint):
        exercises.check_clustering_feature(**{**right, **functions})


def test_clustering_feature_checker_names_an_unwritten_function():
    def cf_diameter_stub(cf):
        raise NotImplementedError("write cf_diameter")

    with pytest.raises(ExerciseError, match="NotImplementedError"):
        exercises.check_clustering_feature(cf_of, cf_merge, cf_radius, cf_diameter_stub)


def test_clustering_feature_reference_is_the_mean_over_pairs():
    # The diameter from (N, LS, SS) that the checker expects equals the mean over the pairs of points.
    X = np.random.default_rng(1).normal(size=(9, 4))
    cf = ClusteringFeature.of(X)
    pairs = [np.sum((X[i] - X[j]) ** 2) for i in range(9) for j in range(9) if i != j]
    assert math.isclose(cf_diameter((cf.n, cf.ls, cf.ss)), math.sqrt(np.mean(pairs)), rel_tol=1e-12)


def noisy_update(cf, x, epsilon, rng):
    n, ls, ss = cf
    eta = rng.laplace(0.0, 1.0 / epsilon, size=len(x) + 1)
    return n + 1, ls + x + eta[:-1], ss + x @ x + eta[-1]


def _update(scale=lambda d, e: 1 / e, draw="laplace", shared=False, noisy_n=False, noise_record=False):
    def update(cf, x, epsilon, rng):
        n, ls, ss = cf
        s = scale(len(x), epsilon)
        if draw == "laplace":
            eta = rng.laplace(0.0, s, size=1 if shared else len(x) + 1)
        else:
            eta = rng.normal(0.0, s, size=len(x) + 1)
        eta = np.resize(eta, len(x) + 1)
        if noise_record:  # the record is noised, then squared for SS
            noisy = x + eta[:-1]
            return n + 1, ls + noisy, ss + noisy @ noisy
        return n + 1 + (rng.laplace(0.0, s) if noisy_n else 0), ls + x + eta[:-1], ss + x @ x + eta[-1]

    return update


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (_update(scale=lambda d, e: d / e), "scale d/eps"),
        (_update(scale=lambda d, e: 2 / e), "2 eps in all"),
        (_update(scale=lambda d, e: e), "does your noise shrink as epsilon grows"),
        (_update(draw="normal"), "Gaussian"),
        (_update(shared=True), "not independent"),
        (_update(noisy_n=True), "N is not exact"),
        (_update(noise_record=True), "or the record before squaring it"),
        (
            lambda cf, x, e, rng: noisy_update((cf[0], cf[1], cf[2] - x @ x + x.sum()), x, e, rng),
            "grew by the sum of x's coordinates",
        ),
    ],
)
def test_dpbirch_noisy_update_checker(wrong, hint):
    exercises.check_dpbirch_noisy_update(noisy_update)
    with pytest.raises(ExerciseError, match=hint):
        exercises.check_dpbirch_noisy_update(wrong)


def cf_sensitivities(lower, upper):
    largest = np.maximum(np.abs(lower), np.abs(upper))
    return 1.0, float(largest.sum()), float((largest**2).sum())


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (lambda lo, up: (1.0, 1.0, 1.0), "ONE coordinate"),
        (
            lambda lo, up: (1.0, float(np.max(np.maximum(-lo, up))), cf_sensitivities(lo, up)[2]),
            "the largest change of one coordinate",
        ),
        (lambda lo, up: (1.0, float(np.sum(up - lo)), cf_sensitivities(lo, up)[2]), "REPLACED"),
        (
            lambda lo, up: (1.0, cf_sensitivities(lo, up)[1], cf_sensitivities(lo, up)[1] ** 2),
            r"square of the sum of the \|x_j\|",
        ),
        (lambda lo, up: (1.0, cf_sensitivities(lo, up)[1], float(np.sum(up**2))), "l_j < 0"),
        (lambda lo, up: (0.0, *cf_sensitivities(lo, up)[1:]), "N is a count"),
    ],
)
def test_cf_sensitivities_checker(wrong, hint):
    exercises.check_cf_sensitivities(cf_sensitivities)
    with pytest.raises(ExerciseError, match=hint):
        exercises.check_cf_sensitivities(wrong)


def test_cf_sensitivities_reference_is_the_largest_change_over_the_box():
    # The library's sensitivities that the checker reads are the largest ||x||_1 and ||x||^2 over the box's corners.
    for lower, upper in exercises.dp_birch._SENSITIVITY_BOXES:
        corners = np.array(np.meshgrid(*zip(lower, upper))).reshape(len(lower), -1).T
        want = [1.0, np.abs(corners).sum(axis=1).max(), (corners**2).sum(axis=1).max()]
        assert np.allclose(birch.cf_sensitivities(lower, upper), want, rtol=1e-12)


def insertion_epsilon(h, lower, upper, epsilon):
    _, ls, ss = cf_sensitivities(lower, upper)
    delta_q = np.max(np.maximum(np.abs(lower), np.abs(upper)))
    return h * (ls + ss) * epsilon / delta_q


def _cost(f):
    # a typical wrong answer, from the sensitivities of LS and SS, Delta q and d
    def wrong(h, lower, upper, epsilon):
        _, ls, ss = cf_sensitivities(lower, upper)
        return f(h, ls, ss, np.max(np.maximum(np.abs(lower), np.abs(upper))), epsilon, len(lower))

    return wrong


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (_cost(lambda h, L, S, q, e, d: 2 * e), "paper's claim"),
        (_cost(lambda h, L, S, q, e, d: (L + S) * e / q), "ONE noisy CF"),
        (_cost(lambda h, L, S, q, e, d: h * (L + S) * e), "noise scale as 1/eps"),
        (_cost(lambda h, L, S, q, e, d: h * (L + L * L) * e / q), r"you took \(sum_j \|x_j\|\)\^2"),
        (_cost(lambda h, L, S, q, e, d: (h - 1) * (L + S) * e / q), "leaf level"),
        (_cost(lambda h, L, S, q, e, d: 2 * h * d * e), r"on \[0, 1\]\^d only"),
    ],
)
def test_dpbirch_insertion_epsilon_checker(wrong, hint):
    exercises.check_dpbirch_insertion_epsilon(insertion_epsilon)
    with pytest.raises(ExerciseError, match=hint):
        exercises.check_dpbirch_insertion_epsilon(wrong)


def test_the_insertion_answers_are_what_fitted_trees_spend_on_several_heights():
    rng, costs = np.random.default_rng(0), []
    cases = exercises.dp_birch._insertion_cases(np.random.default_rng(0), public=True)
    for lower, upper, eps, T, B, n in exercises.dp_birch._INSERTION_TREES:  # the same trees again, for their cost
        lo, up = np.array(lower), np.array(upper)
        X = lo + (up - lo) * rng.random((n, len(lo)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", birch.NegativeRadiusWarning)
            fitted = DPBirch(None, epsilon=eps, threshold=T, branching_factor=B, bounds=(lo, up), random_state=rng)
            costs.append(fitted.fit(X).epsilon_if_shape_public_)
    public = exercises.dp_birch.INSERTION_CASES
    assert [c[0] for c in cases] == [c[0] for c in public] and len({c[0] for c in public}) >= 4
    assert exercises.dp_birch.INSERTION_ANSWERS == pytest.approx(costs, rel=1e-12)
    want = [birch.cf_sensitivities(np.array(lo), np.array(up)) for lo, up in exercises.dp_birch._SENSITIVITY_BOXES]
    assert exercises.dp_birch.CF_SENSITIVITY_ANSWERS == want


def _leaf_noise(sensitivities=cf_sensitivities, shares=(0.25, 0.5, 0.25), noise_n=True, shared=False):
    def noisy_leaves(n, ls, ss, epsilon, lower, upper, rng):
        scales = np.asarray(sensitivities(lower, upper)) / (np.asarray(shares) * epsilon)
        ls_noise = rng.laplace(0.0, scales[1], (len(ls), 1) if shared else ls.shape)
        return (
            n + (rng.laplace(0.0, scales[0], n.shape) if noise_n else 0),
            ls + ls_noise,
            ss + rng.laplace(0.0, scales[2], ss.shape),
        )

    return noisy_leaves


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (_leaf_noise(shares=(1, 1, 1)), "each part got the whole eps"),
        (_leaf_noise(shares=(1 / 3, 1 / 3, 1 / 3)), "equal thirds"),
        (_leaf_noise(shares=(0.25 / 20_000, 0.5 / 20_000, 0.25 / 20_000)), "misconception: that the leaves share"),
        (_leaf_noise(sensitivities=lambda lo, up: (1.0, len(lo), len(lo))), r"sensitivity of LS on \[0, 1\]\^d only"),
        (_leaf_noise(sensitivities=lambda lo, up: (1.0, 1.0, 1.0)), "Delta q = 1"),
        (
            _leaf_noise(
                sensitivities=lambda lo, up: (1.0, cf_sensitivities(lo, up)[1], cf_sensitivities(lo, up)[1] ** 2)
            ),
            r"square of the sum of the \|x_j\|",
        ),
        (_leaf_noise(noise_n=False), "N carries no noise"),
        (_leaf_noise(shared=True), "not independent"),
    ],
)
def test_public_tree_leaf_noise_checker(wrong, hint):
    exercises.check_public_tree_leaf_noise(_leaf_noise())
    with pytest.raises(ExerciseError, match=hint):
        exercises.check_public_tree_leaf_noise(wrong)


def test_every_checker_is_exported_and_every_call_in_the_notebooks_resolves():
    modules = [
        exercises.ldpk_modes,
        exercises.sampling_kmodes,
        exercises.dpqt_kmeans,
        exercises.idp_kmeans,
        exercises.dp_birch,
    ]
    checkers = {name for module in modules for name in module.__all__}
    assert {"check_clustering_feature", "check_public_tree_leaf_noise", "check_eq9_variance"} <= checkers
    assert checkers <= set(exercises.__all__)
    public = {name for name in dir(exercises) if name.startswith("check_")}
    assert public == {name for name in exercises.__all__ if name.startswith("check_")}
    called = set()
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        called |= set(re.findall(r"exercises\.(check_\w+)", path.read_text()))
    assert called and called <= set(exercises.__all__), called - set(exercises.__all__)


# The formulas, values and fixes that answer the exercises, as hints once stated them: no hint may state them
# again. A hint asks the question that leads to the answer, or names what the wrong answer computed.
ANSWERS_IN_HINTS = {
    "ldpk_modes": [
        "e^eps/(e^eps+k",
        "(k_j-1)/(e^eps+k_j-1)",
        "draw among the OTHER",
        "draw uniformly among",
        "runs at eps",
        "runs at the full eps",
        "each at eps",
        "not eps/m",
        "ALL m attributes",
        "1/(p - q)",
        "subtract c_cell",
        "(E w)^2",
        "prod_j (1{",
    ],
    "sampling_kmodes": [
        "p = 1/2",
        "1/(e^eps+1)",
        "e^eps/(e^eps+K-1)",
        "1/(e^eps+K-1)",
        "|C_r| / d",
        "cluster_sizes[:, None]",
        "divide by (p - q)",
        "(I - q J) / (p - q)",
        "apply (P^T)^{-1}",
        "Bernoulli(p/d)",
        "(p/d)(1 - p/d)",
        "Var[s] / c^2",
        "R_i (b_i - q)",
        "(1{L_i = r} - q_K)",
        "variance is divided by",
    ],
    "dpqt_kmeans": [
        "epsilon_tree / maxH",
        "maxH / epsilon_tree",
        "M^(1/d)",
        "2/(d + 2)",
        "epsilon_1 / maxH",
        "(1 - gamma) eps",
        "exp(-z/b)",
        "multiply, do not add",
        "sensitivity is 1",
        "noisy count > threshold",
        "(2.55 -> 3)",
    ],
    "dp_birch": [
        "N_a + N_b",
        "LS_a + LS_b",
        "SS_a + SS_b",
        "SS/N",
        "||LS/N||",
        "||LS||^2 / N^2",
        "N + 1",
        "LS + x",
        "SS + ||x||^2",
        "Lap(1/eps)",
        "divide by N",
        "by exactly 1",
        "max(|l_j|, |u_j|)",
        "sum_j max(",
        "is u_j - l_j",
        "smallest x_j^2 is 0",
        "||x_i||^2 + ||x_j||^2",
        "ls_a + ls_b",
        "eps/4",
        "(1/4, 1/2, 1/4)",
        "Delta / b",
        "parallel composition",
    ],
    "idp_kmeans": [
        "d + 1, not d",
        "its L1 sensitivity is d + 1",
        "no longer has sensitivity d + 1",
        "by 1 AND its sum by up to d",
        "(d + 1)/eps",
        "(d + 1) N/eps",
        "(sums AND count)",
        "sensitivity / budget",
        "each gets eps/N",
        "get eps/N each",
        "gets eps/2^t",
        "sum eps/2^t",
        "eps (1 - 2^-N)",
        "divide by the NOISY count",
        "(np.clip)",
        "sqrt(||x||^2 + 1)",
        "ln(1.25 / delta) under",
        "Delta_2 sqrt(2 ln",
    ],
}

# Where a checker's code writes a hint: the argument of these calls at this position, or hint=
HINT_ARGUMENT = {"fail": 3, "diagnose": 3, "ks_check": 5, "_laplace_part": 5}


def _texts(node):
    """The string literals in an expression (f-strings included)."""
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _catalogue_texts(value):
    """Every string in a catalogue of typical mistakes (tuples, lists and dicts of them)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (tuple, list)):
        return [text for item in value for text in _catalogue_texts(item)]
    return []


def _hints(module):
    """The hints of a checker module: its catalogues of typical mistakes (``*_MISTAKES``), and the hints its code
    writes: a ``hint=`` argument, the hint argument of ``fail``, ``diagnose``, ``ks_check`` and ``_laplace_part``,
    and what is assigned to a name with HINT or MISTAKES in it, or a string assigned to any name."""
    hints = [
        text for key, value in vars(module).items() if key.endswith("MISTAKES") for text in _catalogue_texts(value)
    ]
    for node in ast.walk(ast.parse(Path(module.__file__).read_text())):
        if isinstance(node, ast.Call):
            hints += [text for keyword in node.keywords if keyword.arg == "hint" for text in _texts(keyword.value)]
            called = getattr(node.func, "id", getattr(node.func, "attr", None))
            if called in HINT_ARGUMENT and len(node.args) > HINT_ARGUMENT[called]:
                hints += _texts(node.args[HINT_ARGUMENT[called]])
        elif isinstance(node, ast.Assign):
            names = [target.id.upper() for target in node.targets if isinstance(target, ast.Name)]
            if any("HINT" in n or "MISTAKES" in n for n in names) or (names and isinstance(node.value, ast.JoinedStr)):
                hints += _texts(node.value)
            elif names and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                hints.append(node.value.value)
    return hints


def _answers_stated(hints, patterns):
    return sorted({(pattern, hint) for hint in hints for pattern in patterns if pattern in hint})


@pytest.mark.parametrize("name", sorted(ANSWERS_IN_HINTS))
def test_no_hint_states_the_answer(name):
    module = getattr(exercises, name)
    hints = _hints(module)
    assert _answers_stated(hints, ANSWERS_IN_HINTS[name]) == []
    # the search reaches the catalogues and the hints written in the checkers' code, and it finds an old hint
    catalogues = [value for key, value in vars(module).items() if key.endswith("MISTAKES")]
    assert catalogues and set(_catalogue_texts(catalogues)) <= set(hints)
    default, old = {
        "ldpk_modes": (
            "take the two records whose reports are easiest to tell apart",
            "p looks like the binary formula e^eps/(e^eps+1); for k values use e^eps/(e^eps+k-1)",
        ),
        "sampling_kmodes": (
            "check each piece of Eq. 9 against the prompt",
            "g' = (s - |C_r|' q) / (p - q), with p = 1/2, q = 1/(e^eps+1) and |C_r|' = |C_r| / d",
        ),
        "dpqt_kmeans": (
            "add up the budgets of the releases",
            "m = M^(1/d), rounded to the nearest integer, at least 1",
        ),
        "dp_birch": (
            "which quantities does the additivity theorem say add up",
            "the additivity theorem: (N_a + N_b, LS_a + LS_b, SS_a + SS_b)",
        ),
        "idp_kmeans": (
            "sequential composition: the budgets of the releases add up",
            "the sensitivity is d + 1 (sums AND count), not d",
        ),
    }[name]
    assert any(hint.startswith(default) for hint in hints)
    assert _answers_stated(hints + [old], ANSWERS_IN_HINTS[name]) != []


# =========================================================================== the harder exercises (one per notebook)
# Each reference solution (as in its notebook) is checked against an independent computation, its checker
# accepts it, and every typical mistake of the checker's catalogue is rejected with its own hint.


def _solution(stem, cell_id):
    """The functions of a solution cell of a paper notebook, defined in a fresh namespace."""
    teacher = nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)
    [cell] = [c for c in teacher.cells if c.get("id") == cell_id]
    namespace = {}
    exec(compile(cell.source, f"{stem}:{cell_id}", "exec"), namespace)
    return namespace


def _rejects_each_mistake(check, catalogue, adapt=lambda f: f):
    """``check`` names every mistake of ``catalogue`` ((name, function, hint) entries) by its hint."""
    for name, wrong, hint in catalogue:
        with pytest.raises(ExerciseError, match=re.escape(hint[:40])):
            check(adapt(wrong))


def test_ldpfo_variance_reference_is_the_variance_of_the_dense_inverse():
    # Enumeration: each user's estimate of the cell is w(Y) = (P^-1)[cell, Y] with Y ~ P[x, .]; the users add up.
    # The public answers are the same, and the library's LDPFO.variance.
    ldpfo_variance = _solution("01_ldpk_modes", "ex5-solution")["ldpfo_variance"]
    cases, answers = exercises.ldpk_modes.LDPFO_VARIANCE_CASES, exercises.ldpk_modes.LDPFO_VARIANCE_ANSWERS
    for (counts, sizes, eps, cell), answer in zip(cases, answers):
        P = mechanisms.hamming_rr_matrix(sizes, eps)
        w = np.linalg.inv(P)[np.ravel_multi_index(cell, sizes)]
        c = np.ravel(counts).astype(float)
        want = float(c @ (P @ w**2 - (P @ w) ** 2))
        assert ldpfo_variance(counts, sizes, eps, cell) == pytest.approx(want, rel=1e-9)
        assert answer == pytest.approx(want, rel=1e-9)
        assert answer == pytest.approx(LDPFO(sizes, eps).variance(int(c.sum()), counts)[cell], rel=1e-12)


def test_ldpfo_variance_checker():
    exercises.check_ldpfo_variance(_solution("01_ldpk_modes", "ex5-solution")["ldpfo_variance"])
    _rejects_each_mistake(exercises.check_ldpfo_variance, exercises.ldpk_modes.LDPFO_VARIANCE_MISTAKES)


def test_unmixed_variance_reference_matches_a_simulation():
    # Simulation: bits and reported labels drawn as the protocol does, the sums un-mixed as in Exercise 3.
    unmixed_variance = _solution("02_ldp_kmodes_sampling", "ex6-solution")["unmixed_variance"]
    rng = np.random.default_rng(6)
    for holders, reporters, r, eps, eps_r in exercises.sampling_kmodes.UNMIXED_VARIANCE_CASES[:3]:
        K, reps = len(reporters), 20_000
        cluster = np.repeat(np.arange(K), reporters)
        holds = np.concatenate([np.arange(n) < h for h, n in zip(holders, reporters)])
        p, q = mechanisms.oue_pq(eps)
        p_k, q_k = mechanisms.grr_probabilities(K, eps_r)
        bits = rng.random((reps, len(cluster))) < np.where(holds, p, q)
        keep = rng.random((reps, len(cluster))) < p_k
        other = rng.integers(0, K - 1, size=(reps, len(cluster)))
        label = np.where(keep, cluster, other + (other >= cluster))
        s_r = (bits & (label == r)).sum(axis=1)
        unmixed = (s_r - q_k * bits.sum(axis=1)) / (p_k - q_k)
        assert unmixed.mean() == pytest.approx(holders[r] * p + (reporters[r] - holders[r]) * q, rel=0.03)
        assert unmixed.var() == pytest.approx(unmixed_variance(holders, reporters, r, eps, eps_r), rel=0.05)


def _unmixed_variance_by_enumeration(holders, reporters, r, epsilon, index_epsilon):
    """Var of the un-mixed bit sum of cluster r, from each user's exact outcome distribution: a user of true
    cluster c whose bit is 1 with probability pi contributes b (1{L = r} - q_K) / (p_K - q_K), b ~ Bernoulli(pi)
    and its label L ~ GRR(c) independent; the four outcomes are enumerated and the users' variances add."""
    p, q = mechanisms.oue_pq(epsilon)
    p_k, q_k = mechanisms.grr_probabilities(len(reporters), index_epsilon)
    total = 0.0
    for c in range(len(reporters)):
        a = p_k if c == r else q_k  # P[L = r] for a user of cluster c
        for users, pi in ((holders[c], p), (reporters[c] - holders[c], q)):
            outcomes = [(pi * a, (1 - q_k) / (p_k - q_k)), (pi * (1 - a), -q_k / (p_k - q_k))]  # b = 1
            mean = sum(w * v for w, v in outcomes)  # b = 0 contributes 0 with the remaining probability
            total += users * (sum(w * v * v for w, v in outcomes) - mean**2)
    return total


def test_the_unmixed_variance_answers_are_the_enumeration():
    m = exercises.sampling_kmodes
    want = [_unmixed_variance_by_enumeration(*case) for case in m.UNMIXED_VARIANCE_CASES]
    assert m.UNMIXED_VARIANCE_ANSWERS == pytest.approx(want, rel=1e-12)


def test_unmixed_variance_checker():
    exercises.check_unmixed_variance(_solution("02_ldp_kmodes_sampling", "ex6-solution")["unmixed_variance"])
    _rejects_each_mistake(exercises.check_unmixed_variance, exercises.sampling_kmodes.UNMIXED_VARIANCE_MISTAKES)


def test_split_and_reach_probability_references_match_a_simulation():
    solution = _solution("03_dpqt_kmeans", "ex5-solution")
    rng = np.random.default_rng(3)
    for counts, eps, height, T in exercises.dpqt_kmeans.REACH_PROBABILITY_CASES[:3]:
        noisy = np.asarray(counts) + rng.laplace(0.0, height / eps, size=(200_000, len(counts)))
        assert solution["reach_probability"](counts, eps, height, T) == pytest.approx(
            np.mean(np.all(noisy > T, axis=1)), abs=4e-3
        )
    m = exercises.dpqt_kmeans
    for (count, eps, height, T), answer in zip(m.SPLIT_PROBABILITY_CASES, m.SPLIT_PROBABILITY_ANSWERS):
        want = stats.laplace.sf(T, loc=count, scale=height / eps)
        assert solution["split_probability"](count, eps, height, T) == pytest.approx(want, rel=1e-12)
        assert answer == pytest.approx(want, rel=1e-12)
    for (count, eps, height, T), answer in m.PATH_SPLIT_PROBABILITIES.items():
        assert answer == pytest.approx(stats.laplace.sf(T, loc=count, scale=height / eps), rel=1e-12)
    for (counts, eps, height, T), answer in zip(m.REACH_PROBABILITY_CASES, m.REACH_PROBABILITY_ANSWERS):
        assert answer == pytest.approx(np.prod([m.PATH_SPLIT_PROBABILITIES[c, eps, height, T] for c in counts]))


def test_split_and_reach_probability_checkers():
    solution = _solution("03_dpqt_kmeans", "ex5-solution")
    exercises.check_split_probability(solution["split_probability"])
    exercises.check_reach_probability(solution["reach_probability"])
    _rejects_each_mistake(exercises.check_split_probability, exercises.dpqt_kmeans.SPLIT_PROBABILITY_MISTAKES)
    _rejects_each_mistake(
        exercises.check_reach_probability,
        exercises.dpqt_kmeans.REACH_PROBABILITY_MISTAKES,
        adapt=lambda wrong: lambda *case: wrong(solution["split_probability"], *case),
    )


def test_reach_probability_is_graded_with_the_reference_split_probability():
    solution = _solution("03_dpqt_kmeans", "ex5-solution")

    def split_probability(*args):
        raise NotImplementedError("write split_probability")

    namespace = {"split_probability": split_probability, "math": math}
    exec(
        "def reach_probability(path, e, h, t):\n    return math.prod(split_probability(c, e, h, t) for c in path)",
        namespace,
    )
    exercises.check_reach_probability(namespace["reach_probability"])
    assert namespace["split_probability"] is split_probability  # put back afterwards
    assert solution["reach_probability"]((), 1.0, 3, 5.0) == 1.0


def test_gaussian_sigma_reference_uses_the_l2_sensitivity_found_by_enumeration():
    # One record added to cluster g changes row g of the (K, d + 1) release by (x, 1); over the vertices of
    # [0, 1]^d (where a convex norm is largest), the largest L2 norm of that change.
    gaussian_sigma = _solution("04_idp_kmeans", "ex5-solution")["gaussian_sigma"]
    for d in range(1, 8):
        vertices = np.array(list(itertools.product((0.0, 1.0), repeat=d)))
        l2 = np.max(np.linalg.norm(np.hstack([vertices, np.ones((len(vertices), 1))]), axis=1))
        for eps, delta in ((0.5, 1e-5), (0.9, 1e-8)):
            want = l2 * math.sqrt(2 * math.log(1.25 / delta)) / eps
            assert gaussian_sigma(d, eps, delta) == pytest.approx(want, rel=1e-12)
    # the public answers are the solution's (enumerated above up to d = 7; the cases go up to d = 30)
    m = exercises.idp_kmeans
    assert m.GAUSSIAN_SIGMA_ANSWERS == pytest.approx(
        [gaussian_sigma(*case) for case in m.GAUSSIAN_SIGMA_CASES], rel=1e-12
    )


def test_gaussian_sigma_checker():
    exercises.check_gaussian_sigma(_solution("04_idp_kmeans", "ex5-solution")["gaussian_sigma"])
    _rejects_each_mistake(exercises.check_gaussian_sigma, exercises.idp_kmeans.GAUSSIAN_SIGMA_MISTAKES)


def test_replacement_sensitivities_reference_is_the_largest_change_over_pairs_of_records():
    # Enumeration over a grid of each box that holds its corners and, where a side contains it, 0.
    replacement_sensitivities = _solution("05_dp_birch", "ex6-solution")["replacement_sensitivities"]
    m = exercises.dp_birch
    for (lower, upper), answer in zip(m.REPLACEMENT_BOXES, m.REPLACEMENT_ANSWERS):
        axes = [sorted({lo, up, *([0.0] if lo <= 0 <= up else []), (lo + up) / 2}) for lo, up in zip(lower, upper)]
        grid = np.array(list(itertools.product(*axes)))
        ls = np.max(np.abs(grid[:, None, :] - grid[None, :, :]).sum(axis=2))
        sq = np.sum(grid**2, axis=1)
        want = (0.0, ls, sq.max() - sq.min())
        assert replacement_sensitivities(np.array(lower), np.array(upper)) == pytest.approx(want, rel=1e-12)
        assert answer == pytest.approx(want, rel=1e-12)


def _sensitivity_answer(k, value):
    """A wrong answer to replacement_sensitivities: the right one with part k replaced by value(lower, upper)."""
    right_answer = _solution("05_dp_birch", "ex6-solution")["replacement_sensitivities"]

    def answer(lower, upper):
        right = list(right_answer(lower, upper))
        right[k] = value(lower, upper, right)
        return tuple(right)

    return answer


def test_replacement_sensitivities_checker():
    exercises.check_replacement_sensitivities(_solution("05_dp_birch", "ex6-solution")["replacement_sensitivities"])
    for k, mistakes in enumerate(exercises.dp_birch.REPLACEMENT_SENSITIVITY_MISTAKES):
        for _, value, hint in mistakes:
            with pytest.raises(ExerciseError, match=re.escape(hint[:40])):
                exercises.check_replacement_sensitivities(_sensitivity_answer(k, value))


# =========================================================================== Chang et al.; Google's LSH clustering (06)


def test_the_lsh_answers_are_the_librarys_budget_and_the_zcdp_tail_bound():
    from fractions import Fraction

    from dpclust_lib import LSHCoresetKMeans
    from dpclust_lib.accounting import zcdp_to_dp

    m = exercises.lsh_coreset
    X = np.random.default_rng(0).uniform(-0.1, 0.1, size=(50, 1))
    for (eps, radius, d, depth, share), (count, total) in zip(m.NOISE_SCALE_CASES, m.NOISE_SCALE_ANSWERS):
        est = LSHCoresetKMeans(2, epsilon=eps, radius=radius, max_depth=depth, count_share=share, random_state=0)
        est.fit(np.hstack([X, np.zeros((50, d - 1))]))
        level = est.ledger_.entries[0][1]  # the root's count: one level's share
        assert np.isclose(1 / level, count, rtol=1e-9)
        assert np.isclose(radius * np.sqrt(d) / float(Fraction(eps) * (1 - Fraction(share))), total, rtol=1e-9)
    for (rho, delta), answer in zip(m.ZCDP_CASES, m.ZCDP_ANSWERS):
        # the privacy loss's tail: P[L > eps] <= exp(-(eps - rho)^2 / (4 rho)) = delta at eps = answer
        assert np.isclose(np.exp(-((answer - rho) ** 2) / (4 * rho)), delta, rtol=1e-9)
        assert zcdp_to_dp(rho, delta) <= answer  # the library's conversion is the tighter

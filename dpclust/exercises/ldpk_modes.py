"""Peng et al. (2021), notebook 01: GRR, the LDP-FO aggregation and the Hamming-distance randomized
response.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from dpclust_lib.frequency import LDPFO, Tally, apply_along_axes, joint_index, joint_records
from dpclust_lib.mechanisms import grr_matrix, grr_probabilities, hamming_rr_matrix

from ._core import ALPHA, answer_key, as_codes, call_student, check_function, diagnose, fail, passed

__all__ = [
    "check_grr_perturb",
    "check_ldpfo_estimate",
    "check_hamming_rr_perturb",
    "check_hamming_rr_ldp_level",
    "check_hamming_rr_expected_distance",
    "check_ldpfo_variance",
]


def check_grr_perturb(perturb, k=4, epsilon=1.0, n=20_000, seed=0):
    """``perturb(values, k, epsilon, rng)`` must be k-ary randomized response.

    Chi-square test of the report distribution for every input value against
    the exact one (the input's row of the library's ``grr_matrix``), Bonferroni
    over the k inputs, family-wise alpha = 0.001.

    Examples
    --------
    Reports that always keep the value are told where they differ:

    >>> check_grr_perturb(lambda values, k, epsilon, rng: values)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: the reports for input 0 do not follow GRR ...
    """
    P = grr_matrix(k, epsilon)
    rng = np.random.default_rng(seed)
    for x in range(k):
        out = as_codes(call_student(perturb, np.full(n, x), k, epsilon, rng), n, k, "perturb")
        observed = np.bincount(out, minlength=k)
        if stats.chisquare(observed, P[x] * n).pvalue < ALPHA / k:
            keep = observed[x] / n
            binary_p = np.exp(epsilon) / (np.exp(epsilon) + 1)
            hint = "which reports come out too often? compare how often each value is reported with GRR's definition"
            if abs(keep - binary_p) < 0.02:
                hint = "your keep rate is the binary formula's (k = 2); how does GRR's keep probability depend on k?"
            elif abs(keep - (P[x, x] + (1 - P[x, x]) / k)) < 0.02:
                hint = "your replacement can be the true value itself: which values may a report take instead?"
            fail(
                f"the reports for input {x} do not follow GRR (chi-square p < {ALPHA / k:.1e})",
                np.round(P[x], 3).tolist(),
                np.round(observed / n, 3).tolist(),
                hint,
            )
    return passed(f"GRR with k={k}, eps={epsilon}: report distribution matches for every input")


def _grr_inverses(sizes, eps, swap=False):
    """The inverse of each attribute's GRR matrix, in closed form (``swap``: the p/q-swapped mistake)."""
    out = []
    for k in sizes:
        p, q = grr_probabilities(k, eps)
        if swap:
            p, q = q, p
        out.append((np.eye(k) - q) / (p - q))
    return out


def check_ldpfo_estimate(estimate, seed=0, rtol=1e-8):
    """``estimate(counts, domain_sizes, epsilon)`` must invert the LDP-FO transition matrix.

    ``counts`` is the histogram tensor of the perturbed records (shape
    ``domain_sizes``); the answer is the raw unbiased estimate of the true count
    tensor, compared with :meth:`LDPFO.estimate` to relative tolerance ``rtol``
    on several domains, including unequal ones.

    Examples
    --------
    The reports' histogram itself is not the estimate:

    >>> check_ldpfo_estimate(lambda counts, domain_sizes, epsilon: counts)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: the estimate differs from the unbiased one for domain_sizes=(2, 2), ...
    """
    rng = np.random.default_rng(seed)
    for sizes, eps in [((2, 2), 1.0), ((3, 2, 3), 0.7), ((4, 3), 2.0), ((2, 2, 2, 2), 0.5)]:
        counts = rng.poisson(20.0, size=sizes).astype(float)
        expected = LDPFO(sizes, eps).estimate(Tally(counts, int(counts.sum())))
        got = np.asarray(call_student(estimate, counts.copy(), sizes, eps), dtype=float)
        if got.shape != expected.shape:
            if got.size == expected.size:
                got = got.reshape(expected.shape)
            else:
                fail(
                    f"wrong shape for domain_sizes={sizes}",
                    expected.shape,
                    got.shape,
                    "return one estimate per cell of the joint domain",
                )
        if np.allclose(got, expected, rtol=rtol, atol=1e-9):
            continue
        hint = "which matrix perturbs each attribute, and along which axis of the tensor must its inverse act?"
        ratio = got / expected
        if np.all(got >= 0) and np.isclose(got.sum(), counts.sum(), rtol=1e-6):
            hint = "this looks post-processed (no negatives, total n); which estimate does the prompt ask for?"
        elif np.all(np.isfinite(ratio)) and np.ptp(ratio) < 1e-6:
            hint = (
                f"off by a constant factor ({ratio.flat[0]:.4g}): multiply each attribute's inverse by its GRR "
                "matrix; do you get the identity, or a multiple of it?"
            )
        else:
            hint = diagnose(
                got,
                [
                    (
                        apply_along_axes(counts, _grr_inverses(sizes, eps, swap=True)),
                        "p and q look swapped: which of the two is the probability of KEEPING the value?",
                    ),
                    (
                        apply_along_axes(counts, [np.linalg.inv(grr_matrix(k, eps * len(sizes))) for k in sizes]),
                        "you used m * eps per attribute; eps is per unit of Hamming distance: how far apart are "
                        "two records that differ in one attribute?",
                    ),
                    (
                        apply_along_axes(counts, [np.linalg.inv(grr_matrix(k, eps / len(sizes))) for k in sizes]),
                        "you split eps over the m attributes; eps is per unit of Hamming distance: how far apart "
                        "are two records that differ in one attribute?",
                    ),
                ],
                rtol,
                hint,
            )
        fail(
            f"the estimate differs from the unbiased one for domain_sizes={sizes}, eps={eps}",
            np.round(expected.ravel()[:6], 2).tolist(),
            np.round(got.ravel()[:6], 2).tolist(),
            hint,
        )
    return passed("your aggregation equals the Kronecker-structured inverse on every test domain")


def _as_records(out, n, sizes, name):
    arr = np.asarray(out)
    if arr.shape != (n, len(sizes)):
        fail(
            f"{name} returned the wrong shape",
            f"({n}, {len(sizes)}), one perturbed record per user",
            arr.shape,
            "return an array with the shape of X",
        )
    if arr.dtype.kind not in "iu":
        fail(
            f"{name} returned non-integer values",
            "integer category codes",
            f"dtype {arr.dtype}",
            "reports are category codes, like the input",
        )
    for j, k in enumerate(sizes):
        if arr[:, j].min() < 0 or arr[:, j].max() >= k:
            fail(
                f"{name} returned values outside the domain of attribute {j}",
                f"codes in 0..{k - 1}",
                f"range [{arr[:, j].min()}, {arr[:, j].max()}]",
                f"attribute {j} has its own domain size k_{j} = {k}: which values may its replacement take?",
            )
    return arr


def _grr_keep(sizes, epsilon):
    """The probability that each attribute's k_j-ary randomized response at ``epsilon`` keeps its value."""
    e, k = np.exp(epsilon), np.asarray(sizes)
    return e / (e + k - 1)


# The typical wrong keep rates of the Hamming-distance RR, as data: (name, keep rate per attribute as a function
# of (domain sizes, epsilon), hint). check_hamming_rr_perturb names the first one the observed keep rates match.
HAMMING_RR_KEEP_MISTAKES = (
    (
        "the other values not uniform",
        _grr_keep,
        "each attribute keeps its value with the right probability, but its replacements do not follow "
        "Eq. 4: how likely is each of the other values?",
    ),
    (
        "the binary formula",
        lambda sizes, eps: np.full(len(sizes), np.exp(eps) / (np.exp(eps) + 1)),
        "your keep rates are the binary formula's (k = 2) for every attribute: how does an attribute's "
        "keep probability depend on its own domain size k_j?",
    ),
    (
        "eps split over the attributes",
        lambda sizes, eps: _grr_keep(sizes, eps / len(sizes)),
        "you split eps over the m attributes; eps is per unit of Hamming distance: how far apart are two "
        "records that differ in one attribute?",
    ),
    (
        "replacement among all k_j values",
        lambda sizes, eps: _grr_keep(sizes, eps) + (1 - _grr_keep(sizes, eps)) / np.asarray(sizes),
        "your replacement can be the true value itself: which values may an attribute report when it does "
        "not keep its own?",
    ),
)


def check_hamming_rr_perturb(perturb, domain_sizes=(3, 2, 4), epsilon=0.7, n=20_000, seed=0):
    """``perturb(X, domain_sizes, epsilon, rng)`` must be the Hamming-distance RR of Peng et al. (Eq. 4).

    For three input records (n copies of each), a chi-square test of the
    reports over the whole joint domain against the exact row of
    :func:`~dpclust_lib.mechanisms.hamming_rr_matrix`, Bonferroni over the three
    records, family-wise alpha = 0.001. Unequal domains on purpose. A wrong
    answer is named after ``HAMMING_RR_KEEP_MISTAKES``.

    Examples
    --------
    Reports that always keep the record are told where they differ:

    >>> check_hamming_rr_perturb(lambda X, domain_sizes, epsilon, rng: X)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: the reports for record [0, 0, 0] do not follow Eq. 4 ...
    """
    sizes = tuple(int(k) for k in domain_sizes)
    cells = math.prod(sizes)
    P = hamming_rr_matrix(sizes, epsilon)
    inputs = joint_records(np.array([0, cells // 2 + 1, cells - 1]), sizes)
    rng = np.random.default_rng(seed)
    level = ALPHA / len(inputs)
    for x in inputs:
        out = _as_records(call_student(perturb, np.tile(x, (n, 1)), sizes, epsilon, rng), n, sizes, "perturb")
        row = P[joint_index(x[None, :], sizes)[0]]
        observed = np.bincount(joint_index(out, sizes), minlength=cells)
        if stats.chisquare(observed, row * n).pvalue >= level:
            continue
        _fail_hamming_rr(out, x, sizes, epsilon, level)
    return passed(
        f"Hamming-distance RR on domain {sizes}, eps={epsilon}: the report distribution matches Eq. 4 "
        "for every input tested"
    )


def _marginals_ok(out, x, sizes, correct_keep, level):
    """True when every attribute's reports alone follow its k_j-ary randomized response (chi-square, Bonferroni)."""
    n, m = out.shape
    return all(
        stats.chisquare(
            np.bincount(out[:, j], minlength=kj),
            n * np.where(np.arange(kj) == x[j], correct_keep[j], (1 - correct_keep[j]) / (kj - 1)),
        ).pvalue
        >= level / m
        for j, kj in enumerate(sizes)
    )


def _fail_hamming_rr(out, x, sizes, epsilon, level):
    """The failure for input record ``x``, with the hint of the typical mistake its keep rates match."""
    n = out.shape[0]
    correct_keep = _grr_keep(sizes, epsilon)
    keep = (out == x).mean(axis=0)
    hint = "Section 3: which simpler mechanism does each attribute go through, and at what privacy level?"
    if _marginals_ok(out, x, sizes, correct_keep, level):
        hint = (
            "every attribute on its own is right, but the attributes are not independent: does each attribute "
            "of a user get its own random draws (Section 3)?"
        )
    else:
        tol = 5 * np.sqrt(0.25 / n) + 0.01
        hint = next(
            (h for _, rate, h in HAMMING_RR_KEEP_MISTAKES if np.all(np.abs(keep - rate(sizes, epsilon)) < tol)), hint
        )
    fail(
        f"the reports for record {x.tolist()} do not follow Eq. 4 (chi-square p < {level:.1e})",
        f"keep rates per attribute {np.round(correct_keep, 3).tolist()}",
        f"keep rates per attribute {np.round(keep, 3).tolist()}",
        hint,
    )


_HAMMING_CASES = [((3, 2, 3), 1.0), ((2, 2, 2, 2), 0.5), ((4, 7), 2.0), ((5,), 0.3), ((2,) * 6, 1.5), ((3, 5, 2), 0.8)]
# The right answers on these domains (tests/test_exercises.py computes them from the library's transition matrix):
# the plain LDP level of one report, and the expected number of attributes it changes.
HAMMING_LEVEL_ANSWERS = [3.0, 2.0, 4.0, 0.3, 9.0, 2.4]
HAMMING_DISTANCE_ANSWERS = [
    1.1167076518383372,
    1.510162675192582,
    0.7368925893219023,
    0.7476832835916247,
    1.0945531428381376,
    1.4258521506803346,
]


def _hamming_cases(rng):
    """Six domains of a graded run (one attribute, equal and unequal sizes), each with its epsilon."""
    sizes = [(int(rng.integers(2, 7)),), tuple([int(rng.integers(2, 4))] * int(rng.integers(3, 6)))]
    sizes += [tuple(rng.integers(2, 8, size=int(rng.integers(2, 5))).tolist()) for _ in range(4)]
    return [(k, float(np.round(rng.uniform(0.2, 3.0), 2))) for k in sizes]


def check_hamming_rr_ldp_level(plain_ldp_level, seed=None, solutions=None):
    """``plain_ldp_level(domain_sizes, epsilon)``: the eps' for which one Hamming-RR report is eps'-LDP.

    Checked on six domains against ``HAMMING_LEVEL_ANSWERS``, the worst ratio Pr[y | x] / Pr[y | x'] over
    all pairs and outputs of the library's transition matrix (relative tolerance 1e-9); a graded run draws
    six others from ``seed`` and compares with the teacher's solution (:func:`~._core.answer_key`).

    Examples
    --------
    >>> check_hamming_rr_ldp_level(lambda domain_sizes, epsilon: epsilon)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: the plain LDP level of a report: <lambda>((3, 2, 3), 1.0) is not ...
    """
    mistakes = [
        (lambda s, e: e, "eps is the privacy per unit of Hamming distance; how far apart can two records be?"),
        (
            lambda s, e: (len(s) - 1) * e,
            "you counted m - 1 attributes: in how many attributes can the two most different records differ?",
        ),
        (lambda s, e: e * sum(k - 1 for k in s), "you counted differing values; what does the Hamming distance count?"),
        (lambda s, e: e * math.prod(s), "you counted cells of the domain; what does the Hamming distance count?"),
    ]
    cases, reference = answer_key(
        _HAMMING_CASES, HAMMING_LEVEL_ANSWERS, _hamming_cases, seed, solutions, "plain_ldp_level"
    )
    return check_function(
        "the plain LDP level of a report",
        plain_ldp_level,
        reference,
        cases,
        mistakes=mistakes,
        hint="take the two records whose reports are easiest to tell apart, and the output y that shows it best",
    )


def check_hamming_rr_expected_distance(expected_distance, seed=None, solutions=None):
    """``expected_distance(domain_sizes, epsilon)``: E[d(X, Y)], the mean number of attributes a report changes.

    Checked on six domains, equal and unequal, against ``HAMMING_DISTANCE_ANSWERS``, the exact expectation
    under the library's transition matrix (relative tolerance 1e-9); a graded run draws six others from
    ``seed`` and compares with the teacher's solution.

    Examples
    --------
    >>> check_hamming_rr_expected_distance(lambda sizes, epsilon: 1.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: the expected Hamming distance of a report: <lambda>((3, 2, 3), 1.0) is ...
    """

    def changed(s, e):  # the probability that each attribute changes, for one common k or per attribute
        k = np.asarray(s)
        return (k - 1) / (np.exp(e) + k - 1)

    own_k = "every attribute has its own domain size k_j"
    mistakes = [
        (lambda s, e: np.sum(1 - changed(s, e)), "that is the expected number of attributes the report KEEPS"),
        (
            lambda s, e: len(s) / (np.exp(e) + 1),
            "that is the binary formula (k = 2) for every attribute: with k_j values, how likely is attribute j "
            "to change?",
        ),
        (lambda s, e: len(s) * changed(s[0], e), own_k),
        (lambda s, e: len(s) * changed(max(s), e), own_k),
        (
            lambda s, e: np.sum(changed(s, e / len(s))),
            "you ran each attribute at eps/m; eps is per unit of distance: what does changing one attribute cost?",
        ),
    ]
    cases, reference = answer_key(
        _HAMMING_CASES, HAMMING_DISTANCE_ANSWERS, _hamming_cases, seed, solutions, "expected_distance"
    )
    return check_function(
        "the expected Hamming distance of a report",
        expected_distance,
        reference,
        cases,
        mistakes=mistakes,
        hint="write the distance as a sum of indicators, one per attribute (Section 3); the expectation of a sum "
        "is the sum of the expectations",
    )


def _ldpfo_variance_from_factors(hold, other, subtract=True):
    """A wrong variance built from two per-attribute factors, ``hold(p, q)`` where a record agrees with the
    cell and ``other(p, q)`` where it does not (``subtract``: the cell's count taken off)."""

    def variance(counts, domain_sizes, epsilon, cell):
        counts = np.asarray(counts, dtype=float)
        weight = np.ones(())
        for k, v in zip(domain_sizes, cell):
            p, q = grr_probabilities(k, epsilon)
            factor = np.full(k, other(p, q))
            factor[v] = hold(p, q)
            weight = np.multiply.outer(weight, factor)
        return float(np.sum(counts * weight) - (counts[tuple(cell)] if subtract else 0.0))

    return variance


# The typical wrong variances of one cell's LDP-FO estimate, as data: (name, variance as a function of the
# checker's case (counts, domain_sizes, epsilon, cell), hint).
LDPFO_VARIANCE_MISTAKES = (
    (
        "the second moment",
        _ldpfo_variance_from_factors(
            lambda p, q: (p * (1 - q) ** 2 + (1 - p) * q**2) / (p - q) ** 2,
            lambda p, q: q * (1 - q) / (p - q) ** 2,
            subtract=False,
        ),
        "that is E[w(Y)^2] summed over the users, a second moment: what is E[w(Y)] for each user, and what "
        "does a variance take off?",
    ),
    (
        "Bernoulli variances",
        _ldpfo_variance_from_factors(
            lambda p, q: p * (1 - p) / (p - q) ** 2, lambda p, q: q * (1 - q) / (p - q) ** 2, subtract=False
        ),
        "you multiplied GRR's per-attribute variances, but variances do not multiply over a product: which "
        "moment of w(Y) does factorise over the attributes?",
    ),
    (
        "everyone elsewhere",
        lambda counts, sizes, e, cell: float(
            np.sum(counts) * math.prod(q * (1 - q) / (p - q) ** 2 for p, q in (grr_probabilities(k, e) for k in sizes))
        ),
        "that is the rare-cell approximation, as if every user differed from the cell in every attribute: "
        "what does a user who shares some attributes with the cell contribute?",
    ),
    (
        "one GRR over the joint domain",
        lambda counts, sizes, e, cell: float(
            LDPFO((math.prod(sizes),), e).variance(int(np.sum(counts)), np.ravel(counts))[
                np.ravel_multi_index(tuple(cell), tuple(sizes))
            ]
        ),
        "that is GRR over the whole joint domain at eps; how does LDP-FO perturb a record, and what does "
        "its estimate invert (Section 3)?",
    ),
)

# (counts, domain sizes, epsilon, cell): equal and unequal domains, a cell that is empty, users spread unevenly
LDPFO_VARIANCE_CASES = [
    (np.array([[30, 0, 5], [10, 4, 1]]), (2, 3), 1.0, (0, 0)),
    (np.array([[30, 0, 5], [10, 4, 1]]), (2, 3), 0.5, (0, 1)),
    (np.array([[[17, 5], [5, 9]], [[17, 2], [4, 10]]]), (2, 2, 2), 2.0, (1, 0, 1)),
    (
        np.array([[[2, 3, 3, 0], [0, 0, 5, 8]], [[8, 6, 8, 4], [4, 5, 3, 2]], [[6, 2, 4, 0], [1, 0, 5, 7]]]),
        (3, 2, 4),
        0.7,
        (2, 1, 3),
    ),
    (np.array([43, 40, 46, 0, 38]), (5,), 1.5, (2,)),
]
# Their right answers (tests/test_exercises.py compares them with LDPFO.variance and with the dense inverse)
LDPFO_VARIANCE_ANSWERS = [
    177.77009267107402,
    1492.9942099958864,
    10.56450051146853,
    3491.385147828354,
    142.70685589012686,
]


def _ldpfo_variance_cases(rng):
    """Five cases of a graded run: one and several attributes, equal and unequal sizes, some empty cells."""
    cases = []
    for sizes in [(int(rng.integers(3, 7)),), (2, 2), (2, int(rng.integers(3, 5))), (2, 2, 2), (3, 2, 2)]:
        counts = rng.integers(0, 30, size=sizes) * (rng.random(sizes) < 0.8)
        cell = tuple(int(rng.integers(0, k)) for k in sizes)
        cases.append((counts, sizes, float(np.round(rng.uniform(0.3, 2.5), 2)), cell))
    return cases


def check_ldpfo_variance(ldpfo_variance, seed=None, solutions=None):
    """``ldpfo_variance(counts, domain_sizes, epsilon, cell)``: Var of LDP-FO's raw estimate of one cell's count.

    ``counts`` is the true count tensor (shape ``domain_sizes``), ``cell`` a record
    (a tuple of codes). Checked on five cases (equal and unequal domains, one attribute) against
    ``LDPFO_VARIANCE_ANSWERS`` (what ``frequency.LDPFO(...).variance`` gives), relative tolerance 1e-9,
    naming the typical mistakes of ``LDPFO_VARIANCE_MISTAKES``; a graded run draws five others from
    ``seed`` and compares with the teacher's solution.

    Examples
    --------
    >>> from dpclust_lib.frequency import LDPFO
    >>> def ldpfo_variance(counts, domain_sizes, epsilon, cell):
    ...     return LDPFO(domain_sizes, epsilon).variance(int(np.sum(counts)), counts)[tuple(cell)]
    >>> check_ldpfo_variance(ldpfo_variance)
    Correct: the variance of a cell's LDP-FO estimate is right on all 5 cases
    """
    cases, reference = answer_key(
        LDPFO_VARIANCE_CASES, LDPFO_VARIANCE_ANSWERS, _ldpfo_variance_cases, seed, solutions, "ldpfo_variance"
    )
    return check_function(
        "the variance of a cell's LDP-FO estimate",
        ldpfo_variance,
        reference,
        cases,
        rtol=1e-9,
        mistakes=[(f, hint) for _, f, hint in LDPFO_VARIANCE_MISTAKES],
        hint="write the estimate of the cell as a sum of one weight per user (Exercise 2's inverse); the users are "
        "independent, so their variances add: what is one user's?",
    )

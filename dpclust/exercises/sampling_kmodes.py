"""Zhang et al. (2022), notebook 02: OUE, the Eq. 9 estimate, the cluster-index unmixing and the Eq. 9
variance.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from dpclust_lib.cluster.sampling_kmodes import (
    estimates_from_tallies,
    server_estimates,
    tallies,
    user_reports,
)
from dpclust_lib.mechanisms import grr_matrix, grr_probabilities, oue_pq, sue_pq

from ._core import (
    ALPHA,
    answer_key,
    as_float,
    call_student,
    check_function,
    diagnose,
    fail,
    passed,
    same_shape_close,
)

__all__ = [
    "check_oue_perturb",
    "check_eq9_estimate",
    "check_index_unmix",
    "check_eq9_variance",
    "check_unmixed_variance",
]


_OUE_SWAPPED = "p and q look swapped: which of the two belongs to the bit of the true value?"


def check_oue_perturb(perturb, k=3, epsilon=1.0, n=30_000, seed=0):
    """``perturb(values, k, epsilon, rng)`` must return OUE bit vectors of shape (n, k).

    The bits are independent, with OUE's p and q (``mechanisms.oue_pq``): chi-square
    over all 2^k reports per input against their exact probabilities, Bonferroni
    over the k inputs, family-wise alpha = 0.001.

    Examples
    --------
    The one-hot encoding alone is not a private report:

    >>> def one_hot(values, k, epsilon, rng):
    ...     return (np.arange(k) == np.asarray(values)[:, None]).astype(int)
    >>> check_oue_perturb(one_hot)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: the reports for input 0 do not follow OUE ...
    """
    p, q = oue_pq(epsilon)
    rng = np.random.default_rng(seed)
    patterns = 2 ** np.arange(k)[::-1]
    for x in range(k):
        out = np.asarray(call_student(perturb, np.full(n, x), k, epsilon, rng))
        if out.shape != (n, k):
            fail(
                "perturb returned the wrong shape",
                f"({n}, {k}): k bits per user",
                out.shape,
                "one-hot encode the value, then flip each bit",
            )
        if not np.isin(out, [0, 1]).all():
            fail("perturb returned values other than 0 and 1", "bits", np.unique(out)[:5], "return 0/1 bits")
        rate = out.mean(axis=0)
        bit = np.where(np.arange(k) == x, p, q)
        reports = (np.arange(2**k)[:, None] >> np.arange(k)[::-1]) & 1  # every k-bit report, in code order
        exact = np.where(reports == 1, bit, 1 - bit).prod(axis=1)
        observed = np.bincount(out @ patterns, minlength=2**k)
        if stats.chisquare(observed, exact * n).pvalue < ALPHA / k:
            hint = "compare the rate of 1s of the true value's bit, and of the other bits, with OUE's p and q (Eq. 3)"
            if abs(rate[x] - q) < 0.02 and np.all(np.abs(np.delete(rate, x) - p) < 0.02):
                hint = _OUE_SWAPPED
            elif abs(rate[x] - np.exp(epsilon / 2) / (np.exp(epsilon / 2) + 1)) < 0.02:
                hint = "these are SUE's probabilities (symmetric unary encoding); which p and q does OUE use (Eq. 3)?"
            fail(
                f"the reports for input {x} do not follow OUE (chi-square p < {ALPHA / k:.1e})",
                f"bit rates {np.round(bit, 3).tolist()}",
                f"bit rates {np.round(rate, 3).tolist()}",
                hint,
            )
    return passed(f"OUE with k={k}, eps={epsilon}: report distribution matches for every input")


_TOY_SIZES = (3, 4, 2)


_TOY_CENTRES = np.array([[0, 0, 0], [1, 2, 1], [2, 3, 0]])


def _toy_reports(rng, epsilon, index_epsilon=None, n=3000):
    X = rng.integers(0, _TOY_SIZES, size=(n, len(_TOY_SIZES)))
    return user_reports(X, _TOY_CENTRES, _TOY_SIZES, epsilon, index_epsilon, random_state=rng)


def _binary_rr_p(eps):
    return np.exp(eps) / (np.exp(eps) + 1)


# The typical wrong answers of Eq. 9, as data: (name, g' as a function of (s, cluster sizes N, d, eps, right
# answer), hint). check_eq9_estimate names the first one the answer equals.
EQ9_ESTIMATE_MISTAKES = (
    (
        "|C_r| not divided by d",
        lambda s, N, d, eps, want: (s - N[:, None] * oue_pq(eps)[1]) / (oue_pq(eps)[0] - oue_pq(eps)[1]),
        "you subtracted q for every user of the cluster: how many of them report attribute j, on average?",
    ),
    (
        "p and q swapped",
        lambda s, N, d, eps, want: (s - N[:, None] * oue_pq(eps)[0] / d) / (oue_pq(eps)[1] - oue_pq(eps)[0]),
        _OUE_SWAPPED,
    ),
    (
        "not rescaled",
        lambda s, N, d, eps, want: s - N[:, None] * oue_pq(eps)[1] / d,
        "the bias is removed, but the estimate is not rescaled: how much more does a holder add to the expected "
        "bit sum than a non-holder?",
    ),
    (
        "the share of Eq. 11",
        lambda s, N, d, eps, want: (
            (s - N[:, None] * oue_pq(eps)[1] / d) / (oue_pq(eps)[0] - oue_pq(eps)[1]) / (N[:, None] / d)
        ),
        "that is the share of Eq. 11; Eq. 9 estimates a count, not a share",
    ),
    (
        "SUE's p and q",
        lambda s, N, d, eps, want: (s - N[:, None] * sue_pq(eps)[1] / d) / (sue_pq(eps)[0] - sue_pq(eps)[1]),
        "these are SUE's p and q; which does OUE use (Eq. 3)?",
    ),
    (
        "binary randomized response's p",
        lambda s, N, d, eps, want: (s - N[:, None] * oue_pq(eps)[1] / d) / (_binary_rr_p(eps) - oue_pq(eps)[1]),
        "that p is binary randomized response's; with which probability does OUE keep a 1 (Eq. 3)?",
    ),
    (
        "wrong axis",
        lambda s, N, d, eps, want: (s - (N * oue_pq(eps)[1] / d)[None, :]) / (oue_pq(eps)[0] - oue_pq(eps)[1]),
        "|C_r| is subtracted along the wrong axis: cluster r is row r; check how a (K,) array broadcasts "
        "against a (K, k_j) one",
    ),
    (
        "transposed",
        lambda s, N, d, eps, want: want.T,
        "rows and columns are transposed: return one row per cluster, one column per value",
    ),
)


def check_eq9_estimate(estimate, seed=0, rtol=1e-9):
    """``estimate(bit_sums, cluster_sizes, d, epsilon)`` must be Eq. 9 of Zhang et al.

    ``bit_sums`` (K, k_j): per cluster r and value w, the sum of bit w over the
    reports (r, j, .) of one attribute j; ``cluster_sizes`` (K,): |C_r|, the
    reports labelled r. The answer g' (K, k_j) is compared with the library's
    ``server_estimates`` on one round of simulated reports, attribute by
    attribute, at two values of eps (relative tolerance ``rtol``); a wrong answer
    is named after ``EQ9_ESTIMATE_MISTAKES``.

    Examples
    --------
    The bit sums themselves are not the estimate:

    >>> check_eq9_estimate(lambda bit_sums, cluster_sizes, d, epsilon: bit_sums)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: g' of attribute 0 (eps=0.5) differs from Eq. 9 as the library computes it ...
    """
    rng = np.random.default_rng(seed)
    d = len(_TOY_SIZES)
    for eps in (0.5, 2.0):
        reports = _toy_reports(rng, eps)
        S, M = tallies(reports, len(_TOY_CENTRES), _TOY_SIZES)
        N = M.sum(axis=1)
        library = server_estimates(reports, len(_TOY_CENTRES), _TOY_SIZES, eps)
        for j, k in enumerate(_TOY_SIZES):
            _check_eq9_attribute(estimate, S[:, j, :k], N, d, eps, library[j], j, rtol)
    return passed("your Eq. 9 equals the library's estimate for every cluster, attribute and value")


def _check_eq9_attribute(estimate, s, N, d, eps, want, j, rtol):
    """The student's g' of attribute ``j`` against the library's ``want``."""
    got = as_float(call_student(estimate, s.copy(), N.copy(), d, eps), "estimate", want.shape)
    if got.shape != want.shape:
        fail(
            "estimate returned the wrong shape",
            f"{want.shape}: clusters x values of attribute {j}",
            got.shape,
            "return one estimate per cluster and value, shaped like bit_sums",
        )
    if same_shape_close(got, want, rtol):
        return
    hint = diagnose(
        got,
        [(wrong(s, N, d, eps, want), hint) for _, wrong, hint in EQ9_ESTIMATE_MISTAKES],
        rtol,
        "check each piece of Eq. 9 against the prompt: OUE's p and q, the expected number of reporters, the "
        "subtraction and the rescaling",
    )
    fail(
        f"g' of attribute {j} (eps={eps}) differs from Eq. 9 as the library computes it",
        np.round(want[0], 2).tolist(),
        np.round(got[0], 2).tolist(),
        hint + " (first cluster shown)",
    )


def _unmix_with(mixed, pq, axis=0):
    """A closed-form un-mixing with the pair ``pq`` = (p, q), the totals taken over ``axis`` (wrong pairs and
    axes make the typical mistakes below)."""
    p, q = pq
    return (mixed - q * mixed.sum(axis=axis, keepdims=True)) / (p - q)


_OFF_BY_ONE_DOMAIN = (
    "off by one in the domain: how many labels does the index's GRR choose among, and which axis of observed says?"
)

# The typical wrong un-mixings, as data: (name, answer as a function of (observed tallies, K, index_epsilon),
# hint). check_index_unmix names the first one the answer equals.
UNMIX_MISTAKES = (
    (
        "p and q swapped",
        lambda mixed, K, ie: _unmix_with(mixed, grr_probabilities(K, ie)[::-1]),
        "p and q look swapped: which of the two is the probability that the true label is KEPT?",
    ),
    (
        "not rescaled",
        lambda mixed, K, ie: mixed - grr_probabilities(K, ie)[1] * mixed.sum(axis=0, keepdims=True),
        "the leaked share is removed but not rescaled: what fraction of a true tally is left once that share "
        "is taken out?",
    ),
    (
        "summed over the last axis",
        lambda mixed, K, ie: _unmix_with(mixed, grr_probabilities(K, ie), axis=-1),
        "you summed over the wrong axis: the labels are on axis 0",
    ),
    (
        "summed over axis 1",
        lambda mixed, K, ie: _unmix_with(mixed, grr_probabilities(K, ie), axis=1),
        "you summed over the wrong axis: the labels are on axis 0",
    ),
    ("K + 1 labels", lambda mixed, K, ie: _unmix_with(mixed, grr_probabilities(K + 1, ie)), _OFF_BY_ONE_DOMAIN),
    (
        "K - 1 labels",
        lambda mixed, K, ie: _unmix_with(mixed, grr_probabilities(K - 1, ie) if K > 2 else (np.nan, np.nan)),
        _OFF_BY_ONE_DOMAIN,
    ),
    (
        "OUE's p and q",
        lambda mixed, K, ie: _unmix_with(mixed, oue_pq(ie)),
        "those are OUE's p and q; which mechanism protects the index, and what are its p and q?",
    ),
    (
        "mixed once more",
        lambda mixed, K, ie: np.tensordot(grr_matrix(K, ie).T, mixed, axes=1),
        "that mixes the labels once more (P^T): the server must undo the mixing, not repeat it",
    ),
    (
        "inverse on the wrong side",
        lambda mixed, K, ie: np.tensordot(np.linalg.inv(grr_matrix(K, ie)), mixed, axes=1),
        "that is P^{-1}; E[observed] = P^T truth: which matrix's inverse undoes that?",
    ),
)


def check_index_unmix(unmix, seed=0, rtol=1e-9):
    """``unmix(observed, index_epsilon)`` must undo the K-ary GRR on the cluster index, unbiasedly.

    ``observed`` holds tallies by *reported* label r' on axis 0 (shape (K, ...));
    the answer is the unbiased estimate of the tallies by true cluster r. Checked
    two ways: (1) on exact expectations, E[observed] = P^T tallies with P the
    library's K x K GRR matrix, the answer must give the tallies back, for K = 2,
    3, 5 (a wrong answer is named after ``UNMIX_MISTAKES``); (2) Eq. 9 on the
    un-mixed tallies of one round of simulated reports must equal the library's
    ``server_estimates(..., index_epsilon=...)``. Relative tolerance ``rtol``.

    Examples
    --------
    The tallies by reported label are not the tallies by true cluster:

    >>> check_index_unmix(lambda observed, index_epsilon: observed)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: unmix does not give back the clear-index tallies (K=2, index_epsilon=1.0) ...
    """
    rng = np.random.default_rng(seed)
    for K, ie in [(2, 1.0), (3, 0.5), (5, 2.0)]:
        _check_unmix_expectation(unmix, rng.poisson(50.0, size=(K, 4, 3)).astype(float), ie, rtol)
    for eps, ie in [(1.0, 0.5), (2.0, 1.5)]:
        _check_unmix_server(unmix, _toy_reports(rng, eps, ie), eps, ie, rtol)
    return passed("your un-mixing inverts the GRR on the index exactly, and the server's estimates match the library's")


def _check_unmix_expectation(unmix, truth, ie, rtol):
    """The answer on E[observed] = P^T truth must give ``truth`` back."""
    K = truth.shape[0]
    mixed = np.tensordot(grr_matrix(K, ie).T, truth, axes=1)  # E[observed tallies]
    got = as_float(call_student(unmix, mixed.copy(), ie), "unmix", truth.shape)
    if got.shape != truth.shape:
        fail(
            "unmix returned the wrong shape",
            f"{truth.shape}, the shape of observed",
            got.shape,
            "return tallies shaped like the input: one row per cluster",
        )
    if same_shape_close(got, truth, rtol, atol=1e-9):
        return
    hint = diagnose(
        got,
        [(wrong(mixed, K, ie), hint) for _, wrong, hint in UNMIX_MISTAKES],
        rtol,
        "E[observed] = P^T truth with P the K x K GRR matrix: derive the inverse of P^T in closed form, and "
        "check on K = 2 that it times P^T is the identity",
    )
    fail(
        f"unmix does not give back the clear-index tallies (K={K}, index_epsilon={ie})",
        np.round(truth[:, 0, 0], 2).tolist(),
        np.round(got[:, 0, 0], 2).tolist(),
        hint + " (tallies[:, 0, 0] shown)",
    )


def _check_unmix_server(unmix, reports, eps, ie, rtol):
    """Eq. 9 on the un-mixed tallies of ``reports`` must equal the library's server side."""
    K = len(_TOY_CENTRES)
    S, M = tallies(reports, K, _TOY_SIZES)
    S_u = as_float(call_student(unmix, S.copy(), ie), "unmix", S.shape)
    M_u = as_float(call_student(unmix, M.copy(), ie), "unmix", M.shape)
    ours = estimates_from_tallies(S_u, M_u, _TOY_SIZES, eps, None)
    library = server_estimates(reports, K, _TOY_SIZES, eps, index_epsilon=ie)
    for j, (a, b) in enumerate(zip(ours, library)):
        if not same_shape_close(np.asarray(a), b, rtol, atol=1e-9):
            fail(
                f"with your un-mixing, Eq. 9 differs from the library's server side (attribute {j})",
                np.round(b[0], 2).tolist(),
                np.round(a[0], 2).tolist(),
                "unmix must work for tallies of any shape with the labels on axis 0, e.g. (K, d) and (K, d, w)",
            )


def _oue_parts(g, N, d, e):
    p, q = oue_pq(e)
    return p, q, (p - q) ** 2


def _plain_oue_variance(g, N, d, e):
    """OUE over all N users, as if every user reported attribute j."""
    p, q, s2 = _oue_parts(g, N, d, e)
    return (g * p * (1 - p) + (N - g) * q * (1 - q)) / s2


def _sampled_variance(g, N, d, e, squared=True):
    """The variance of g' that counts the reporters by their expected number (a typical mistake for the observed
    number); ``squared=False``: the variance of the bit sum s instead (a typical mistake for the expected one)."""
    p, q, s2 = _oue_parts(g, N, d, e)
    var_s = g * p / d * (1 - p / d) + (N - g) * q / d * (1 - q / d)
    return var_s / s2 if squared else var_s


def _eq12_variance(g, N, d, e):
    p, q, s2 = _oue_parts(g, N, d, e)
    return (N * p * (1 - p) / d + N * (1 - 1 / d) * q * (1 - q)) / s2


# The typical wrong variances of g', per way of counting the reporters, as data: (name, variance as a function of
# (g, N, d, epsilon), hint). check_eq9_variance names the first one the answer equals.
EQ9_VARIANCE_MISTAKES = {
    "expected": (
        (
            "Eq. 12 as printed",
            _eq12_variance,
            "that is Eq. 12 as printed, the OUE variance of a count whose true value is N/d; here 1/d is the chance "
            "that a user reports attribute j at all: what bit does the server then get from a user?",
        ),
        (
            "plain OUE",
            _plain_oue_variance,
            "that is plain OUE over all N users; only about one user in d reports attribute j: what is the "
            "distribution of the bit the server gets from a holder?",
        ),
        (
            "plain OUE over d",
            lambda g, N, d, e: _plain_oue_variance(g, N, d, e) / d,
            "you scaled a reporter's bit variance by 1/d, which leaves out the chance of reporting j: what is the "
            "distribution of the bit the server gets from a user?",
        ),
        (
            "Var[s]",
            lambda g, N, d, e: _sampled_variance(g, N, d, e, squared=False),
            "that is Var[s], the variance of the bit sum; g' rescales s: what does scaling a random variable by "
            "a constant do to its variance?",
        ),
        (
            "divided by (p - q) once",
            lambda g, N, d, e: _sampled_variance(g, N, d, e, squared=False) / (oue_pq(e)[0] - oue_pq(e)[1]),
            "you divided the variance by the scaling factor once: what does scaling a random variable by c do "
            "to its variance?",
        ),
    ),
    "observed": (
        (
            "given who reports",
            lambda g, N, d, e: _plain_oue_variance(g, N, d, e) / d,
            "that is the variance given WHO reports attribute j; which users report j is random too: what does "
            "that randomness add (the law of total variance)?",
        ),
        (
            "expected reporters",
            _sampled_variance,
            "that is the variance with the expected number of reporters |C_r|/d; with the observed n_rj, is the "
            "subtracted term still a constant?",
        ),
        (
            "plain OUE",
            _plain_oue_variance,
            "that is plain OUE over all N users; how many of them report attribute j, and is that number fixed?",
        ),
    ),
}

EQ9_VARIANCE_HINTS = {
    "expected": "what is the distribution of the bit w of attribute j that the server gets from one user, "
    "counting the chance that the user reports another attribute? the users are independent",
    "observed": "write (p - q) g' as a sum of independent terms, one per user (the prompt's hint), and take the "
    "variance of one term",
}

_EQ9_VARIANCE_CASES = [
    (40, 400, 6, 1.0),
    (0, 1000, 2, 0.5),
    (250, 1000, 4, 2.0),
    (1000, 1000, 3, 0.1),
    (7011, 11372, 6, 1.0),
]
# Their right answers, per way of counting the reporters (tests/test_exercises.py computes them from the
# library's exact report distribution, and compares them with a simulation of the library's estimator)
EQ9_VARIANCE_ANSWERS = {
    "expected": [345.93397134994416, 10211.600184561497, 338.1108026260739, 222592.68514845447, 13528.794350372831],
    "observed": [257.7351806776334, 7835.39617806553, 290.3904152415776, 133777.8333112949, 9122.183408887342],
}


def _eq9_variance_cases(rng):
    """Five cases (g, N, d, epsilon) of a graded run: no holder, every user a holder, and three between."""
    cases = []
    for share in (0.0, 1.0, *rng.uniform(0.05, 0.95, size=3)):
        N = int(rng.integers(100, 20_000))
        cases.append((int(share * N), N, int(rng.integers(2, 9)), float(np.round(rng.uniform(0.1, 3.0), 2))))
    return cases


def check_eq9_variance(variance, reporters="expected", seed=None, solutions=None):
    """``variance(g, N, d, epsilon)``: the exact variance of Eq. 9's g' (Theorem 3, corrected).

    ``g`` users of a cluster of ``N`` hold the value, ``d`` attributes, the bits
    at ``epsilon``. ``reporters`` as in ``server_estimates``: "expected" (the
    paper's |C_r|' = |C_r|/d) or "observed" (the number of reports (r, j)
    received). Checked on five cases against ``EQ9_VARIANCE_ANSWERS``, the variance computed from the
    library's exact report distribution (``report_distribution``), relative tolerance 1e-9; a wrong answer
    is named after ``EQ9_VARIANCE_MISTAKES``. A graded run draws five others from ``seed`` and compares
    with the teacher's solution, ``solutions[name]``, where ``name`` is ``eq9_variance_expected`` or
    ``eq9_variance_observed``.

    Examples
    --------
    >>> check_eq9_variance(lambda g, N, d, epsilon: 0.0, reporters="expected")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: the variance of g' (expected reporters): <lambda>(40, 400, 6, 1.0) is ...
    """
    if reporters not in ("expected", "observed"):
        raise ValueError(f"reporters must be 'expected' or 'observed', got reporters={reporters!r}")
    cases, reference = answer_key(
        _EQ9_VARIANCE_CASES,
        EQ9_VARIANCE_ANSWERS[reporters],
        _eq9_variance_cases,
        seed,
        solutions,
        f"eq9_variance_{reporters}",
    )
    return check_function(
        f"the variance of g' ({reporters} reporters)",
        variance,
        reference,
        cases,
        mistakes=[(wrong, hint) for _, wrong, hint in EQ9_VARIANCE_MISTAKES[reporters]],
        hint=EQ9_VARIANCE_HINTS[reporters],
    )


def _unmixed_terms(epsilon, index_epsilon, K, r):
    """OUE's (p, q), the index's (p_K, q_K), and each true cluster's chance a_c of being reported as label r."""
    p, q = oue_pq(epsilon)
    p_k, q_k = grr_probabilities(K, index_epsilon)
    a = np.full(K, q_k)
    a[r] = p_k
    return p, q, p_k, q_k, a


def _unmixed_mistake(per_user):
    """A wrong variance: sum over clusters c of holders * per_user(p, a_c, ...) + others * per_user(q, a_c, ...)."""

    def variance(holders, reporters, r, epsilon, index_epsilon):
        holders, reporters = np.asarray(holders, dtype=float), np.asarray(reporters, dtype=float)
        p, q, p_k, q_k, a = _unmixed_terms(epsilon, index_epsilon, len(reporters), r)
        return float(
            sum(
                holders[c] * per_user(p, a[c], p_k, q_k, c == r)
                + (reporters[c] - holders[c]) * per_user(q, a[c], p_k, q_k, c == r)
                for c in range(len(reporters))
            )
        )

    return variance


# The typical wrong variances of an un-mixed bit sum, as data: (name, variance as a function of the checker's
# case, hint).
UNMIXED_VARIANCE_MISTAKES = (
    (
        "no index noise",
        _unmixed_mistake(lambda pi, a, pk, qk, own: pi * (1 - pi) if own else 0.0),
        "that is the variance without the index's randomized response: which users' bits can end up in the "
        "un-mixed sum of cluster r?",
    ),
    (
        "S'_r alone",
        _unmixed_mistake(lambda pi, a, pk, qk, own: pi * a * (1 - pi * a) / (pk - qk) ** 2),
        "that is Var[S'_r] / (p_K - q_K)^2: the share the un-mixing subtracts is random too, and it shares "
        "users with S'_r; write the un-mixed sum as one term per user",
    ),
    (
        "no division",
        _unmixed_mistake(lambda pi, a, pk, qk, own: pi * (a * (1 - qk) ** 2 + (1 - a) * qk**2) - (pi * (a - qk)) ** 2),
        "you left out the un-mixing's rescaling: what does dividing a random variable by a constant do to its "
        "variance?",
    ),
    (
        "terms as if independent",
        _unmixed_mistake(lambda pi, a, pk, qk, own: (pi * a * (1 - pi * a) + qk**2 * pi * (1 - pi)) / (pk - qk) ** 2),
        "you added the variances of S'_r and of the subtracted share as if they were independent; they share "
        "the users counted under r: what term does that add?",
    ),
)

# (holders per true cluster, reporters per true cluster, r, epsilon of the bits, epsilon of the index)
UNMIXED_VARIANCE_CASES = [
    (np.array([40, 5]), np.array([60, 50]), 0, 1.0, 1.0),
    (np.array([40, 5]), np.array([60, 50]), 1, 2.0, 0.5),
    (np.array([100, 0, 30]), np.array([120, 80, 200]), 2, 0.5, 2.0),
    (np.array([0, 10, 10, 7, 1]), np.array([15, 10, 40, 7, 3]), 1, 3.0, 1.0),
    (np.array([900, 20, 300]), np.array([1000, 1000, 1000]), 0, 1.0, 4.0),
]
# Their right answers (tests/test_exercises.py enumerates each user's outcomes and simulates the protocol)
UNMIXED_VARIANCE_ANSWERS = [
    50.741866762369234,
    124.47798723425112,
    94.15154306981384,
    42.66142878171737,
    274.6292984658443,
]


def _unmixed_cases(rng):
    """Five cases of a graded run: K = 2, 3 and 5 clusters, a cluster with no holder."""
    cases = []
    for K in (2, 2, 3, 3, 5):
        reporters = rng.integers(1, 1500, size=K)
        holders = np.floor(reporters * rng.uniform(0.0, 1.0, size=K)).astype(int)
        holders[int(rng.integers(0, K))] = 0 if K == 3 else holders[0]
        eps, index_eps = np.round(rng.uniform(0.3, 4.0, size=2), 2)
        cases.append((holders, reporters, int(rng.integers(0, K)), float(eps), float(index_eps)))
    return cases


def check_unmixed_variance(unmixed_variance, seed=None, solutions=None):
    """``unmixed_variance(holders, reporters, r, epsilon, index_epsilon)``: Var of cluster r's un-mixed bit sum.

    One attribute and one value w: ``reporters[c]`` users of true cluster c report
    the attribute, ``holders[c]`` of them hold w; each sends its OUE bit for w (at
    ``epsilon``) under a label drawn by K-ary randomized response (at ``index_epsilon``),
    and the server un-mixes the bit sums by label with (P^T)^{-1} (Exercise 3).
    Checked on five cases (K = 2, 3, 5) against ``UNMIXED_VARIANCE_ANSWERS``, the variance enumerated from
    each user's exact outcome distribution, relative tolerance 1e-9, naming the typical
    mistakes of ``UNMIXED_VARIANCE_MISTAKES``; a graded run draws five others from ``seed`` and compares
    with the teacher's solution.

    Examples
    --------
    >>> check_unmixed_variance(lambda holders, reporters, r, epsilon, index_epsilon: 0.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: the variance of an un-mixed bit sum: <lambda>(array([40,  5]), ...
    """
    cases, reference = answer_key(
        UNMIXED_VARIANCE_CASES, UNMIXED_VARIANCE_ANSWERS, _unmixed_cases, seed, solutions, "unmixed_variance"
    )
    return check_function(
        "the variance of an un-mixed bit sum",
        unmixed_variance,
        reference,
        cases,
        rtol=1e-9,
        mistakes=[(f, hint) for _, f, hint in UNMIXED_VARIANCE_MISTAKES],
        hint="write the un-mixed sum as a sum of one term per user (the prompt's hint); the users are independent, "
        "so their variances add: what is one user's?",
    )

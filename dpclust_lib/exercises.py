"""Checkers for the notebooks' graded exercises.

Each ``check_*`` function takes the student's function (or answer) and tests
it against the library. When the answer is right it prints a short
confirmation (and returns None); when it is not, it raises
:class:`ExerciseError` with what was expected, what came back and a hint.
Randomised code is checked against its exact output distribution, with a
chi-square test (finite outputs) or a Kolmogorov-Smirnov test (Laplace noise),
at a stated family-wise error rate (a correct solution is wrongly rejected at
most that often, for the fixed seeds used here); numbers are checked to a
stated tolerance.

Generic checkers, for any notebook: :func:`check_function` (a function against
a reference on a list of cases, recognising typical wrong answers),
:func:`check_sampler` (draws of a continuous mechanism against its exact CDF),
:func:`check_number` and :func:`check_prediction` (predict-then-run). The
others check one piece of a paper's protocol against the library: Peng et al.
(notebook 01), Zhang et al. (02), Li et al. (04: SuLQ and IDP k-means), then
Zhang & Cheng (03: DPQTk-means), which reuses the Laplace checks of 04.
"""
from __future__ import annotations

import contextlib
import functools
import io
import math
import warnings

import numpy as np
from scipy import stats
from scipy.spatial.distance import pdist

from .cluster.birch import ClusteringFeature, DPBirch, DPBirchPublicTree, NegativeRadiusWarning
from .cluster.birch import cf_sensitivities as library_cf_sensitivities  # the checker's argument has this name
from .cluster.dpqt import DPQTKMeans
from .cluster.kmeans import IDPKMeans, budget_shares, cluster_sums_counts, eug_grid_size, sum_count_sensitivity
from .cluster.sampling_kmodes import _estimates, _tallies, report_distribution, server_estimates, user_reports
from .frequency import LDPFO, Tally, _apply_along_axes, joint_index, joint_records
from .privacy import (grr_matrix, grr_probabilities, hamming_rr_matrix, laplace_mechanism, laplace_scale, oue_pq,
                      sue_pq)

__all__ = [
    "ExerciseError",
    "check_function",
    "check_sampler",
    "check_number",
    "check_prediction",
    "check_grr_perturb",
    "check_oue_perturb",
    "check_ldpfo_estimate",
    "check_hamming_rr_perturb",
    "check_hamming_rr_ldp_level",
    "check_hamming_rr_expected_distance",
    "check_eq9_estimate",
    "check_index_unmix",
    "check_eq9_variance",
    "check_noisy_sums_counts",
    "check_release_scale",
    "check_total_spent",
    "check_idp_initial_centres",
    "check_quadtree_level",
    "check_eug_grid_size",
    "check_dpqt_epsilon_spent",
]

ALPHA = 1e-3  # family-wise false-rejection rate of every statistical check


class ExerciseError(AssertionError):
    """The answer is not right yet; the message says why and gives a hint."""


def _fail(what, expected, got, hint):
    raise ExerciseError(f"{what}\n  expected: {expected}\n  got:      {got}\n  hint:     {hint}")


def _passed(message):
    # Printed, not returned: a check cell shows only this line (several checks in one cell each show theirs).
    print(f"Correct: {message}")


def _short(value, limit=70):
    if isinstance(value, np.ndarray):
        return f"array of shape {value.shape}"
    if isinstance(value, np.random.Generator):
        return "rng"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _call(fn, *args):
    """Call the student's function; its errors come back as an ExerciseError naming the call."""
    try:
        return fn(*args)
    except NotImplementedError:
        raise ExerciseError("the function still raises NotImplementedError: write your solution first") from None
    except ExerciseError:
        raise
    except Exception as exc:
        name = getattr(fn, "__name__", "your function")
        raise ExerciseError(
            f"{name} raised {type(exc).__name__}: {exc}\n  called with: {name}({', '.join(map(_short, args))})\n"
            "  hint:     the traceback above shows the line; check the shapes and the types of the arguments"
        ) from exc


def _copy(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def _close(got, want, rtol, atol=0.0):
    return got.shape == want.shape and np.allclose(got, want, rtol=rtol, atol=atol)


def _as_float(out, name, want_shape):
    """The answer as a float array (a plain number for a one-element answer is fine)."""
    if out is None:
        _fail(f"{name} returned None", f"numbers of shape {want_shape}", None, "did you forget the return statement?")
    try:
        got = np.asarray(out, dtype=float)
    except (TypeError, ValueError):
        _fail(f"{name} did not return numbers", f"numbers of shape {want_shape}", _short(out),
              "return a number or a numpy array")
    if got.shape != want_shape and got.size == int(np.prod(want_shape)) and got.size == 1:
        got = got.reshape(want_shape)  # 1-element arrays and plain numbers are the same answer
    return got


def _diagnose(got, wrong_answers, rtol, default):
    """The hint of the first typical wrong answer that ``got`` matches, else ``default``."""
    for value, hint in wrong_answers:
        value = np.asarray(value, dtype=float)
        if value.shape == got.shape and np.all(np.isfinite(value)) and np.allclose(got, value, rtol=max(rtol, 1e-6)):
            return hint
    return default


def _as_codes(out, n, k, name):
    arr = np.asarray(out)
    if arr.shape != (n,):
        _fail(f"{name} returned the wrong shape", f"({n},), one report per user", arr.shape,
              "return one perturbed value per input value")
    if arr.dtype.kind not in "iu" or arr.min() < 0 or arr.max() >= k:
        _fail(f"{name} returned values outside the domain", f"integers in 0..{k - 1}",
              f"dtype {arr.dtype}, range [{arr.min()}, {arr.max()}]", "reports live in the same domain as inputs")
    return arr


def check_grr_perturb(perturb, k=4, epsilon=1.0, n=20_000, seed=0):
    """``perturb(values, k, epsilon, rng)`` must be k-ary randomized response.

    Chi-square test of the report distribution for every input value against
    the exact one (keep with e^eps/(e^eps+k-1), else any other value uniformly),
    Bonferroni over the k inputs, family-wise alpha = 0.001.
    """
    P = grr_matrix(k, epsilon)
    rng = np.random.default_rng(seed)
    for x in range(k):
        out = _as_codes(_call(perturb, np.full(n, x), k, epsilon, rng), n, k, "perturb")
        observed = np.bincount(out, minlength=k)
        if stats.chisquare(observed, P[x] * n).pvalue < ALPHA / k:
            keep = observed[x] / n
            binary_p = np.exp(epsilon) / (np.exp(epsilon) + 1)
            hint = "each other value should be equally likely"
            if abs(keep - binary_p) < 0.02:
                hint = "p looks like the binary formula e^eps/(e^eps+1); for k values use e^eps/(e^eps+k-1)"
            elif abs(keep - (P[x, x] + (1 - P[x, x]) / k)) < 0.02:
                hint = "when you do not keep the value, draw among the OTHER k-1 values, not all k"
            _fail(f"the reports for input {x} do not follow GRR (chi-square p < {ALPHA / k:.1e})",
                  np.round(P[x], 3).tolist(), np.round(observed / n, 3).tolist(), hint)
    return _passed(f"GRR with k={k}, eps={epsilon}: report distribution matches for every input")


def check_oue_perturb(perturb, k=3, epsilon=1.0, n=30_000, seed=0):
    """``perturb(values, k, epsilon, rng)`` must return OUE bit vectors of shape (n, k).

    The bit of the true value is 1 with p = 1/2, every other bit with
    q = 1/(e^eps + 1), independently: chi-square over all 2^k reports per input,
    Bonferroni over the k inputs, family-wise alpha = 0.001.
    """
    p, q = oue_pq(epsilon)
    rng = np.random.default_rng(seed)
    patterns = 2 ** np.arange(k)[::-1]
    for x in range(k):
        out = np.asarray(_call(perturb, np.full(n, x), k, epsilon, rng))
        if out.shape != (n, k):
            _fail("perturb returned the wrong shape", f"({n}, {k}): k bits per user", out.shape,
                  "one-hot encode the value, then flip each bit")
        if not np.isin(out, [0, 1]).all():
            _fail("perturb returned values other than 0 and 1", "bits", np.unique(out)[:5], "return 0/1 bits")
        rate = out.mean(axis=0)
        bit = np.where(np.arange(k) == x, p, q)
        reports = (np.arange(2 ** k)[:, None] >> np.arange(k)[::-1]) & 1  # every k-bit report, in code order
        exact = np.where(reports == 1, bit, 1 - bit).prod(axis=1)
        observed = np.bincount(out @ patterns, minlength=2 ** k)
        if stats.chisquare(observed, exact * n).pvalue < ALPHA / k:
            hint = "keep the true bit at 1 with p = 1/2 and turn each 0 bit into 1 with q = 1/(e^eps+1)"
            if abs(rate[x] - q) < 0.02 and np.all(np.abs(np.delete(rate, x) - p) < 0.02):
                hint = "p and q look swapped: the TRUE bit is 1 with p = 1/2, the others with q"
            elif abs(rate[x] - np.exp(epsilon / 2) / (np.exp(epsilon / 2) + 1)) < 0.02:
                hint = "these are SUE's probabilities (e^(eps/2)/(e^(eps/2)+1)); OUE uses p = 1/2, q = 1/(e^eps+1)"
            _fail(f"the reports for input {x} do not follow OUE (chi-square p < {ALPHA / k:.1e})",
                  f"bit rates {np.round(bit, 3).tolist()}", f"bit rates {np.round(rate, 3).tolist()}", hint)
    return _passed(f"OUE with k={k}, eps={epsilon}: report distribution matches for every input")


def _grr_inverses(sizes, eps, swap=False):
    """(P_j^T)^{-1} = (I - q J) / (p - q) per attribute (``swap``: the p/q-swapped mistake)."""
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
    """
    rng = np.random.default_rng(seed)
    for sizes, eps in [((2, 2), 1.0), ((3, 2, 3), 0.7), ((4, 3), 2.0), ((2, 2, 2, 2), 0.5)]:
        counts = rng.poisson(20.0, size=sizes).astype(float)
        expected = LDPFO(sizes, eps).estimate(Tally(counts, int(counts.sum())))
        got = np.asarray(_call(estimate, counts.copy(), sizes, eps), dtype=float)
        if got.shape != expected.shape:
            if got.size == expected.size:
                got = got.reshape(expected.shape)
            else:
                _fail(f"wrong shape for domain_sizes={sizes}", expected.shape, got.shape,
                      "return one estimate per cell of the joint domain")
        if np.allclose(got, expected, rtol=rtol, atol=1e-9):
            continue
        hint = "apply the inverse of each attribute's k_j x k_j GRR matrix along that attribute's axis"
        ratio = got / expected
        if np.all(got >= 0) and np.isclose(got.sum(), counts.sum(), rtol=1e-6):
            hint = "this looks post-processed (no negatives); return the RAW unbiased estimate"
        elif np.all(np.isfinite(ratio)) and np.ptp(ratio) < 1e-6:
            hint = f"off by a constant factor ({ratio.flat[0]:.4g}): check the 1/(p - q) scaling of each attribute"
        else:
            hint = _diagnose(got, [
                (_apply_along_axes(counts, _grr_inverses(sizes, eps, swap=True)),
                 "p and q look swapped: p = e^eps/(e^eps+k_j-1) is the probability of KEEPING the value"),
                (_apply_along_axes(counts, [np.linalg.inv(grr_matrix(k, eps * len(sizes))) for k in sizes]),
                 "you used m * eps per attribute; eps is per unit of Hamming distance, so each attribute's GRR "
                 "runs at eps"),
                (_apply_along_axes(counts, [np.linalg.inv(grr_matrix(k, eps / len(sizes))) for k in sizes]),
                 "you used eps / m per attribute; eps is per unit of Hamming distance, so each attribute's GRR "
                 "runs at eps"),
            ], rtol, hint)
        _fail(f"the estimate differs from the unbiased one for domain_sizes={sizes}, eps={eps}",
              np.round(expected.ravel()[:6], 2).tolist(), np.round(got.ravel()[:6], 2).tolist(), hint)
    return _passed("your aggregation equals the Kronecker-structured inverse on every test domain")


# --------------------------------------------------------------------------- generic checkers

def check_function(name, fn, reference, cases, rtol=1e-9, atol=0.0, mistakes=(), hint=""):
    """``fn(*case)`` must equal ``reference(*case)`` for every case, to relative tolerance ``rtol``.

    Parameters
    ----------
    name : str, what the function computes (used in the messages)
    fn : the student's function
    reference : the function that gives the right answer (built from the library)
    cases : list of argument tuples
    rtol, atol : tolerances of ``numpy.allclose``
    mistakes : sequence of (wrong_fn, hint): typical wrong answers. When the answer
        matches ``wrong_fn(*case)``, the message gives that hint.
    hint : the hint when no typical mistake matches
    """
    for case in cases:
        want = np.asarray(reference(*_copy(case)), dtype=float)
        got = _as_float(_call(fn, *_copy(case)), name, want.shape)
        call = f"{getattr(fn, '__name__', 'your function')}{_short(tuple(case), 120)}"
        if got.shape != want.shape:
            _fail(f"{name}: {call} has the wrong shape", want.shape, got.shape,
                  "return one value per cell of the expected answer")
        if _close(got, want, rtol, atol):
            continue
        wrong = [(w(*_copy(case)), h) for w, h in mistakes]
        _fail(f"{name}: {call} is not right (relative tolerance {rtol:g})",
              np.round(want, 6).tolist(), np.round(got, 6).tolist(),
              _diagnose(got, wrong, rtol, hint or "recheck the derivation step by step"))
    return _passed(f"{name} is right on all {len(cases)} cases")


def check_sampler(name, draw, cdf, n=20_000, seed=0, mistakes=(), hint="", alpha=ALPHA):
    """``draw(rng, n)`` must return n independent draws from the distribution with CDF ``cdf``.

    A one-sample Kolmogorov-Smirnov test at ``alpha`` (default 0.001: a correct
    sampler is rejected at most once in a thousand seeds). ``mistakes``: (cdf, hint)
    pairs, typical wrong distributions (a wrong scale, another family); when the
    draws pass the same test against one of them, the message gives that hint.
    """
    x = _as_float(_call(draw, np.random.default_rng(seed), n), name, (n,))
    pvalue = _ks_check(name, x, n, cdf, mistakes, hint, alpha)
    return _passed(f"{name}: {n:,} draws follow the expected distribution (Kolmogorov-Smirnov p = {pvalue:.2g})")


def _ks_check(name, x, n, cdf, mistakes=(), hint="", alpha=ALPHA):
    """The KS test of :func:`check_sampler` on draws ``x``: its p-value, or an ExerciseError with the hint."""
    if x.shape != (n,):
        _fail(f"{name}: wrong shape", f"({n},), one draw each", x.shape, "return n draws as a 1-D array")
    if not np.all(np.isfinite(x)):
        _fail(f"{name}: draws that are not finite", "finite numbers", "NaN or inf", "check for divisions by zero")
    result = stats.kstest(x, cdf)
    if result.pvalue >= alpha:
        return result.pvalue
    hint = next((h for wrong, h in mistakes if stats.kstest(x, wrong).pvalue >= alpha),
                hint or "compare your distribution's family, centre and scale with the mechanism's definition")
    _fail(f"{name}: the draws do not follow the expected distribution (Kolmogorov-Smirnov p < {alpha:g})",
          "a sample passing the test", f"KS statistic {result.statistic:.3f}, quartiles "
          f"{np.round(np.quantile(x, [0.25, 0.5, 0.75]), 3).tolist()}", hint)


def check_number(name, value, expected, rtol=1e-6, hint=""):
    """A derived quantity against its expected value, to relative tolerance ``rtol``."""
    if value is None:
        raise ExerciseError(f"{name}: no answer yet")
    got = np.asarray(value, dtype=float)
    want = np.asarray(expected, dtype=float)
    if got.shape != want.shape or not np.allclose(got, want, rtol=rtol, atol=0):
        _fail(f"{name} is not right (relative tolerance {rtol:g})", np.round(want, 6).tolist(),
              np.round(got, 6).tolist(), hint or "recheck the derivation step by step")
    return _passed(f"{name} = {np.round(got, 6).tolist()}")


def check_prediction(name, prediction, before, after, tolerance=0.0, explanation=""):
    """A predict-then-run answer: did the quantity go "up", "down" or stay "same"?

    ``prediction`` is the answer or a function that returns it. ``before`` and
    ``after`` are the measured values (e.g. a mean over runs); changes within
    ``tolerance`` count as "same".
    """
    if callable(prediction):
        prediction = _call(prediction)
    choices = {"up", "down", "same"}
    if prediction not in choices:
        raise ExerciseError(f"{name}: predict one of {sorted(choices)}, got {prediction!r}")
    before, after = float(before), float(after)
    if not (np.isfinite(before) and np.isfinite(after)):
        raise ExerciseError(f"{name}: the experiment gave {before} -> {after}; it must give finite numbers")
    delta = after - before
    observed = "same" if abs(delta) <= tolerance else ("up" if delta > 0 else "down")
    if observed != prediction:
        _fail(f"{name}: the experiment went the other way", prediction,
              f"{observed} ({before:.4g} -> {after:.4g})",
              explanation or "think about what the change does to the noise")
    return _passed(f"{name}: {before:.4g} -> {after:.4g}, as you predicted ({observed})"
                   + (f". {explanation}" if explanation else ""))


# --------------------------------------------------------------------------- Peng et al. (2021): Hamming-distance RR

def _as_records(out, n, sizes, name):
    arr = np.asarray(out)
    if arr.shape != (n, len(sizes)):
        _fail(f"{name} returned the wrong shape", f"({n}, {len(sizes)}), one perturbed record per user", arr.shape,
              "return an array with the shape of X")
    if arr.dtype.kind not in "iu":
        _fail(f"{name} returned non-integer values", "integer category codes", f"dtype {arr.dtype}",
              "reports are category codes, like the input")
    for j, k in enumerate(sizes):
        if arr[:, j].min() < 0 or arr[:, j].max() >= k:
            _fail(f"{name} returned values outside the domain of attribute {j}", f"codes in 0..{k - 1}",
                  f"range [{arr[:, j].min()}, {arr[:, j].max()}]",
                  f"attribute {j} has its own domain size k_{j} = {k}: draw its replacement among its own "
                  "k_j - 1 other values")
    return arr


def check_hamming_rr_perturb(perturb, domain_sizes=(3, 2, 4), epsilon=0.7, n=20_000, seed=0):
    """``perturb(X, domain_sizes, epsilon, rng)`` must be the Hamming-distance RR of Peng et al. (Eq. 4).

    For three input records (n copies of each), a chi-square test of the
    reports over the whole joint domain against the exact row of
    :func:`~dpclust_lib.privacy.hamming_rr_matrix`, Bonferroni over the three
    records, family-wise alpha = 0.001. Unequal domains on purpose.
    """
    sizes = tuple(int(k) for k in domain_sizes)
    m, cells = len(sizes), math.prod(sizes)
    P = hamming_rr_matrix(sizes, epsilon)
    inputs = joint_records(np.array([0, cells // 2 + 1, cells - 1]), sizes)
    rng = np.random.default_rng(seed)
    level = ALPHA / len(inputs)
    e, k = np.exp(epsilon), np.asarray(sizes)
    correct_keep = e / (e + k - 1)
    for x in inputs:
        out = _as_records(_call(perturb, np.tile(x, (n, 1)), sizes, epsilon, rng), n, sizes, "perturb")
        row = P[joint_index(x[None, :], sizes)[0]]
        observed = np.bincount(joint_index(out, sizes), minlength=cells)
        if stats.chisquare(observed, row * n).pvalue >= level:
            continue
        keep = (out == x).mean(axis=0)
        marginals_ok = all(
            stats.chisquare(np.bincount(out[:, j], minlength=kj), n * np.where(np.arange(kj) == x[j], correct_keep[j],
                                                                            (1 - correct_keep[j]) / (kj - 1))).pvalue
            >= level / m for j, kj in enumerate(sizes))
        em = np.exp(epsilon / m)
        candidates = [
            (correct_keep, "each attribute keeps its value with the right probability, but the other values are not "
                           "equally likely: draw uniformly among the k_j - 1 OTHER values"),
            (np.full(m, e / (e + 1)), "p looks like e^eps/(e^eps+1) for every attribute (the binary formula, or k = 2 "
                                      "for all): attribute j keeps its value with e^eps/(e^eps+k_j-1)"),
            (em / (em + k - 1), "you split eps over the m attributes; eps is per unit of Hamming distance, so every "
                                "attribute's randomized response runs at the full eps"),
            (correct_keep + (1 - correct_keep) / k,
             "when you do not keep the value, draw among the OTHER k_j-1 values, not all k_j"),
        ]
        hint = "Section 3: the mechanism is m independent k_j-ary randomized responses, each at eps"
        if marginals_ok:
            hint = ("every attribute on its own is right, but the attributes are not independent: draw a separate "
                    "keep/replace decision for every attribute (the mechanism factorises, Section 3)")
        else:
            tol = 5 * np.sqrt(0.25 / n) + 0.01
            hint = next((h for c, h in candidates if np.all(np.abs(keep - c) < tol)), hint)
        _fail(f"the reports for record {x.tolist()} do not follow Eq. 4 (chi-square p < {level:.1e})",
              f"keep rates per attribute {np.round(correct_keep, 3).tolist()}",
              f"keep rates per attribute {np.round(keep, 3).tolist()}", hint)
    return _passed(f"Hamming-distance RR on domain {sizes}, eps={epsilon}: the report distribution matches Eq. 4 "
                   "for every input tested")


def _hamming_rr_level(domain_sizes, epsilon):
    """max over x, x', y of ln P[x, y] / P[x', y], by brute force over the library's transition matrix."""
    logP = np.log(hamming_rr_matrix(domain_sizes, epsilon))
    return float(max((logP[i] - logP).max() for i in range(logP.shape[0])))


def _hamming_rr_mean_distance(domain_sizes, epsilon):
    """E[d(x, Y)] from the library's transition matrix (the same for every x; row 0 is taken)."""
    P = hamming_rr_matrix(domain_sizes, epsilon)
    records = joint_records(np.arange(P.shape[0]), domain_sizes)
    return float(P[0] @ (records != records[0]).sum(axis=1))


_HAMMING_CASES = [((3, 2, 3), 1.0), ((2, 2, 2, 2), 0.5), ((4, 7), 2.0), ((5,), 0.3), ((2,) * 6, 1.5), ((3, 5, 2), 0.8)]


def check_hamming_rr_ldp_level(plain_ldp_level):
    """``plain_ldp_level(domain_sizes, epsilon)``: the eps' for which one Hamming-RR report is eps'-LDP.

    Checked against the worst ratio Pr[y | x] / Pr[y | x'] over all pairs and
    outputs of the library's transition matrix, on six domains (relative tolerance 1e-9).
    """
    mistakes = [
        (lambda s, e: e, "eps is the privacy per unit of Hamming distance; how far apart can two records be?"),
        (lambda s, e: (len(s) - 1) * e, "two records can differ in ALL m attributes"),
        (lambda s, e: e * sum(k - 1 for k in s), "the distance counts differing attributes, not differing values"),
        (lambda s, e: e * math.prod(s), "the distance counts differing attributes, not cells of the domain"),
    ]
    return check_function("the plain LDP level of a report", plain_ldp_level, _hamming_rr_level, _HAMMING_CASES,
                          mistakes=mistakes, hint="take the two records whose reports are easiest to tell apart, and "
                                                  "the output y that shows it best")


def check_hamming_rr_expected_distance(expected_distance):
    """``expected_distance(domain_sizes, epsilon)``: E[d(X, Y)], the mean number of attributes a report changes.

    Checked against the exact expectation under the library's transition
    matrix on six domains, equal and unequal (relative tolerance 1e-9).
    """
    def changed(s, e):  # the probability that each attribute changes, for one common k or per attribute
        k = np.asarray(s)
        return (k - 1) / (np.exp(e) + k - 1)
    own_k = "every attribute has its own domain size k_j"
    mistakes = [
        (lambda s, e: np.sum(1 - changed(s, e)), "that is the expected number of attributes the report KEEPS"),
        (lambda s, e: len(s) / (np.exp(e) + 1),
         "the binary formula: attribute j changes with probability (k_j-1)/(e^eps+k_j-1)"),
        (lambda s, e: len(s) * changed(s[0], e), own_k),
        (lambda s, e: len(s) * changed(max(s), e), own_k),
        (lambda s, e: np.sum(changed(s, e / len(s))),
         "eps is per unit of distance: each attribute runs at eps, not eps/m"),
    ]
    return check_function("the expected Hamming distance of a report", expected_distance, _hamming_rr_mean_distance,
                          _HAMMING_CASES, mistakes=mistakes,
                          hint="Section 3: attribute j changes with its own probability; the expectation of a sum is "
                               "the sum of the expectations")


# --------------------------------------------------------------------------- Zhang et al. (2022): sampling LDP k-modes

_TOY_SIZES = (3, 4, 2)
_TOY_CENTRES = np.array([[0, 0, 0], [1, 2, 1], [2, 3, 0]])


def _toy_reports(rng, epsilon, index_epsilon=None, n=3000):
    X = rng.integers(0, _TOY_SIZES, size=(n, len(_TOY_SIZES)))
    return user_reports(X, _TOY_CENTRES, _TOY_SIZES, epsilon, index_epsilon, random_state=rng)


def check_eq9_estimate(estimate, seed=0, rtol=1e-9):
    """``estimate(bit_sums, cluster_sizes, d, epsilon)`` must be Eq. 9 of Zhang et al.

    ``bit_sums`` (K, k_j): per cluster r and value w, the sum of bit w over the
    reports (r, j, .) of one attribute j; ``cluster_sizes`` (K,): |C_r|, the
    reports labelled r. The answer g' (K, k_j) is compared with the library's
    ``server_estimates`` on one round of simulated reports, attribute by
    attribute, at two values of eps (relative tolerance ``rtol``).
    """
    rng = np.random.default_rng(seed)
    d = len(_TOY_SIZES)
    for eps in (0.5, 2.0):
        reports = _toy_reports(rng, eps)
        S, M = _tallies(reports, len(_TOY_CENTRES), _TOY_SIZES)
        N = M.sum(axis=1)
        library = server_estimates(reports, len(_TOY_CENTRES), _TOY_SIZES, eps)
        p, q = oue_pq(eps)
        for j, k in enumerate(_TOY_SIZES):
            s, want = S[:, j, :k], library[j]
            got = _as_float(_call(estimate, s.copy(), N.copy(), d, eps), "estimate", want.shape)
            if got.shape != want.shape:
                _fail("estimate returned the wrong shape", f"{want.shape}: clusters x values of attribute {j}",
                      got.shape, "return one estimate per cluster and value, shaped like bit_sums")
            if _close(got, want, rtol):
                continue
            Nc = N[:, None]
            ps, qs = sue_pq(eps)
            pb = np.exp(eps) / (np.exp(eps) + 1)
            hint = _diagnose(got, [
                ((s - Nc * q) / (p - q), "|C_r|' = |C_r| / d: only about one user in d reports attribute j"),
                ((s - Nc * p / d) / (q - p), "p and q look swapped: the TRUE bit is 1 with p = 1/2, the others with q"),
                (s - Nc * q / d, "the bias is removed, but the estimate is not rescaled: divide by (p - q)"),
                ((s - Nc * q / d) / (p - q) / (Nc / d),
                 "that is the share g'/|C_r|' of Eq. 11; return the count estimate g'"),
                ((s - Nc * qs / d) / (ps - qs), "these are SUE's p and q; OUE uses p = 1/2, q = 1/(e^eps+1)"),
                ((s - Nc * q / d) / (pb - q), "p = e^eps/(e^eps+1) is binary randomized response; OUE keeps a 1 with "
                                             "p = 1/2"),
                ((s - (N * q / d)[None, :]) / (p - q), "|C_r| is subtracted along the wrong axis: cluster r is row r, "
                                                       "so use cluster_sizes[:, None]"),
                (want.T, "rows and columns are transposed: return one row per cluster, one column per value"),
            ], rtol, "g' = (s - |C_r|' q) / (p - q), with p = 1/2, q = 1/(e^eps+1) and |C_r|' = |C_r| / d")
            _fail(f"g' of attribute {j} (eps={eps}) differs from Eq. 9 as the library computes it",
                  np.round(want[0], 2).tolist(), np.round(got[0], 2).tolist(), hint + " (first cluster shown)")
    return _passed("your Eq. 9 equals the library's estimate for every cluster, attribute and value")


def check_index_unmix(unmix, seed=0, rtol=1e-9):
    """``unmix(observed, index_epsilon)`` must undo the K-ary GRR on the cluster index, unbiasedly.

    ``observed`` holds tallies by *reported* label r' on axis 0 (shape (K, ...));
    the answer is the unbiased estimate of the tallies by true cluster r. Checked
    two ways: (1) on exact expectations, E[observed] = P^T tallies with P the
    library's K x K GRR matrix, the answer must give the tallies back, for K = 2,
    3, 5; (2) Eq. 9 on the un-mixed tallies of one round of simulated reports
    must equal the library's ``server_estimates(..., index_epsilon=...)``.
    Relative tolerance ``rtol``.
    """
    rng = np.random.default_rng(seed)
    for K, ie in [(2, 1.0), (3, 0.5), (5, 2.0)]:
        truth = rng.poisson(50.0, size=(K, 4, 3)).astype(float)
        P = grr_matrix(K, ie)
        mixed = np.tensordot(P.T, truth, axes=1)  # E[observed tallies]
        got = _as_float(_call(unmix, mixed.copy(), ie), "unmix", truth.shape)
        if got.shape != truth.shape:
            _fail("unmix returned the wrong shape", f"{truth.shape}, the shape of observed", got.shape,
                  "return tallies shaped like the input: one row per cluster")
        if _close(got, truth, rtol, atol=1e-9):
            continue
        p, q = grr_probabilities(K, ie)

        def inverse(p_, q_, axis=0):
            return (mixed - q_ * mixed.sum(axis=axis, keepdims=True)) / (p_ - q_)
        pk1 = grr_probabilities(K + 1, ie)
        pkm = grr_probabilities(K - 1, ie) if K > 2 else (np.nan, np.nan)
        hint = _diagnose(got, [
            (inverse(q, p), "p and q look swapped: the true label is KEPT with p = e^eps/(e^eps+K-1)"),
            (mixed - q * mixed.sum(axis=0, keepdims=True),
             "the leaked share is removed but not rescaled: divide by (p - q)"),
            (inverse(p, q, axis=-1), "you summed over the wrong axis: the labels are on axis 0"),
            (inverse(p, q, axis=1), "you summed over the wrong axis: the labels are on axis 0"),
            (inverse(*pk1), "off by one in the domain: GRR over K labels has q = 1/(e^eps+K-1), K = observed.shape[0]"),
            (inverse(*pkm), "off by one in the domain: GRR over K labels has q = 1/(e^eps+K-1), K = observed.shape[0]"),
            (inverse(*oue_pq(ie)), "the index goes through K-ary GRR, not OUE: p = e^eps/(e^eps+K-1)"),
            (np.tensordot(P.T, mixed, axes=1), "that mixes the labels once more (P^T); apply its inverse"),
            (np.tensordot(np.linalg.inv(P), mixed, axes=1), "that is P^{-1} applied along the wrong side; "
                                                             "E[observed] = P^T truth, so apply (P^T)^{-1}"),
        ], rtol, "E[observed] = P^T truth with P the K x K GRR matrix; (P^T)^{-1} = (I - q J) / (p - q)")
        _fail(f"unmix does not give back the clear-index tallies (K={K}, index_epsilon={ie})",
              np.round(truth[:, 0, 0], 2).tolist(), np.round(got[:, 0, 0], 2).tolist(),
              hint + " (tallies[:, 0, 0] shown)")
    for eps, ie in [(1.0, 0.5), (2.0, 1.5)]:
        reports = _toy_reports(rng, eps, ie)
        K = len(_TOY_CENTRES)
        S, M = _tallies(reports, K, _TOY_SIZES)
        S_u = _as_float(_call(unmix, S.copy(), ie), "unmix", S.shape)
        M_u = _as_float(_call(unmix, M.copy(), ie), "unmix", M.shape)
        ours = _estimates(S_u, M_u, _TOY_SIZES, eps, None)
        library = server_estimates(reports, K, _TOY_SIZES, eps, index_epsilon=ie)
        for j, (a, b) in enumerate(zip(ours, library)):
            if not _close(np.asarray(a), b, rtol, atol=1e-9):
                _fail(f"with your un-mixing, Eq. 9 differs from the library's server side (attribute {j})",
                      np.round(b[0], 2).tolist(), np.round(a[0], 2).tolist(),
                      "unmix must work for tallies of any shape with the labels on axis 0, e.g. (K, d) and (K, d, w)")
    return _passed("your un-mixing inverts the GRR on the index exactly, and the server's estimates match the "
                   "library's")


def _eq9_variance_exact(g, N, d, epsilon, reporters="expected"):
    """Var[g'] from the library's exact report distribution: a sum over independent users.

    User i adds Y_i = B_i - c q to (p - q) g', with B_i the bit for value w of
    attribute j it sends (0 if it reports another attribute) and c = 1/d
    (``reporters="expected"``: the server subtracts |C_r| q / d) or c = 1 if
    user i reports j, else 0 (``"observed"``: the server subtracts n_rj q).
    """
    d = int(d)
    sizes, centre = (2,) * d, np.zeros((1, d), dtype=np.int64)
    p, q = oue_pq(epsilon)

    def moments(record):  # E[Y], E[Y^2] for one user, value w = 1 of attribute 0
        pmf = report_distribution(np.asarray(record), centre, sizes, epsilon)
        m1 = m2 = 0.0
        for (_, j, bits), pr in pmf.items():
            bit = float(j == 0 and bits[1] == 1)
            y = bit - (float(j == 0) if reporters == "observed" else 1.0 / d) * q
            m1, m2 = m1 + pr * y, m2 + pr * y * y
        return m1, m2
    holder = np.zeros(d, dtype=np.int64)
    holder[0] = 1
    (h1, h2), (o1, o2) = moments(holder), moments(np.zeros(d, dtype=np.int64))
    return (g * (h2 - h1 ** 2) + (N - g) * (o2 - o1 ** 2)) / (p - q) ** 2


def check_eq9_variance(variance, reporters="expected"):
    """``variance(g, N, d, epsilon)``: the exact variance of Eq. 9's g' (Theorem 3, corrected).

    ``g`` users of a cluster of ``N`` hold the value, ``d`` attributes, the bits
    at ``epsilon``. ``reporters`` as in ``server_estimates``: "expected" (the
    paper's |C_r|' = |C_r|/d) or "observed" (the number of reports (r, j)
    received). Checked against the variance computed from the library's exact
    report distribution (``report_distribution``) on five cases (relative
    tolerance 1e-9).
    """
    if reporters not in ("expected", "observed"):
        raise ValueError(f"reporters must be 'expected' or 'observed', got reporters={reporters!r}")

    def parts(g, N, d, e):
        p, q = oue_pq(e)
        return p, q, (p - q) ** 2

    def plain_oue(g, N, d, e):  # OUE over all N users, as if every user reported attribute j
        p, q, s2 = parts(g, N, d, e)
        return (g * p * (1 - p) + (N - g) * q * (1 - q)) / s2

    def sampled(g, N, d, e, squared=True):  # each bit Bernoulli(p/d) or Bernoulli(q/d)
        p, q, s2 = parts(g, N, d, e)
        var_s = g * p / d * (1 - p / d) + (N - g) * q / d * (1 - q / d)
        return var_s / s2 if squared else var_s

    def eq12(g, N, d, e):
        p, q, s2 = parts(g, N, d, e)
        return (N * p * (1 - p) / d + N * (1 - 1 / d) * q * (1 - q)) / s2

    cases = [(40, 400, 6, 1.0), (0, 1000, 2, 0.5), (250, 1000, 4, 2.0), (1000, 1000, 3, 0.1), (7011, 11372, 6, 1.0)]
    if reporters == "expected":
        mistakes = [
            (eq12, "that is Eq. 12 as printed: the OUE variance of a count whose true value is N/d. Here 1/d is the "
                   "chance that a user reports attribute j at all"),
            (plain_oue, "that is plain OUE over all N users; only a 1/d share reports attribute j, so a holder's "
                        "bit is Bernoulli(p/d)"),
            (lambda *a: plain_oue(*a) / a[2],
             "p(1-p)/d is the variance of a reporter's bit times 1/d; the bit the server receives from a user is "
             "Bernoulli(p/d), with variance (p/d)(1 - p/d)"),
            (lambda *a: sampled(*a, squared=False),
             "that is Var[s], the variance of the bit sum; g' = (s - |C_r|' q)/(p - q), so divide by (p - q)^2"),
            (lambda *a: sampled(*a, squared=False) / (parts(*a)[0] - parts(*a)[1]),
             "Var[s / c] = Var[s] / c^2: divide by (p - q) squared"),
        ]
        hint = ("a user's bit at position w of attribute j is Bernoulli(p/d) if it holds w, Bernoulli(q/d) if "
                "not, independently across users")
    else:
        mistakes = [
            (lambda *a: plain_oue(*a) / a[2],
             "that is the variance given WHO reports attribute j (about g/d holders among N/d reporters). Which "
             "users report j is random too: add the variance that comes from the number of holders among the "
             "reporters"),
            (sampled, "that is the variance with the expected number of reporters |C_r|/d; with the observed n_rj "
                      "the subtracted term n_rj q moves together with the bit sum"),
            (plain_oue, "that is plain OUE over all N users; only a 1/d share reports attribute j"),
        ]
        hint = ("write (p - q) g' = sum over the users of R_i (b_i - q), with R_i ~ Bernoulli(1/d) whether user i "
                "reports j, and take the variance of one term")
    return check_function(f"the variance of g' ({reporters} reporters)", variance,
                          lambda *a: _eq9_variance_exact(*a, reporters=reporters), cases, mistakes=mistakes, hint=hint)


# --------------------------------------------------------------------------- Li et al. (2013): SuLQ and IDP k-means

def _laplace(scale):
    return stats.laplace(scale=scale).cdf


def _pair(out, name, first, second):
    """The student's (a, b) answer as two float arrays of the given shapes."""
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        _fail(f"{name} must return two arrays", f"({first[0]}, {second[0]}) of shapes {first[1]} and {second[1]}",
              _short(out), f"end with `return {first[0]}, {second[0]}`")
    a, b = (_as_float(value, name, shape) for value, (_, shape) in zip(out, (first, second)))
    for value, (what, shape) in ((a, first), (b, second)):
        if value.shape != shape:
            _fail(f"{name}: {what} has the wrong shape", shape, value.shape,
                  "one row per cluster" if len(shape) == 2 else "one value per cluster (or node)")
    return a, b


def _same_columns(noise):
    """True when two columns of ``noise`` hold the same draws (one draw reused across entries)."""
    cols = noise.shape[1]
    return any(np.mean(noise[:, i] == noise[:, j]) > 0.5 for i in range(cols) for j in range(i + 1, cols))


def check_noisy_sums_counts(noisy_sums_counts, epsilon=0.8, n_features=2, n_clusters=3000, seed=0):
    """``noisy_sums_counts(X, labels, n_clusters, epsilon, rng)``: one SuLQ release on [0, 1]^d.

    Must return (noisy sums (K, d), noisy counts (K,)): every entry of the
    exact per-cluster sums and counts plus its own Lap((d + 1) / epsilon).
    Checked on K = ``n_clusters`` clusters of random records in [0, 1]^d:
    (1) a Kolmogorov-Smirnov test of the sums' noise and one of the counts'
    noise against Lap((d + 1) / epsilon), at alpha = 0.0005 each (family-wise
    0.001), naming typical wrong scales; (2) with the noise drawn in one call of
    shape (K, d + 1) as prescribed, the release must equal the library's
    (:func:`~dpclust_lib.cluster.kmeans.noisy_centres` draws it that way) for the
    same seed, to relative tolerance 1e-9.
    """
    d, K = n_features, n_clusters
    data_rng = np.random.default_rng([seed, 404])
    X = data_rng.random((4 * K, d))
    labels = data_rng.integers(0, K, size=4 * K)
    sums, counts = cluster_sums_counts(X, labels, K, np.zeros(d), np.ones(d))
    name = "noisy_sums_counts"
    out = _call(noisy_sums_counts, X.copy(), labels.copy(), K, epsilon, np.random.default_rng(seed))
    got_sums, got_counts = _pair(out, name, ("noisy_sums", (K, d)), ("noisy_counts", (K,)))
    noise = np.column_stack([got_sums - sums, got_counts - counts])
    for part, column, other in (("counts", noise[:, d], "sums"), ("sums", noise[:, :d], "counts")):
        if np.all(np.abs(column) < 1e-12):
            _fail(f"the {part} came back exact", f"the {part} plus Laplace noise", f"the exact {part}",
                  f"noise on the {other} but not on the {part} is not private: one record changes its cluster's "
                  "count by 1 AND its sum by up to d, so both are released with noise")
    if _same_columns(noise):
        _fail("the same noise value in several entries of a cluster", "an independent draw per entry",
              "one draw shared across entries", "every sum coordinate and every count gets its own Laplace draw")
    b = laplace_scale(sum_count_sensitivity(d), epsilon)
    level = ALPHA / 2
    sum_noise, count_noise = noise[:, :d].ravel(), noise[:, d]
    right = all(stats.kstest(x, _laplace(b)).pvalue >= level for x in (sum_noise, count_noise))
    if not right and (stats.kstest(sum_noise, _laplace(d / epsilon)).pvalue >= level
                      and stats.kstest(count_noise, _laplace(1 / epsilon)).pvalue >= level):
        _fail("the sums and the counts each got their own sensitivity at the whole epsilon",
              f"Lap((d + 1)/eps) = Lap({b:g}) on every entry", "Lap(d/eps) on the sums, Lap(1/eps) on the counts",
              "each of the two releases is eps-DP, so together they are 2 eps-DP (sequential composition). "
              "Release the vector (sums, counts) at once: its L1 sensitivity is d + 1")
    mistakes = [
        (_laplace(d / epsilon), "Laplace scale d/eps: the sensitivity is d + 1, not d; adding a record changes its "
                                "cluster's count by 1 as well as its sum by up to d"),
        (_laplace(1 / epsilon), "Laplace scale 1/eps: 1 is the sensitivity of a count alone; a record in [0, 1]^d "
                                "changes the sum by up to d in L1, so the vector (sums, counts) has d + 1"),
        (_laplace(epsilon / (d + 1)), "the Laplace scale is sensitivity / eps = (d + 1)/eps, not eps/(d + 1)"),
        (stats.norm(scale=b).cdf, "that looks Gaussian; the mechanism adds Laplace noise (rng.laplace)"),
    ]
    hint = f"every entry is exact value + Lap((d + 1)/eps) = Lap({b:g}); check the exact sums and counts too"
    _ks_check("the noise of the sums", sum_noise, sum_noise.size, _laplace(b), mistakes, hint, level)
    _ks_check("the noise of the counts", count_noise, K, _laplace(b), mistakes, hint, level)
    library = laplace_mechanism(np.column_stack([sums, counts]), sum_count_sensitivity(d), epsilon,
                                np.random.default_rng(seed))
    got = np.column_stack([got_sums, got_counts])
    if not _close(got, library, 1e-9, atol=1e-9):
        lib_noise = library - np.column_stack([sums, counts])
        hint = ("the noise has the right distribution, but not the prescribed layout: draw it in ONE call, "
                "rng.laplace(0.0, b, size=(K, d + 1)); row g holds the noise of cluster g's d sums, then of its count")
        if _close(noise.T.ravel(), lib_noise.ravel(), 1e-9, atol=1e-9):
            hint = "you drew the noise with shape (d + 1, K); draw shape (K, d + 1): one row per cluster"
        _fail("the release differs from the library's for the same seed", np.round(library[0], 4).tolist(),
              np.round(got[0], 4).tolist(), hint + " (cluster 0 shown)")
    return _passed(f"every sum and count carries its own Lap((d + 1)/eps) = Lap({b:g}) (d = {d}, eps = {epsilon}), "
                   "and the release equals the library's for the same seed")


def _share(schedule, epsilon, n_releases, t, halving_shift=0):
    return epsilon / n_releases if schedule == "fixed" else epsilon / 2.0 ** (t + halving_shift)


def _release_scale(n_features, epsilon, n_releases, t, schedule):
    """The library's Laplace scale of release t (1-based)."""
    return laplace_scale(sum_count_sensitivity(n_features), budget_shares(schedule, epsilon, n_releases)[t - 1])


_SCALE_CASES = [(4, 1.0, 3, 1, "fixed"), (10, 0.4, 5, 3, "fixed"), (4, 1.0, 3, 1, "halving"),
                (10, 0.4, 5, 5, "halving"), (2, 0.05, 4, 2, "halving"), (7, 6.0, 10, 10, "fixed")]


def check_release_scale(release_scale):
    """``release_scale(n_features, epsilon, n_releases, t, schedule)``: the Laplace scale of release t.

    Release t (1-based) of N = ``n_releases`` noisy (sum, count) releases on
    [0, 1]^d, under ``schedule`` "fixed" or "halving". Checked against the
    library (:func:`sum_count_sensitivity` / :func:`budget_shares`) on six cases
    (relative tolerance 1e-9).
    """
    halving_hint = ("release t of the halving schedule gets eps/2^t: the first spends half of eps, each next one "
                    "half of what is left")
    mistakes = [
        (lambda d, e, N, t, s: d / _share(s, e, N, t), "the sensitivity is d + 1, not d: the count changes by 1 too"),
        (lambda d, e, N, t, s: 1 / _share(s, e, N, t), "1 is the count's sensitivity alone; the sums add d"),
        (lambda d, e, N, t, s: (d + 1) / e, "the N releases share eps: each gets eps/N (fixed) or eps/2^t (halving)"),
        (lambda d, e, N, t, s: (d + 1) / (e * N) if s == "fixed" else np.nan,
         "each of the N releases gets eps/N, so its scale is (d + 1)/(eps/N) = (d + 1) N/eps"),
        (lambda d, e, N, t, s: _share(s, e, N, t) / (d + 1), "the Laplace scale is sensitivity / budget, not the "
                                                             "other way round"),
        (lambda d, e, N, t, s: (d + 1) / _share(s, e, N, t, -1), halving_hint),
        (lambda d, e, N, t, s: (d + 1) / _share(s, e, N, t, +1), halving_hint),
    ]
    return check_function("the Laplace scale of release t", release_scale, _release_scale, _SCALE_CASES,
                          mistakes=mistakes, hint="scale = sensitivity / budget of that release")


def check_total_spent(total_spent):
    """``total_spent(epsilon, n_releases, schedule)``: the epsilon that N releases spend in all.

    Checked against the sum of the library's :func:`budget_shares` (sequential
    composition) on five cases (relative tolerance 1e-9).
    """
    mistakes = [
        (lambda e, N, s: e, "the halving schedule never spends all of eps: eps/2 + eps/4 + ... + eps/2^N = "
                            "eps (1 - 2^-N)"),
        (lambda e, N, s: N * e, "the N releases get eps/N each, not eps each"),
        (lambda e, N, s: e if s == "fixed" else e * (1 - 2.0 ** -(N + 1)), "off by one: sum eps/2^t for t = 1..N"),
        (lambda e, N, s: e if s == "fixed" else e * (1 - 2.0 ** -(N - 1)), "off by one: sum eps/2^t for t = 1..N"),
        (lambda e, N, s: e if s == "fixed" else e / 2.0 ** N, "that is the budget of the LAST release; sequential "
                                                              "composition adds them all up"),
    ]
    cases = [(1.0, 5, "fixed"), (1.0, 5, "halving"), (0.4, 1, "halving"), (6.0, 10, "halving"), (0.05, 3, "fixed")]
    return check_function("the total epsilon spent", total_spent,
                          lambda e, N, s: float(sum(budget_shares(s, e, N))), cases, mistakes=mistakes,
                          hint="sequential composition: the budgets of the releases add up")


def _idp_data(case, seed):
    n, d, K, _ = case
    rng = np.random.default_rng([seed, 42, n])
    means = rng.uniform(0.2, 0.8, size=(K, d))
    return np.clip(means[rng.integers(0, K, n)] + rng.normal(0.0, 0.07, size=(n, d)), 0.0, 1.0)


def check_idp_initial_centres(idp_initial_centres, seed=0):
    """``idp_initial_centres(X, n_clusters, epsilon, rng)``: the initial centres of IDP k-means on [0, 1]^d.

    The prescribed draws (the library's order): the part of every record,
    ``rng.integers(0, K, size=n)``; the fallback centres,
    ``rng.uniform(0, 1, size=(K, d))``; the noise of the (sum, count) release of
    the K parts, one call of shape (K, d + 1). A part whose noisy count is below
    1 takes its fallback centre; the others noisy sum / noisy count, projected
    onto [0, 1]^d. Compared with ``IDPKMeans(..., max_iter=1).initial_centers_``
    for the same seed on three data sets (one with 200 parts of about 5
    records, whose noisy counts fall below 0 and between 0 and 1), to relative tolerance 1e-9.
    """
    cases = [(300, 3, 3, 1.0), (1000, 2, 200, 0.5), (1000, 4, 5, 5.0)]
    for case in cases:
        n, d, K, eps = case
        X = _idp_data(case, seed)
        want = IDPKMeans(K, epsilon=eps, max_iter=1, schedule="fixed", random_state=np.random.default_rng(seed),
                         bounds=(0.0, 1.0)).fit(X).initial_centers_
        got = _as_float(_call(idp_initial_centres, X.copy(), K, eps, np.random.default_rng(seed)),
                        "idp_initial_centres", want.shape)
        if got.shape != want.shape:
            _fail("idp_initial_centres returned the wrong shape", f"{want.shape}: one centre per part", got.shape,
                  "return a (K, d) array")
        if _close(got, want, 1e-9, atol=1e-12):
            continue
        rng = np.random.default_rng(seed)
        parts, fallback, z = rng.integers(0, K, size=n), rng.uniform(0, 1, size=(K, d)), rng.laplace(0, 1, (K, d + 1))
        rng = np.random.default_rng(seed)
        order_fallback, order_z = rng.uniform(0, 1, size=(K, d)), rng.laplace(0, 1, (K, d + 1))

        def variant(scale=(d + 1) / eps, labels=parts, fb=fallback, noise=z, keep=lambda c: c >= 1, clip=True,
                    denominator="noisy"):
            s, c = cluster_sums_counts(X, labels, K, np.zeros(d), np.ones(d))
            noisy_s, noisy_c = s + scale * noise[:, :d], c + scale * noise[:, d]
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = noisy_s / (noisy_c if denominator == "noisy" else c)[:, None]
            out = np.where(keep(noisy_c)[:, None], ratio, fb)
            return np.clip(out, 0.0, 1.0) if clip else out
        order = (np.arange(n) * K) // n
        hint = _diagnose(got, [
            (variant(scale=d / eps), "the sensitivity is d + 1 (sums AND count), not d"),
            (variant(scale=1 / eps), "the sensitivity is d + 1 (sums AND count), not 1"),
            (variant(denominator="true"), "divide by the NOISY count; the true count is private"),
            (variant(keep=lambda c: c > 0), "a part whose noisy count is below 1 (not only below 0) takes its "
                                            "fallback centre"),
            (variant(keep=lambda c: np.ones_like(c, dtype=bool)), "a part whose noisy count is below 1 takes its "
                                                                   "fallback centre"),
            (variant(clip=False), "project the centres onto [0, 1]^d (np.clip): a noisy ratio can leave the domain"),
            (variant(labels=order, fb=order_fallback, noise=order_z),
             "the parts are K contiguous blocks of the file: draw each record's part at random, "
             "rng.integers(0, K, size=n). Blocks depend on how the file is sorted, and one added record moves up "
             "to K - 1 others between blocks"),
        ], 1e-9, "follow the prescribed order of draws (parts, fallback centres, then the noise of the release) and "
                 "compare with the listing of Sec. 3")
        _fail(f"the initial centres differ from IDPKMeans' (n={n}, d={d}, K={K}, eps={eps})",
              np.round(want[0], 4).tolist(), np.round(got[0], 4).tolist(), hint + " (first centre shown)")
    return _passed("your initial centres equal IDPKMeans' for the same seed on every test data set")


# --------------------------------------------------------------------------- Zhang & Cheng (2021): DPQTk-means

def check_quadtree_level(release_level, epsilon_tree=0.6, max_height=4, threshold=10.0, n_nodes=20_000, seed=0):
    """``release_level(counts, epsilon_tree, max_height, threshold, rng)``: one level of the DP quadtree.

    Must return (noisy counts, split): every node's count plus its own
    Lap(max_height / epsilon_tree) (the level's share epsilon_tree / max_height,
    sensitivity 1 over disjoint cells), and split = noisy count > threshold, as
    :func:`~dpclust_lib.cluster.dpqt.build_dp_quadtree` does. The noise is
    checked by a Kolmogorov-Smirnov test at alpha = 0.001 over ``n_nodes``
    nodes, naming typical wrong scales; the split rule exactly.
    """
    counts = np.random.default_rng([seed, 303]).integers(0, 40, size=n_nodes).astype(float)
    name = "release_level"
    out = _call(release_level, counts.copy(), epsilon_tree, max_height, threshold, np.random.default_rng(seed))
    noisy, split = _pair(out, name, ("noisy_counts", (n_nodes,)), ("split", (n_nodes,)))
    noise = noisy - counts
    if np.all(np.abs(noise) < 1e-12):
        _fail("the counts came back exact", "count + Laplace noise for every node", "the exact counts",
              "the split decisions are released (they shape the tree), so they must come from noisy counts")
    if np.ptp(noise) == 0:
        _fail("every node got the same noise", "an independent draw per node", "one draw for the whole level",
              "draw one Laplace value per node: size=len(counts)")
    b = max_height / epsilon_tree
    mistakes = [
        (_laplace(1 / epsilon_tree), "every level gets epsilon_tree / maxH, not all of epsilon_tree: the maxH "
                                     "levels run one after the other on the same data (sequential composition)"),
        (_laplace((max_height + 1) / epsilon_tree), "off by one in the depth: counts are released at depths "
                                                    "0, ..., maxH - 1, that is maxH levels (a node at depth maxH "
                                                    "stops whatever its count), so each gets epsilon_tree / maxH"),
        (_laplace((max_height - 1) / epsilon_tree), "off by one in the depth: depths 0, ..., maxH - 1 are maxH "
                                                    "levels, so each gets epsilon_tree / maxH"),
        (_laplace(1 / (epsilon_tree * max_height)), "the scale is sensitivity / budget = 1 / (epsilon_tree / maxH) "
                                                    "= maxH / epsilon_tree"),
        (_laplace(2 * max_height / epsilon_tree), "the nodes of one level are disjoint cells, so one record "
                                                  "changes one count by 1: the level's sensitivity is 1"),
    ]
    _ks_check("the noise of the counts", noise, n_nodes, _laplace(b), mistakes,
              f"each count gets Lap(maxH / epsilon_tree) = Lap({b:g})")
    want = noisy > threshold
    as_bool = split.astype(bool)
    if not (np.isin(split, [0, 1]).all() and np.array_equal(as_bool, want)):
        hint = _diagnose(split, [
            (counts > threshold, "the split is decided on the TRUE count; it must use the noisy count, or the tree's "
                                 "shape leaks the data outside the budget"),
            (noisy <= threshold, "inverted: a node splits when its noisy count EXCEEDS the threshold (Alg. 2 stops "
                                 "if NoisyCount <= T)"),
            (noisy >= threshold, "a node splits when its noisy count exceeds T (strictly)"),
        ], 1e-9, "split = noisy count > threshold, one boolean per node")
        _fail("the split decisions are not right", f"{int(want.sum())} of {n_nodes} nodes split",
              f"{int(as_bool.sum())} split", hint)
    return _passed(f"every node's count carries Lap(maxH / epsilon_tree) = Lap({b:g}), and a node splits when its "
                   "noisy count exceeds T")


def check_eug_grid_size(cells_per_dim):
    """``cells_per_dim(n, epsilon, n_features)``: m of Su et al.'s grid, as :func:`eug_grid_size` computes it.

    M = (N epsilon / 10)^(2d / (d + 2)) cells in all, m = M^(1/d) per dimension,
    rounded to the nearest integer, at least 1. Seven cases (relative tolerance 1e-9).
    """
    def raw(n, e, d, theta=10.0):
        return (n * e / theta) ** (2.0 / (d + 2))
    cases = [(10_000, 0.1, 2), (6_500, 0.01, 2), (100, 0.01, 2), (19_020, 0.5, 10), (1_000, 1.0, 1),
             (5_000, 0.2, 3), (100_000, 1.0, 2)]
    rounding = "round to the nearest integer (2.55 -> 3), as the library does"
    mistakes = [
        (lambda n, e, d: max(1, math.floor(raw(n, e, d) ** d + 0.5)),
         "that is M, the number of cells in all; each of the d dimensions gets m = M^(1/d)"),
        (lambda n, e, d: raw(n, e, d), "a number of cells is an integer: round to the nearest, at least 1"),
        (lambda n, e, d: max(1, math.floor(raw(n, e, d))), rounding),
        (lambda n, e, d: max(1, math.ceil(raw(n, e, d))), rounding),
        (lambda n, e, d: math.floor(raw(n, e, d) + 0.5), "a grid has at least one cell per dimension, even when "
                                                         "N eps / 10 is below 1"),
        (lambda n, e, d: max(1, math.floor(raw(n, e, d, 1.0) + 0.5)), "theta = 10 is part of the formula: "
                                                                      "(N eps / 10)"),
        (lambda n, e, d: max(1, math.floor((n * e / 10) ** (2.0 / d) + 0.5)),
         "M^(1/d) = (N eps / 10)^(2d/(d + 2) / d) = (N eps / 10)^(2/(d + 2))"),
    ]
    return check_function("the number of grid cells per dimension", cells_per_dim, eug_grid_size, cases,
                          mistakes=mistakes, hint="m = M^(1/d), rounded to the nearest integer, at least 1")


def _dpqt_cases(seed=0):
    """{(epsilon, gamma, max_height, levels_released): epsilon_spent_} of DPQTKMeans fits stopping at various depths."""
    X = np.random.default_rng([seed, 330]).random((400, 2))
    settings = [(1.0, 0.3, 4, 2.0), (0.5, 0.5, 3, 1e9), (2.0, 0.3, 6, 20.0), (0.1, 0.2, 2, 0.0), (5.0, 0.7, 7, 3.0)]
    out = {}
    for eps, gamma, height, threshold in settings:
        est = DPQTKMeans(2, epsilon=eps, gamma=gamma, max_height=height, threshold=threshold, random_state=seed, bounds=(0.0, 1.0), max_iter=5).fit(X)
        out[(eps, gamma, height, est.tree_.levels_released)] = est.epsilon_spent_
    return out


def check_dpqt_epsilon_spent(epsilon_spent, seed=0):
    """``epsilon_spent(epsilon, gamma, max_height, levels_released)``: what a DPQTk-means fit spends.

    Checked against ``epsilon_spent_`` of the library's DPQTKMeans on five fits
    whose trees release 1 to ``max_height`` levels (relative tolerance 1e-9).
    """
    spent = _dpqt_cases(seed)
    mistakes = [
        (lambda e, g, h, L: e, "a level releases counts only if it has nodes: when no node of depth h splits, the "
                               "deeper levels release nothing and spend nothing"),
        (lambda e, g, h, L: L * g * e + (1 - g) * e, "each level gets epsilon_1 / maxH, not all of epsilon_1 = "
                                                     "gamma eps"),
        (lambda e, g, h, L: (L + 1) * g * e / h + (1 - g) * e, "off by one: levels_released already counts every "
                                                               "released level, the root's included"),
        (lambda e, g, h, L: (L - 1) * g * e / h + (1 - g) * e, "off by one: levels_released already counts every "
                                                               "released level, the root's included"),
        (lambda e, g, h, L: L * g * e / h, "the leaf counts spend epsilon_2 = (1 - gamma) eps as well"),
        (lambda e, g, h, L: g * e + L * (1 - g) * e / h, "gamma eps is the TREE's share; the leaf counts get "
                                                         "(1 - gamma) eps"),
    ]
    return check_function("the epsilon a DPQTk-means fit spends", epsilon_spent, lambda *case: spent[case],
                          list(spent), mistakes=mistakes,
                          hint="add up the budgets of the releases: one per released level, then the leaves")

# =========================================================================== Wang et al.: DPBIRCH (notebook 05)
__all__ += [
    "check_clustering_feature",
    "check_dpbirch_noisy_update",
    "check_cf_sensitivities",
    "check_dpbirch_insertion_epsilon",
    "check_public_tree_leaf_noise",
]


def _quietly(check, *args, **kwargs):
    """Run a checker without its confirmation line (the caller prints one for all its parts)."""
    with contextlib.redirect_stdout(io.StringIO()):
        check(*args, **kwargs)


def _fresh(value):
    """A copy of the arrays in ``value`` (a Generator is passed on as it is: its draws must advance)."""
    if isinstance(value, (tuple, list)):
        return type(value)(_fresh(v) for v in value)
    return value.copy() if isinstance(value, np.ndarray) else value


def _same(a, b):
    if isinstance(a, (tuple, list)):
        return isinstance(b, (tuple, list)) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.random.Generator):
        return True
    return np.array_equal(np.asarray(a), np.asarray(b))


def _cf(X):
    """The library's CF of the rows of X, as a tuple (n, ls, ss)."""
    cf = ClusteringFeature.of(X)
    return cf.n, cf.ls, cf.ss


def _cf_of_library(cf):
    return cf.n, cf.ls, cf.ss


def _flat(cf):
    n, ls, ss = cf
    return np.concatenate([[float(n)], np.ravel(ls), [float(ss)]])


def _flat_parts(n, ls, ss):
    return _flat((n, ls, ss))


def _cf_flat(out, name):
    """The student's CF (n, ls, ss) as one flat array [n, ls_1, ..., ls_d, ss]; N and SS must be numbers."""
    if isinstance(out, ClusteringFeature):
        out = (out.n, out.ls, out.ss)
    if out is None:
        _fail(f"{name} returned None", "a CF (n, ls, ss)", None, "did you forget the return statement?")
    if not isinstance(out, (tuple, list)) or len(out) != 3:
        _fail(f"{name} did not return a CF", "a tuple (n, ls, ss)", _short(out),
              "return the three parts as a tuple: n (a number), ls (an array of d numbers), ss (a number)")
    try:
        n, ls, ss = (np.asarray(part, dtype=float) for part in out)
    except (TypeError, ValueError):
        _fail(f"{name} did not return numbers", "a tuple (n, ls, ss) of numbers", _short(out),
              "n and ss are numbers, ls a numpy array")
    if ss.size != 1:
        _fail(f"{name}: SS is not a number", "SS = the sum of the squared norms ||x||^2 of the points: one number",
              f"SS of shape {ss.shape}", "SS is one number per CF (the notebook's and scikit-learn's convention): "
                                         "sum the squares over the coordinates as well as over the points")
    if n.size != 1:
        _fail(f"{name}: N is not a number", "N = the number of points", f"N of shape {n.shape}",
              "N counts the points: one number")
    return np.concatenate([n.ravel(), ls.ravel(), ss.ravel()])


def _cf_valued(fn, name):
    """``fn`` as a function returning a flat CF; it works on copies, and changing an argument is an error."""
    @functools.wraps(fn)
    def flat(*args):
        given = _fresh(args)
        out = fn(*given)
        if not _same(given, args):
            _fail(f"{name} changed its arguments", "the CFs it was given, unchanged", "an argument modified in place",
                  "build a new CF: ls_a + ls_b makes a new array, while ls_a += ls_b changes CF a")
        return _cf_flat(out, name)
    return flat


def _sq_radius(cf):
    n, ls, ss = cf
    return ss / n - float((ls / n) @ (ls / n))


def _sq_diameter(cf):
    n, ls, ss = cf
    return 2 * (n * ss - float(ls @ ls)) / (n * (n - 1)) if n > 1 else np.nan


def _root(value):
    return math.sqrt(value) if value >= 0 else np.nan


def check_clustering_feature(cf_of, cf_merge, cf_radius, cf_diameter, seed=0):
    """Four functions on clustering features, each CF a tuple (n, ls, ss) with SS one number.

    ``cf_of(X)``: the CF of the rows of X. ``cf_merge(a, b)``: the CF of the
    union (the additivity theorem), without changing a or b.
    ``cf_radius(cf)``: R = sqrt(SS/N - ||LS/N||^2), and 0 when noise makes the
    square negative. ``cf_diameter(cf)``: the root mean squared distance between
    two distinct points. The first three are compared with the library's
    :class:`~dpclust_lib.cluster.birch.ClusteringFeature` on five point sets
    (one with negative coordinates) and on noisy CFs, the diameter with the mean
    over the pairs of points (``scipy.spatial.distance.pdist``); relative
    tolerance 1e-9.
    """
    rng = np.random.default_rng(seed)
    sets = [rng.random((7, 3)), rng.random((4, 3)) * 2 - 0.5, rng.normal(size=(12, 5)) * 2, rng.random((2, 1)),
            rng.random((1, 4))]
    noisy = (5.0, np.array([1.2, -0.3, 2.0]), 1.4)  # a CF after noise: R^2 = 0.0588 > 0
    noisy_negative = (3.0, np.array([2.0, 1.0, -1.5]), 0.9)  # noise made R^2 = 0.3 - 0.806 < 0
    rtol = 1e-9
    _quietly(check_function, "cf_of", _cf_valued(cf_of, "cf_of"), lambda X: _flat(_cf(X)), [(X,) for X in sets],
             rtol=rtol, mistakes=[
                 (lambda X: _flat_parts(len(X), X.mean(axis=0), np.sum(X * X)),
                  "LS is the SUM of the points, not their mean (the centroid is LS/N)"),
                 (lambda X: _flat_parts(len(X), X.sum(axis=0), X.sum()),
                  "SS sums the SQUARED norms ||x||^2 of the points"),
                 (lambda X: _flat_parts(len(X), X.sum(axis=0), X.sum(axis=0) @ X.sum(axis=0)),
                  "SS is the sum of the squared norms of the points, not the squared norm of their sum"),
                 (lambda X: _flat_parts(X.shape[1], X.sum(axis=0), np.sum(X * X)),
                  "N counts the points (the rows of X), not the coordinates"),
             ], hint="N = the number of rows, LS = their sum (a vector), SS = the sum of their squared norms "
                     "(a number)")

    pairs = [(_cf(sets[0]), _cf(sets[1])), (_cf(sets[2][:5]), _cf(sets[2][5:])), (noisy, noisy_negative)]
    _quietly(check_function, "cf_merge", _cf_valued(cf_merge, "cf_merge"),
             lambda a, b: _flat(_cf_of_library(ClusteringFeature(*a) + ClusteringFeature(*b))), pairs, rtol=rtol,
             mistakes=[
                 (lambda a, b: _flat_parts(a[0] + b[0], (a[1] + b[1]) / 2, (a[2] + b[2]) / 2),
                  "the additivity theorem ADDS the three parts; it does not average them"),
                 (lambda a, b: _flat_parts(a[0] + b[0], a[1] + b[1], a[2] + b[2] + 2 * a[1] @ b[1]),
                  "SS adds like N and LS: SS_a + SS_b. The cross term 2 LS_a.LS_b belongs to ||LS_a + LS_b||^2, "
                  "not to SS"),
                 (lambda a, b: _flat_parts(a[0] + b[0], a[1] + b[1], (a[1] + b[1]) @ (a[1] + b[1])),
                  "SS is not ||LS||^2: it is the sum of the points' squared norms, so the union has SS_a + SS_b"),
                 (lambda a, b: _flat_parts(a[0] + b[0], (a[1] + b[1]) / (a[0] + b[0]), a[2] + b[2]),
                  "LS is a sum, not a centroid: the union has LS_a + LS_b"),
             ], hint="the additivity theorem: (N_a + N_b, LS_a + LS_b, SS_a + SS_b)")

    name = "cf_radius"
    _quietly(check_function, name, cf_radius, lambda cf: ClusteringFeature(*cf).radius,
             [(_cf(X),) for X in sets] + [(noisy,)], rtol=rtol, mistakes=[
                 (_sq_radius, "that is R^2; the radius is its square root"),
                 (lambda cf: _root(cf[2] / cf[0] - cf[1] @ cf[1] / cf[0]),
                  "the centroid is LS/N, so its squared norm is ||LS||^2 / N^2"),
                 (lambda cf: _root(cf[2] - cf[1] @ cf[1] / cf[0]),
                  "that is the root of the SUM of the squared distances to the centroid; R is the root of their MEAN: "
                  "divide by N"),
                 (lambda cf: math.sqrt(max(cf[2] / cf[0], 0)) - np.linalg.norm(cf[1] / cf[0]),
                  "subtract before the square root: R^2 = SS/N - ||LS/N||^2"),
                 (lambda cf: _root(_sq_diameter(cf)),
                  "that is the diameter (the mean over pairs of points); the radius is the root mean squared distance "
                  "to the centroid"),
             ], hint="R^2 = SS/N - ||LS/N||^2: the mean squared norm minus the squared norm of the mean")
    negative_hint = ("noise can make SS/N - ||LS/N||^2 negative (section 2); the library then takes the radius as 0, "
                     "as the threshold test does: return 0 in that case")
    with np.errstate(invalid="ignore"):
        try:
            got, crashed = _call(cf_radius, _fresh(noisy_negative)), None
        except ExerciseError as err:
            if not isinstance(err.__cause__, (ValueError, FloatingPointError)):
                raise
            got, crashed = None, f"{type(err.__cause__).__name__}: {err.__cause__}"
    if crashed is None:
        got = _as_float(got, name, ())
    if crashed is not None or got.shape != () or got != 0:
        _fail(f"{name}({_short(noisy_negative, 90)}): a noisy CF whose squared radius is negative", 0.0,
              crashed or np.round(got, 6).tolist(), negative_hint)

    diameter_mistakes = [
        (_sq_diameter, "that is D^2; the diameter is its square root"),
        (lambda cf: 2 * _root(_sq_radius(cf)), "the diameter is not twice the radius: D^2 = 2 N R^2 / (N - 1)"),
        (lambda cf: _root(2 * _sq_radius(cf)),
         "average over the N (N - 1) ordered pairs of DISTINCT points, not over all N^2 pairs"),
        (lambda cf: _root(_sq_diameter(cf) / 2),
         "the sum over i != j of ||x_i - x_j||^2 is 2 (N SS - ||LS||^2): each ordered pair gives "
         "||x_i||^2 + ||x_j||^2 - 2 x_i.x_j"),
        (lambda cf: _root(_sq_radius(cf)), "that is the radius R"),
    ]
    for X in sets:
        if len(X) < 2:
            continue
        cf = _cf(X)
        want = math.sqrt(float(np.mean(pdist(X, "sqeuclidean"))))
        got = _as_float(_call(cf_diameter, _fresh(cf)), "cf_diameter", ())
        if got.shape == () and np.isclose(got, want, rtol=rtol, atol=0):
            continue
        hint = _diagnose(got, [(np.asarray(w(cf), dtype=float).reshape(got.shape), h) for w, h in diameter_mistakes]
                         if got.size == 1 else [], rtol,
                         "expand ||x_i - x_j||^2 = ||x_i||^2 + ||x_j||^2 - 2 x_i.x_j and sum over the pairs i != j")
        _fail(f"cf_diameter({_short(cf, 90)}) is not right (relative tolerance {rtol:g}; the subcluster has "
              f"{len(X)} points)", round(want, 6), np.round(got, 6).tolist(), hint)
    return _passed("cf_of, cf_merge and cf_radius agree with the library's ClusteringFeature on every case (noisy CFs "
                   "included), and cf_diameter with the mean over the pairs of points")


def _laplace_part(what, draws, scale, level, mistakes, hint):
    """Kolmogorov-Smirnov test of ``draws`` against Lap(0, scale) at ``level``; on failure the hint of the first
    typical wrong distribution ((cdf, hint) in ``mistakes``) that the draws pass at the same level."""
    if stats.kstest(draws, stats.laplace(scale=scale).cdf).pvalue >= level:
        return
    if np.ptp(draws) == 0:
        hint = f"{what} carries no noise: add a fresh Laplace draw to every number released"
    else:
        hint = next((h for cdf, h in mistakes if stats.kstest(draws, cdf).pvalue >= level), hint)
    _fail(f"the noise on {what} does not follow Lap({scale:g}) (Kolmogorov-Smirnov p < {level:.1e})",
          f"Laplace noise of scale {scale:g}, centred at 0 (mean |noise| = the scale)",
          f"mean |noise| {np.mean(np.abs(draws)):.4g}, median {np.median(draws):.3g}", hint)


def _independent(noise, names, level):
    """Correlation test of every pair of noise columns (sqrt(m) |r| is about N(0, 1) under independence),
    Bonferroni over the pairs at family-wise ``level``."""
    m, k = noise.shape
    r = np.corrcoef(noise, rowvar=False)
    i, j = np.triu_indices(k, 1)
    p = 2 * stats.norm.sf(math.sqrt(m) * np.abs(r[i, j]))
    worst = int(np.argmin(p))
    if p[worst] < level / len(p):
        a, b = names[i[worst]], names[j[worst]]
        _fail(f"the noise on {a} and the noise on {b} are not independent (correlation test, p < {level / len(p):.1e})",
              "correlation about 0", f"correlation {r[i[worst], j[worst]]:.3f}",
              "draw a separate Laplace value for every number released: each coordinate of LS, and SS")


def check_dpbirch_noisy_update(update, d=3, epsilon=0.5, n=10_000, seed=0):
    """``update(cf, x, epsilon, rng)``: the paper's step 1, record x merged into one CF with Laplace noise.

    The answer must be (N + 1, LS + x + eta, SS + ||x||^2 + xi): eta are d and
    xi one independent Lap(1/epsilon) draws (the paper's Delta q = 1 on [0, 1]
    data), and N is exact. First at epsilon = 1e8 (noise below 1e-6) against the
    library's merge ``ClusteringFeature`` + ``ClusteringFeature.of(x)`` on three
    CFs; then ``n`` calls at ``epsilon`` on one CF: Kolmogorov-Smirnov tests of
    the LS noise (all coordinates) and of the SS noise against Lap(1/epsilon),
    and a correlation test of every pair of the d + 1 noise columns;
    family-wise alpha = 0.001 (Bonferroni, a third for each).
    """
    rng = np.random.default_rng(seed)
    cfs = [_cf(rng.random((5, d))), _cf(rng.random((1, d))), _cf(rng.random((40, d)))]
    records = list(rng.random((3, d)))
    flat_update = _cf_valued(update, "update")

    def merged(cf, x, *_):
        return _flat(_cf_of_library(ClusteringFeature(*cf) + ClusteringFeature.of(x)))
    big = 1e8
    cases = [(cf, x, big, rng) for cf, x in zip(cfs, records)]
    got, want = _call(flat_update, *cases[0]), merged(*cases[0])
    if got.shape == want.shape and np.max(np.abs(got - want)) > 1.0:
        _fail(f"at epsilon = {big:g} the update is far from the exact merge", "noise of scale 1e-8",
              f"largest |difference| {np.max(np.abs(got - want)):.3g}",
              "the Laplace scale is Delta q / epsilon = 1/epsilon: the noise shrinks as epsilon grows")
    _quietly(check_function, f"the noise-free part of step 1 (epsilon = {big:g})", flat_update, merged, cases,
             rtol=1e-6, atol=1e-5, mistakes=[
                 (lambda cf, x, *_: _flat((cf[0], cf[1] + x, cf[2] + x @ x)),
                  "N counts the records: the merged CF has N + 1"),
                 (lambda cf, x, *_: _flat((cf[0] + 1, cf[1] + x, cf[2] + x.sum())),
                  "SS adds the squared norm ||x||^2, not the sum of x's coordinates"),
                 (lambda cf, x, *_: _flat((cf[0] + 1, cf[1] + x, cf[2] + math.sqrt(x @ x))),
                  "SS adds ||x||^2, the SQUARED norm"),
                 (lambda cf, x, *_: _flat((cf[0] + 1, cf[1] + x, cf[2])),
                  "SS takes the record in as well: SS + ||x||^2"),
                 (lambda cf, x, *_: _flat((cf[0] + 1, cf[1], cf[2] + x @ x)), "LS takes the record in: LS + x"),
                 (lambda cf, x, *_: _flat((cf[0] + 1, x, x @ x)),
                  "the record joins the subcluster: add it to the CF, do not replace the CF by it"),
             ], hint="step 1 merges x into the CF, (N + 1, LS + x, SS + ||x||^2), and then adds the noise")

    cf, x = cfs[0], records[0]
    want = merged(cf, x)
    out = np.empty((n, d + 2))
    for i in range(n):
        out[i] = _call(flat_update, cf, x, epsilon, rng)
    if np.any(out[:, 0] != want[0]):
        _fail("N is not exact", f"N = {want[0]:g} (N + 1) in every call",
              f"N from {out[:, 0].min():.4g} to {out[:, 0].max():.4g}",
              "the paper adds no noise to N: it stays the exact count N + 1")
    noise = out[:, 1:] - want[1:]
    scale, level = 1.0 / epsilon, ALPHA / 3
    mistakes = [
        (stats.laplace(scale=d / epsilon).cdf,
         f"scale d/eps = {d / epsilon:g}: d is the L1 sensitivity of LS on [0, 1]^d (the honest accounting of "
         "Exercise 3), but the paper's step 1, which this exercise implements, uses Delta q = 1: Lap(1/eps)"),
        (stats.laplace(scale=2 / epsilon).cdf,
         "scale 2/eps: the paper spends eps on LS and eps on SS (2 eps in all), so each draw is Lap(1/eps)"),
        (stats.laplace(scale=1 / (2 * epsilon)).cdf,
         "scale 1/(2 eps): each of LS and SS gets the whole eps in the paper, so each draw is Lap(1/eps)"),
        (stats.laplace(scale=epsilon).cdf, "the scale is Delta q / eps = 1/eps, not eps"),
        (stats.norm(scale=scale).cdf, "that is Gaussian noise; the paper uses the Laplace mechanism"),
        (stats.norm(scale=math.sqrt(2) * scale).cdf, "that is Gaussian noise; the paper uses the Laplace mechanism"),
    ]
    _laplace_part("LS", noise[:, :d].ravel(), scale, level, mistakes,
                  "LS gets d independent Lap(1/eps) draws, one per coordinate, added to LS + x")
    _laplace_part("SS", noise[:, d], scale, level, mistakes,
                  "SS gets one Lap(1/eps) draw of its own, added to SS + ||x||^2 (noise the sum, not the record "
                  "before squaring it)")
    _independent(noise, [f"LS[{j}]" for j in range(d)] + ["SS"], level)
    return _passed(f"step 1 merges the record exactly, adds independent Lap(1/eps) noise to each of the {d} "
                   f"coordinates of LS and to SS, and keeps N exact ({n:,} calls at eps = {epsilon:g})")


# Boxes [lower, upper]: the first has a negative side whose square beats the positive one.
_SENSITIVITY_BOXES = [((0.0, -2.0, 0.0, -0.5), (1.0, 1.0, 3.0, 0.5)), ((-1.0, 0.0, -3.0), (0.5, 2.0, -1.0)),
                      ((-2.0,), (1.0,)), ((0.0,) * 3, (1.0,) * 3), ((0.0,) * 10, (1.0,) * 10)]


def check_cf_sensitivities(cf_sensitivities):
    """``cf_sensitivities(lower, upper)``: the L1 sensitivities (Delta N, Delta LS, Delta SS) of one CF.

    Neighbouring data sets differ by adding or removing one record x of the box
    [lower, upper]. Checked against ``birch.cf_sensitivities``, the sensitivities
    ``DPBirchPublicTree`` calibrates its noise to, on five boxes, two with negative sides (relative tolerance 1e-9).
    """
    names = ("N", "LS", "SS")
    defaults = ("N counts the records", "adding or removing x moves LS by x itself: take the largest L1 norm "
                "||x||_1 over the box", "adding or removing x moves SS by ||x||^2: take its largest value over the box")
    for lower, upper in _SENSITIVITY_BOXES:
        lo, up = np.array(lower), np.array(upper)
        want = np.array(library_cf_sensitivities(lo, up))
        got = _as_float(_call(cf_sensitivities, lo.copy(), up.copy()), "cf_sensitivities", (3,))
        if got.shape != (3,):
            _fail(f"cf_sensitivities({list(lower)}, {list(upper)}) has the wrong shape", "three numbers",
                  got.shape, "return (Delta N, Delta LS, Delta SS)")
        if np.allclose(got, want, rtol=1e-9, atol=0):
            continue
        big = np.maximum(np.abs(lo), np.abs(up))
        low_sq = np.where((lo <= 0) & (up >= 0), 0.0, np.minimum(lo ** 2, up ** 2))
        d = float(len(lo))
        replaced = "that is the change when one record is REPLACED by another; here a record x is added or removed"
        candidates = (
            [(0.0, "adding or removing one record changes N by exactly 1")],
            [(1.0, "Delta q = 1 is the change of ONE coordinate on [0, 1]; LS has d coordinates, and its L1 "
                   "sensitivity adds up their changes"),
             (big.max(), "the Laplace mechanism needs the L1 norm of the change: the sum over the coordinates, "
                         "not the largest one"),
             (np.sqrt(np.sum(big ** 2)), "that is the L2 norm of the change; the Laplace mechanism is calibrated to "
                                         "its L1 norm"),
             (np.sum(up - lo), replaced + ", which moves LS by x itself"),
             (np.sum(np.abs(up)), "a coordinate can be negative: |x_j| can reach |l_j|; take max(|l_j|, |u_j|)"),
             (d, "d is the answer on [0, 1]^d only; here the box has other sides")],
            [(want[1] ** 2, "||x||^2 is the sum of the squared coordinates, not the square of their sum"),
             (np.sum(up ** 2), "a coordinate in [l_j, u_j] with l_j < 0 can reach l_j^2 > u_j^2: take the larger"),
             (want[1], "SS moves by ||x||^2 (squared coordinates), not by ||x||_1"),
             (1.0, "SS moves by ||x||^2, which can be far above 1 (d on [0, 1]^d)"),
             (np.sum(big ** 2 - low_sq), replaced + ", which moves SS by ||x||^2"),
             (d, "d is the answer on [0, 1]^d only; here the box has other sides")],
        )
        for k in range(3):
            if not np.isclose(got[k], want[k], rtol=1e-9, atol=0):
                hint = next((h for v, h in candidates[k] if np.isclose(got[k], v, rtol=1e-6)), defaults[k])
                _fail(f"the L1 sensitivity of {names[k]} is not right for the box lower={list(lower)}, "
                      f"upper={list(upper)}", round(float(want[k]), 6), round(float(got[k]), 6), hint)
    return _passed(f"the sensitivities of (N, LS, SS) are right on all {len(_SENSITIVITY_BOXES)} boxes")


# DPBirch trees on uniform data in a box: (lower, upper, epsilon, T, B, records). The first is the case the
# hints are read from: there no two typical mistakes give the same number.
_INSERTION_TREES = [((0.0, -2.0, 0.0, -0.5), (1.0, 1.0, 3.0, 0.5), 2.0, 0.3, 4, 300),
                    ((-1.0, 0.0, -3.0), (0.5, 2.0, -1.0), 0.5, 0.1, 3, 200),
                    ((0.0,) * 10, (1.0,) * 10, 0.8, 0.5, 50, 300),
                    ((-2.0,), (1.0,), 0.1, 0.2, 5, 50),
                    ((0.0,) * 3, (1.0,) * 3, 5.0, 0.1, 2, 100)]


def _insertion_cases(seed=0):
    """(h, lower, upper, epsilon) of fitted DPBirch trees, and the library's epsilon_if_shape_public_ of each."""
    rng = np.random.default_rng(seed)
    cases, cost = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NegativeRadiusWarning)
        for lower, upper, eps, T, B, n in _INSERTION_TREES:
            lo, up = np.array(lower), np.array(upper)
            X = lo + (up - lo) * rng.random((n, len(lo)))
            est = DPBirch(None, epsilon=eps, threshold=T, branching_factor=B, bounds=(lo, up), random_state=rng).fit(X)
            cases.append((est.height_, lo, up, eps))
            cost.append(est.epsilon_if_shape_public_)
    return cases, cost


def check_dpbirch_insertion_epsilon(insertion_epsilon):
    """``insertion_epsilon(h, lower, upper, epsilon)``: what the noise of one insertion costs, the paper's scheme.

    Lap(Delta q / epsilon) on every coordinate of LS and on SS of each of the h
    CFs on the record's path, Delta q the largest |x_j| the box [lower, upper]
    allows (1 on [0, 1]^d, the paper's value); each noisy CF released once, N
    and the tree's shape taken as public. Checked against
    ``DPBirch.epsilon_if_shape_public_`` of five fitted trees in boxes with
    and without negative sides (relative tolerance 1e-9).
    """
    cases, costs = _insertion_cases()
    cost = {(h, tuple(lo), tuple(up), e): c for (h, lo, up, e), c in zip(cases, costs)}

    def parts(lo, up):
        big = np.maximum(np.abs(lo), np.abs(up))
        return float(big.sum()), float(np.sum(big ** 2)), float(big.max())  # Delta LS, Delta SS, Delta q

    def wrong(f):
        return lambda h, lo, up, e: f(h, *parts(lo, up), e, len(lo))
    mistakes = [
        (wrong(lambda h, L, S, q, e, d: 2 * e), "that is the paper's claim (eps for LS, eps for SS): it takes the "
                                                "sensitivity to be Delta q and counts one CF"),
        (wrong(lambda h, L, S, q, e, d: (L + S) * e / q),
         "that is the cost of ONE noisy CF. The record updates one CF on each of the h levels; all of them contain "
         "it, so they compose sequentially"),
        (wrong(lambda h, L, S, q, e, d: 2 * h * e),
         "Delta q is the largest change of ONE coordinate: LS moves by up to sum_j max(|l_j|, |u_j|) in L1 norm, "
         "and SS by up to sum_j max(l_j^2, u_j^2)"),
        (wrong(lambda h, L, S, q, e, d: h * (L + S) * e),
         "the noise scale is Delta q / eps, not 1/eps: a release with L1 sensitivity Delta and noise scale b costs "
         "Delta / b"),
        (wrong(lambda h, L, S, q, e, d: h * L * e / q), "SS is noised too, and its change counts as well"),
        (wrong(lambda h, L, S, q, e, d: h * (L + L * L) * e / q),
         "SS moves by ||x||^2 = sum_j x_j^2, at most sum_j max(l_j^2, u_j^2), not by (sum_j |x_j|)^2"),
        (wrong(lambda h, L, S, q, e, d: (h - 1) * (L + S) * e / q),
         "count the leaf level too: a tree of h levels has h CFs on every path"),
        (wrong(lambda h, L, S, q, e, d: 2 * h * d * e),
         "2 h d eps holds on [0, 1]^d only; in this box the sensitivities and Delta q are different"),
    ]
    return check_function("the budget one insertion spends", insertion_epsilon,
                          lambda h, lo, up, e: cost[(h, tuple(lo), tuple(up), e)], cases, rtol=1e-9,
                          mistakes=mistakes,
                          hint="for each CF on the path: (L1 sensitivity of LS + that of SS) / noise scale; then "
                               "compose over the path")


def check_public_tree_leaf_noise(noisy_leaves, epsilon=1.0, m=20_000, seed=0):
    """``noisy_leaves(n, ls, ss, epsilon, lower, upper, rng)``: DPBirchPublicTree's release of its leaf CFs.

    Every leaf's N, each coordinate of its LS, and its SS get an independent
    Laplace draw of scale Delta / (share * epsilon): the L1 sensitivities of
    the box [lower, upper], the shares (1/4, 1/2, 1/4). Checked on m leaves in
    a 4-d box with negative sides, against the library's scales
    (``birch.cf_sensitivities`` over DPBirchPublicTree's budget shares): a Kolmogorov-Smirnov test of each
    part's noise and a correlation test of all pairs of noise columns,
    family-wise alpha = 0.001 (Bonferroni, a quarter for each).
    """
    lower, upper = (np.array(b) for b in _SENSITIVITY_BOXES[0])
    d = len(lower)
    rng = np.random.default_rng(seed)
    n = rng.integers(0, 60, m).astype(float)
    ls = (lower + (upper - lower) * rng.random((m, d))) * n[:, None]  # exact CFs of some records in the box
    ss = np.sum(np.maximum(lower ** 2, upper ** 2)) * n * rng.random(m)
    out = _call(noisy_leaves, n.copy(), ls.copy(), ss.copy(), epsilon, lower.copy(), upper.copy(), rng)
    if not isinstance(out, (tuple, list)) or len(out) != 3:
        _fail("noisy_leaves did not return three arrays", "a tuple (n, ls, ss) of noisy arrays", _short(out),
              "return the noisy n, ls and ss, shaped like the exact ones")
    parts = []
    for part, exact, label in zip(out, (n, ls, ss), ("n", "ls", "ss")):
        got = _as_float(part, "noisy_leaves", exact.shape)
        if got.shape != exact.shape:
            _fail(f"noisy_leaves returned {label} of the wrong shape", exact.shape, got.shape,
                  "one noisy value per leaf (and per coordinate for ls); no loop, no aggregation")
        parts.append(got - exact)
    big = np.maximum(np.abs(lower), np.abs(upper))
    share = np.array(DPBirchPublicTree().budget_split)
    delta = np.array(library_cf_sensitivities(lower, upper))
    scales = delta / (share * epsilon)

    def lap(scale):
        return stats.laplace(scale=scale).cdf
    split = "the three parts share eps: N gets eps/4, LS eps/2 and SS eps/4 (sequential composition)"
    thirds = "the split is (1/4, 1/2, 1/4) for (N, LS, SS), not equal thirds"
    level = ALPHA / 4
    for k, (what, noise) in enumerate(zip(("N", "LS", "SS"), (parts[0], parts[1].ravel(), parts[2]))):
        common = [(lap(delta[k] / epsilon), split), (lap(delta[k] / (epsilon / 3)), thirds)]
        eps_k = share[k] * epsilon
        if what == "LS":
            common += [(lap(d / eps_k), "d is the sensitivity of LS on [0, 1]^d only; for this box it is larger"),
                       (lap(1 / eps_k), "Delta q = 1 is the paper's value for one coordinate; LS has d of them, and "
                                        "its L1 sensitivity adds up their largest changes"),
                       (lap(big.max() / eps_k), "the L1 sensitivity adds up the coordinates' largest changes; it is "
                                                "not the largest one"),
                       (lap(np.sum(upper - lower) / eps_k), "that is the sensitivity when a record is REPLACED; here a "
                                                            "record is added or removed")]
        elif what == "SS":
            common += [(lap(d / eps_k), "d is the sensitivity of SS on [0, 1]^d only; for this box it is larger"),
                       (lap(1 / eps_k), "SS moves by ||x||^2, far more than 1 in this box"),
                       (lap(delta[1] ** 2 / eps_k), "||x||^2 is the sum of the squared coordinates, not the square of "
                                                    "their sum"),
                       (lap(np.sum(upper ** 2) / eps_k),
                        "a side with l_j < 0 can reach l_j^2 > u_j^2: take the larger"),
                       (lap(delta[1] / eps_k), "SS moves by ||x||^2, not by ||x||_1")]
        _laplace_part(what, noise, scales[k], level, common,
                      f"{what}: Laplace noise of scale (L1 sensitivity of {what}) / (its share of eps)")
    columns = np.column_stack([parts[0], parts[1], parts[2]])
    _independent(columns, ["N"] + [f"LS[{j}]" for j in range(d)] + ["SS"], level)
    return _passed(f"each leaf's N, LS and SS carry independent Laplace noise of scales "
                   f"{', '.join(f'{s:g}' for s in scales)} (eps = {epsilon:g}), as in DPBirchPublicTree")

"""Checkers for the notebooks' graded exercises.

Each ``check_*`` function takes the student's function (or answer), tests it
against the library, prints a short confirmation when it passes and raises
:class:`ExerciseError` with what was expected, what came back and a hint when
it does not. Randomised code is checked against its exact output distribution
with a chi-square test at a stated family-wise error rate (a correct solution
is wrongly rejected at most that often, for the fixed seeds used here); numbers
are checked to a stated tolerance.
"""
from __future__ import annotations

import numpy as np
from scipy import stats

from .frequency import LDPFO, Tally
from .privacy import grr_matrix, oue_pq

__all__ = [
    "ExerciseError",
    "check_grr_perturb",
    "check_oue_perturb",
    "check_ldpfo_estimate",
    "check_number",
    "check_prediction",
]

ALPHA = 1e-3  # family-wise false-rejection rate of every statistical check


class ExerciseError(AssertionError):
    """The answer is not right yet; the message says why and gives a hint."""


def _fail(what, expected, got, hint):
    raise ExerciseError(f"{what}\n  expected: {expected}\n  got:      {got}\n  hint:     {hint}")


def _passed(message):
    print(f"Correct: {message}")
    return True


def _call(fn, *args):
    try:
        return fn(*args)
    except NotImplementedError:
        raise ExerciseError("the function still raises NotImplementedError: write your solution first") from None


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
        _fail(f"the estimate differs from the unbiased one for domain_sizes={sizes}, eps={eps}",
              np.round(expected.ravel()[:6], 2).tolist(), np.round(got.ravel()[:6], 2).tolist(), hint)
    return _passed("your aggregation equals the Kronecker-structured inverse on every test domain")


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

    ``before`` and ``after`` are the measured values (e.g. a mean over runs);
    changes within ``tolerance`` count as "same".
    """
    choices = {"up", "down", "same"}
    if prediction not in choices:
        raise ExerciseError(f"{name}: predict one of {sorted(choices)}, got {prediction!r}")
    delta = float(after) - float(before)
    observed = "same" if abs(delta) <= tolerance else ("up" if delta > 0 else "down")
    if observed != prediction:
        _fail(f"{name}: the experiment went the other way", prediction,
              f"{observed} ({before:.4g} -> {after:.4g})", explanation or "think about what the change does to the noise")
    return _passed(f"{name}: {before:.4g} -> {after:.4g}, as you predicted ({observed})"
                   + (f". {explanation}" if explanation else ""))

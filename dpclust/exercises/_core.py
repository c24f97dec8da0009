"""The generic core of the exercise checkers: the error, the messages, calling the student's
function safely, and the checkers any notebook can use (a function against a reference with a
catalogue of typical mistakes, a sampler against its exact CDF, a number, a predict-then-run
answer).
"""

from __future__ import annotations

import contextlib

import numpy as np
from scipy import stats

__all__ = [
    "ALPHA",
    "ExerciseError",
    "check_function",
    "check_sampler",
    "check_number",
    "check_prediction",
    "fail",
    "passed",
    "short",
    "call_student",
    "reference_inputs",
    "copy_args",
    "same_shape_close",
    "as_float",
    "diagnose",
    "as_codes",
    "ks_check",
    "laplace_cdf",
    "pair_of_arrays",
]

ALPHA = 1e-3  # family-wise false-rejection rate of every statistical check


class ExerciseError(AssertionError):
    """The answer is not right yet; the message says why and gives a hint."""


def fail(what, expected, got, hint):
    raise ExerciseError(f"{what}\n  expected: {expected}\n  got:      {got}\n  hint:     {hint}")


def passed(message):
    # Printed, not returned: a check cell shows only this line (several checks in one cell each show theirs).
    print(f"Correct: {message}")


def short(value, limit=70):
    if isinstance(value, np.ndarray):
        return f"array of shape {value.shape}"
    if isinstance(value, np.random.Generator):
        return "rng"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def call_student(fn, *args):
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
            f"{name} raised {type(exc).__name__}: {exc}\n  called with: {name}({', '.join(map(short, args))})\n"
            "  hint:     the traceback above shows the line; check the shapes and the types of the arguments"
        ) from exc


@contextlib.contextmanager
def reference_inputs(fn, **references):
    """While the block runs, the functions of earlier exercises that ``fn`` calls are the references.

    A dependent exercise is graded on its own: the names in ``references`` are
    looked up in ``fn``'s module (the notebook's namespace) when ``fn`` runs, so
    they are swapped for the references there and put back afterwards, whatever
    the student's versions of them do.

    Examples
    --------
    >>> def double(x):
    ...     return 2 * x
    >>> def quadruple(x):
    ...     return double(double(x))
    >>> with reference_inputs(quadruple, double=lambda x: x + x):
    ...     quadruple(3)
    12
    """
    namespace = getattr(fn, "__globals__", None)
    if namespace is None:  # not a plain Python function: nothing to swap
        yield
        return
    saved = {name: namespace[name] for name in references if name in namespace}
    namespace.update(references)
    try:
        yield
    finally:
        for name in references:
            if name in saved:
                namespace[name] = saved[name]
            else:
                namespace.pop(name, None)


def copy_args(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def same_shape_close(got, want, rtol, atol=0.0):
    return got.shape == want.shape and np.allclose(got, want, rtol=rtol, atol=atol)


def as_float(out, name, want_shape):
    """The answer as a float array (a plain number for a one-element answer is fine)."""
    if out is None:
        fail(f"{name} returned None", f"numbers of shape {want_shape}", None, "did you forget the return statement?")
    try:
        got = np.asarray(out, dtype=float)
    except (TypeError, ValueError):
        fail(
            f"{name} did not return numbers",
            f"numbers of shape {want_shape}",
            short(out),
            "return a number or a numpy array",
        )
    if got.shape != want_shape and got.size == int(np.prod(want_shape)) and got.size == 1:
        got = got.reshape(want_shape)  # 1-element arrays and plain numbers are the same answer
    return got


def diagnose(got, wrong_answers, rtol, default):
    """The hint of the first typical wrong answer that ``got`` matches, else ``default``."""
    for value, hint in wrong_answers:
        value = np.asarray(value, dtype=float)
        if value.shape == got.shape and np.all(np.isfinite(value)) and np.allclose(got, value, rtol=max(rtol, 1e-6)):
            return hint
    return default


def as_codes(out, n, k, name):
    arr = np.asarray(out)
    if arr.shape != (n,):
        fail(
            f"{name} returned the wrong shape",
            f"({n},), one report per user",
            arr.shape,
            "return one perturbed value per input value",
        )
    if arr.dtype.kind not in "iu" or arr.min() < 0 or arr.max() >= k:
        fail(
            f"{name} returned values outside the domain",
            f"integers in 0..{k - 1}",
            f"dtype {arr.dtype}, range [{arr.min()}, {arr.max()}]",
            "reports live in the same domain as inputs",
        )
    return arr


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
        want = np.asarray(reference(*copy_args(case)), dtype=float)
        got = as_float(call_student(fn, *copy_args(case)), name, want.shape)
        call = f"{getattr(fn, '__name__', 'your function')}{short(tuple(case), 120)}"
        if got.shape != want.shape:
            fail(
                f"{name}: {call} has the wrong shape",
                want.shape,
                got.shape,
                "return one value per cell of the expected answer",
            )
        if same_shape_close(got, want, rtol, atol):
            continue
        wrong = [(w(*copy_args(case)), h) for w, h in mistakes]
        fail(
            f"{name}: {call} is not right (relative tolerance {rtol:g})",
            np.round(want, 6).tolist(),
            np.round(got, 6).tolist(),
            diagnose(got, wrong, rtol, hint or "recheck the derivation step by step"),
        )
    return passed(f"{name} is right on all {len(cases)} cases")


def check_sampler(name, draw, cdf, n=20_000, seed=0, mistakes=(), hint="", alpha=ALPHA):
    """``draw(rng, n)`` must return n independent draws from the distribution with CDF ``cdf``.

    A one-sample Kolmogorov-Smirnov test at ``alpha`` (default 0.001: a correct
    sampler is rejected at most once in a thousand seeds). ``mistakes``: (cdf, hint)
    pairs, typical wrong distributions (a wrong scale, another family); when the
    draws pass the same test against one of them, the message gives that hint.
    """
    x = as_float(call_student(draw, np.random.default_rng(seed), n), name, (n,))
    pvalue = ks_check(name, x, n, cdf, mistakes, hint, alpha)
    return passed(f"{name}: {n:,} draws follow the expected distribution (Kolmogorov-Smirnov p = {pvalue:.2g})")


def ks_check(name, x, n, cdf, mistakes=(), hint="", alpha=ALPHA):
    """The KS test of :func:`check_sampler` on draws ``x``: its p-value, or an ExerciseError with the hint."""
    if x.shape != (n,):
        fail(f"{name}: wrong shape", f"({n},), one draw each", x.shape, "return n draws as a 1-D array")
    if not np.all(np.isfinite(x)):
        fail(f"{name}: draws that are not finite", "finite numbers", "NaN or inf", "check for divisions by zero")
    result = stats.kstest(x, cdf)
    if result.pvalue >= alpha:
        return result.pvalue
    hint = next(
        (h for wrong, h in mistakes if stats.kstest(x, wrong).pvalue >= alpha),
        hint or "compare your distribution's family, centre and scale with the mechanism's definition",
    )
    fail(
        f"{name}: the draws do not follow the expected distribution (Kolmogorov-Smirnov p < {alpha:g})",
        "a sample passing the test",
        f"KS statistic {result.statistic:.3f}, quartiles {np.round(np.quantile(x, [0.25, 0.5, 0.75]), 3).tolist()}",
        hint,
    )


def check_number(name, value, expected, rtol=1e-6, hint=""):
    """A derived quantity against its expected value, to relative tolerance ``rtol``."""
    if value is None:
        raise ExerciseError(f"{name}: no answer yet")
    got = np.asarray(value, dtype=float)
    want = np.asarray(expected, dtype=float)
    if got.shape != want.shape or not np.allclose(got, want, rtol=rtol, atol=0):
        fail(
            f"{name} is not right (relative tolerance {rtol:g})",
            np.round(want, 6).tolist(),
            np.round(got, 6).tolist(),
            hint or "recheck the derivation step by step",
        )
    return passed(f"{name} = {np.round(got, 6).tolist()}")


def check_prediction(name, prediction, before, after, tolerance=0.0, explanation=""):
    """A predict-then-run answer: did the quantity go "up", "down" or stay "same"?

    ``prediction`` is the answer or a function that returns it. ``before`` and
    ``after`` are the measured values (e.g. a mean over runs); changes within
    ``tolerance`` count as "same".
    """
    if callable(prediction):
        prediction = call_student(prediction)
    choices = {"up", "down", "same"}
    if prediction not in choices:
        raise ExerciseError(f"{name}: predict one of {sorted(choices)}, got {prediction!r}")
    before, after = float(before), float(after)
    if not (np.isfinite(before) and np.isfinite(after)):
        raise ExerciseError(f"{name}: the experiment gave {before} -> {after}; it must give finite numbers")
    delta = after - before
    observed = "same" if abs(delta) <= tolerance else ("up" if delta > 0 else "down")
    if observed != prediction:
        fail(
            f"{name}: the experiment went the other way",
            prediction,
            f"{observed} ({before:.4g} -> {after:.4g})",
            explanation or "think about what the change does to the noise",
        )
    return passed(
        f"{name}: {before:.4g} -> {after:.4g}, as you predicted ({observed})"
        + (f". {explanation}" if explanation else "")
    )


def laplace_cdf(scale):
    return stats.laplace(scale=scale).cdf


def pair_of_arrays(out, name, first, second):
    """The student's (a, b) answer as two float arrays of the given shapes."""
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        fail(
            f"{name} must return two arrays",
            f"({first[0]}, {second[0]}) of shapes {first[1]} and {second[1]}",
            short(out),
            f"end with `return {first[0]}, {second[0]}`",
        )
    a, b = (as_float(value, name, shape) for value, (_, shape) in zip(out, (first, second)))
    for value, (what, shape) in ((a, first), (b, second)):
        if value.shape != shape:
            fail(
                f"{name}: {what} has the wrong shape",
                shape,
                value.shape,
                "one row per cluster" if len(shape) == 2 else "one value per cluster (or node)",
            )
    return a, b

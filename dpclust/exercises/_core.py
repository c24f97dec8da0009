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
    "cases_for",
    "answer_key",
]

ALPHA = 1e-3  # family-wise false-rejection rate of every statistical check


class ExerciseError(AssertionError):
    """The answer is not right yet; the message says why and gives a hint."""


def fail(what, expected, got, hint):
    """Raise the checkers' message: what is wrong, the expected answer, the student's, and a hint.

    Parameters
    ----------
    what : str
        The first line: which answer is wrong and how.
    expected, got : object
        The right answer and the student's, shown as given (round numbers and
        show arrays by their shape beforehand, see :func:`short`).
    hint : str
        What to look at to fix the answer.

    Raises
    ------
    ExerciseError
        Always.

    Examples
    --------
    >>> fail("the mean of [1, 2, 3] is not right", 2.0, 3.0, "you divided by n - 1: how many values are there?")
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: the mean of [1, 2, 3] is not right
      expected: 2.0
      got:      3.0
      hint:     you divided by n - 1: how many values are there?
    """
    raise ExerciseError(f"{what}\n  expected: {expected}\n  got:      {got}\n  hint:     {hint}")


def passed(message):
    """Print the confirmation of a right answer.

    Parameters
    ----------
    message : str
        What was checked, e.g. the function and the number of cases.

    Returns
    -------
    None

    Examples
    --------
    >>> passed("the mean is right on all 3 cases")
    Correct: the mean is right on all 3 cases
    """
    # Printed, not returned: a check cell shows only this line (several checks in one cell each show theirs).
    print(f"Correct: {message}")


def short(value, limit=70):
    """A short description of a value for a message: arrays by their shape, never their data.

    Parameters
    ----------
    value : object
        An argument or an answer.
    limit : int, default 70
        The longest ``repr`` shown; a longer one is cut and ends with ``...``.

    Returns
    -------
    str

    Examples
    --------
    >>> short(np.zeros((3, 2)))
    'array of shape (3, 2)'
    >>> short(np.random.default_rng(0))
    'rng'
    >>> short(list(range(30)), limit=24)
    '[0, 1, 2, 3, 4, 5, 6,...'
    """
    if isinstance(value, np.ndarray):
        return f"array of shape {value.shape}"
    if isinstance(value, np.random.Generator):
        return "rng"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def call_student(fn, *args):
    """Call the student's function; its errors come back as an ExerciseError naming the call.

    Parameters
    ----------
    fn : callable
        The student's function.
    *args
        Its arguments (named in the message by :func:`short`).

    Returns
    -------
    object
        Whatever ``fn(*args)`` returns.

    Raises
    ------
    ExerciseError
        When ``fn`` raises: a stub (``NotImplementedError``) says so, any other
        error is named with the call that raised it (the original error is
        chained, so the traceback still shows the student's line).

    Examples
    --------
    >>> def last(x):
    ...     return x[len(x)]
    >>> call_student(last, np.array([1.0, 2.0, 3.0]))
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: last raised IndexError: index 3 is out of bounds for axis 0 with size 3
      called with: last(array of shape (3,))
      hint:     the traceback above shows the line; check the shapes and the types of the arguments
    >>> def stub(x):
    ...     raise NotImplementedError
    >>> call_student(stub, 1)
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: the function still raises NotImplementedError: write your solution first
    """
    try:
        return fn(*args)
    except NotImplementedError:
        raise ExerciseError("the function still raises NotImplementedError: write your solution first") from None
    except ExerciseError:
        raise
    except Exception as exc:
        name = getattr(fn, "__name__", "your function")
        where = "".join(f"\n  at:       {line}" for line in getattr(exc, "where", ()))  # a graded run's frames
        shown = "the line above" if where else "the traceback above shows the line"
        raise ExerciseError(
            f"{name} raised {type(exc).__name__}: {exc}\n  called with: {name}({', '.join(map(short, args))})"
            f"{where}\n  hint:     {shown}; check the shapes and the types of the arguments"
        ) from exc


@contextlib.contextmanager
def reference_inputs(fn, **references):
    """While the block runs, the functions of earlier exercises that ``fn`` calls are the references.

    A dependent exercise is graded on its own: the names in ``references`` are
    looked up in ``fn``'s module (the notebook's namespace) when ``fn`` runs, so
    they are swapped for the references there and put back afterwards, whatever
    the student's versions of them do. For a function of a graded run
    (:class:`~dpclust.exercises._remote.Remote`) the references stay in the grader's
    process: the student's code calls them through the run, which sees only their results.

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
    if hasattr(fn, "lend"):  # a graded run's function: lent for the block
        with fn.lend(**references):
            yield
        return
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
    """The arguments of one call, with every numpy array copied.

    A student's function may write into an array argument; the reference and the
    next call must still see the original.

    Parameters
    ----------
    args : tuple
        The arguments of one case.

    Returns
    -------
    tuple
        The same arguments, numpy arrays copied and any other value as it is.

    Examples
    --------
    >>> x = np.zeros(2)
    >>> args = copy_args((x, 3))
    >>> args[0] is x, args[1]
    (False, 3)
    >>> args[0][0] = 1.0  # a function that writes into its argument
    >>> x
    array([0., 0.])
    """
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def same_shape_close(got, want, rtol, atol=0.0):
    """Whether two arrays have the same shape and are close, without broadcasting.

    Parameters
    ----------
    got, want : ndarray
        The student's answer and the right one.
    rtol, atol : float
        The tolerances of ``numpy.allclose``.

    Returns
    -------
    bool

    Examples
    --------
    >>> same_shape_close(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-12]), rtol=1e-9)
    True
    >>> same_shape_close(np.array([1.0, 2.0]), np.array([[1.0, 2.0]]), rtol=1e-9)  # allclose would broadcast
    False
    """
    return got.shape == want.shape and np.allclose(got, want, rtol=rtol, atol=atol)


def as_float(out, name, want_shape):
    """The answer as a float array (a plain number for a one-element answer is fine).

    Parameters
    ----------
    out : object
        The student's answer.
    name : str
        The student's function, named in the message.
    want_shape : tuple of int
        The shape of the right answer: a one-element answer is reshaped to it.

    Returns
    -------
    ndarray of float
        Of shape ``want_shape`` when the answer has one element; otherwise of the
        answer's own shape, which the caller compares.

    Raises
    ------
    ExerciseError
        When the answer is None or not numbers.

    Examples
    --------
    >>> as_float(2.5, "the mean", (1,))
    array([2.5])
    >>> as_float([1, 2], "the means", (2,))
    array([1., 2.])
    >>> as_float(None, "the means", (2,))
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: the means returned None
      expected: numbers of shape (2,)
      got:      None
      hint:     did you forget the return statement?
    """
    if out is None:
        fail(f"{name} returned None", f"numbers of shape {want_shape}", None, "did you forget the return statement?")
    try:
        if isinstance(out, (str, bytes)) or np.asarray(out).dtype.kind in "USO":
            raise TypeError  # text that looks like a number is not a number: nothing is cast
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
    """The hint of the first typical wrong answer that ``got`` matches, else ``default``.

    Parameters
    ----------
    got : ndarray of float
        The student's answer.
    wrong_answers : iterable of (array_like, str)
        The typical wrong answers for this case, each with its hint. One of
        another shape or with a non-finite value (e.g. a formula that divides by
        zero here) matches nothing.
    rtol : float
        The relative tolerance of a match (at least 1e-6).
    default : str
        The hint when no wrong answer matches.

    Returns
    -------
    str

    Examples
    --------
    >>> wrong = [(np.array([3.0]), "you divided by n - 1: how many values are there?")]
    >>> wrong.append((np.array([6.0]), "that is the sum"))
    >>> diagnose(np.array([6.0]), wrong, 1e-9, "recheck the derivation step by step")
    'that is the sum'
    >>> diagnose(np.array([2.5]), wrong, 1e-9, "recheck the derivation step by step")
    'recheck the derivation step by step'
    """
    for value, hint in wrong_answers:
        value = np.asarray(value, dtype=float)
        if value.shape == got.shape and np.all(np.isfinite(value)) and np.allclose(got, value, rtol=max(rtol, 1e-6)):
            return hint
    return default


def as_codes(out, n, k, name):
    """The reports of a local randomiser as an integer array of n codes in ``0..k-1``.

    Parameters
    ----------
    out : array_like
        The student's reports.
    n : int
        The number of users (one report each).
    k : int
        The size of the domain.
    name : str
        The student's function, named in the message.

    Returns
    -------
    ndarray of int, shape (n,)

    Raises
    ------
    ExerciseError
        When the shape is not ``(n,)`` or a report is not an integer in ``0..k-1``.

    Examples
    --------
    >>> as_codes(np.array([0, 2, 1]), 3, 3, "perturb")
    array([0, 2, 1])
    >>> as_codes(np.array([0, 3, 1]), 3, 3, "perturb")
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: perturb returned values outside the domain
      expected: integers in 0..2
      got:      range [0, 3]
      hint:     reports live in the same domain as inputs
    >>> as_codes(np.array([0.0, 2.0, 1.0]), 3, 3, "perturb")
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: perturb did not return integer codes
      expected: integers in 0..2
      got:      an array of dtype float64
      hint:     reports are category codes: return an integer array (e.g. build it with dtype=int)
    """
    arr = np.asarray(out)
    if arr.shape != (n,):
        fail(
            f"{name} returned the wrong shape",
            f"({n},), one report per user",
            arr.shape,
            "return one perturbed value per input value",
        )
    if arr.dtype.kind not in "iu":
        fail(
            f"{name} did not return integer codes",
            f"integers in 0..{k - 1}",
            f"an array of dtype {arr.dtype}",
            "reports are category codes: return an integer array (e.g. build it with dtype=int)",
        )
    if arr.size and (arr.min() < 0 or arr.max() >= k):
        fail(
            f"{name} returned values outside the domain",
            f"integers in 0..{k - 1}",
            f"range [{arr.min()}, {arr.max()}]",
            "reports live in the same domain as inputs",
        )
    return arr


def check_function(name, fn, reference, cases, rtol=1e-9, atol=0.0, mistakes=(), hint=""):
    """``fn(*case)`` must equal ``reference(*case)`` for every case, to relative tolerance ``rtol``.

    Parameters
    ----------
    name : str, what the function computes (used in the messages)
    fn : the student's function
    reference : the function that gives the right answer (built from the library), or the right answers
        themselves, one per case (where no library function computes them)
    cases : list of argument tuples
    rtol, atol : tolerances of ``numpy.allclose``
    mistakes : sequence of (wrong_fn, hint): typical wrong answers. When the answer
        matches ``wrong_fn(*case)``, the message gives that hint.
    hint : the hint when no typical mistake matches

    Examples
    --------
    >>> check_function("the area of a square", lambda a: a * a, lambda a: a**2, [(1.0,), (2.5,)])
    Correct: the area of a square is right on all 2 cases
    >>> check_function(
    ...     "the area of a square",
    ...     lambda a: 4 * a,
    ...     lambda a: a**2,
    ...     [(2.5,)],
    ...     mistakes=[(lambda a: 4 * a, "that is the perimeter")],
    ... )
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: the area of a square: <lambda>(2.5,) is not right (relative tolerance 1e-09)
      expected: 6.25
      got:      10.0
      hint:     that is the perimeter
    """
    for i, case in enumerate(cases):
        want = np.asarray(reference(*copy_args(case)) if callable(reference) else reference[i], dtype=float)
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

    Examples
    --------
    >>> from scipy import stats
    >>> check_sampler("Lap(2)", lambda rng, n: rng.laplace(0.0, 2.0, n), stats.laplace(scale=2.0).cdf)
    Correct: Lap(2): 20,000 draws follow the expected distribution (Kolmogorov-Smirnov p = ...)
    """
    x = as_float(call_student(draw, np.random.default_rng(seed), n), name, (n,))
    pvalue = ks_check(name, x, n, cdf, mistakes, hint, alpha)
    return passed(f"{name}: {n:,} draws follow the expected distribution (Kolmogorov-Smirnov p = {pvalue:.2g})")


def ks_check(name, x, n, cdf, mistakes=(), hint="", alpha=ALPHA):
    """The KS test of :func:`check_sampler` on draws ``x``: its p-value, or an ExerciseError with the hint.

    Parameters
    ----------
    name : str
        What the draws are, named in the message.
    x : ndarray of float
        The draws.
    n : int
        The number of draws expected.
    cdf : callable
        The CDF of the right distribution.
    mistakes : sequence of (callable, str), optional
        The CDFs of typical wrong distributions, each with its hint: when the
        draws pass the test against one of them, the message gives its hint.
    hint : str, optional
        The hint when no wrong distribution fits.
    alpha : float, default ALPHA
        The level of the test: a right sampler fails with probability ``alpha``.

    Returns
    -------
    float
        The p-value of the test against ``cdf`` (at least ``alpha``).

    Raises
    ------
    ExerciseError
        When ``x`` has the wrong shape, is not finite, or fails the test; the
        message gives the KS statistic and the quartiles of the draws.

    Examples
    --------
    The quantiles of Lap(1) on an even grid stand in for a good sample. They pass
    against Lap(1); against Lap(2) the KS statistic is 1/8, the largest gap
    between the two CDFs, and the quartiles are those of Lap(1), plus or minus ln 2:

    >>> from scipy import stats
    >>> x = stats.laplace(scale=1.0).ppf((np.arange(1001) + 0.5) / 1001)
    >>> bool(ks_check("Lap(1)", x, 1001, laplace_cdf(1.0)) >= ALPHA)
    True
    >>> mistakes = [(laplace_cdf(1.0), "your noise is too narrow: which sensitivity and budget set its scale?")]
    >>> ks_check("Lap(2)", x, 1001, laplace_cdf(2.0), mistakes)  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: Lap(2): the draws do not follow the expected distribution
      (Kolmogorov-Smirnov p < 0.001)
      expected: a sample passing the test
      got:      KS statistic 0.125, quartiles [-0.692, 0.0, 0.692]
      hint:     your noise is too narrow: which sensitivity and budget set its scale?
    """
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
    """A derived quantity against its expected value, to relative tolerance ``rtol``.

    Examples
    --------
    >>> check_number("the sum of 1/2^k", sum(0.5**k for k in range(1, 60)), 1.0)
    Correct: the sum of 1/2^k = 1.0
    """
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

    Examples
    --------
    >>> check_prediction("the error as n grows", "down", 0.30, 0.05)
    Correct: ...
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
    """The CDF of the centred Laplace distribution Lap(``scale``), for :func:`ks_check`.

    Parameters
    ----------
    scale : float
        The scale b (the sensitivity over epsilon for the Laplace mechanism).

    Returns
    -------
    callable
        ``x -> P(Lap(b) <= x)``, vectorised.

    Examples
    --------
    The median is 0 and the quartiles are plus or minus b ln 2:

    >>> cdf = laplace_cdf(2.0)
    >>> float(cdf(0.0)), round(float(cdf(2.0 * np.log(2.0))), 6)
    (0.5, 0.75)
    """
    return stats.laplace(scale=scale).cdf


def pair_of_arrays(out, name, first, second):
    """The student's (a, b) answer as two float arrays of the given shapes.

    Parameters
    ----------
    out : object
        The student's answer, a tuple or list of two.
    name : str
        The student's function, named in the message.
    first, second : (str, tuple of int)
        The name of each part (as in the ``return`` statement) and its shape.

    Returns
    -------
    (ndarray, ndarray)
        The two parts as float arrays.

    Raises
    ------
    ExerciseError
        When the answer is not two parts, or a part is not numbers of its shape.

    Examples
    --------
    >>> first, second = ("noisy_sums", (2, 2)), ("noisy_counts", (2,))
    >>> sums, counts = pair_of_arrays(([[1, 2], [3, 4]], [5, 6]), "noisy_sums_counts", first, second)
    >>> counts
    array([5., 6.])
    >>> pair_of_arrays(np.zeros((2, 2)), "noisy_sums_counts", first, second)
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: noisy_sums_counts must return two arrays
      expected: (noisy_sums, noisy_counts) of shapes (2, 2) and (2,)
      got:      array of shape (2, 2)
      hint:     end with `return noisy_sums, noisy_counts`
    >>> pair_of_arrays((np.zeros((2, 2)), np.zeros(3)), "noisy_sums_counts", first, second)
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: noisy_sums_counts: noisy_counts has the wrong shape
      expected: (2,)
      got:      (3,)
      hint:     one value per cluster (or node)
    """
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


def cases_for(public, draw, seed=None):
    """The cases of a check: the public ones, or, for a graded run's ``seed``, those ``draw(rng)`` draws.

    The public cases are the ones the notebook's check cell shows and a student can
    see; a graded run (:mod:`dpclust.grade`) draws others from a seed fixed when the
    assignment was generated and never released, so an answer that knows the public
    cases by heart does not pass it.

    Parameters
    ----------
    public : list
        The public cases.
    draw : callable
        ``draw(rng) -> list of cases``, from a ``numpy.random.Generator``.
    seed : int, optional
        None for the public cases.

    Returns
    -------
    list

    Examples
    --------
    >>> draw = lambda rng: [(int(k),) for k in rng.integers(1, 10, size=2)]
    >>> cases_for([(1,), (2,)], draw)
    [(1,), (2,)]
    >>> cases_for([(1,), (2,)], draw, seed=7) == draw(np.random.default_rng(7))
    True
    """
    return list(public) if seed is None else draw(np.random.default_rng(seed))


def answer_key(public, answers, draw, seed=None, solutions=None, name=None):
    """(cases, reference) of a check whose right answers no library function computes.

    The public cases come with their answers as data (``answers``, one per case:
    ``tests/test_exercises.py`` derives them independently), so the package that
    students have holds no function that answers the exercise. A graded run draws
    its cases from ``seed`` and takes the teacher's solution ``solutions[name]`` (from
    the teacher's notebook, kept with the course and never released) as the reference.

    Parameters
    ----------
    public, answers : list
        The public cases and their right answers.
    draw : callable
        ``draw(rng) -> list of cases`` for a graded run.
    seed : int, optional
        None for the public cases.
    solutions : dict, optional
        The teacher's functions by name (needed with ``seed``).
    name : str
        The function of the exercise.

    Returns
    -------
    (list, list or callable)

    Examples
    --------
    >>> draw = lambda rng: [(float(x),) for x in rng.random(2)]
    >>> answer_key([(3.0,)], [9.0], draw, name="square")
    ([(3.0,)], [9.0])
    >>> solutions = {"square": lambda x: x * x}
    >>> cases, reference = answer_key([(3.0,)], [9.0], draw, seed=1, solutions=solutions, name="square")
    >>> reference(*cases[0]) == cases[0][0] ** 2
    True
    """
    if seed is None:
        return list(public), list(answers)
    if not solutions or name not in solutions:
        raise ValueError(f"a graded run of this check needs the teacher's {name} in solutions=")
    return draw(np.random.default_rng(seed)), solutions[name]

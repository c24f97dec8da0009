"""A grading key's checks, run in the grader's process: the teacher's solutions and one check's verdict.

Both the grader (:mod:`dpclust.grade`) and the course export (:mod:`dpclust.assignments`, which draws each
check's seed and checks that the teacher's solutions pass it) use these; neither imports the other for them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import io

__all__ = ["Verdict", "teacher_functions", "run_check"]


@dataclasses.dataclass
class Verdict:
    """One check's result: passed or not, the checker's message, notes for the student, flags for the teacher.

    Examples
    --------
    >>> Verdict(False, "the sum is not right").lines()
    ['the sum is not right']
    """

    passed: bool
    message: str
    notes: list = dataclasses.field(default_factory=list)
    flags: list = dataclasses.field(default_factory=list)

    def lines(self):
        """The message and the notes, as lines."""
        return [line for line in self.message.splitlines() if line.strip()] + [f"note: {n}" for n in self.notes]


def teacher_functions(key):
    """The teacher's solutions of a key, run in this process (trusted code): {name: object}.

    Examples
    --------
    >>> teacher_functions({"solutions": {"ex1": "def double(x):\\n    return 2 * x"}})["double"](4)
    8
    """
    namespace = {"__name__": "teacher_solutions"}
    for line in key.get("prelude", []):
        exec(line, namespace)
    for source in key["solutions"].values():
        exec(compile(source, "<teacher's solution>", "exec"), namespace)
    return {k: v for k, v in namespace.items() if not k.startswith("__")}


def _prediction(spec, fn):
    from ._core import ExerciseError, call_student, fail, passed

    answer = call_student(fn)
    name = spec.get("name") or "your prediction"
    if not (isinstance(answer, str) and answer in ("up", "down", "same")):
        raise ExerciseError(f"{name}: predict one of ['down', 'same', 'up'], got {answer!r}")
    if answer != spec["expected"]:
        fail(
            f"{name}: the experiment goes the other way",
            spec["expected"],
            answer,
            spec.get("explanation") or "think about what the change does to the noise",
        )
    passed(
        f"{name}: {answer}, as the experiment shows" + (f". {spec['explanation']}" if spec.get("explanation") else "")
    )


def run_check(spec, function, solutions):
    """Run one check of a key here, the student's functions given by ``function(name)``; a :class:`Verdict`.

    A check that cannot finish on what the student's code returned fails (closed), with what went wrong.

    Examples
    --------
    >>> args = [{"function": "total"}]
    >>> spec = {"kind": "check", "checker": "check_total_spent", "args": args, "kwargs": {}, "seed": 3}
    >>> right = {"total_spent": lambda e, n, s: e if s == "fixed" else e * (1 - 0.5**n)}
    >>> run_check(spec, {"total": right["total_spent"]}.__getitem__, right).message
    'Correct: the total epsilon spent is right on all 5 cases'
    >>> run_check(spec, {"total": lambda e, n, s: e}.__getitem__, right).passed
    False
    """
    from .. import exercises

    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            if spec["kind"] == "prediction":
                _prediction(spec, function(spec["function"]))
            else:
                checker = getattr(exercises, spec["checker"])
                args = [function(a["function"]) if "function" in a else a["value"] for a in spec["args"]]
                kwargs = {**spec.get("kwargs", {}), "seed": spec["seed"]}
                if "solutions" in inspect.signature(checker).parameters:
                    kwargs["solutions"] = solutions
                checker(*args, **kwargs)
        return Verdict(True, out.getvalue().strip())
    except exercises.ExerciseError as exc:
        return Verdict(False, (out.getvalue() + str(exc)).strip())
    except Exception as exc:  # e.g. the student's exception outside a call the checker guards: fail closed
        return Verdict(False, f"the check could not finish: {type(exc).__name__}: {exc}")

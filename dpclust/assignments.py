"""Assignments from the paper notebooks (``make assignments``): nbgrader source notebooks and plain
student versions, with the same cell metadata.

In a teacher notebook, an exercise is a cell tagged ``exercise`` (a call of a
:mod:`dpclust.exercises` checker per part) next to a cell tagged ``solution``
(the reference solution: imports and function definitions only). A markdown
cell tagged ``solution`` holds the teacher's answer to a written question.

:func:`nbgrader_source` turns a teacher notebook into an nbgrader *source*
notebook, which ``nbgrader generate_assignment``, ``autograde`` and
``generate_feedback`` take unchanged:

* a solution code cell: each function body between ``### BEGIN SOLUTION`` and
  ``### END SOLUTION`` (signature and docstring stay: they are the task);
  metadata ``nbgrader = {solution: true, grade: false, grade_id: <cell id>}``;
* an exercise cell: one autograded test cell per check call (partial credit by
  part), ``{grade: true, locked: true, points, grade_id: <cell id>[-<part>]}``.
  The check is graded outside the student's kernel (:mod:`dpclust.grade`): the
  cell's hidden part, just before the check call, raises, so that without
  that grader the cell scores 0 (fail closed), and it reports the signs of a
  tampered kernel it sees; what the cell shows after its last check goes into a
  locked cell ``<cell id>-output`` that is not graded (it may call the
  functions of every part: one left unwritten costs no part);
* a markdown solution cell: a manually graded written answer,
  ``{solution: true, grade: true, points, grade_id: <cell id>}``;
* a locked header and, after the ``parameters`` cell, a locked cell that sends
  the notebook's tables and figures next to it, so it runs outside the
  compendium, and runs the small (``smoke``) profile unless ``DPCLUST_PROFILE``
  says otherwise.

A part is worth the ``points`` metadata of its teacher cell (default 1).
:func:`grading_key` is what the grader needs and the students never see: the
teacher's solutions, the notebook's setup imports a solution may lean on, and for
each test cell its check with a seed drawn now (other cases than the public
ones); :func:`export` writes it to ``grading/<stem>.json`` beside ``source/``,
which nbgrader never releases. :func:`student_version` is the same notebook as
nbgrader releases it (a handout). Neither :func:`export` overwrites a notebook
that exists: a student's work may be in it.
"""

from __future__ import annotations

import ast
import copy
import json
import re
import secrets
from pathlib import Path

from . import _paths
from ._optional import require

__all__ = [
    "assignments_dir",
    "EXPLANATION_PLACEHOLDER",
    "BEGIN",
    "END",
    "mark_solution",
    "split_checks",
    "trailing_output",
    "stub_solution",
    "nbgrader_source",
    "student_version",
    "check_spec",
    "setup_imports",
    "grading_key",
    "export",
]

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
SCHEMA_VERSION = 3

# The hidden part of every autograded test cell, just before its check call. The check is graded outside the
# kernel (dpclust.grade), whose verdict replaces what the cell does here; without that grader the cell raises and
# scores 0. Here it looks for signs of a tampered kernel (import hooks, replaced comparisons or builtins, fake
# modules, a changed switch, cells rewritten before they run, errors handled), which the grader reports.
GRADED_OUTSIDE = f"""{HIDDEN_BEGIN}
import os as _os, sys as _sys
_signs = [f"an import hook made in the notebook ({{type(_h).__name__}})" for _h in _sys.meta_path + _sys.path_hooks
          if "__main__" in (getattr(_h, "__module__", None), type(_h).__module__)]
for _m, _n in [("numpy", "allclose"), ("numpy", "isclose"), ("numpy", "array_equal"), ("numpy", "all"),
               ("scipy.stats", "kstest"), ("scipy.stats", "chisquare"), ("builtins", "isinstance")]:
    _f = getattr(_sys.modules.get(_m), _n, None)
    _home = (getattr(_f, "__module__", None), getattr(_f, "__globals__", {{}}).get("__name__"))
    if _f is not None and "__main__" in _home:
        _signs.append(f"{{_m}}.{{_n}} replaced by the notebook's code")
_signs += [f"module {{_k}} made in the notebook" for _k, _v in list(_sys.modules.items())
           if _k.split(".")[0] in ("dpclust", "dpclust_lib") and getattr(_v, "__spec__", None) is None]
_signs += ["DPCLUST_GRADED changed"] if _os.environ.get("DPCLUST_GRADED") != "1" else []
_signs += ["cells rewritten before they run"] if getattr(get_ipython(), "input_transformers_post", None) else []
_signs += ["errors handled by the notebook's code"] if getattr(get_ipython(), "custom_exceptions", ()) else []
raise type("GradedOutsideTheKernel", (Exception,), {{}})("; ".join(_signs) or "no sign of tampering")
{HIDDEN_END}"""

OUTPUTS = """# This assignment writes its tables and figures next to itself (it needs no compendium), and it runs the
# small profile unless DPCLUST_PROFILE says otherwise: the experiments take seconds, the checks are as strict.
import os

profile = os.environ.get("DPCLUST_PROFILE", "smoke")
results_dir = "results" if results_dir is None else results_dir
figures_dir = "figures" if figures_dir is None else figures_dir
# A graded run never skips cells. Without a data set it needs, the notebook stops with an error instead
# (experiments.skip_rest_of_notebook); the grade does not depend on it (see the header).
os.environ["DPCLUST_GRADED"] = "1"
"""

NBGRADER_CONFIG = '''"""nbgrader's configuration of the dpclust assignments (written once by make assignments)."""

import os

from dpclust import grade

c = get_config()  # noqa: F821 (nbgrader defines it)
c.CourseDirectory.course_id = "dpclust"
# Where release_assignment puts the assignments and students submit them: a folder every student's Jupyter can
# read and write (on JupyterHub a shared volume; nbgrader's default). The students' nbgrader configuration
# names the same course_id and exchange root.
c.Exchange.root = "/srv/nbgrader/exchange"
c.ClearSolutions.code_stub = {"python": "raise NotImplementedError('write your solution')"}
c.ClearSolutions.text_stub = %r
# The checks are graded outside the students' kernels and every process that runs a student's code runs in a
# sandbox (bubblewrap: the Python installation read-only, a scratch copy of the submission, no course folder,
# no network). Before nbgrader runs a submission, its solution cells run in a sandboxed process of their own on
# cases drawn when the assignment was generated (grading/, never released); the notebook itself runs in another
# sandbox, for the feedback; those verdicts replace the test cells' outputs. timeout: seconds per call of a
# student's function and per cell (one that loops forever loses that check's points, not the others). Without
# bubblewrap, autograde refuses; unsandboxed=True grades anyway, with the students' code under your rights (it
# could read the keys and write the gradebook). Feedback waits for the written answers; nbgrader export writes
# what is pending and what nbgrader refused (dpclust.grade).
_outside = grade.OutsideTheKernel(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "grading"), timeout=300, unsandboxed=False
)
c.Autograde.autograde_preprocessors = _outside.autograde_preprocessors()
c.GenerateFeedback.preprocessors = _outside.feedback_preprocessors()
c.ExportApp.plugin_class = grade.export_plugin()
# release_feedback releases every feedback it can, and names the submissions that did not come through the exchange
c.ExchangeFactory.release_feedback = grade.release_feedback_plugin()
'''

# The modules a graded solution may import and lean on from the notebook's setup (numpy, scipy, the standard
# library's mathematics); never dpclust or dpclust_lib, which the graded run cannot import.
SETUP_MODULES = {"numpy", "scipy", "math", "cmath", "itertools", "functools", "operator", "collections", "fractions"}
SETUP_MODULES |= {"statistics", "decimal", "numbers", "warnings", "dataclasses", "typing"}


def assignments_dir():
    """``<project>/assignments``, where :func:`export` writes by default.

    Examples
    --------
    >>> assignments_dir().name
    'assignments'
    """
    return _paths.project_dir() / "assignments"


HEADER = """# Assignment: {title}

This is the student version of `{name}`. It runs like the original, except that every exercise
function is left for you to write, and that it runs the small (`smoke`) profile: the experiments take
seconds, and the checks are exactly as strict as in the paper's profile (start Jupyter with
`DPCLUST_PROFILE=paper` for the full runs).

1. Cells marked **Exercise** describe a task. The cell just before each check holds a function whose
   body is `raise NotImplementedError(...)`: replace that line with your solution.
2. Run the check cell below it. A check prints `Correct: ...` when your answer is right. When it is
   not, it says what was expected, what came back, and gives a hint.
3. A predict-then-run exercise asks for your prediction first (a function that returns "up", "down"
   or "same"), then runs a small experiment. Answer every question a prompt asks in the cell below its
   check that starts with **Your answer.** (it is graded by hand).
4. Before you hand in, run the whole notebook from the top (Kernel > Restart Kernel and Run All Cells).

**How it is graded.** The grader does not run the checks in this notebook. It runs your solution cells on
their own, in a fresh Python process that has numpy, scipy and the standard library (and the imports of
this notebook's setup from them) but neither `dpclust` nor `dpclust_lib`, calls your functions on other
cases and seeds than the checks here, and compares what they return with the teacher's answers. So:
everything a function needs goes in the solution cells (helpers too, with their imports); a function that
calls the compendium's code scores 0, as one that reads or writes files does; a warning or a message on
stderr costs nothing. A right answer passes both here and there. The randomised checks use a stated error
rate: a correct solution is rejected at most once in a thousand seeds.
"""


EXPLANATION_PLACEHOLDER = "**Your answer.** Replace this line by two or three sentences that answer the question above."


def _tags(cell):
    return cell.metadata.get("tags", [])


def _solution_functions(source):
    """The function definitions of a solution cell; a ValueError for anything but imports and functions."""
    tree = ast.parse(source)
    for node in tree.body:
        if not isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef)):
            raise ValueError(
                f"a solution cell may hold only imports and function definitions; found "
                f"{type(node).__name__} at line {node.lineno}:\n{source}"
            )
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    if not functions:
        raise ValueError(f"a solution cell holds no function definition:\n{source}")
    return functions


def _body_lines(lines, node):
    """(first, last) 0-based lines of a function's body after its docstring, with the comments above it."""
    docstring = ast.get_docstring(node) is not None
    first = node.body[0].end_lineno if docstring else node.body[0].lineno - 1
    if not docstring:  # comments between the signature and the first statement belong to the solution
        while first - 1 >= node.lineno and lines[first - 1].strip().startswith("#"):
            first -= 1
    return first, node.end_lineno - 1


def mark_solution(source):
    """A solution cell with each function body between nbgrader's solution markers.

    The signature and the docstring stay outside the markers: they are the task.

    Parameters
    ----------
    source : str
        A solution cell: imports and function definitions only (else a ValueError).

    Returns
    -------
    str

    Examples
    --------
    >>> print(mark_solution('def double(x):\\n    "Twice x."\\n    return 2 * x\\n'))
    def double(x):
        "Twice x."
        ### BEGIN SOLUTION
        return 2 * x
        ### END SOLUTION
    """
    lines = source.splitlines()
    for node in reversed(_solution_functions(source)):  # from the bottom: earlier line numbers stay valid
        first, last = _body_lines(lines, node)
        if first > last:  # a docstring alone: nothing to hide
            continue
        indent = re.match(r"\s*", lines[node.body[-1].lineno - 1]).group(0)
        lines[first : last + 1] = [indent + BEGIN, *lines[first : last + 1], indent + END]
    return "\n".join(lines)


def _replace_regions(source, begin, end, stub):
    """``source`` with every begin..end region replaced by ``stub`` (None: removed), at the region's indent."""
    out, inside = [], False
    for line in source.splitlines():
        if line.strip() == begin:
            inside = True
            if stub is not None:
                out.append(re.match(r"\s*", line).group(0) + stub)
        elif line.strip() == end and inside:
            inside = False
        elif not inside:
            out.append(line)
    return "\n".join(out)


def stub_solution(source):
    """A solution cell with every function's body replaced by ``raise NotImplementedError('write <name>')``.

    Imports, signatures and docstrings are kept (they are part of the task);
    anything but imports and function definitions is an authoring error.

    Examples
    --------
    >>> print(stub_solution('def double(x):\\n    "Twice x."\\n    return 2 * x\\n'))
    def double(x):
        "Twice x."
        raise NotImplementedError('write double')
    """
    lines = source.splitlines()
    for node in reversed(_solution_functions(source)):
        first, last = _body_lines(lines, node)
        indent = re.match(r"\s*", lines[node.body[-1].lineno - 1]).group(0)
        lines[first : last + 1] = [f"{indent}raise NotImplementedError('write {node.name}')"]
    return "\n".join(lines)


def _title(nb, fallback):
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return fallback


def _nbgrader(cell, grade_id, solution=False, grade=False, locked=False, points=None):
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": SCHEMA_VERSION}
    meta.update({"solution": solution, "task": False})
    if grade:
        meta["points"] = points
    cell.metadata["nbgrader"] = meta
    return cell


def _check_statement(node):
    call = node.value if isinstance(node, ast.Expr) else None
    func = call.func if isinstance(call, ast.Call) else None
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return bool(name and name.startswith("check_"))


def _prediction_first(source):
    """A predict-then-run cell with its top-level prints moved after its prediction's check: a student sees the
    experiment's result only once the check has said whether the prediction was right.

    Examples
    --------
    >>> print(_prediction_first("x = run()\\nprint(x)\\nexercises.check_prediction('n', guess, 0, x)"))
    x = run()
    exercises.check_prediction('n', guess, 0, x)
    print(x)
    """
    body = ast.parse(source).body
    checks = [n.lineno for n in body if _check_statement(n) and _called(n) == "check_prediction"]
    prints = [
        n for n in body if checks and n.end_lineno < checks[0] and isinstance(n, ast.Expr) and _called(n) == "print"
    ]
    if not prints:
        return source
    lines = source.splitlines()
    moved = [i for n in prints for i in range(n.lineno - 1, n.end_lineno)]
    return "\n".join([line for i, line in enumerate(lines) if i not in moved] + [lines[i] for i in moved])


def _called(node):
    """The name of the function a statement calls (an expression statement), or ``""``."""
    call = node.value if isinstance(node, ast.Expr) else None
    func = call.func if isinstance(call, ast.Call) else None
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _parts(source):
    """(the check parts, the statements after the last check) of an exercise cell's source."""
    source = _prediction_first(source)
    lines = source.splitlines()
    body = ast.parse(source).body
    starts = [node.lineno - 1 for node in body if _check_statement(node)]
    if not starts:
        return [source], ""
    last = max(node.end_lineno for node in body if _check_statement(node))
    cuts = [0, *starts[1:], last]
    parts = ["\n".join(lines[a:b]).strip("\n") for a, b in zip(cuts[:-1], cuts[1:])]
    return parts, "\n".join(lines[last:]).strip("\n")


def split_checks(source):
    """An exercise cell's source cut into its parts, one per top-level ``check_*(...)`` statement.

    Statements before the first check go with it; those after the last check are
    not part of any (see :func:`trailing_output`).

    Examples
    --------
    >>> split_checks("from dpclust import exercises\\nexercises.check_a(f)\\nexercises.check_b(g)\\nprint(1)")
    ['from dpclust import exercises\\nexercises.check_a(f)', 'exercises.check_b(g)']
    """
    return _parts(source)[0]


def trailing_output(source):
    """The statements of an exercise cell after its last check (what it prints or shows), or ``""``.

    They go into a cell of their own that is not graded: an error there (a function
    of another part left unwritten) costs no check its points.

    Examples
    --------
    >>> trailing_output("exercises.check_a(f)\\nprint(f(1))")
    'print(f(1))'
    >>> trailing_output("exercises.check_a(f)")
    ''
    """
    return _parts(source)[1]


def _graded_outside(part):
    """A part with the hidden lines that make it fail in the kernel inserted just before its check call."""
    lines = part.splitlines()
    first = ast.parse(part).body[-1].lineno - 1
    return "\n".join([*lines[:first], GRADED_OUTSIDE, *lines[first:]])


def _test_cells(cell, nbformat):
    """The autograded test cells of one exercise cell: one per part, the hidden lines before its check call;
    then, if the cell shows something after its last check, a locked cell that is not graded, with those
    statements."""
    parts, output = _parts(cell.source)
    points = float(cell.metadata.get("points", 1))
    out = []
    for i, part in enumerate(parts):
        new = nbformat.v4.new_code_cell(_graded_outside(part), metadata=copy.deepcopy(dict(cell.metadata)))
        new.metadata.pop("points", None)
        new["id"] = cell["id"] if i == 0 else f"{cell['id']}-{i + 1}"
        out.append(_nbgrader(new, new["id"], grade=True, locked=True, points=points))
    if output:
        new = nbformat.v4.new_code_cell(output, metadata={"tags": []})
        new["id"] = f"{cell['id']}-output"
        out.append(_nbgrader(new, new["id"], locked=True))
    return out


def _header(nb, name, nbformat):
    header = nbformat.v4.new_markdown_cell(HEADER.format(title=_title(nb, name), name=name))
    header["id"] = "assignment-header"
    return _nbgrader(header, "assignment-header", locked=True)


def _outputs_cell(nbformat):
    cell = nbformat.v4.new_code_cell(OUTPUTS)
    cell["id"] = "assignment-outputs"
    return _nbgrader(cell, "assignment-outputs", locked=True)


def _declares_output_dirs(cell):
    declares = [re.search(rf"^{name}\s*(:[^=\n]*)?=", cell.source, re.M) for name in ("results_dir", "figures_dir")]
    return all(declares)


# What the teacher notebooks say of themselves that is false in a student's copy (the answer cells are empty there)
TEACHER_ONLY = re.compile(
    r";?\s*here it holds our (answer|explanation)[,;] the student version (has )?an empty one|"
    r"\s*\(here it holds our (answer|explanation)[,;] the student version (has )?an empty one\)"
)


def _for_students(source):
    """A markdown cell's text as a student reads it in their copy.

    Examples
    --------
    >>> _for_students("(graded by hand;\\n  here it holds our answer, the student version an empty one).")
    '(graded by hand).'
    """
    return TEACHER_ONLY.sub("", source)


def nbgrader_source(nb, name):
    """The nbgrader source notebook of a teacher notebook (a new notebook object; see the module docstring).

    Parameters
    ----------
    nb : nbformat.NotebookNode
        The teacher notebook.
    name : str
        Its file name (named in the header).

    Examples
    --------
    >>> import nbformat
    >>> teacher = nbformat.v4.new_notebook()
    >>> sol = nbformat.v4.new_code_cell("def f(x):\\n    return x", id="ex1-solution", metadata={"tags": ["solution"]})
    >>> chk = nbformat.v4.new_code_cell("exercises.check_f(f)", id="ex1-check", metadata={"tags": ["exercise"]})
    >>> teacher.cells = [sol, chk]
    >>> [c.metadata["nbgrader"]["grade_id"] for c in nbgrader_source(teacher, "99_x.ipynb").cells]
    ['assignment-header', 'ex1-solution', 'ex1-check']
    """
    nbformat = require("nbformat", "notebooks")
    out = nbformat.v4.new_notebook(metadata={k: v for k, v in nb.metadata.items() if k != "papermill"})
    cells = [_header(nb, name, nbformat)]
    for cell in nb.cells:
        new = nbformat.from_dict(copy.deepcopy(dict(cell)))
        new.metadata = {k: v for k, v in cell.metadata.items() if k not in {"papermill", "execution", "nbgrader"}}
        if new.cell_type == "code":
            new.outputs, new.execution_count = [], None
        elif "solution" not in _tags(cell):
            new.source = _for_students(new.source)
        if "exercise" in _tags(cell) and cell.cell_type == "code":
            cells.extend(_test_cells(new, nbformat))
            continue
        if "solution" in _tags(cell):
            points = float(new.metadata.pop("points", 1))
            if new.cell_type == "code":
                new.source = mark_solution(cell.source)
                _nbgrader(new, cell["id"], solution=True)
            else:
                _nbgrader(new, cell["id"], solution=True, grade=True, points=points)
        cells.append(new)
        if "parameters" in _tags(cell) and _declares_output_dirs(cell):
            cells.append(_outputs_cell(nbformat))
    out.cells = cells
    return out


def student_version(nb, name):
    """The student version of a teacher notebook: its nbgrader source as nbgrader releases it.

    Solution regions become ``raise NotImplementedError('write <function>')``,
    hidden tests are dropped, written answers become
    :data:`EXPLANATION_PLACEHOLDER`; the nbgrader metadata stays, so
    ``python -m dpclust grade`` and nbgrader read the same cells.

    Examples
    --------
    >>> import nbformat
    >>> teacher = nbformat.v4.new_notebook()
    >>> teacher.cells = [nbformat.v4.new_code_cell("def f(x):\\n    return x", metadata={"tags": ["solution"]})]
    >>> print(student_version(teacher, "99_x.ipynb").cells[1].source)
    def f(x):
        raise NotImplementedError('write f')
    """
    out = nbgrader_source(nb, name)
    teacher = {cell.get("id"): cell.source for cell in nb.cells}
    for cell in out.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and cell.cell_type == "code":
            cell.source = stub_solution(teacher[cell.get("id")])
        elif meta.get("solution"):
            cell.source = EXPLANATION_PLACEHOLDER
        elif meta.get("grade"):
            cell.source = _replace_regions(cell.source, HIDDEN_BEGIN, HIDDEN_END, None)
    return out


def _literal(node, what):
    try:
        value = ast.literal_eval(node)
        json.dumps(value)
        return value
    except (ValueError, TypeError, SyntaxError):
        raise ValueError(f"{what} must be a solution's function or a literal, got {ast.unparse(node)!r}") from None


def check_spec(statement, functions):
    """What a graded run calls for one check statement of an exercise cell (a JSON-able dict, without its seed).

    Parameters
    ----------
    statement : str
        The check call, e.g. ``exercises.check_eq9_variance(eq9_variance_expected, reporters="expected")``.
    functions : collection of str
        The names the teacher's solution cells define: an argument of that name is the student's function.

    Returns
    -------
    dict
        ``{"kind": "check", "checker", "args", "kwargs"}``, every argument either ``{"function": name}`` or
        ``{"value": literal}``; for ``check_prediction``, ``{"kind": "prediction", "name", "function",
        "explanation"}`` (the expected answer is the teacher's, added by :func:`grading_key`).

    Examples
    --------
    >>> spec = check_spec('exercises.check_eq9_variance(variance, reporters="expected")', {"variance"})
    >>> spec["checker"], spec["args"], spec["kwargs"]
    ('check_eq9_variance', [{'function': 'variance'}], {'reporters': 'expected'})
    >>> check_spec("exercises.check_prediction(f'n = {n}', guess, a, b, explanation='noise')", {"guess"})["function"]
    'guess'
    """
    call = ast.parse(statement).body[-1].value
    checker = call.func.attr if isinstance(call.func, ast.Attribute) else call.func.id
    if checker == "check_prediction":
        name = call.args[0]
        explanation = next((k.value for k in call.keywords if k.arg == "explanation"), None)
        return {
            "kind": "prediction",
            "name": name.value if isinstance(name, ast.Constant) else "your prediction",
            "function": call.args[1].id,
            "explanation": _literal(explanation, "explanation") if explanation is not None else "",
        }
    args = [
        {"function": a.id} if isinstance(a, ast.Name) and a.id in functions else {"value": _literal(a, checker)}
        for a in call.args
    ]
    return {
        "kind": "check",
        "checker": checker,
        "args": args,
        "kwargs": {k.arg: _literal(k.value, k.arg) for k in call.keywords},
    }


def setup_imports(nb):
    """The import lines of a notebook's setup (its code cells that are no solution) from :data:`SETUP_MODULES`.

    A graded run runs them before the student's solution cells, so a solution may lean on
    ``np`` or ``math`` as it does in the notebook; nothing else of the setup exists there.

    Examples
    --------
    >>> import nbformat
    >>> nb = nbformat.v4.new_notebook()
    >>> setup = "import numpy as np\\nimport pandas as pd\\nfrom scipy import stats\\nx = 1"
    >>> nb.cells = [nbformat.v4.new_code_cell(setup)]
    >>> setup_imports(nb)
    ['import numpy as np', 'from scipy import stats']
    """
    lines = []
    for cell in nb.cells:
        if cell.cell_type != "code" or "solution" in _tags(cell) or "exercise" in _tags(cell):
            continue
        try:
            body = ast.parse(cell.source).body
        except SyntaxError:  # IPython magics: not a setup a graded run needs
            continue
        for node in body:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [getattr(node, "module", "")]
            if isinstance(node, (ast.Import, ast.ImportFrom)) and all(
                (n or "").split(".")[0] in SETUP_MODULES for n in names
            ):
                line = ast.unparse(node)
                lines += [] if line in lines else [line]
    return lines


def grading_key(nb, name, draw_seed=None):
    """What the grader needs for one notebook and the students never see; a JSON-able dict.

    ``solutions`` are the teacher's solution cells (the references of the exercises the library does
    not answer), ``prelude`` the :func:`setup_imports`, ``checks`` one :func:`check_spec` per test cell
    (``grade_id``), each with a ``seed`` drawn now (a graded run's cases come from it), or, for a
    prediction, the teacher's answer as ``expected``. Each check is run once here on the teacher's
    solutions, and a seed on which they would fail a statistical test is drawn again.

    Parameters
    ----------
    nb : nbformat.NotebookNode
        The teacher notebook.
    name : str
        Its file name.
    draw_seed : callable, optional
        ``() -> int``, the seeds (default: the ``secrets`` module's randomness).

    Examples
    --------
    >>> import nbformat
    >>> nb = nbformat.v4.new_notebook()
    >>> nb.cells = [
    ...     nbformat.v4.new_code_cell("import math", id="setup"),
    ...     nbformat.v4.new_code_cell("def total_spent(e, n, s):\\n    return e if s == 'fixed' else e * (1 - 0.5**n)",
    ...                               id="ex1-solution", metadata={"tags": ["solution"]}),
    ...     nbformat.v4.new_code_cell("exercises.check_total_spent(total_spent)", id="ex1-check",
    ...                               metadata={"tags": ["exercise"]}),
    ... ]
    >>> key = grading_key(nb, "99_x.ipynb", draw_seed=lambda: 7)
    >>> key["prelude"], key["checks"]["ex1-check"]["checker"], key["checks"]["ex1-check"]["seed"]
    (['import math'], 'check_total_spent', 7)
    """
    from .exercises._checks import teacher_functions

    draw_seed = draw_seed or (lambda: secrets.randbelow(2**31))
    solutions = {c["id"]: c.source for c in nb.cells if c.cell_type == "code" and "solution" in _tags(c)}
    key = {"notebook": name, "prelude": setup_imports(nb), "solutions": solutions, "checks": {}}
    teacher = teacher_functions(key)
    source = nbgrader_source(nb, name)
    for cell in source.cells:
        meta = cell.metadata.get("nbgrader", {})
        if not meta.get("grade") or cell.cell_type != "code":
            continue
        spec = check_spec(_replace_regions(cell.source, HIDDEN_BEGIN, HIDDEN_END, None), teacher)
        key["checks"][meta["grade_id"]] = _seeded(spec, teacher, draw_seed, meta["grade_id"])
    return key


def _seeded(spec, teacher, draw_seed, grade_id):
    """The spec with a seed on which the teacher's solutions pass (or the teacher's prediction)."""
    from .exercises._checks import run_check

    if spec["kind"] == "prediction":
        return {**spec, "expected": teacher[spec["function"]]()}
    for _ in range(5):  # a right answer fails a statistical check on about one seed in a thousand
        seeded = {**spec, "seed": draw_seed()}
        verdict = run_check(seeded, teacher.__getitem__, teacher)
        if verdict.passed:
            return seeded
    raise ValueError(f"the teacher's solution fails the check of {grade_id} on every seed drawn:\n{verdict.message}")


def _refuse_existing(targets):
    existing = [str(t) for t in targets if Path(t).exists()]
    if existing:
        raise ValueError(
            f"not overwriting {', '.join(existing)}: a student's or a teacher's work may be in it. "
            "Move it away first, or write to another folder (--out)."
        )


def export(notebooks=None, out_dir=None, kind="nbgrader"):
    """Write the assignments of the paper notebooks; return the paths written.

    Parameters
    ----------
    notebooks : list of paths, optional
        Teacher notebooks (default: 01-05 of the compendium).
    out_dir : path, optional
        Default: ``<project>/assignments``.
    kind : {"nbgrader", "student"}
        ``"nbgrader"``: an nbgrader course folder, ``source/<stem>/<stem>.ipynb`` and
        ``grading/<stem>.json`` (:func:`grading_key`) per notebook, and ``nbgrader_config.py``
        (kept if it exists). ``"student"``: ``<name>.ipynb``, the student version (a handout), per notebook.

    Nothing that exists is overwritten (a ValueError names it, and nothing is written).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> import nbformat
    >>> teacher = nbformat.v4.new_notebook()
    >>> teacher.cells = [
    ...     nbformat.v4.new_code_cell(
    ...         "def total_spent(epsilon, n_releases, schedule):\\n"
    ...         "    return epsilon if schedule == 'fixed' else epsilon * (1 - 0.5**n_releases)",
    ...         id="ex1-solution",
    ...         metadata={"tags": ["solution"]},
    ...     ),
    ...     nbformat.v4.new_code_cell(
    ...         "from dpclust import exercises\\nexercises.check_total_spent(total_spent)",
    ...         id="ex1-check",
    ...         metadata={"tags": ["exercise"]},
    ...     ),
    ... ]
    >>> tmp = tempfile.TemporaryDirectory()
    >>> folder = pathlib.Path(tmp.name)
    >>> nbformat.write(teacher, folder / "99_hw.ipynb")
    >>> [p.relative_to(folder).as_posix() for p in export([folder / "99_hw.ipynb"], folder / "course")]
    ['course/source/99_hw/99_hw.ipynb', 'course/grading/99_hw.json', 'course/nbgrader_config.py']
    >>> export([folder / "99_hw.ipynb"], folder / "course")
    Traceback (most recent call last):
    ...
    ValueError: not overwriting ...: a student's or a teacher's work may be in it. ...
    >>> tmp.cleanup()
    """
    if kind not in ("nbgrader", "student"):
        raise ValueError(f"kind must be 'nbgrader' or 'student', got kind={kind!r}")
    nbformat = require("nbformat", "notebooks")
    out_dir = Path(out_dir) if out_dir is not None else assignments_dir()
    paths = (
        [Path(p) for p in notebooks]
        if notebooks
        else sorted(p for p in _paths.notebook_dir().glob("[0-9][0-9]_*.ipynb") if not p.name.startswith("00_"))
    )
    make = nbgrader_source if kind == "nbgrader" else student_version
    targets = [out_dir / "source" / p.stem / p.name if kind == "nbgrader" else out_dir / p.name for p in paths]
    keys = [out_dir / "grading" / f"{p.stem}.json" for p in paths] if kind == "nbgrader" else []
    _refuse_existing(targets + keys)
    written = []
    for path, target in zip(paths, targets):
        teacher = nbformat.read(path, as_version=4)
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(make(teacher, path.name), target)
        written.append(target)
        if kind == "nbgrader":
            keys[0].parent.mkdir(parents=True, exist_ok=True)
            key = out_dir / "grading" / f"{path.stem}.json"
            key.write_text(json.dumps(grading_key(teacher, path.name), indent=1))
            written.append(key)
    config = out_dir / "nbgrader_config.py"
    if kind == "nbgrader" and not config.exists():
        config.write_text(NBGRADER_CONFIG % EXPLANATION_PLACEHOLDER)
        written.append(config)
    return written

"""``grade``: run student notebooks with the teacher's own checks and write a gradebook.

For a course without nbgrader: it reads the same cells as nbgrader does, those of
the teacher notebook's nbgrader source (:func:`dpclust.assignments.nbgrader_source`).
A student notebook (``dpclust.assignments.export(kind="student")``, or a submission
made from nbgrader's release) is graded as follows. Every autograded test cell of
the source (one per check, ``nbgrader.grade_id``) replaces the student's copy of
it (matched by cell id; a deleted one is put back after the cell that precedes it
in the source), so a check that was edited or deleted still runs as the teacher
wrote it, hidden part included: it imports the checkers afresh, so a solution cell
that replaces ``exercises.check_*`` does not grade itself. Each check is recorded
(passed, and the checker's message) instead of stopping the cell, and is worth the
cell's ``nbgrader.points``. The notebook then runs under the smoke profile with a
time limit per cell and one per notebook, its results and figures in a temporary
folder, the compendium (for the published numbers) found as where the teacher
notebook lies, and it goes on past failing cells, so a wrong answer early does
not hide later ones. A notebook that cannot be read, runs past its limit, or
whose kernel dies still gets its rows; its ``(notebook)`` row is ``passed`` only
when every cell ran without an error.

This is grading, not a sandbox: the student's code runs with the grader's rights
(run it in a container or as an unprivileged user when that matters); a student
who patches the library itself, or the import system, in the kernel is not detected.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re
import tempfile
import time
from pathlib import Path

import pandas as pd

from ._optional import require

__all__ = ["GRADE_COLUMNS", "record", "exercises_of", "graded_notebook", "grade_notebook", "grade"]

GRADE_COLUMNS = ["student", "submission", "notebook", "exercise", "passed", "message", "points", "max_points"]
NOTEBOOK_ROW = "(notebook)"  # the row that says how the run went; it carries no points
DEFAULT_TIME_LIMIT = 600  # seconds per notebook
CELL_TIME_LIMIT = 300  # seconds per cell, as in the nbgrader configuration that make assignments writes


def _nbformat():
    # nbformat comes with the [notebooks] extra: grading needs it, the library alone does not.
    return require("nbformat", "notebooks")


def record(path, exercise, call):
    """Run one check for the grader: append (exercise, passed, message) to ``path`` as a JSON line.

    The check's failure does not propagate, so the cell goes on to its next check.
    A checker that returns a result object with ``passed``/``message`` is read from
    it; one that prints ``Correct: ...`` and returns None passed.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> from dpclust.exercises import check_number
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "checks.jsonl"
    ...     _ = record(path, "check_number(x)", lambda: check_number("x", 1.0, 2.0))
    ...     print(json.loads(path.read_text())["passed"])
    Not yet: x is not right (relative tolerance 1e-06)
      expected: 2.0
      got:      1.0
      hint:     recheck the derivation step by step
    False
    """
    buffer = io.StringIO()
    result = None
    try:
        with contextlib.redirect_stdout(buffer):
            result = call()
    except Exception as exc:  # ExerciseError (an AssertionError) or anything else the check raised
        passed = False
        message = str(exc) if isinstance(exc, AssertionError) else f"{type(exc).__name__}: {exc}"
    else:
        passed = bool(getattr(result, "passed", True))
        message = str(getattr(result, "message", "") or buffer.getvalue().strip())
    with open(path, "a") as sink:
        sink.write(json.dumps({"exercise": exercise, "passed": passed, "message": message}) + "\n")
    print(buffer.getvalue(), end="")
    if not passed:
        print(f"Not yet: {message}")
    return result


def _check_name(call):
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name if name.startswith("check_") else None


def _exercise_id(call):
    """``check_x(student_function, ...)``: the checker and the names (and constant options) it is given."""
    args = [ast.unparse(a) for a in call.args if isinstance(a, ast.Name)]
    args += [
        f"{k.arg}={ast.unparse(k.value)}"
        for k in call.keywords  # options, not explanations
        if isinstance(k.value, ast.Constant) and len(ast.unparse(k.value)) <= 20
    ]
    return f"{_check_name(call)}({', '.join(args)})"


def _check_calls(source):
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _check_name(n)]
    return sorted(calls, key=lambda n: (n.lineno, n.col_offset))


def _is_test_cell(cell):
    meta = cell.metadata.get("nbgrader", {})
    return cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")


def _test_cells(teacher):
    """The autograded test cells of the teacher notebook's nbgrader source, in order."""
    from .assignments import nbgrader_source

    return [c for c in nbgrader_source(teacher, "").cells if _is_test_cell(c)]


def exercises_of(teacher):
    """The exercises of a teacher notebook: a DataFrame (exercise, cell_id, points), in order.

    One exercise per call of a ``check_*`` function in an autograded test cell of
    the notebook's nbgrader source (a cell tagged ``exercise`` gives one test cell
    per check); each is worth its cell's ``nbgrader.points`` (the teacher cell's
    ``points`` metadata, default 1).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> import nbformat
    >>> teacher = nbformat.v4.new_notebook()
    >>> teacher.cells = [
    ...     nbformat.v4.new_code_cell(
    ...         "def double(x):\\n    return 2 * x", id="ex1-solution", metadata={"tags": ["solution"]}
    ...     ),
    ...     nbformat.v4.new_code_cell(
    ...         "from dpclust import exercises\\nexercises.check_number('double(2)', double(2), 4)",
    ...         id="ex1-check",
    ...         metadata={"tags": ["exercise"]},
    ...     ),
    ... ]
    >>> exercises_of(teacher)
           exercise    cell_id  points
    0  check_number()  ex1-check     1.0
    """
    rows, seen = [], {}
    for cell in _test_cells(teacher):
        for call in _check_calls(cell.source):
            name = _exercise_id(call)
            seen[name] = seen.get(name, 0) + 1
            if seen[name] > 1:
                name = f"{name} #{seen[name]}"
            points = float(cell.metadata["nbgrader"]["points"])
            rows.append({"exercise": name, "cell_id": cell.get("id"), "points": points})
    return pd.DataFrame(rows, columns=["exercise", "cell_id", "points"])


class _Instrument(ast.NodeTransformer):
    """Turn each ``check_*(...)`` call into ``record(path, exercise, lambda: check_*(...))``."""

    def __init__(self, path, names):
        self.path, self.names = path, names  # names: (line, column) of the call -> exercise

    def visit_Call(self, node):
        self.generic_visit(node)
        if not _check_name(node):
            return node
        recorder = ast.parse('__import__("dpclust.grade", fromlist=["record"]).record', mode="eval").body
        thunk = ast.Lambda(
            args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]), body=node
        )
        name = self.names[(node.lineno, node.col_offset)]
        return ast.copy_location(
            ast.Call(recorder, [ast.Constant(str(self.path)), ast.Constant(name), thunk], []), node
        )


def _instrumented(source, path, names):
    """The cell's source with every check recorded under its exercise name (``names``, in source order)."""
    where = {(c.lineno, c.col_offset): name for c, name in zip(_check_calls(source), names)}
    tree = _Instrument(path, where).visit(ast.parse(source))
    return ast.unparse(ast.fix_missing_locations(tree))


def graded_notebook(student, teacher, record_path):
    """The notebook that is run: the student's, with the test cells of the teacher's nbgrader source, instrumented.

    Returns (notebook, ids of the instrumented cells).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> import nbformat
    >>> teacher = nbformat.v4.new_notebook()
    >>> teacher.cells = [
    ...     nbformat.v4.new_code_cell(
    ...         "def double(x):\\n    return 2 * x", id="ex1-solution", metadata={"tags": ["solution"]}
    ...     ),
    ...     nbformat.v4.new_code_cell(
    ...         "from dpclust import exercises\\nexercises.check_number('double(2)', double(2), 4)",
    ...         id="ex1-check",
    ...         metadata={"tags": ["exercise"]},
    ...     ),
    ... ]
    >>> from dpclust.assignments import student_version
    >>> nb, instrumented = graded_notebook(student_version(teacher, "hw.ipynb"), teacher, "checks.jsonl")
    >>> sorted(instrumented), "record(" in nb.cells[-1].source
    (['ex1-check'], True)
    """
    from .assignments import nbgrader_source

    exercises = exercises_of(teacher)
    teacher_cells = list(nbgrader_source(teacher, "").cells)
    exercise_ids = {c.get("id") for c in teacher_cells if _is_test_cell(c)}
    kept = [
        c
        for c in student.cells
        if "exercise" not in c.metadata.get("tags", []) and not _is_test_cell(c) and c.get("id") not in exercise_ids
    ]
    position = {c.get("id"): i for i, c in enumerate(kept)}
    inserts = {}  # index in kept after which teacher cells go (-1: at the top)
    for t, cell in enumerate(teacher_cells):
        if cell.get("id") not in exercise_ids:
            continue
        anchor = next((position[c.get("id")] for c in reversed(teacher_cells[:t]) if c.get("id") in position), -1)
        new = _nbformat().from_dict(dict(cell))
        new.outputs, new.execution_count = [], None
        names = exercises.loc[exercises["cell_id"] == cell.get("id"), "exercise"].tolist()
        new.source = _instrumented(cell.source, record_path, names)
        inserts.setdefault(anchor, []).append(new)
    cells = list(inserts.get(-1, []))
    for i, cell in enumerate(kept):
        cells.append(cell)
        cells.extend(inserts.get(i, []))
    out = _nbformat().from_dict(dict(student))
    out.cells = cells
    return out, {c.get("id") for group in inserts.values() for c in group}


def _error_of(cell):
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return f"{output.get('ename')}: {output.get('evalue')}"
    return None


def _run(nb, folder, time_limit, home=None):
    """Execute ``nb`` (errors allowed) within ``time_limit`` seconds in all and :data:`CELL_TIME_LIMIT` per
    cell, with the compendium ``home`` (for the published numbers); return (status, detail)."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    from .reproduce import kernel_environment, kernel_stderr_to

    deadline = time.monotonic() + time_limit
    client = NotebookClient(
        nb,
        kernel_name="python3",
        allow_errors=True,
        startup_timeout=max(60, time_limit),
        timeout_func=lambda cell: max(1, int(min(CELL_TIME_LIMIT, deadline - time.monotonic()))),
        resources={"metadata": {"path": str(folder)}},
    )
    env = {"DPCLUST_PROFILE": "smoke", "JUPYTER_PREFER_ENV_PATH": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    if home is not None:  # the run's folder is a temporary one, outside the compendium
        env["DPCLUST_HOME"] = str(home)
    with kernel_environment(**env), kernel_stderr_to(Path(folder) / "kernel-stderr.log"):
        try:
            client.execute()
        except CellTimeoutError:
            if time.monotonic() < deadline:
                return "time limit", f"had a cell run past its time limit of {CELL_TIME_LIMIT} s"
            return "time limit", f"ran past its time limit of {time_limit} s"
        except DeadKernelError as exc:
            return "crashed", f"the kernel died: {exc}"
        except Exception as exc:  # e.g. a kernel that does not start
            return "crashed", f"{type(exc).__name__}: {exc}"
    if time.monotonic() > deadline:
        return "time limit", f"ran past its time limit of {time_limit} s"
    return "ok", ""


def _teacher_for(path, teacher):
    from .reproduce import list_notebooks, resolve_notebook

    if teacher is not None:
        return resolve_notebook(str(teacher))
    candidates = [p for p in list_notebooks() if not p.stem.startswith("00_")]
    by_name = [p for p in candidates if p.stem in Path(path).name]
    if len(by_name) == 1:
        return by_name[0]
    with contextlib.suppress(Exception):  # the header of a student version names its notebook
        text = json.dumps(json.loads(Path(path).read_text())["cells"][:2])
        by_header = [p for p in candidates if f"student version of `{p.name}`" in text]
        if len(by_header) == 1:
            return by_header[0]
    raise ValueError(
        f"no teacher notebook matches {Path(path).name}: name it after one "
        f"({', '.join(p.stem for p in candidates)}) or pass --teacher"
    )


def _rows(base, exercises, results, status_passed, status_message):
    """The gradebook rows of one submission: its ``(notebook)`` row, then one per exercise."""
    out = [
        {**base, "exercise": NOTEBOOK_ROW, "passed": status_passed, "message": status_message}
        | {"points": 0.0, "max_points": 0.0}
    ]
    for ex in exercises.itertuples(index=False):
        passed, message = results.get(ex.exercise, (False, ""))
        out.append(
            {**base, "exercise": ex.exercise, "passed": passed, "message": message}
            | {"points": ex.points if passed else 0.0, "max_points": ex.points}
        )
    return pd.DataFrame(out, columns=GRADE_COLUMNS)


def _recorded(record_path):
    """{exercise: (passed, message)} of the checks that ran; a check that ever failed, failed."""
    results = {}
    if record_path.is_file():
        for line in record_path.read_text().splitlines():
            item = json.loads(line)
            old = results.get(item["exercise"])
            if old is None or (old[0] and not item["passed"]):
                results[item["exercise"]] = (item["passed"], item["message"])
    return results


def _not_run(exercises, results, nb, instrumented, status, detail):
    """Why each exercise without a recorded check was not graded (added to ``results``)."""
    cell_errors = {c.get("id"): _error_of(c) for c in nb.cells if c.get("id") in instrumented}
    for ex in exercises.itertuples(index=False):
        if ex.exercise in results:
            continue
        if status != "ok":
            why = f"not reached: the notebook {detail}"
        elif cell_errors.get(ex.cell_id):
            why = f"not run: its cell stopped before the check ({cell_errors[ex.cell_id]})"
        else:
            why = "not run: the check was not reached"
        results[ex.exercise] = (False, why)
    return results


def _run_message(nb, status, detail):
    """(passed, message) of the ``(notebook)`` row: passed only when every cell ran without an error."""
    errors = [(i, _error_of(c)) for i, c in enumerate(nb.cells) if c.cell_type == "code" and _error_of(c)]
    if status != "ok":
        return False, detail[0].upper() + detail[1:]
    if errors:
        first = errors[0]
        return False, f"ran to the end; {len(errors)} cell(s) raised an error, the first: cell {first[0]}: {first[1]}"
    return True, "ran to the end without errors"


def grade_notebook(path, teacher, time_limit=DEFAULT_TIME_LIMIT, student=None):
    """Grade one submission against one teacher notebook; return its gradebook rows (a DataFrame).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> import nbformat
    >>> teacher = nbformat.v4.new_notebook()
    >>> teacher.cells = [
    ...     nbformat.v4.new_code_cell(
    ...         "def double(x):\\n    return 2 * x", id="ex1-solution", metadata={"tags": ["solution"]}
    ...     ),
    ...     nbformat.v4.new_code_cell(
    ...         "from dpclust import exercises\\nexercises.check_number('double(2)', double(2), 4)",
    ...         id="ex1-check",
    ...         metadata={"tags": ["exercise"]},
    ...     ),
    ... ]
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     nbformat.write(teacher, pathlib.Path(tmp) / "hw.ipynb")
    ...     _ = (pathlib.Path(tmp) / "alice.ipynb").write_text("not a notebook")
    ...     rows = grade_notebook(pathlib.Path(tmp) / "alice.ipynb", pathlib.Path(tmp) / "hw.ipynb")
    >>> rows[["exercise", "passed", "points", "max_points"]]
             exercise  passed  points  max_points
    0      (notebook)   False     0.0         0.0
    1  check_number()   False     0.0         1.0
    """
    from ._paths import find_project_dir

    path, teacher_path = Path(path), Path(teacher)
    student = student or path.stem
    teacher_nb = _nbformat().read(teacher_path, as_version=4)
    exercises = exercises_of(teacher_nb)
    base = {"student": student, "submission": str(path), "notebook": teacher_path.stem}
    try:
        student_nb = _nbformat().read(path, as_version=4)
        _nbformat().validate(student_nb)
    except Exception as exc:  # not JSON, not a notebook: every exercise scores 0 and the run row says why
        reason = f"not a valid notebook ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
        return _rows(
            base, exercises, {ex: (False, f"not graded: {reason}") for ex in exercises["exercise"]}, False, reason
        )
    with tempfile.TemporaryDirectory(prefix="dpclust-grade-") as tmp:
        tmp = Path(tmp)
        nb, instrumented = graded_notebook(student_nb, teacher_nb, tmp / "checks.jsonl")
        nb = _with_parameters(nb, teacher_path, tmp)
        status, detail = _run(nb, tmp, time_limit, home=find_project_dir(teacher_path.resolve().parent))
        results = _recorded(tmp / "checks.jsonl")
    results = _not_run(exercises, results, nb, instrumented, status, detail)
    return _rows(base, exercises, results, *_run_message(nb, status, detail))


def _declared(nb):
    """The names the notebook's ``parameters`` cell assigns."""
    cell = next((c for c in nb.cells if "parameters" in c.metadata.get("tags", [])), None)
    try:
        tree = ast.parse(cell.source) if cell is not None else ast.Module(body=[], type_ignores=[])
    except SyntaxError:
        return set()
    return {
        t.id
        for node in tree.body
        if isinstance(node, (ast.Assign, ast.AnnAssign))
        for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(t, ast.Name)
    }


def _with_parameters(nb, teacher_path, folder):
    """Results and figures into ``folder``, the smoke profile: a cell after the parameters cell
    (at the top if the student deleted it), setting the names the teacher's parameters cell declares."""
    declared = _declared(_nbformat().read(teacher_path, as_version=4))
    params = {"results_dir": str(folder / "results"), "figures_dir": str(folder / "figures"), "profile": "smoke"}
    source = "\n".join(f"{k} = {v!r}" for k, v in params.items() if k in declared)
    if not source:
        return nb
    at = next((i + 1 for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])), 0)
    cell = _nbformat().v4.new_code_cell(source)
    cell.metadata["tags"] = ["injected-parameters"]
    nb.cells.insert(at, cell)
    return nb


def _feedback(frame):
    run = frame[frame["exercise"] == NOTEBOOK_ROW].iloc[0]
    graded = frame[frame["exercise"] != NOTEBOOK_ROW]
    lines = [
        f"# Feedback: {run['student']} ({run['notebook']})",
        "",
        f"**Score: {graded['points'].sum():g} / {graded['max_points'].sum():g}**",
        "",
        f"The run: {run['message']}",
        "",
    ]
    for row in graded.itertuples(index=False):
        mark = "passed" if row.passed else "not yet"
        lines += [f"## `{row.exercise}`: {mark} ({row.points:g} / {row.max_points:g})", ""]
        if row.message:
            lines += ["```", str(row.message), "```", ""]
    return "\n".join(lines)


def _student_names(paths):
    """A name per submission: its file stem, or where stems repeat ``<folder>/<stem>`` with the nearest folder
    that tells them apart (``alice/hw``; in nbgrader's ``submitted/<student>/<assignment>/<stem>.ipynb``, the
    student's)."""
    names = []
    for path in paths:
        same = [q for q in paths if q.stem == path.stem]
        if len(same) == 1:
            names.append(path.stem)
            continue
        ancestors = [q.resolve().parents for q in same]
        level = next((i for i in range(min(map(len, ancestors))) if len({a[i].name for a in ancestors}) > 1), None)
        names.append(str(path) if level is None else f"{path.resolve().parents[level].name}/{path.stem}")
    return names


def grade(submissions, out, time_limit=DEFAULT_TIME_LIMIT, teacher=None):
    """Grade student notebooks; write the gradebook, the totals and one feedback file per student.

    Parameters
    ----------
    submissions : paths of the student notebooks
    out : the gradebook CSV: one row per (student file, exercise) with passed, the
        checker's message and points, plus a ``(notebook)`` row per file that says how its
        run went. Beside it: ``<out>_totals.csv`` (one row per file) and
        ``<out>_feedback/<student>.md``.
    time_limit : seconds allowed per notebook (kernel start included)
    teacher : the teacher notebook for every submission (default: matched by name among
        the project's notebooks)

    Returns
    -------
    the gradebook (a DataFrame)

    Examples
    --------
    >>> import pathlib, tempfile
    >>> import nbformat
    >>> teacher = nbformat.v4.new_notebook()
    >>> teacher.cells = [
    ...     nbformat.v4.new_code_cell(
    ...         "def double(x):\\n    return 2 * x", id="ex1-solution", metadata={"tags": ["solution"]}
    ...     ),
    ...     nbformat.v4.new_code_cell(
    ...         "from dpclust import exercises\\nexercises.check_number('double(2)', double(2), 4)",
    ...         id="ex1-check",
    ...         metadata={"tags": ["exercise"]},
    ...     ),
    ... ]
    >>> from dpclust.assignments import student_version
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     tmp = pathlib.Path(tmp)
    ...     nbformat.write(teacher, tmp / "hw.ipynb")
    ...     nbformat.write(student_version(teacher, "hw.ipynb"), tmp / "bob.ipynb")
    ...     book = grade([tmp / "bob.ipynb"], tmp / "grades.csv", time_limit=120, teacher=tmp / "hw.ipynb")
    ...     files = sorted(p.name for p in tmp.rglob("*") if p.suffix in (".csv", ".md"))
    >>> book[["exercise", "passed", "points"]]  # the notebook ran: the check caught the stub's error
             exercise  passed  points
    0      (notebook)    True     0.0
    1  check_number()   False     0.0
    >>> print(book["message"].iloc[1])
    NotImplementedError: write double
    >>> files
    ['bob.md', 'grades.csv', 'grades_totals.csv']
    """
    if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or not time_limit > 0:
        raise ValueError(f"time_limit must be a positive number of seconds, got time_limit={time_limit!r}")
    paths = [Path(p) for p in submissions]
    if not paths:
        raise ValueError("submissions is empty: give at least one notebook")
    out = Path(out)
    frames = []
    for path, student in zip(paths, _student_names(paths)):
        try:
            teacher_path = _teacher_for(path, teacher)
        except ValueError as exc:
            base = {"student": student, "submission": str(path), "notebook": ""}
            frames.append(_rows(base, exercises_of(_nbformat().v4.new_notebook()), {}, False, str(exc)))
            continue
        frames.append(grade_notebook(path, teacher_path, time_limit, student))
    book = pd.concat(frames, ignore_index=True)
    _write(book, out)
    return book


def _write(book, out):
    """The gradebook CSV ``out``, its totals beside it and one feedback page per student."""
    out.parent.mkdir(parents=True, exist_ok=True)
    book.to_csv(out, index=False)
    totals = (
        book.groupby(["student", "submission", "notebook"], sort=False)
        .agg(points=("points", "sum"), max_points=("max_points", "sum"))
        .reset_index()
    )
    status = book[book["exercise"] == NOTEBOOK_ROW].set_index("student")["message"]
    totals["run"] = totals["student"].map(status)
    totals.to_csv(out.with_name(f"{out.stem}_totals.csv"), index=False)
    feedback = out.with_name(f"{out.stem}_feedback")
    feedback.mkdir(exist_ok=True)
    for student, frame in book.groupby("student", sort=False):
        (feedback / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', student)}.md").write_text(_feedback(frame))

"""Grading inside nbgrader's own autograde, with every process that runs a student's code in a sandbox.

nbgrader runs a submission in a kernel and counts a test cell that raised nothing as passed; code in
the same kernel can therefore forge any verdict (skip the cells, fake the checkers' modules, patch
numpy), and with the grader's rights it could read the keys or write the gradebook. So the checks of an
assignment made by :func:`dpclust.assignments.export` are decided in the grader's process, and the
student's code runs only in operating-system sandboxes (:mod:`dpclust.exercises._bwrap`: the Python
installation read-only, a scratch copy of the submission, no network, no view of the grader's processes,
files, keys or gradebook, killed with the grader, limited in CPU time and memory). The course's
``nbgrader_config.py`` sets three steps of ``nbgrader autograde`` (:class:`OutsideTheKernel`):

* :meth:`OutsideTheKernel.check`, before the notebook runs: the student's solution cells run in a
  sandboxed process of their own (:class:`~dpclust.exercises._remote.GradedRun`: numpy, scipy and the
  notebook's setup imports from them, neither ``dpclust`` nor ``dpclust_lib``), and each check of the
  notebook's key (``grading/<stem>.json``, written when the assignment was generated and never released)
  runs here, in the grader's process, on the cases of its seed, calling the student's functions there
  (:func:`grade_notebook`). What comes back is data (JSON; arrays as numbers or ``.npy`` bytes read
  without pickles), compared here with values from the library or the teacher's solutions in the key;
* :meth:`OutsideTheKernel.execute`, in place of nbgrader's ``Execute``: the notebook runs, for the
  feedback only, in a sandbox of its own (nbconvert and its kernel, on a scratch copy of the
  submission's folder); only the outputs of its code cells come back, onto the notebook nbgrader holds;
* :meth:`OutsideTheKernel.apply`, before nbgrader saves the grades: the verdicts into the test cells (the
  checker's message; a failed check is an error, a passed one prints ``Correct: ...``, so nbgrader's own
  rule gives the points), the hidden lines out of what the feedback shows, the grader's paths out of the
  tracebacks, and, as a courtesy to the teacher, the signs of tampering seen (``dpclust.flags``; the
  scores never depend on them).

Without those steps every test cell raises in the kernel and scores 0. Where no sandbox runs, grading
refuses, unless the teacher asks by name for an unsandboxed run (``unsandboxed=True``), which the log says
gives up all of the above but the scores' independence from the kernel.
:meth:`OutsideTheKernel.refuse_pending` keeps ``generate_feedback`` from showing a written answer that
waits for the teacher as 0, and :func:`export_plugin` makes ``nbgrader export`` say which submissions
have such answers, which nbgrader refused, and which were flagged. :func:`grade` is the same grading for
a teacher without a course: a temporary course, nbgrader's autograde and export.
"""

from __future__ import annotations

import contextlib
import glob
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ._optional import require
from .exercises import _bwrap
from .exercises._checks import Verdict, run_check, teacher_functions

__all__ = [
    "Verdict",
    "solution_cells",
    "teacher_functions",
    "run_check",
    "grade_notebook",
    "OutsideTheKernel",
    "export_plugin",
    "EXPORT_COLUMNS",
    "release_feedback_plugin",
    "grade",
]

log = logging.getLogger(__name__)

HIDDEN = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS[ \t]*\n?", re.S | re.M)
KERNEL_ERROR = "GradedOutsideTheKernel"  # what the hidden lines of a test cell raise in the kernel
CLEAN = "no sign of tampering"
FORGED = "not an answer"  # what a graded run that broke its protocol is said to have sent
EXPORT_COLUMNS = [
    "assignment",
    "student_id",
    "status",
    "autograded",
    "autograded_max",
    "written",
    "written_pending",
    "written_max",
    "total",
    "max_score",
    "flags",
]


def _is_test_cell(cell):
    meta = cell.metadata.get("nbgrader", {})
    return cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")


def solution_cells(nb):
    """The student's solution code cells of an nbgrader notebook, in order: [(grade_id or cell id, source)].

    Examples
    --------
    >>> import nbformat
    >>> meta = {"nbgrader": {"solution": True, "grade_id": "ex1"}}
    >>> cell = nbformat.v4.new_code_cell("def f(): return 1", metadata=meta)
    >>> solution_cells(nbformat.v4.new_notebook(cells=[cell]))
    [('ex1', 'def f(): return 1')]
    """
    return [
        (c.metadata["nbgrader"].get("grade_id") or c.get("id", "?"), c.source)
        for c in nb.cells
        if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")
    ]


def grade_notebook(nb, key, timeout=300.0, sandbox=True):
    """Every check of ``key`` on the solution cells of ``nb``, graded outside any kernel: {grade_id: Verdict}.

    The cells run in one :class:`~dpclust.exercises._remote.GradedRun` (in the sandbox unless ``sandbox``
    is False), started again after a check that broke it (a run past its time is killed, and that check
    fails), and after a check that lent it a reference (the run must not keep it). A run has CPU time for
    every check's ``timeout`` seconds, and each check ``timeout`` seconds of wall-clock time.

    Examples
    --------
    >>> import nbformat
    >>> cell = nbformat.v4.new_code_cell(
    ...     "def total_spent(epsilon, n, schedule):\\n    return epsilon",
    ...     metadata={"nbgrader": {"solution": True, "grade_id": "ex1-solution"}},
    ... )
    >>> spec = {"kind": "check", "checker": "check_total_spent", "args": [{"function": "total_spent"}],
    ...         "kwargs": {}, "seed": 3}
    >>> key = {"prelude": [], "solutions": {"ex1": "def total_spent(e, n, s):\\n    return e"}, "checks": {"ex1": spec}}
    >>> grade_notebook(nbformat.v4.new_notebook(cells=[cell]), key)["ex1"].passed
    True
    """
    from .exercises._remote import START_TIME, GradedRun, RunBroken

    cells, solutions = solution_cells(nb), teacher_functions(key)
    verdicts, run, broken = {}, None, None
    try:
        for grade_id, spec in key["checks"].items():
            seen = len(run.notes) if run is not None and not run.dead else 0  # a new run's start counts too
            if broken is None and (run is None or run.dead):
                try:
                    cpu = timeout * len(key["checks"]) + START_TIME
                    run = GradedRun(cells, key.get("prelude", []), timeout, sandbox=sandbox, cpu=cpu)
                except RunBroken as exc:  # the cells themselves never finish: every check fails alike
                    broken = str(exc)
            if broken is not None:
                verdicts[grade_id] = Verdict(False, broken, flags=[broken] if FORGED in broken else [])
                continue
            run.deadline = time.monotonic() + timeout  # a check's calls together, not each call, get the limit
            verdict = run_check(spec, run.function, solutions)
            new = run.notes[seen:]
            verdict.notes += [n for n in new if not n.startswith("the graded run refused")]
            verdict.flags += [n for n in new if n.startswith("the graded run refused")]
            if run.dead and FORGED in run.dead:  # something wrote into the grader's pipes
                verdict.flags.append(run.dead)
            verdicts[grade_id] = verdict
            if run.lent_once or run.dead:
                run.close()
                run = None
    finally:
        if run is not None:
            run.close()
    return verdicts


def _kernel_signs(cell):
    """What the kernel's run of a test cell says about the kernel: the hidden lines' signs, or their absence."""
    errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    ours = [o for o in errors if o.get("ename") == KERNEL_ERROR]
    if ours:
        return [s for s in str(ours[0].get("evalue", "")).split("; ") if s and s != CLEAN]
    if errors:  # the cell stopped before the hidden lines (e.g. its experiment failed): no sign either way
        return []
    return ["the kernel ran this check cell without its hidden lines (a skip, or cells rewritten before they run)"]


def _outputs(verdict, nbformat):
    """The test cell's outputs for nbgrader: stdout when it passed (full points), an error when it did not."""
    lines = verdict.lines()
    if verdict.passed:
        return [nbformat.v4.new_output("stream", name="stdout", text="\n".join(lines) + "\n")]
    first = lines[0] if lines else "not graded"
    return [nbformat.v4.new_output("error", ename="ExerciseError", evalue=first, traceback=lines or [first])]


def _scrub(text, paths):
    for path in paths:
        text = text.replace(path, "...")
    return text


def _private_paths(nb_path):
    """The grader's folders that tracebacks must not show, longest first."""
    paths = {sys.prefix, sys.base_prefix, os.path.expanduser("~"), str(Path(__file__).resolve().parents[1])}
    if nb_path:
        paths |= {str(Path(nb_path).resolve()), str(Path(nb_path).resolve().parents[2])}
    return sorted((p for p in paths if len(p) > 1), key=len, reverse=True)


START_KERNEL = 120.0  # seconds for nbconvert and its kernel to start, on top of the cells' limits
# nbgrader's Execute settings: a cell past its time is interrupted and the run goes on; errors are outputs
_EXECUTE = {"allow_errors": True, "interrupt_on_timeout": True, "record_timing": False}
_NOT_COPIED = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__")
MAX_NOTEBOOK = 256 * 2**20  # the largest executed notebook read back (bytes)


def _kernel_environment(home):
    """The environment of the notebook's run: the profile, the data folders, no grader's variable."""
    env = {"HOME": home, "MPLCONFIGDIR": "/tmp", "JUPYTER_PLATFORM_DIRS": "1", "DPCLUST_NO_DOWNLOAD": "1"}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"])
    env.update({k: os.environ[k] for k in ("DPCLUST_PROFILE", "DPCLUST_DATA_DIR") if k in os.environ})
    return env


def _kernel_readable():
    """What the notebook's run reads besides the Python installation: the compendium's packages (an editable
    install keeps them outside it) and the data folders, never the course."""
    import dpclust_lib

    from .datasets import _registry

    packages = [Path(m.__file__).resolve().parent for m in (sys.modules["dpclust"], dpclust_lib)]
    data = [Path(p) for p in _registry.data_dirs()] + [_registry.default_raw_dir()]
    return [str(p) for p in packages + data if p.is_dir()]


def _read_back(path, nbformat):
    """The executed notebook, if it came back as a valid notebook of a sane size; else None."""
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_NOTEBOOK:
            return None
        ran = nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)
        nbformat.validate(ran)
        return ran
    except Exception:  # whatever came back is not a notebook: the feedback shows no outputs
        return None


class OutsideTheKernel:
    """The steps of nbgrader's autograde that grade the checks outside the kernel and run the student's code
    in sandboxes, and the feedback guard.

    Parameters
    ----------
    keys : path
        The folder of the keys, ``grading/`` beside the course's ``source/``. They are read on first use,
        before nbgrader has run any submission, and kept in memory.
    timeout : float
        Seconds allowed to each call of a student's function (and to the start of the graded run), and to
        each cell of the notebook's run.
    unsandboxed : bool
        Grade even where no sandbox runs, with the students' code under the grader's rights (the log says
        what that gives up). Default: refuse to grade there.

    Examples
    --------
    >>> outside = OutsideTheKernel("grading")
    >>> outside.check.__name__, outside.execute.__name__, outside.apply.__name__
    ('check', 'execute', 'apply')
    """

    def __init__(self, keys, timeout=300.0, unsandboxed=False):
        self.keys, self.timeout, self._cache = Path(keys), float(timeout), None
        self.unsandboxed, self._sandboxed = bool(unsandboxed), None

    def sandboxed(self):
        """True when the sandbox runs here; False for an unsandboxed run asked by name (said once); else it raises."""
        if self._sandboxed is None:
            self._sandboxed = _bwrap.available(self.unsandboxed, log)
        return self._sandboxed

    def key(self, notebook):
        """The key of a notebook (every key of the folder is read at the first call)."""
        if self._cache is None:
            self._cache = {p.stem: json.loads(p.read_text()) for p in sorted(self.keys.glob("*.json"))}
        if notebook not in self._cache:
            raise ValueError(
                f"no grading key for {notebook} in {self.keys}: generate the assignment with "
                "python -m dpclust assignments (its grading/ folder goes with source/)"
            )
        return self._cache[notebook]

    def check(self, nb, resources):
        """Before the kernel: grade every check of the notebook outside it (nbgrader preprocessor)."""
        sandbox = self.sandboxed()
        key = self.key(resources["nbgrader"]["notebook"])
        resources["dpclust_verdicts"] = grade_notebook(nb, key, self.timeout, sandbox)
        return nb, resources

    def execute(self, nb, resources):
        """nbgrader's Execute in a sandbox: the outputs of the notebook's run, for the feedback (nbgrader preprocessor).

        The submission's folder (nbgrader's copy of it) is copied to a scratch folder; nbconvert runs the
        notebook there in its own kernel, within the sandbox (the kernel and its client talk over the
        sandbox's own loopback); each code cell then takes the outputs of the cell of the same id, type and
        source of the notebook that came back, if it came back as a valid notebook. The run is killed when
        every cell has had its time limit. Nothing of it reaches the scores.
        """
        nbformat = require("nbformat", "notebooks")
        name = f"{resources.get('metadata', {}).get('name') or 'submission'}.ipynb"
        cells = [c for c in nb.cells if c.cell_type == "code"]
        limit = self.timeout * (len(cells) + 1) + START_KERNEL
        with tempfile.TemporaryDirectory(prefix="dpclust-execute-") as scratch:
            folder = resources.get("metadata", {}).get("path") or "."
            shutil.copytree(folder, scratch, symlinks=True, dirs_exist_ok=True, ignore=_NOT_COPIED)
            nbformat.write(nb, Path(scratch) / name)
            argv = [sys.executable, "-m", "nbconvert", "--to", "notebook", "--execute", "--inplace", name]
            argv += [f"--ExecutePreprocessor.{k}={v}" for k, v in _EXECUTE.items()]
            argv += [f"--ExecutePreprocessor.timeout={int(self.timeout)}"]
            env = _kernel_environment(_bwrap.SCRATCH if self.sandboxed() else scratch)
            if self.sandboxed():
                readable = _kernel_readable()
                argv = _bwrap.command(argv, scratch, readable=readable, env=env, cpu=int(limit))
                env, cwd = None, None
            else:
                env, cwd = {**env, "PATH": os.environ.get("PATH", os.defpath)}, scratch
            # No pipe to the run (a process it leaves behind could hold one open), and a session of its own, which
            # is killed whole at the limit (without the sandbox, its kernel too)
            run = subprocess.Popen(
                argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
            )
            try:
                run.wait(timeout=limit)
            except subprocess.TimeoutExpired:
                log.warning("%s: the notebook's run was stopped at %g s", resources["nbgrader"]["student"], limit)
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(run.pid, signal.SIGKILL)
                run.wait()
            ran = _read_back(Path(scratch) / name, nbformat)
        by_id = {c.get("id"): c for c in ran.cells} if ran is not None else {}
        for cell in cells:
            twin = by_id.get(cell.get("id"))
            same = twin is not None and twin.cell_type == "code" and twin.source == cell.source
            cell.outputs = twin.outputs if same else []
            cell.execution_count = twin.get("execution_count") if same else None
        return nb, resources

    def apply(self, nb, resources):
        """After the kernel: the verdicts into the test cells, the paths out, the flags in (nbgrader preprocessor)."""
        nbformat = require("nbformat", "notebooks")
        verdicts = resources.get("dpclust_verdicts")
        if verdicts is None:
            raise RuntimeError("dpclust's check before the kernel did not run: nbgrader_config.py must list both steps")
        paths, flags = _private_paths(resources.get("metadata", {}).get("path")), []
        for cell in nb.cells:
            if _is_test_cell(cell):
                grade_id = cell.metadata["nbgrader"]["grade_id"]
                verdict = verdicts.get(grade_id, Verdict(False, f"{grade_id} has no check in the grading key"))
                flags += [f"{grade_id}: {s}" for s in _kernel_signs(cell) + verdict.flags]
                cell.source = HIDDEN.sub("", cell.source)
                cell.outputs = _outputs(verdict, nbformat)
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    output["traceback"] = [_scrub(line, paths) for line in output.get("traceback", [])]
                    output["evalue"] = _scrub(str(output.get("evalue", "")), paths)
                elif output.get("output_type") == "stream":
                    output["text"] = _scrub(output.get("text", ""), paths)
        nb.metadata["dpclust"] = {"flags": flags}
        _flag_in_gradebook(resources, flags)
        for flag in flags:
            log.warning("%s/%s flagged: %s", resources["nbgrader"]["student"], resources["nbgrader"]["notebook"], flag)
        return nb, resources

    def refuse_pending(self, nb, resources):
        """Feedback only once the written answers are graded: a pending one would show as 0 (nbgrader preprocessor)."""
        gradebook = require("nbgrader.api", "teach").Gradebook
        info = resources["nbgrader"]
        with gradebook(info["db_url"]) as gb:
            graded = gb.find_submission_notebook(info["notebook"], info["assignment"], info["student"])
            pending = sorted(g.name for g in graded.grades if g.needs_manual_grade)
        if pending:
            raise ValueError(
                f"{info['student']}'s {info['notebook']}: {len(pending)} answers wait for grading "
                f"({', '.join(pending)}); grade them in formgrader first, or the feedback would show them as 0"
            )
        return nb, resources

    def autograde_preprocessors(self):
        """nbgrader's autograde steps with :meth:`check` then :meth:`execute` in place of its Execute, and
        :meth:`apply` before SaveAutoGrades."""
        autograde = require("nbgrader.converters", "teach").Autograde
        steps = list(autograde.class_traits()["autograde_preprocessors"].default())
        names = [getattr(s, "__name__", "") for s in steps]
        steps.insert(names.index("SaveAutoGrades"), self.apply)
        steps[names.index("Execute") : names.index("Execute") + 1] = [self.check, self.execute]
        return steps

    def feedback_preprocessors(self):
        """nbgrader's feedback steps with :meth:`refuse_pending` first."""
        feedback = require("nbgrader.converters", "teach").GenerateFeedback
        return [self.refuse_pending, *feedback.class_traits()["preprocessors"].default()]


def release_feedback_plugin():
    """The class of ``nbgrader release_feedback`` for these courses (``c.ExchangeFactory.release_feedback``).

    nbgrader's own stops at the first feedback whose submission did not come through the exchange (no
    ``timestamp.txt`` or ``submission_secret.txt``: collected by hand, or graded by ``dpclust grade``), and
    releases none after it. This one leaves those out, says whose, and releases the others.

    Examples
    --------
    >>> release_feedback_plugin().__name__
    'ReleaseFeedback'
    """
    exchange = require("nbgrader.exchange.default", "teach")

    class ReleaseFeedback(exchange.ExchangeReleaseFeedback):
        """nbgrader's release_feedback, past the feedback it cannot release."""

        def copy_files(self):
            unreleasable = set()
            for html in glob.glob(os.path.join(self.src_path, "*.html")):  # what nbgrader's copy_files releases
                folder = Path(html).parent
                if not all((folder / name).is_file() for name in ("timestamp.txt", "submission_secret.txt")):
                    unreleasable.add(folder.parent.name)
            for student in sorted(unreleasable):
                self.log.warning(
                    "not releasing %s's feedback: the submission did not come through the exchange (no "
                    "timestamp.txt or submission_secret.txt); give the student feedback/%s/%s/ yourself",
                    student,
                    student,
                    self.coursedir.assignment_id,
                )
            excluded = {s for s in self.coursedir.student_id_exclude.split(",") if s} | unreleasable
            self.coursedir.student_id_exclude = ",".join(sorted(excluded))
            super().copy_files()

    return ReleaseFeedback


def _flag_in_gradebook(resources, flags):
    """nbgrader's own flag of the submitted notebook (formgrader shows it), set when the grader saw signs."""
    if not flags or "db_url" not in resources.get("nbgrader", {}):
        return
    gradebook = require("nbgrader.api", "teach").Gradebook
    info = resources["nbgrader"]
    with gradebook(info["db_url"]) as gb:
        gb.find_submission_notebook(info["notebook"], info["assignment"], info["student"]).flagged = True
        gb.db.commit()


def _submission_row(gb, coursedir, assignment, student):
    """One row of the export: what was graded, what waits for the teacher, what nbgrader refused, the flags."""
    row = {"assignment": assignment.name, "student_id": student.id, "max_score": assignment.max_score, "flags": ""}
    submitted = Path(coursedir.format_path(coursedir.submitted_directory, student.id, assignment.name))
    autograded = Path(coursedir.format_path(coursedir.autograded_directory, student.id, assignment.name))
    try:
        submission = gb.find_submission(assignment.name, student.id)
    except require("nbgrader.api", "teach").MissingEntry:
        return {**row, "status": "not submitted"}
    grades = [g for nb in submission.notebooks for g in nb.grades]
    code = [g for g in grades if g.cell.cell_type == "code"]
    written = [g for g in grades if g.cell.cell_type == "markdown"]
    pending = [g for g in written if g.needs_manual_grade]
    flags = [f for nb in submission.notebooks for f in _notebook_flags(autograded / f"{nb.name}.ipynb", nb.flagged)]
    row.update(
        autograded=sum(g.score for g in code),
        autograded_max=sum(g.max_score for g in code),
        written=sum(g.score for g in written if not g.needs_manual_grade),
        written_pending=len(pending),
        written_max=sum(g.max_score for g in written),
        flags="; ".join(flags),
    )
    if submitted.is_dir() and not autograded.is_dir():
        return {**row, "status": "refused by nbgrader (see autograde's log)", "autograded": "", "written": ""}
    if pending:
        return {**row, "status": "written answers pending"}
    return {**row, "status": "graded", "total": row["autograded"] + row["written"]}


def _notebook_flags(path, flagged):
    try:
        flags = json.loads(Path(path).read_text())["metadata"].get("dpclust", {}).get("flags", [])
    except (OSError, ValueError, KeyError):
        flags = []
    return flags or (["flagged in the gradebook"] if flagged else [])


def export_plugin():
    """The class of ``nbgrader export`` for these courses (``c.ExportApp.plugin_class``): one CSV row per
    (assignment, student) with :data:`EXPORT_COLUMNS`.

    ``status`` is ``graded`` (``total`` is then the final score), ``written answers pending`` (the
    autograded points are final, the written answers, ``written_pending`` of them, wait for formgrader; no
    total), ``refused by nbgrader`` (a submission that autograde could not grade: a cell deleted or
    changed in kind, or a file that is no notebook; it has no points, and the log says why) or ``not
    submitted``. ``flags`` lists the signs of a tampered kernel the grader saw; read those submissions.

    Examples
    --------
    >>> export_plugin().__name__
    'GradesExport'
    """
    plugins = require("nbgrader.plugins", "teach")

    class GradesExport(plugins.ExportPlugin):
        """dpclust's export: pending written answers, refused submissions and flags apart from zeros."""

        def export(self, gradebook):
            coursedir = self.parent.coursedir
            rows = [
                _submission_row(gradebook, coursedir, assignment, student)
                for assignment in gradebook.assignments
                if not self.assignment or assignment.name in self.assignment
                for student in gradebook.students
                if not self.student or student.id in self.student
            ]
            pd = require("pandas", "notebooks")
            pd.DataFrame(rows, columns=EXPORT_COLUMNS).to_csv(self.to or "grades.csv", index=False)

    return GradesExport


def _notebook_name(nb, path, teacher):
    """The paper notebook a submission answers: ``--teacher``'s, or the one its locked header names."""
    if teacher is not None:
        return Path(teacher).stem
    header = next((c.source for c in nb.cells if c.get("id") == "assignment-header"), "")
    found = re.search(r"student version of `(\d\d_[\w-]+)\.ipynb`", header)
    if not found:
        raise ValueError(f"{path} is not a dpclust assignment (no assignment header): name its notebook with --teacher")
    return found.group(1)


def _submissions(paths, teacher):
    """{(student, stem): path} of the submissions; a clear error for a missing file or one that is no notebook."""
    nbformat = require("nbformat", "notebooks")
    found = {}
    for path in map(Path, paths):
        if not path.is_file():
            raise ValueError(f"no such submission: {path}")
        try:
            nb = nbformat.read(path, as_version=4)
        except Exception as exc:
            raise ValueError(f"{path} is not a notebook ({type(exc).__name__}); grade only .ipynb files") from None
        stem = _notebook_name(nb, path, teacher)
        # nbgrader's layout submitted/<student>/<assignment>/<notebook>.ipynb names the student; else the file does
        student = path.parts[-3] if len(path.parts) >= 3 and path.parent.name == stem else path.stem
        student = re.sub(r"[^\w.-]", "_", student)
        if (student, stem) in found:
            raise ValueError(f"{path} and {found[student, stem]} are both {student}'s {stem}: rename one")
        found[student, stem] = path
    return found


def _nbgrader(course, *args):
    """Run nbgrader in the course folder with this interpreter; its output, or a ValueError with its log."""
    bin_dir = str(Path(sys.executable).parent)  # nbgrader runs alembic, installed next to this interpreter
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    result = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args], cwd=course, env=env, capture_output=True, text=True
    )
    return result.returncode, result.stdout + result.stderr


def grade(submissions, out, teacher=None, time_limit=300, unsandboxed=False):
    """Grade submissions with nbgrader's autograde in a temporary course; write the export to ``out``.

    For a teacher without an nbgrader course: each submission (a handout made by ``python -m dpclust
    assignments --student``, or nbgrader's ``submitted/<student>/<assignment>/<notebook>.ipynb``) is put
    into a fresh course of its paper notebook (``teacher``, or the compendium's notebook its header names),
    nbgrader autogrades them all (outside their kernels, as in a course) and exports the grades
    (:func:`export_plugin`). The autograded notebooks, with the checkers' messages, go to
    ``<out's stem>_autograded/<student>/``. A written answer is left to the teacher (pending).

    Parameters
    ----------
    submissions : list of paths
    out : path
        The export (CSV).
    teacher : path, optional
        The teacher notebook of every submission.
    time_limit : int
        Seconds per cell of the notebook's run and per call of a student's function.
    unsandboxed : bool
        Grade even where no sandbox runs (the students' code then runs with your rights); default: refuse.

    Returns
    -------
    pandas.DataFrame
        The export.

    Examples
    --------
    >>> grade(["no-such-file.ipynb"], "grades.csv")
    Traceback (most recent call last):
    ...
    ValueError: no such submission: no-such-file.ipynb
    """
    from . import assignments, reproduce

    found = _submissions(submissions, teacher)
    require("nbgrader", "teach")
    try:
        _bwrap.available(unsandboxed, log)
    except _bwrap.Unavailable as exc:
        raise ValueError(str(exc)) from None
    pd = require("pandas", "notebooks")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)  # before minutes of grading, not after
    with tempfile.TemporaryDirectory(prefix="dpclust-course-") as folder:
        course = Path(folder)
        stems = sorted({stem for _, stem in found})
        teachers = [Path(teacher)] if teacher is not None else [reproduce.resolve_notebook(s) for s in stems]
        assignments.export(teachers, course)
        config = course / "nbgrader_config.py"
        text = config.read_text().replace("timeout=300", f"timeout={time_limit}")
        config.write_text(text.replace("unsandboxed=False", f"unsandboxed={bool(unsandboxed)}"))
        for stem in stems:
            status, log_text = _nbgrader(course, "generate_assignment", stem, "--force")
            if status:
                raise ValueError(f"nbgrader generate_assignment {stem} failed:\n{log_text[-2000:]}")
        for (student, stem), path in found.items():
            target = course / "submitted" / student / stem / f"{stem}.ipynb"
            target.parent.mkdir(parents=True)
            shutil.copyfile(path, target)
        for stem in stems:  # a refused submission is in the export; the log says why
            _, log_text = _nbgrader(course, "autograde", stem)
            log.info(log_text)
        status, log_text = _nbgrader(course, "export", "--to", str(out.resolve()))
        if status:
            raise ValueError(f"nbgrader export failed:\n{log_text[-2000:]}")
        copies = out.with_name(f"{out.stem}_autograded")
        if (course / "autograded").is_dir():
            shutil.copytree(course / "autograded", copies, dirs_exist_ok=True)
    return pd.read_csv(out, keep_default_na=False)

"""The assignments through nbgrader's own generate_assignment, autograde, generate_feedback and export, with
honest and dishonest students.

One course with one assignment that holds every paper notebook (tests/discover.py), each cut to its title,
its parameters cell and its exercise section. The checks are graded outside the students' kernels
(dpclust.grade), so what the notebooks' narrative computes changes no score; the cut keeps each kernel's run
short. One autograde call grades every submission. The students:

* ``reference``, on every paper notebook: the teacher's solutions and written answers pasted in (every test
  cell full marks, the written answers wait for the teacher). The reference's Exercise 5 of notebook 04 warns
  and prints to stderr, and keeps its point;
* on notebook 04: ``stubs``, the notebook as released (zero everywhere); ``one-wrong``, the reference with one
  typical mistake (that test cell only loses its points, also where a later exercise builds on it). The other
  notebooks' stubs and mistakes go through the same grading without nbgrader's round trip
  (:func:`dpclust.grade.grade_notebook` on the released notebook), which is what differs between notebooks;
* the catalogue of attacks (:data:`ATTACKS`), each a few lines of student code on top of the stubs of
  notebook 04, and the garbage answers behind patched comparisons on 05's too (:data:`ATTACKED`: an attack is
  on the kernel and the grading, not on a notebook, so one notebook carries the catalogue), each solving
  nothing, so each must score 0 on every test cell, and be flagged: each leaves a trace in the kernel or in
  the graded run;
* ``not-a-notebook``: a submission nbgrader refuses, which the export says.

The expected scores come from the cells' metadata and the table of mistakes below, not from running the
checkers here. ``-s`` prints the table of scores.
"""

import ast
import contextlib
import json
import os
import socketserver
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import pandas as pd
import pytest

pytest.importorskip("nbgrader", reason="nbgrader is not installed: pip install -e '.[teach]'")

from nbgrader.api import Gradebook  # noqa: E402

from dpclust import assignments, grade  # noqa: E402
from dpclust.exercises import _bwrap  # noqa: E402

if not _bwrap.available(unsandboxed=True):  # autograde refuses every submission there, as it should
    pytest.skip("no sandbox here: apt-get install bubblewrap", allow_module_level=True)

from . import discover  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENT = "ps1"
NOTEBOOKS = tuple(path.stem for path in discover.paper_notebooks())
# Seconds per check of a student's functions and per cell (nbgrader_config.py's timeout): what a submission that
# never returns costs, per exercise. The reference's slowest check (05's noisy update) takes under 4 s alone.
TIME_LIMIT = 20
# The notebook that goes through nbgrader with every kind of student
FULL_ROUND_TRIP = "04_idp_kmeans"
# The exercise of notebook 04 whose function never returns in the spins-forever submission, and its test cell
SPINS = ("ex3-solution", "ex3-check")


def _written(port):
    """The file the write-outside attack writes, in the course folder and in /tmp (named after this run's port)."""
    return f"written-by-a-submission-{port}"


# One typical mistake per notebook: (solution cell, text of the reference, the wrong text, the test cells whose
# points it loses). Each is in an exercise a later one builds on, which must keep its points.
MISTAKES = {
    "01_ldpk_modes": ("ex3-solution", "return len(domain_sizes) * epsilon", "return epsilon", {"ex3-check"}),
    "02_ldp_kmodes_sampling": (
        "ex2-solution",
        "q = 0.5, 1 / (np.exp(epsilon) + 1)",
        "q = 0.5, 1 / np.exp(epsilon)",
        {"ex2-check"},
    ),
    "03_dpqt_kmeans": (
        "ex3-solution",
        "leaves = (1 - gamma) * epsilon",
        "leaves = (1 - gamma) * epsilon / max_height",
        {"ex3-check"},
    ),
    "04_idp_kmeans": ("ex1-solution", "(d + 1) / epsilon", "d / epsilon", {"ex1-check"}),
    "05_dp_birch": ("ex3-solution", "float(largest.sum())", "float(largest.max())", {"ex3-check"}),
    "06_lsh_coreset": ("ex1-solution", "radius * math.sqrt(n_features)", "radius", {"ex1-check"}),
}

# The attacks, as student code put at the end of the first solution cell of the stubs. They solve nothing (the
# first two answer Exercise 1 of notebook 04 with the installed packages, which does not count).
ATTACKS = {
    # the first: turn the graded-run switch off, then skip the rest of the notebook
    "skip": """
import os
os.environ["DPCLUST_GRADED"] = ""
from dpclust import experiments
experiments.skip_rest_of_notebook("nothing left to do")
""",
    # the same without the compendium's help: every later cell rewritten to nothing
    "empty-cells": "get_ipython().input_transformers_post.append(lambda lines: [])\n",
    # every error of every later cell swallowed
    "swallow-errors": "get_ipython().set_custom_exc((BaseException,), lambda *args, **kwargs: None)\n",
    # the checkers replaced, as they are imported
    "replaced-checkers": """
from dpclust import exercises
for _name in [n for n in dir(exercises) if n.startswith("check_")]:
    setattr(exercises, _name, lambda *args, **kwargs: print("Correct: all good"))
""",
    # a module finder that serves a fake exercises package to any import, fresh ones included
    "fake-module": """
import importlib.abc, importlib.machinery, sys, types
class _Fake(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name.startswith("dpclust.exercises"):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__path__, module.__getattr__ = [], lambda name: (lambda *a, **k: print("Correct: all good"))
        return module
    def exec_module(self, module):
        pass
sys.meta_path.insert(0, _Fake())
for _name in [n for n in sys.modules if n.startswith("dpclust.exercises")]:
    del sys.modules[_name]
""",
    # comparisons and tests patched to pass, and answers of the right shapes that are garbage
    "patched-numpy": """
import numpy as np, scipy.stats
np.allclose = lambda *a, **k: True
np.isclose = lambda a, b, *x, **k: np.ones(np.broadcast(np.asarray(a), np.asarray(b)).shape, bool)
np.array_equal = lambda *a, **k: True
scipy.stats.kstest = lambda *a, **k: type("Result", (), {"pvalue": 1.0, "statistic": 0.0})()
""",
    # Exercise 1 answered by the library (it passes the check in the kernel)
    "library-answers": """
def noisy_sums_counts(X, labels, n_clusters, epsilon, rng):
    import warnings
    from dpclust_lib.cluster.kmeans import cluster_sums_counts, sum_count_sensitivity
    from dpclust_lib.mechanisms import laplace_mechanism
    d = X.shape[1]
    sums, counts = cluster_sums_counts(X, labels, n_clusters, np.zeros(d), np.ones(d))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = laplace_mechanism(np.column_stack([sums, counts]), sum_count_sensitivity(d), epsilon, rng, noise="float")
    return out[:, :d], out[:, d]
""",
    # the teacher's source version, read from the course folder (the grader's working folder)
    "read-the-teacher": """
import glob, json, os
for _root in ("../../..", os.readlink(f"/proc/{os.getppid()}/cwd")):
    for _path in glob.glob(_root + "/source/*/*.ipynb"):
        for _cell in json.load(open(_path))["cells"]:
            if _cell["cell_type"] == "code" and "BEGIN SOLUTION" in "".join(_cell["source"]):
                exec("".join(_cell["source"]))
""",
    # a forged answer on every file descriptor of the graded run (its protocol with the grader; not in the kernel)
    "forged-protocol": """
import json, os
if "get_ipython" not in globals():
    for _fd in range(3, 64):
        try:
            os.write(_fd, (json.dumps({"op": "return", "value": 1.0}) + "\\n").encode())
        except OSError:
            pass
""",
}
CATALOGUE = tuple(ATTACKS)  # the attacks on the checks; those on the grader follow
# The attacks on the grader itself, each from the student's code wherever it runs (the kernel of the notebook's
# run, the graded run of the solution cells). Every one first turns the graded run's audit hook off (an object in
# the same interpreter, reached through __main__), so that only the operating system's sandbox stands in its way.
UNHOOK = """
import sys as _sys
try:
    _sys.modules["__main__"]._Fence.__call__ = lambda self, event, args: None
except AttributeError:
    pass
"""
# where the grader's course folder is from a student's process: the working folder of its parent or of any
# nbgrader process it can see, or nbgrader's layout
COURSE = """
def _courses():
    import glob, os
    for _where in [f"/proc/{os.getppid()}", *glob.glob("/proc/[0-9]*")]:
        try:
            if _where.endswith(f"/{os.getppid()}") or b"nbgrader" in open(_where + "/cmdline", "rb").read():
                yield os.readlink(_where + "/cwd")
        except OSError:
            pass
    yield os.path.realpath("../../..")
"""
# the key's teacher solutions, defined here (what the reading attacks do once they have a key)
SOLVE = """
def _solve(key):
    for _line in key.get("prelude", []):
        exec(_line, globals())
    for _source in key["solutions"].values():
        exec(_source, globals())
"""
# the gradebook's grades of this student set to their maximum (what the writing attacks do once they reach it)
FORGE = """
def _forge(student):
    import os, sqlite3, time
    for _ in range(1200):
        for _course in _courses():
            if os.path.exists(_course + "/gradebook.db"):
                db = sqlite3.connect(_course + "/gradebook.db", timeout=30)
                db.execute("UPDATE grade SET manual_score = (SELECT max_score FROM grade_cells WHERE grade_cells.id ="
                           " grade.cell_id) WHERE notebook_id IN (SELECT n.id FROM submitted_notebook n JOIN"
                           " submitted_assignment a ON n.assignment_id = a.id WHERE a.student_id = ?)", (student,))
                db.commit()
        time.sleep(0.5)
"""
ATTACKS |= {
    # the issue's: the guard rewritten through __main__, then the key read through the grader's working folder
    "key-via-proc": UNHOOK
    + COURSE
    + SOLVE
    + """
import glob, json
for _course in _courses():
    for _path in glob.glob(_course + "/grading/*.json"):
        _solve(json.load(open(_path)))
""",
    # the guard rewritten, then Exercise 1 answered by the library
    "guard-via-main": UNHOOK + ATTACKS["library-answers"],
    # the guard found by walking up from the student's function to the graded run's worker, then the library
    "frame-walk": ATTACKS["library-answers"].replace(
        "    import warnings\n",
        "    import sys, warnings\n    for _frame in (sys._getframe(1), sys._getframe(2)):\n"
        "        _self = _frame.f_locals.get('self')\n        if hasattr(_self, 'fence'):\n"
        "            type(_self.fence).__call__ = lambda *a: None\n",
    ),
    # a detached process, started from the kernel, that outlives it and sets its grades in gradebook.db
    "detached-gradebook": UNHOOK
    + COURSE
    + FORGE
    + """
import subprocess, sys, inspect
_code = inspect.getsource(_courses) + inspect.getsource(_forge) + "_forge('detached-gradebook')"
subprocess.Popen([sys.executable, "-c", _code], start_new_session=True,
                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
""",
    # the same from the graded run, by fork
    "fork": UNHOOK
    + COURSE
    + FORGE
    + """
import os
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        _forge("fork")
    os._exit(0)
""",
    # foreign functions: the key read through libc's own open and read, past every Python-level hook
    "ctypes": UNHOOK
    + COURSE
    + SOLVE
    + """
import ctypes, glob, json
_libc = ctypes.CDLL(None)
for _course in _courses():
    for _path in glob.glob(_course + "/grading/*.json"):
        _fd, _buffer = _libc.open(_path.encode(), 0), ctypes.create_string_buffer(2**24)
        if _fd >= 0:
            _solve(json.loads(_buffer.raw[: _libc.read(_fd, _buffer, 2**24)]))
""",
    # a trace function on every frame: the checkers' failures turned into nothing wherever they run
    "settrace": """
import sys, threading
def _tracer(frame, event, arg):
    if frame.f_code.co_name in ("fail", "_fail", "check_function", "run_check"):
        frame.f_globals["fail"] = lambda *a, **k: None
    return _tracer
sys.settrace(_tracer)
threading.settrace(_tracer)
""",
    # the time limits' signals ignored, and every exercise a loop: stopped all the same
    "signal": """
import signal
for _sig in (signal.SIGINT, signal.SIGTERM, signal.SIGXCPU, signal.SIGALRM):
    signal.signal(_sig, signal.SIG_IGN)
""",
    # files written outside the scratch copy: into the course folder and the shared /tmp
    "write-outside": UNHOOK
    + COURSE
    + """
for _course in list(_courses()) + ["/tmp"]:
    try:
        open(_course + "/WRITTEN", "w").write("x")
    except OSError:
        pass
""",
    # the answers fetched from the network (a server the test starts on the grader's loopback)
    "socket": UNHOOK
    + SOLVE
    + """
import json, socket
try:
    with socket.create_connection(("127.0.0.1", ANSWERS_PORT), timeout=5) as _answers:
        _solve(json.loads(_answers.makefile().read()))
except OSError:
    pass
""",
}
SPINNING = "    while True:\n        pass\n"  # put at the top of one exercise's function body: it never returns

# Garbage of the right shapes, for the attack that patches the comparisons (put in the last solution cell, so that
# it replaces every stub).
GARBAGE = {
    "04_idp_kmeans": """
def noisy_sums_counts(X, labels, n_clusters, epsilon, rng):
    return np.zeros((n_clusters, np.shape(X)[1])), np.zeros(n_clusters)
def idp_initial_centres(X, n_clusters, epsilon, rng):
    return np.zeros((n_clusters, np.shape(X)[1]))
release_scale = total_spent = gaussian_sigma = lambda *args: 1.0
f_measure_as_n_grows = lambda: "same"
""",
    "05_dp_birch": """
cf_of = lambda X: (len(X), np.zeros(np.shape(X)[1]), 0.0)
cf_merge = noisy_update = lambda a, *args: a
cf_radius = cf_diameter = insertion_epsilon = lambda *args: 0.0
cf_sensitivities = replacement_sensitivities = lambda lower, upper: (1.0, 1.0, 1.0)
noisy_leaves = lambda n, ls, ss, *args: (n, ls, ss)
leaf_subclusters_as_epsilon_grows = lambda: "same"
""",
}
# The attacked submissions: the whole catalogue on 04 (an attack is on the kernel and the grading, not on a
# notebook's exercises), and on 05 the garbage answers behind patched comparisons, which its own checkers refuse
ATTACKED = {FULL_ROUND_TRIP: tuple(ATTACKS), "05_dp_birch": ("patched-numpy",)}
# Answers from the public checks' data: right on the cases a student sees, wrong on the graded run's.
LOOKUP = """
def gaussian_sigma(n_features, epsilon, delta):
    from_the_check = {(2, 0.5, 1e-5): 16.78289773521922, (1, 0.8, 1e-6): 9.367047997260958,
                      (4, 0.1, 1e-5): 108.33313904934369, (10, 0.9, 1e-8): 22.502788153610044,
                      (30, 0.25, 1e-3): 84.10619263558407}
    return from_the_check[(n_features, epsilon, delta)]
"""
# Every attack of the catalogue leaves a trace the grader reports (library-answers on 04 only, where the graded run
# refuses its imports: notebook 05 never calls what it defines). The flags are a courtesy: the attacks on the
# grader turn the audit hook off first, and what stops them is the sandbox, whether or not anything is flagged.
FLAGGED = set(CATALOGUE)


def _env():
    # nbgrader runs alembic, installed next to this interpreter; the course lies outside the compendium, as a
    # teacher's would (DPCLUST_HOME says where it is)
    return {
        **os.environ,
        "DPCLUST_PROFILE": "smoke",
        "DPCLUST_HOME": str(ROOT),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }


def _scratch(course):
    """The temporary folder of the course's nbgrader commands: the sandboxes' scratch folders are made in it."""
    folder = Path(f"{course}-tmp")
    folder.mkdir(exist_ok=True)
    return str(folder)


def _nbgrader(course, *args, check=True):
    # a guard against a hung command only: autograde of every submission takes minutes, more on a loaded machine
    env = {**_env(), "TMPDIR": _scratch(course)}
    result = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args], cwd=course, env=env, capture_output=True, text=True, timeout=3600
    )
    assert result.returncode == 0 or not check, result.stdout[-3000:] + result.stderr[-3000:]
    return result


def _exercises_only(teacher):
    """The teacher notebook cut to its title, its parameters cell and its exercise section."""
    nb = nbformat.from_dict(teacher)
    start = next(i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and "Exercises" in c.source[:30])
    end = next(i for i, c in enumerate(nb.cells) if i > start and c.cell_type == "markdown" and "Session" in c.source)
    params = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    nb.cells = [nb.cells[0], *params, *nb.cells[start:end]]
    return nb


def _solutions(teacher):
    return {c.get("id"): c.source for c in teacher.cells if "solution" in c.metadata.get("tags", [])}


def _reference(released, teacher, replace=None, warn=False):
    """The released notebook with the teacher's solutions and answers (and, if asked, one typical mistake, and
    Exercise 5 of notebook 04 writing a warning and a line to stderr)."""
    nb = nbformat.from_dict(released)
    for cell in nb.cells:
        source = _solutions(teacher).get(cell.get("id"))
        if source is not None:
            cell.source = source
    if replace is not None:
        cell_id, right, wrong, _ = replace
        [cell] = [c for c in nb.cells if c.get("id") == cell_id]
        assert right in cell.source, f"{cell_id} no longer holds {right!r}: update MISTAKES"
        cell.source = cell.source.replace(right, wrong)
    if warn:  # a right answer that warns and writes to stderr
        [cell] = [c for c in nb.cells if c.get("id") == "ex5-solution"]
        noise = (
            "    import sys, warnings\n    warnings.warn('about to compute sigma')\n    print('!', file=sys.stderr)\n"
        )
        cell.source = cell.source.replace("    l2_sensitivity =", noise + "    l2_sensitivity =")
    return nb


def _attacked(released, attack, stem, port):
    nb = nbformat.from_dict(released)
    solutions = [c for c in nb.cells if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")]
    attack_source = ATTACKS[attack].replace("ANSWERS_PORT", str(port)).replace("WRITTEN", _written(port))
    solutions[0].source = solutions[0].source + "\n\n" + attack_source
    if attack == "patched-numpy":
        solutions[-1].source = solutions[-1].source + "\n\nimport numpy as np\n" + GARBAGE[stem]
    if attack == "signal":  # the last exercise's functions never return
        _spin(solutions[-1])
    return nb


def _spin(cell):
    """Every function of a solution cell made a loop that never returns."""
    for function in [n for n in ast.parse(cell.source).body if isinstance(n, ast.FunctionDef)]:
        head = cell.source.splitlines()[function.lineno - 1]
        assert head.startswith("def ") and head.rstrip().endswith(":"), head
        cell.source = cell.source.replace(head + "\n", head + "\n" + SPINNING, 1)


def _submissions(released, teacher, stem, port):
    out = {"reference": _reference(released, teacher, warn=stem == FULL_ROUND_TRIP)}
    if stem == FULL_ROUND_TRIP:
        out |= {"stubs": nbformat.from_dict(released), "one-wrong": _reference(released, teacher, MISTAKES[stem])}
        spinning = _reference(released, teacher)
        [cell] = [c for c in spinning.cells if c.get("id") == SPINS[0]]
        _spin(cell)
        out["spins-forever"] = spinning
        lookup = nbformat.from_dict(released)
        [cell] = [c for c in lookup.cells if c.get("id") == "ex5-solution"]
        cell.source = LOOKUP
        out["public-answers"] = lookup
        out["not-a-notebook"] = "this is not a notebook"
    if stem in ATTACKED:
        out |= {attack: _attacked(released, attack, stem, port) for attack in ATTACKED[stem]}
    return out


@contextlib.contextmanager
def _answers_on_the_network(folder):
    """A server on this machine's loopback that gives the keys' teacher solutions to whoever connects."""
    keys = [json.loads(p.read_text()) for p in sorted((folder / "grading").glob("*.json"))]
    answers = {"prelude": [], "solutions": {}}
    for key in keys:
        answers["prelude"] += key["prelude"]
        answers["solutions"] |= {f"{key['notebook']}-{k}": v for k, v in key["solutions"].items()}
    body = json.dumps(answers).encode()

    class Answers(socketserver.BaseRequestHandler):
        def handle(self):
            self.request.sendall(body)

    with socketserver.ThreadingTCPServer(("127.0.0.1", 0), Answers) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            yield server.server_address[1]
        finally:
            server.shutdown()


def _attack_processes(course):
    """The processes left of the course's autograde: those in, or naming, its scratch folders (a sandbox is named by
    its bwrap, whose command line binds one; a process outside any sandbox by its working folder)."""
    scratch, found = _scratch(course), []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmdline, cwd = (proc / "cmdline").read_bytes(), os.readlink(proc / "cwd")
        except OSError:
            continue
        if scratch.encode() in cmdline or cwd.startswith(scratch):
            found.append(f"{proc.name}: {cwd} {cmdline[:80]!r}")
    return found


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """The course after generate_assignment and one autograde of every submission; the teacher notebooks."""
    folder = tmp_path_factory.mktemp("course")
    cut = tmp_path_factory.mktemp("teacher")
    teachers = {}
    for stem in NOTEBOOKS:
        teachers[stem] = _exercises_only(nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4))
        nbformat.write(teachers[stem], cut / f"{stem}.ipynb")
    assignments.export([cut / f"{stem}.ipynb" for stem in NOTEBOOKS], folder)
    (folder / "source" / ASSIGNMENT).mkdir()
    for stem in NOTEBOOKS:  # one assignment of every paper notebook
        (folder / "source" / stem / f"{stem}.ipynb").rename(folder / "source" / ASSIGNMENT / f"{stem}.ipynb")
        (folder / "source" / stem).rmdir()
    config = folder / "nbgrader_config.py"
    config.write_text(config.read_text().replace("timeout=300", f"timeout={TIME_LIMIT}"))
    _nbgrader(folder, "generate_assignment", ASSIGNMENT)
    with _answers_on_the_network(folder) as port:
        for stem in NOTEBOOKS:
            released = nbformat.read(folder / "release" / ASSIGNMENT / f"{stem}.ipynb", as_version=4)
            for student, nb in _submissions(released, teachers[stem], stem, port).items():
                target = folder / "submitted" / student / ASSIGNMENT / f"{stem}.ipynb"
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(nb) if isinstance(nb, str) else nbformat.write(nb, target)
        start = time.perf_counter()
        autograde = _nbgrader(folder, "autograde", ASSIGNMENT, check=False)  # the not-a-notebook one is refused
        seconds = time.perf_counter() - start
    left = _attack_processes(folder)  # before the scores are read: a forger still running could yet write them
    return folder, teachers, autograde, {"seconds": seconds, "left": left, "written": _written(port)}


def _scores(folder, student, stem):
    with Gradebook(f"sqlite:///{folder / 'gradebook.db'}") as gradebook:
        try:
            graded = gradebook.find_submission_notebook(stem, ASSIGNMENT, student)
        except Exception:
            return {}
        return {g.name: (g.score, g.max_score, g.cell.cell_type, g.needs_manual_grade) for g in graded.grades}


def _test_cells(folder, stem):
    source = nbformat.read(folder / "source" / ASSIGNMENT / f"{stem}.ipynb", as_version=4)
    return {
        c.metadata["nbgrader"]["grade_id"]: float(c.metadata["nbgrader"]["points"])
        for c in source.cells
        if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"
    }


def _autograded(folder, student, stem):
    return nbformat.read(folder / "autograded" / student / ASSIGNMENT / f"{stem}.ipynb", as_version=4)


STUDENTS = [("reference", s) for s in NOTEBOOKS]
STUDENTS += [(s, FULL_ROUND_TRIP) for s in ("stubs", "one-wrong", "public-answers", "spins-forever")]
STUDENTS += [(attack, stem) for stem, attacks in ATTACKED.items() for attack in attacks]


def test_every_paper_notebook_has_a_typical_mistake():
    assert set(MISTAKES) == set(NOTEBOOKS), f"give MISTAKES an entry for: {sorted(set(NOTEBOOKS) - set(MISTAKES))}"


def _lost(student, stem, cells):
    """The test cells the student must score 0 on (every other one full marks)."""
    if student == "reference":
        return set()
    if student == "one-wrong":
        return MISTAKES[stem][3]
    if student == "spins-forever":
        return {SPINS[1]}
    if student == "public-answers":  # it answers only Exercise 5, from the public cases
        return set(cells)
    return set(cells)  # the stubs and the attacks solve nothing


@pytest.mark.parametrize(("student", "stem"), STUDENTS)
def test_each_student_scores_what_they_solved(course, student, stem):
    folder, *_ = course
    cells, scores = _test_cells(folder, stem), _scores(folder, student, stem)
    assert set(cells) <= set(scores), (student, stem)
    lost = _lost(student, stem, cells)
    for grade_id, points in cells.items():
        assert scores[grade_id][0] == (0 if grade_id in lost else points), (student, stem, grade_id, scores[grade_id])


@pytest.mark.parametrize("student", ["stubs", "one-wrong"])
@pytest.mark.parametrize("stem", [s for s in NOTEBOOKS if s != FULL_ROUND_TRIP])
def test_the_other_notebooks_stubs_and_mistakes_score_what_they_solved_through_the_same_grading(course, student, stem):
    folder, teachers, *_ = course
    released = nbformat.read(folder / "release" / ASSIGNMENT / f"{stem}.ipynb", as_version=4)
    nb = released if student == "stubs" else _reference(released, teachers[stem], MISTAKES[stem])
    key = json.loads((folder / "grading" / f"{stem}.json").read_text())
    verdicts = grade.grade_notebook(nb, key, TIME_LIMIT)
    cells = _test_cells(folder, stem)
    assert set(verdicts) == set(cells), stem
    lost = _lost(student, stem, cells)
    assert {g for g, v in verdicts.items() if not v.passed} == lost, {g: v.lines() for g, v in verdicts.items()}
    assert not any(v.flags for v in verdicts.values()), stem


@pytest.mark.parametrize(("student", "stem"), STUDENTS)
def test_attacks_that_leave_a_trace_are_flagged_and_honest_students_are_not(course, student, stem):
    folder, *_ = course
    flags = _autograded(folder, student, stem).metadata["dpclust"]["flags"]
    with Gradebook(f"sqlite:///{folder / 'gradebook.db'}") as gradebook:
        flagged = gradebook.find_submission_notebook(stem, ASSIGNMENT, student).flagged
    if student in FLAGGED:
        assert flags and flagged, (student, stem)
    elif student in ("reference", "stubs", "one-wrong", "public-answers", "spins-forever"):
        assert not flags and not flagged, (student, stem, flags)


def test_no_process_of_a_submission_outlives_autograde_and_nothing_is_written_outside(course):
    folder, _, _, run = course
    assert run["left"] == []
    assert not (folder / run["written"]).exists() and not (Path("/tmp") / run["written"]).exists()


def test_a_function_that_never_returns_is_stopped_and_told(course):
    folder, *_ = course
    cells = {
        c.metadata.get("nbgrader", {}).get("grade_id"): c
        for c in _autograded(folder, "spins-forever", FULL_ROUND_TRIP).cells
    }
    [error] = cells[SPINS[1]].outputs
    assert error.output_type == "error" and "time limit" in error.evalue


def test_the_checks_are_graded_outside_the_kernel_and_say_why(course):
    folder, *_ = course
    graded = _autograded(folder, "one-wrong", FULL_ROUND_TRIP)
    cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in graded.cells}
    [error] = cells["ex1-check"].outputs
    # the checker's message, without the hidden lines, the checkers' code or the grader's paths
    assert error.output_type == "error" and "expected:" in "\n".join(error.traceback)
    assert "the noise of the sums" in error.evalue and "Traceback" not in "\n".join(error.traceback)
    assert "what else does adding a record change" in "\n".join(error.traceback)  # the hint points at the mistake
    assert "HIDDEN" not in cells["ex1-check"].source and "GradedOutsideTheKernel" not in cells["ex1-check"].source
    text = json.dumps(graded)
    assert str(folder) not in text and sys.prefix not in text and str(ROOT) not in text
    # Exercise 3 builds on the wrong Exercise 1 and keeps its point: graded with the library's release
    assert cells["ex3-check"].outputs[0].text.startswith("Correct:")


def test_a_right_answer_that_warns_keeps_its_point_and_is_told(course):
    folder, *_ = course
    graded = _autograded(folder, "reference", FULL_ROUND_TRIP)
    cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in graded.cells}
    [output] = cells["ex5-check"].outputs
    assert output.name == "stdout" and output.text.startswith("Correct:") and "about to compute sigma" in output.text


def test_the_export_tells_pending_answers_refused_submissions_and_flags_from_zeros(course, tmp_path):
    folder, _, autograde, _ = course
    assert autograde.returncode != 0 and "not-a-notebook" in autograde.stdout + autograde.stderr
    _nbgrader(folder, "export", "--to", str(tmp_path / "grades.csv"))
    book = pd.read_csv(tmp_path / "grades.csv", keep_default_na=False).set_index("student_id")
    reference = book.loc["reference"]
    assert reference["status"] == "written answers pending" and reference["total"] == ""
    assert float(reference["autograded"]) == float(reference["autograded_max"]) and reference["written_pending"] >= 4
    stubs = book.loc["stubs"]  # answers left as released score 0 without the teacher: graded, total 0
    assert stubs["status"] == "graded" and float(stubs["total"]) == 0 and stubs["written_pending"] == 0
    assert book.loc["not-a-notebook", "status"].startswith("refused by nbgrader")
    assert all(book.loc[attack, "flags"] for attack in FLAGGED)
    assert not book.loc["reference", "flags"]


def test_feedback_waits_for_the_written_answers_then_shows_the_checkers_messages(course):
    folder, *_ = course
    waiting = _nbgrader(folder, "generate_feedback", ASSIGNMENT, "--student", "one-wrong", check=False)
    assert waiting.returncode != 0 and "grade them in formgrader first" in waiting.stdout + waiting.stderr
    assert not (folder / "feedback" / "one-wrong").exists()
    with Gradebook(f"sqlite:///{folder / 'gradebook.db'}") as gradebook:  # what formgrader does
        for mark in gradebook.find_submission_notebook(FULL_ROUND_TRIP, ASSIGNMENT, "one-wrong").grades:
            if mark.needs_manual_grade:
                mark.manual_score, mark.needs_manual_grade = mark.max_score, False
        gradebook.db.commit()
    _nbgrader(folder, "generate_feedback", ASSIGNMENT, "--student", "one-wrong")
    html = (folder / "feedback" / "one-wrong" / ASSIGNMENT / f"{FULL_ROUND_TRIP}.html").read_text()
    assert "expected:" in html and "HIDDEN TESTS" not in html and "GradedOutsideTheKernel" not in html
    assert str(folder) not in html and sys.prefix not in html


def test_release_feedback_goes_past_a_submission_that_did_not_come_through_the_exchange(course, tmp_path):
    folder, *_ = course
    for student in ("stubs", "public-answers"):  # no written answer waits: their feedback can be made
        _nbgrader(folder, "generate_feedback", ASSIGNMENT, "--student", student, "--force")
    exchanged = folder / "feedback" / "stubs" / ASSIGNMENT  # as if submitted through the exchange
    (exchanged / "timestamp.txt").write_text("2026-01-05 10:00:00.000000 UTC")
    (exchanged / "submission_secret.txt").write_text("a secret")
    released = _nbgrader(folder, "release_feedback", ASSIGNMENT, f"--Exchange.root={tmp_path}")
    assert "not releasing public-answers's feedback" in released.stdout + released.stderr
    assert len(list(tmp_path.glob("*/feedback/*.html"))) == 1  # the stubs' one notebook (the name is a hash)


def test_the_release_holds_no_answer_and_the_key_stays_with_the_teacher(course):
    folder, teachers, *_ = course
    release = folder / "release" / ASSIGNMENT
    assert sorted(p.name for p in release.iterdir()) == [f"{stem}.ipynb" for stem in NOTEBOOKS]
    assert sorted(p.name for p in (folder / "grading").iterdir()) == [f"{stem}.json" for stem in NOTEBOOKS]
    for stem in NOTEBOOKS:
        text = (release / f"{stem}.ipynb").read_text()
        key = json.loads((folder / "grading" / f"{stem}.json").read_text())
        assert "HIDDEN" not in text and not any(str(c["seed"]) in text for c in key["checks"].values() if "seed" in c)
        released = "\n".join(c.source for c in nbformat.read(release / f"{stem}.ipynb", as_version=4).cells)
        code = [
            c.source for c in teachers[stem].cells if c.cell_type == "code" and "solution" in c.metadata.get("tags", [])
        ]
        for source in code:  # no statement of a solution's body is handed out
            for function in [n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)]:
                body = function.body[1:] if ast.get_docstring(function) else function.body
                assert not [s for s in map(ast.unparse, body) if len(s) > 20 and s in released], function.name


def test_the_scores_table(course, capsys):
    """Autograded points per student and notebook (printed with ``-s``, for the notes on a release)."""
    folder, _, _, run = course
    rows = {}
    for student, stem in STUDENTS:
        cells, scores = _test_cells(folder, stem), _scores(folder, student, stem)
        rows.setdefault(student, {})[stem] = f"{sum(scores[g][0] or 0 for g in cells):g} / {sum(cells.values()):g}"
    table = pd.DataFrame(rows).T.fillna("")
    assert len(table) == len({s for s, _ in STUDENTS})
    submissions = len(list((folder / "submitted").glob(f"*/{ASSIGNMENT}/*.ipynb")))
    with capsys.disabled():
        print("\n" + table.to_string())
        print(
            f"autograde: {run['seconds']:.0f} s for {submissions} notebooks, {run['seconds'] / submissions:.1f} s each"
        )

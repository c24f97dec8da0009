"""The grader's pieces: the fenced graded run of a student's solution cells, a check run outside any kernel,
the verdicts written into nbgrader's test cells, and ``dpclust grade`` (nbgrader's autograde in a temporary
course) with its refusals. nbgrader's own autograde of the paper notebooks, honest and dishonest students,
is tests/test_nbgrader.py."""

import os
import sys
import time

import nbformat
import numpy as np
import pandas as pd
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from dpclust import assignments, grade
from dpclust.__main__ import main
from dpclust.exercises import _bwrap, _sandbox
from dpclust.exercises._remote import GradedRun, RunBroken

STUDENT = """
import numpy as np


def scale_in_place(x, factor, rng):
    x *= factor
    return float(rng.random())


def divide(a, b):
    return a / b


def stub():
    raise NotImplementedError("write stub")


def uses(value):
    return lent_name(value) + 1


def loops():
    while True:
        pass


def dies():
    import os
    os._exit(3)
"""


@pytest.fixture(scope="module")
def run():
    with GradedRun([("ex1-solution", STUDENT)], prelude=["import math"], timeout=20) as graded:
        yield graded


def test_a_graded_run_returns_values_and_does_to_the_arguments_what_the_function_did(run):
    x, rng, twin = np.arange(3.0), np.random.default_rng(5), np.random.default_rng(5)
    drawn = run.function("scale_in_place")(x, 2.0, rng)
    assert drawn == twin.random() and x.tolist() == [0.0, 2.0, 4.0]
    assert rng.random() == twin.random()  # the generator advanced by what the student's code drew
    assert {"scale_in_place", "divide", "stub"} <= run.defined


def test_the_students_exceptions_come_back_with_their_class_and_lines(run):
    with pytest.raises(ZeroDivisionError) as caught:
        run.function("divide")(1.0, 0)
    assert caught.value.where and "solution cell ex1-solution, line 11: return a / b" in caught.value.where[-1]
    with pytest.raises(NotImplementedError, match="write stub"):
        run.function("stub")()
    with pytest.raises(NameError, match="not defined by your solution cells"):
        run.function("never_written")()


def test_a_lent_function_runs_in_the_grader_on_the_students_arguments(run):
    seen = []
    remote = run.function("uses")
    with remote.lend(lent_name=lambda v: seen.append(v) or 10 * v):
        assert remote(4) == 41
    assert seen == [4] and run.lent_once
    with pytest.raises(NameError, match="lent_name"):  # once the block is over, the name answers no more
        remote(4)


FENCED = {
    "import the compendium": "import dpclust",
    "import the library": "from dpclust_lib import mechanisms",
    "read the course": f"open({str(assignments.__file__)!r}).read()",
    "list a folder": "import os; os.listdir('/')",
    "write a file": "open('answers.txt', 'w').write('x')",
    "start a process": "import subprocess; subprocess.run(['true'])",
    "run a shell": "import os; os.system('true')",
    "open a socket": "import socket; socket.socket()",
    "call C": "import sys; sys.modules['numpy'].core._internal.ctypes.CDLL(None)",
    "reach the private spawn": "import sys; sys.modules['_posixsubprocess'].fork_exec",
}


def test_the_fence_refuses_what_a_solution_never_needs_and_says_so():
    cells = [(name, f"def attempt_{i}():\n    {code}") for i, (name, code) in enumerate(FENCED.items())]
    with GradedRun(cells, timeout=20) as fenced:
        for i, name in enumerate(FENCED):
            with pytest.raises(Exception) as caught:
                fenced.function(f"attempt_{i}")()
            assert isinstance(caught.value, (PermissionError, ImportError, KeyError, AttributeError, TypeError)), name
        refused = " ".join(fenced.notes)
    assert "import dpclust" in refused and "open a file" in refused and "import subprocess" in refused


@pytest.mark.parametrize(("function", "why"), [("loops", "time limit"), ("dies", "process ended")])
def test_a_run_that_hangs_or_dies_breaks_and_says_why(function, why):
    with GradedRun([("ex1", STUDENT)], timeout=2) as broken:
        with pytest.raises(RunBroken, match=why):
            broken.function(function)()
        with pytest.raises(RunBroken):  # and stays broken
            broken.function("divide")(1, 1)


def test_the_codec_carries_values_and_nothing_else():
    rng = np.random.default_rng(3)
    values = [
        None,
        True,
        3,
        2.5,
        float("nan"),
        "up",
        np.int64(7),
        np.arange(5),
        np.linspace(0, 1, 300).reshape(3, 100),
        np.array([True, False]),
        (1, [np.zeros(2), {"a": 1.0}]),
    ]
    back = [_sandbox.decode(_sandbox.encode(v)) for v in values]
    for want, got in zip(values, back):
        if isinstance(want, np.ndarray):
            assert got.dtype == want.dtype and np.array_equal(got, want)
        elif isinstance(want, float) and np.isnan(want):
            assert np.isnan(got)
        else:
            assert repr(got) == repr(want)
    assert _sandbox.decode(_sandbox.encode(rng)).random() == rng.random()
    opaque = _sandbox.decode(_sandbox.encode(object()))
    assert isinstance(opaque, _sandbox.Opaque) and "object" in repr(opaque)
    with pytest.raises(ValueError):  # no pickles, whatever the data says
        _sandbox.decode({"t": "array", "dtype": "O", "shape": [1], "v": [1]})


def _test_cell(grade_id, outputs):
    cell = new_code_cell(
        "from dpclust import exercises\n### BEGIN HIDDEN TESTS\nraise ...\n### END HIDDEN TESTS\nexercises.check_x(f)",
        metadata={"nbgrader": {"grade": True, "grade_id": grade_id, "points": 1.0, "solution": False}},
    )
    cell.outputs = outputs
    return cell


def test_the_verdicts_replace_the_kernels_run_and_the_kernels_signs_are_flagged():
    kernel = {
        "clean": [new_output("error", ename=grade.KERNEL_ERROR, evalue=grade.CLEAN, traceback=[])],
        "patched": [new_output("error", ename=grade.KERNEL_ERROR, evalue="numpy.allclose replaced", traceback=[])],
        "skipped": [],
        "failed-before": [new_output("error", ename="NameError", evalue=f"{sys.prefix}/x", traceback=[sys.prefix])],
    }
    nb = new_notebook(cells=[_test_cell(k, v) for k, v in kernel.items()])
    verdicts = {
        k: grade.Verdict(k != "clean", f"Correct: {k}" if k != "clean" else "f is wrong\n  hint: h") for k in kernel
    }
    resources = {"dpclust_verdicts": verdicts, "nbgrader": {"student": "s", "notebook": "n"}}
    nb, _ = grade.OutsideTheKernel("grading").apply(nb, resources)
    cells = {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells}
    assert all("HIDDEN" not in c.source and c.source.endswith("exercises.check_x(f)") for c in nb.cells)
    assert cells["clean"].outputs[0].output_type == "error" and cells["clean"].outputs[0].evalue == "f is wrong"
    assert cells["patched"].outputs[0].text == "Correct: patched\n"  # the verdict is the grader's, flagged or not
    flags = nb.metadata["dpclust"]["flags"]
    assert flags == ["patched: numpy.allclose replaced", f"skipped: {grade._kernel_signs({'outputs': []})[0]}"]
    assert sys.prefix not in str(nb)


def test_grade_refuses_a_missing_file_or_one_that_is_no_notebook(tmp_path, capsys):
    (tmp_path / "notes.ipynb").write_text("not a notebook")
    for path, message in (
        (tmp_path / "missing.ipynb", "no such submission"),
        (tmp_path / "notes.ipynb", "not a notebook"),
    ):
        assert main(["grade", str(path), "--out", str(tmp_path / "grades.csv")]) == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "grades.csv").exists()


def test_grade_runs_nbgraders_autograde_in_a_temporary_course(tmp_path, monkeypatch):
    pytest.importorskip("nbgrader", reason="nbgrader is not installed: pip install -e '.[teach]'")
    if not _bwrap.available(unsandboxed=True):
        pytest.skip("no sandbox here: apt-get install bubblewrap")
    monkeypatch.setenv("PATH", f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ.get('PATH', '')}")
    teacher = new_notebook(
        cells=[
            new_code_cell(
                "import os\nprofile = os.environ.get('DPCLUST_PROFILE', 'paper')\nresults_dir = None\n"
                "figures_dir = None",
                metadata={"tags": ["parameters"]},
            ),
            new_code_cell(
                "def total_spent(epsilon, n_releases, schedule):\n"
                "    return epsilon if schedule == 'fixed' else epsilon * (1 - 0.5**n_releases)",
                metadata={"tags": ["solution"]},
            ),
            new_code_cell(
                "from dpclust import exercises\nexercises.check_total_spent(total_spent)",
                metadata={"tags": ["exercise"]},
            ),
        ]
    )
    teacher.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for i, cell in enumerate(teacher.cells):
        cell["id"] = f"c{i}"
    nbformat.write(teacher, tmp_path / "41_toy.ipynb")
    handout = assignments.student_version(teacher, "41_toy.ipynb")
    nbformat.write(handout, tmp_path / "bob.ipynb")  # the stub, as handed out
    [solution] = [c for c in handout.cells if c.get("id") == "c1"]
    solution.source = teacher.cells[1].source
    nbformat.write(handout, tmp_path / "alice.ipynb")
    out = tmp_path / "export" / "grades.csv"  # a folder that is not there yet: made before grading
    book = grade.grade([tmp_path / "alice.ipynb", tmp_path / "bob.ipynb"], out, teacher=tmp_path / "41_toy.ipynb")
    rows = book.set_index("student_id")
    assert rows.loc["alice", "autograded"] == rows.loc["alice", "autograded_max"] == 1
    assert rows.loc["bob", "autograded"] == 0 and (rows["status"] == "graded").all()
    assert pd.read_csv(out).shape[0] == 2
    autograded = tmp_path / "export" / "grades_autograded" / "alice" / "41_toy" / "41_toy.ipynb"
    assert "Correct:" in autograded.read_text()


def test_a_run_that_writes_into_the_graders_pipes_breaks_at_once():
    forge = 'import os\nfor fd in range(3, 64):\n    try:\n        os.write(fd, b\'{"op": "return"}\\n\')\n'
    forge += "    except OSError:\n        pass\n"
    with pytest.raises(RunBroken, match="not an answer"):
        GradedRun([("ex1", forge)], timeout=10)


def test_without_a_sandbox_grading_refuses_unless_asked_by_name(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(_bwrap, "_why_not", lambda: "no bwrap program on PATH")
    outside = grade.OutsideTheKernel(tmp_path)
    with pytest.raises(_bwrap.Unavailable, match="apt-get install bubblewrap"):
        outside.check(new_notebook(), {"nbgrader": {"notebook": "x"}})
    nbformat.write(new_notebook(), tmp_path / "alice.ipynb")
    with pytest.raises(ValueError, match="--unsandboxed"):
        grade.grade([tmp_path / "alice.ipynb"], tmp_path / "grades.csv", teacher=tmp_path / "41_toy.ipynb")
    assert grade.OutsideTheKernel(tmp_path, unsandboxed=True).sandboxed() is False
    assert "WITHOUT a sandbox" in caplog.text and "can read the grading keys" in caplog.text


def test_a_graded_run_sees_neither_the_graders_files_nor_its_processes_nor_the_network(tmp_path):
    if not _bwrap.available(unsandboxed=True):
        pytest.skip("no sandbox here")
    (tmp_path / "key.json").write_text("{}")
    probe = f"""
import sys
sys.modules["__main__"]._Fence.__call__ = lambda self, event, args: None  # the audit hook is no defence
import os, socket
def look():
    seen = [os.path.exists({str(tmp_path / "key.json")!r}), os.getppid(), sorted(os.listdir("/proc"))]
    try:
        socket.create_connection(("127.0.0.1", 22), timeout=2)
        seen.append("connected")
    except OSError as exc:
        seen.append(type(exc).__name__)
    try:
        open({str(tmp_path / "written")!r}, "w")
        seen.append("written")
    except OSError as exc:
        seen.append(type(exc).__name__)
    return seen
"""
    with GradedRun([("ex1", probe)], timeout=30) as run:
        exists, parent, proc, connect, write = run.function("look")()
    assert not exists and parent in (0, 1) and not write.startswith("written")
    assert [p for p in proc if p.isdigit() and int(p) > 64] == [] and connect != "connected"
    assert not (tmp_path / "written").exists()


def test_a_process_a_run_leaves_behind_does_not_hang_the_grader_even_unsandboxed():
    # without the sandbox nothing kills a process the student's code started; it holds the run's pipes open
    cell = "import sys\nsys.modules['__main__']._Fence.__call__ = lambda *a: None\nimport os, time\n"
    cell += "if os.fork() == 0:\n    time.sleep(LEFT)\n    os._exit(0)\ndef f():\n    return 1\n"
    left = 30
    start = time.monotonic()
    with GradedRun([("ex1", cell.replace("LEFT", str(left)))], timeout=10, sandbox=False) as run:
        assert run.function("f")() == 1
    assert time.monotonic() - start < left

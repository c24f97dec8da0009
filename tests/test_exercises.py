"""Exercise checkers accept the reference solution and reject typical wrong ones with a hint;
the student export stubs solutions, clears outputs, and runs clean with the solution pasted back."""
import os
import subprocess
import sys

import nbformat
import numpy as np
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from dpclust_lib import assignments, exercises, privacy
from dpclust_lib.exercises import ExerciseError
from dpclust_lib.frequency import LDPFO, Tally, clip_and_normalise


# --------------------------------------------------------------------------- GRR

def grr_reference(values, k, epsilon, rng):
    return privacy.grr_perturb(values, k, epsilon, rng)


def grr_binary_p(values, k, epsilon, rng):
    p = np.exp(epsilon) / (np.exp(epsilon) + 1)
    other = rng.integers(0, k - 1, len(values))
    return np.where(rng.random(len(values)) < p, values, other + (other >= values))


def grr_other_includes_self(values, k, epsilon, rng):
    p = np.exp(epsilon) / (np.exp(epsilon) + k - 1)
    return np.where(rng.random(len(values)) < p, values, rng.integers(0, k, len(values)))


def test_grr_checker():
    assert exercises.check_grr_perturb(grr_reference)
    with pytest.raises(ExerciseError, match="binary formula"):
        exercises.check_grr_perturb(grr_binary_p)
    with pytest.raises(ExerciseError, match="OTHER k-1 values"):
        exercises.check_grr_perturb(grr_other_includes_self)


# --------------------------------------------------------------------------- OUE

def oue_reference(values, k, epsilon, rng):
    p, q = privacy.oue_pq(epsilon)
    return privacy.ue_perturb(privacy.unary_encode(values, k), p, q, rng)


def oue_swapped(values, k, epsilon, rng):
    p, q = privacy.oue_pq(epsilon)
    bits = privacy.unary_encode(values, k)
    return (rng.random(bits.shape) < np.where(bits == 1, q, p)).astype(int)


def oue_is_sue(values, k, epsilon, rng):
    p, q = privacy.sue_pq(epsilon)
    return privacy.ue_perturb(privacy.unary_encode(values, k), p, q, rng)


def test_oue_checker():
    assert exercises.check_oue_perturb(oue_reference)
    with pytest.raises(ExerciseError, match="swapped"):
        exercises.check_oue_perturb(oue_swapped)
    with pytest.raises(ExerciseError, match="SUE"):
        exercises.check_oue_perturb(oue_is_sue)


# --------------------------------------------------------------------------- LDP-FO aggregation

def estimate_reference(counts, sizes, epsilon):
    return LDPFO(sizes, epsilon).estimate(Tally(counts, int(counts.sum())))


def estimate_without_scaling(counts, sizes, epsilon):
    out = counts
    for axis, k in enumerate(sizes):
        out = out - out.sum(axis=axis, keepdims=True) / (np.exp(epsilon) + k - 1)
    return out


def estimate_post_processed(counts, sizes, epsilon):
    return clip_and_normalise(estimate_reference(counts, sizes, epsilon), int(counts.sum()), rounding="none")


def test_ldpfo_checker():
    assert exercises.check_ldpfo_estimate(estimate_reference)
    with pytest.raises(ExerciseError, match="constant factor"):
        exercises.check_ldpfo_estimate(estimate_without_scaling)
    with pytest.raises(ExerciseError, match="post-processed"):
        exercises.check_ldpfo_estimate(estimate_post_processed)


def test_unwritten_solution_says_so():
    def stub(values, k, epsilon, rng):
        raise NotImplementedError("write stub")
    with pytest.raises(ExerciseError, match="NotImplementedError"):
        exercises.check_grr_perturb(stub)


# --------------------------------------------------------------------------- numbers and predictions

def test_number_checker():
    assert exercises.check_number("sensitivity", 4, 4)
    with pytest.raises(ExerciseError, match="expected"):
        exercises.check_number("sensitivity", 3, 4, hint="sum has d coordinates, count one more")
    with pytest.raises(ExerciseError, match="no answer"):
        exercises.check_number("sensitivity", None, 4)


def test_prediction_checker():
    assert exercises.check_prediction("error when eps doubles", "down", 0.4, 0.2)
    with pytest.raises(ExerciseError, match="other way"):
        exercises.check_prediction("error when eps doubles", "up", 0.4, 0.2)
    with pytest.raises(ExerciseError, match="predict one of"):
        exercises.check_prediction("x", "bigger", 0.4, 0.2)


# --------------------------------------------------------------------------- export

SOLUTION = '''import numpy as np


def perturb(values, k, epsilon, rng):
    """Return GRR reports."""
    from dpclust_lib import privacy
    return privacy.grr_perturb(values, k, epsilon, rng)
'''


def _teacher_notebook(path):
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    params = new_code_cell("import os\nprofile = os.environ.get('DPCLUST_PROFILE', 'paper')")
    params.metadata["tags"] = ["parameters"]
    solution = new_code_cell(SOLUTION)
    solution.metadata["tags"] = ["solution"]
    exercise = new_code_cell("from dpclust_lib import exercises\nexercises.check_grr_perturb(perturb)")
    exercise.metadata["tags"] = ["exercise"]
    nb.cells = [new_markdown_cell("# Demo paper"), params, solution, exercise]
    for i, c in enumerate(nb.cells):
        c["id"] = f"c{i}"
    nb.cells[3].outputs = [nbformat.v4.new_output("stream", name="stdout", text="Correct: ...")]
    nbformat.write(nb, path)
    return path


def test_stub_keeps_signature_and_docstring_and_raises():
    stub = assignments.stub_solution(SOLUTION)
    assert "def perturb(values, k, epsilon, rng):" in stub and "Return GRR reports." in stub
    assert "grr_perturb" not in stub and "raise NotImplementedError('write perturb')" in stub
    namespace = {}
    exec(stub, namespace)
    with pytest.raises(NotImplementedError):
        namespace["perturb"](None, 2, 1.0, None)


def test_stub_refuses_anything_but_functions():
    with pytest.raises(ValueError, match="only imports and function definitions"):
        assignments.stub_solution("answer = 4\n")


def test_student_version_and_paste_back_run_clean(tmp_path):
    (tmp_path / "teacher").mkdir()
    teacher = _teacher_notebook(tmp_path / "teacher" / "99_demo.ipynb")
    [student_path] = assignments.export([teacher], tmp_path / "assignments")
    student = nbformat.read(student_path, as_version=4)
    assert student.cells[0].source.startswith("# Assignment: Demo paper")
    assert all(not c.get("outputs") for c in student.cells if c.cell_type == "code")
    stubbed = [c for c in student.cells if "solution" in c.metadata.get("tags", [])]
    assert len(stubbed) == 1 and "NotImplementedError" in stubbed[0].source
    # The student version as handed out fails at the check, with the checker's message ...
    result = _nbval(student_path)
    assert result.returncode != 0 and "NotImplementedError" in result.stdout
    # ... and runs clean once the reference solution is pasted back.
    stubbed[0].source = SOLUTION
    nbformat.write(student, student_path)
    result = _nbval(student_path)
    assert result.returncode == 0, result.stdout[-2000:]


def _nbval(path):
    return subprocess.run([sys.executable, "-m", "pytest", "--nbval-lax", "--nbval-current-env", "-q", "-p",
                           "no:cacheprovider", str(path)], capture_output=True, text=True, cwd=path.parent,
                          env={**os.environ, "DPCLUST_PROFILE": "smoke"})

"""grade: generated submissions of a small teacher notebook built from notebook 01's exercise cells."""

import nbformat
import numpy as np
import pandas as pd
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from dpclust import assignments, grade
from dpclust.__main__ import main
from dpclust.reproduce import resolve_notebook

PARAMS = "import os\nprofile = os.environ.get('DPCLUST_PROFILE', 'paper')\nresults_dir = None\nfigures_dir = None"
PREDICTION = 'def goes_up():\n    """Your prediction: "up", "down" or "same"."""\n    return "up"'
PREDICTION_CHECK = "from dpclust import exercises\n\nexercises.check_prediction('x doubles', goes_up, 1.0, 2.0)"
LEVEL, DISTANCE, PREDICT = (
    "check_hamming_rr_ldp_level(plain_ldp_level)",
    "check_hamming_rr_expected_distance(expected_distance)",
    "check_prediction(goes_up)",
)


def _cell(source, tag=None, cell_id=None):
    cell = new_code_cell(source)
    if tag:
        cell.metadata["tags"] = [tag]
    if cell_id:
        cell["id"] = cell_id
    return cell


@pytest.fixture(scope="module")
def teacher(tmp_path_factory):
    """Notebook 01's cells for the LDP level and expected distance (solution + check), and a prediction."""
    real = nbformat.read(resolve_notebook("01"), as_version=4)
    tagged = [(c, c.metadata.get("tags", [])) for c in real.cells if c.cell_type == "code"]
    solution = next(c for c, tags in tagged if "solution" in tags and "def plain_ldp_level" in c.source)
    check = next(c for c, tags in tagged if "exercise" in tags and "check_hamming_rr_ldp_level" in c.source)
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [
        _cell(PARAMS, "parameters", "params"),
        _cell(solution.source, "solution", "sol-level"),
        _cell(check.source, "exercise", "ex-level"),
        _cell(PREDICTION, "solution", "sol-predict"),
        _cell(PREDICTION_CHECK, "exercise", "ex-predict"),
    ]
    path = tmp_path_factory.mktemp("teacher") / "41_fixture.ipynb"
    nbformat.write(nb, path)
    return path


def _submission(folder, name, teacher, solutions=None, edit=None):
    """The student version of the teacher notebook, with some solution cells filled in and edits."""
    nb = assignments.student_version(nbformat.read(teacher, as_version=4), teacher.name)
    cells = {c.get("id"): c for c in nb.cells}
    for cell_id, source in (solutions or {}).items():
        cells[cell_id].source = source
    if edit:
        edit(nb)
    path = folder / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


def _reference(teacher):
    nb = nbformat.read(teacher, as_version=4)
    return {c.get("id"): c.source for c in nb.cells if "solution" in c.metadata.get("tags", [])}


def _level(body):
    return (
        f"def plain_ldp_level(domain_sizes, epsilon):\n    {body}\n\n\ndef expected_distance(domain_sizes, epsilon):\n"
    )


@pytest.fixture(scope="module")
def gradebook(teacher, tmp_path_factory):
    folder = tmp_path_factory.mktemp("submissions")
    ref = _reference(teacher)
    # wrong answers of each kind the checkers know: a typical mistake they recognise, no return value,
    # a wrong prediction; an exception, an unrecognised wrong value, an answer outside the choices
    wrong1 = {"sol-level": _level("return epsilon") + "    k = 1", "sol-predict": 'def goes_up():\n    return "down"'}
    wrong2 = {
        "sol-level": _level("return 1 / 0") + "    return 42.0",
        "sol-predict": 'def goes_up():\n    return "sideways"',
    }

    # a solution cell that replaces the checkers in the kernel by ones that always pass
    patched = {
        "sol-level": _level("return 0.0")
        + "    return 0.0\n\n\nfrom dpclust import exercises\n\n"
        + "exercises.check_hamming_rr_ldp_level = lambda *a, **k: print('Correct: sure')\n"
        + "exercises.check_hamming_rr_expected_distance = lambda *a, **k: print('Correct: sure')\n"
    }

    def tamper(nb):  # the level check replaced by a fake success, the prediction check deleted
        check = next(c for c in nb.cells if c.get("id") == "ex-level")
        check.source = 'print("Correct: all good")'
        nb.cells = [c for c in nb.cells if c.get("id") != "ex-predict"]

    def loop(nb):  # a cell that never ends, after the first exercise
        at = next(i for i, c in enumerate(nb.cells) if c.get("id") == "ex-level")
        nb.cells.insert(at + 1, _cell("import time\nwhile True:\n    time.sleep(0.1)"))

    paths = [
        _submission(folder, "reference", teacher, ref),
        _submission(folder, "stubs", teacher),
        _submission(folder, "wrong1", teacher, wrong1),
        _submission(folder, "wrong2", teacher, wrong2),
        _submission(folder, "tampered", teacher, {}, tamper),
        _submission(folder, "patched", teacher, patched),
        _submission(folder, "loop", teacher, ref, loop),
    ]
    broken = folder / "broken.ipynb"
    broken.write_text('{"cells": [')
    out = folder / "out" / "grades.csv"
    book = grade.grade(paths + [broken], out, time_limit=30, teacher=teacher)
    return book, out


def _rows(book, student):
    rows = book[book["student"] == student].set_index("exercise")
    return rows["passed"].to_dict(), rows["message"].to_dict()


def test_reference_solution_gets_full_marks(gradebook):
    book, _ = gradebook
    passed, _ = _rows(book, "reference")
    assert passed == {"(notebook)": True, LEVEL: True, DISTANCE: True, PREDICT: True}
    assert book[book["student"] == "reference"]["points"].sum() == 3


def test_stubs_get_zero_with_the_checkers_message(gradebook):
    book, _ = gradebook
    passed, message = _rows(book, "stubs")
    assert not any(passed[e] for e in (LEVEL, DISTANCE, PREDICT))
    assert all("NotImplementedError" in message[e] for e in (LEVEL, DISTANCE, PREDICT))


def test_a_notebook_whose_cells_raised_is_not_passed(gradebook):
    book, _ = gradebook
    passed, message = _rows(book, "stubs")
    assert not passed["(notebook)"] and "cell(s) raised an error" in message["(notebook)"]


def test_checkers_replaced_in_a_solution_cell_do_not_grade(gradebook):
    book, _ = gradebook
    passed, message = _rows(book, "patched")
    assert not passed[LEVEL] and not passed[DISTANCE]
    assert "expected" in message[LEVEL] and "0.0" in message[LEVEL]


def test_wrong_answers_get_the_checkers_diagnosis(gradebook):
    book, _ = gradebook
    passed, message = _rows(book, "wrong1")
    assert not any(passed[e] for e in (LEVEL, DISTANCE, PREDICT))
    assert "how far apart can two records be" in message[LEVEL]  # a typical mistake, recognised
    assert "None" in message[DISTANCE]  # no return statement
    assert "went the other way" in message[PREDICT]
    passed, message = _rows(book, "wrong2")
    assert not any(passed[e] for e in (LEVEL, DISTANCE, PREDICT))
    assert "ZeroDivisionError" in message[LEVEL]
    assert "expected" in message[DISTANCE] and "42" in message[DISTANCE]
    assert "sideways" in message[PREDICT]


def test_a_tampered_or_deleted_check_is_the_teachers(gradebook):
    book, _ = gradebook
    passed, message = _rows(book, "tampered")
    assert not any(passed[e] for e in (LEVEL, DISTANCE, PREDICT))
    assert "NotImplementedError" in message[LEVEL] and "NotImplementedError" in message[PREDICT]


def test_a_loop_hits_the_time_limit_and_keeps_what_ran_before(gradebook):
    book, _ = gradebook
    passed, message = _rows(book, "loop")
    assert passed[LEVEL] and passed[DISTANCE] and not passed[PREDICT]
    assert "time limit" in message["(notebook)"] and "time limit" in message[PREDICT]


def test_a_broken_file_gets_a_row_and_grading_goes_on(gradebook):
    book, out = gradebook
    passed, message = _rows(book, "broken")
    assert "not a valid notebook" in message["(notebook)"] and not any(passed.values())
    totals = pd.read_csv(out.with_name("grades_totals.csv")).set_index("student")
    assert totals.loc["reference", "points"] == 3 and totals.loc["broken", "points"] == 0
    assert (totals["max_points"] == 3).all()
    feedback = (out.with_name("grades_feedback") / "wrong1.md").read_text()
    assert "Score: 0 / 3" in feedback and "how far apart" in feedback


def test_cli_grade_writes_the_gradebook(teacher, tmp_path, capsys):
    broken = tmp_path / "41_fixture_bob.ipynb"
    broken.write_text("not json")
    assert main(["grade", str(broken), "--out", str(tmp_path / "g.csv"), "--teacher", str(teacher)]) == 0
    book = pd.read_csv(tmp_path / "g.csv")
    assert len(book) == 4 and not book["passed"].any()
    assert "41_fixture_bob" in capsys.readouterr().out


def test_a_submission_without_a_teacher_is_a_row(tmp_path):
    path = tmp_path / "homework.ipynb"
    path.write_text("{}")
    book = grade.grade([path], tmp_path / "g.csv")
    assert book["exercise"].tolist() == ["(notebook)"] and "no teacher notebook matches" in book["message"][0]


def test_the_teacher_notebook_is_found_by_file_name_or_by_the_assignment_header(tmp_path):
    assert grade._teacher_for(tmp_path / "alice_03_dpqt_kmeans.ipynb", None).name == "03_dpqt_kmeans.ipynb"
    renamed = tmp_path / "homework.ipynb"
    nb = new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(assignments.HEADER.format(title="t", name="04_idp_kmeans.ipynb"))]
    nbformat.write(nb, renamed)
    assert grade._teacher_for(renamed, None).name == "04_idp_kmeans.ipynb"


def test_a_teacher_notebook_grades_outside_the_compendium(tmp_path):
    # A copy of a paper notebook in a folder outside the compendium: every exercise passes, and no cell
    # misses the compendium (the run finds it as where the teacher notebook lies).
    teacher = resolve_notebook("03")
    copy = tmp_path / teacher.name
    copy.write_text(teacher.read_text())
    book = grade.grade([copy], tmp_path / "g.csv", time_limit=600, teacher=teacher)
    graded = book[book["exercise"] != "(notebook)"]
    assert len(graded) >= 4 and graded["passed"].all(), graded["message"].tolist()
    assert not book["message"].str.contains("CompendiumNotFoundError").any(), book["message"].tolist()


def test_the_session_cell_reports_versions_outside_the_compendium(tmp_path, monkeypatch):
    # Every notebook ends with environment.versions(); an exported assignment runs where there is no lock.
    from dpclust import environment

    monkeypatch.setenv("DPCLUST_HOME", str(tmp_path))  # not a compendium: no notebooks/ folder
    table = environment.versions(packages=["numpy", "surely-not-installed"]).set_index("package")
    assert table.loc["numpy", "installed"] == np.__version__ and table["locked"].isna().all()
    assert table["match"].isna().all() and pd.isna(table.loc["surely-not-installed", "installed"])
    with pytest.raises(FileNotFoundError):  # a lock asked for by name must exist
        environment.versions(tmp_path / "requirements.lock", packages=["numpy"])

"""The exported assignments are nbgrader source notebooks: nbgrader's own generate_assignment, autograde and
generate_feedback grade them, on a throw-away course per paper notebook (smoke profile).

Three submissions per paper notebook (01-05; the nbgrader and ``dpclust grade`` runs two at a time): the
teacher's reference solutions (every autograded cell full marks),
the stubs as released (zero everywhere), and the reference with one typical mistake in one exercise (that
exercise's test cells lose their points, no other cell does). The expected scores come from the cell
metadata and the hand-written table of mistakes below, not from running the checkers here. ``dpclust grade``
(the grader for a course without nbgrader) grades the same three submissions, and its points per test cell
must be nbgrader's.
"""

import os
import re
import shutil
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pandas as pd
import pytest

pytest.importorskip("nbgrader", reason="nbgrader is not installed: pip install -e '.[teach]'")

from nbgrader.api import Gradebook  # noqa: E402

from dpclust import assignments, datasets, grade  # noqa: E402

from . import discover  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

# One typical mistake per notebook: (solution cell, text of the reference, the wrong text, the test cells whose
# points it loses). 04's mistake is in Exercise 1, on which Exercise 3 builds: Exercise 3 must keep its points.
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
    # 05's mistake is in the first part of Exercise 3 (cf_sensitivities), on which its second part builds.
    "05_dp_birch": ("ex3-solution", "float(largest.sum())", "float(largest.max())", {"ex3-check"}),
}


def _env():
    env = {
        **os.environ,
        "DPCLUST_PROFILE": "smoke",
        # nbgrader runs alembic, installed next to this interpreter
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    # The course lies outside the compendium, as a teacher's would; the notebooks read the published numbers
    # from the compendium, found through DPCLUST_HOME.
    env["DPCLUST_HOME"] = str(ROOT)
    return env


def _run(course, *args):
    result = subprocess.run(
        [sys.executable, *args], cwd=course, env=_env(), capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result


def _nbgrader(course, *args):
    return _run(course, "-m", "nbgrader", *args)


def _submit(course, stem, student, nb):
    folder = course / "submitted" / student / stem
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / f"{stem}.ipynb")


def _filled(released, teacher, mistake=None):
    """The released notebook with the teacher's solutions (and answers) pasted into its solution cells."""
    nb = nbformat.from_dict(released)
    reference = {c.get("id"): c.source for c in teacher.cells if "solution" in c.metadata.get("tags", [])}
    for cell in nb.cells:
        if cell.get("id") in reference:
            cell.source = reference[cell.get("id")]
    if mistake is not None:
        cell_id, right, wrong, _ = mistake
        [cell] = [c for c in nb.cells if c.get("id") == cell_id]
        assert right in cell.source, f"{cell_id} no longer holds {right!r}: update MISTAKES"
        cell.source = cell.source.replace(right, wrong)
    return nb


def _scores(course, stem, student):
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        submission = gradebook.find_submission_notebook(stem, stem, student)
        return {
            grade.name: (grade.auto_score, grade.max_score, grade.cell.cell_type, grade.needs_manual_grade)
            for grade in submission.grades
        }


STUDENTS = ("reference", "stubs", "one-wrong")

# Every paper notebook by default; DPCLUST_NBGRADER_NOTEBOOKS=04_idp_kmeans,05_dp_birch for some of them.
# The courses' nbgrader and `dpclust grade` runs (separate processes, each running three notebooks one after the
# other, most of the time in the notebooks' smoke-profile cells) go DPCLUST_NBGRADER_JOBS (2) at a time: one per
# core.
JOBS = int(os.environ.get("DPCLUST_NBGRADER_JOBS", "2"))

# The data set a notebook's exercises need: where it is absent a graded notebook stops with an error (it may not
# skip its cells, which nbgrader would count as passed), so its course is left out, with a message.
NEEDS_DATA = {"05_dp_birch": "magic"}


def _missing_data(stem):
    if stem not in NEEDS_DATA:
        return None
    table = datasets.available()
    rows = table[table["dataset"] == NEEDS_DATA[stem]]
    if rows["status"].str.startswith("present").all():
        return None
    return f"{stem}'s exercises need the {NEEDS_DATA[stem]} data (python -m dpclust data --fetch, or DPCLUST_DATA_DIR)"


PAPERS = [path.stem for path in discover.paper_notebooks()]
REQUESTED = [s for s in os.environ.get("DPCLUST_NBGRADER_NOTEBOOKS", ",".join(PAPERS)).split(",") if s]
MISSING = {stem: why for stem in REQUESTED if (why := _missing_data(stem))}
NOTEBOOKS = [stem for stem in REQUESTED if stem not in MISSING]


def test_every_paper_notebook_has_a_typical_mistake():
    assert set(MISTAKES) == set(PAPERS), f"give MISTAKES an entry for: {sorted(set(PAPERS) - set(MISTAKES))}"


def _release_and_submit(stem, course):
    """A course with one assignment, released, and the three submissions in ``submitted/``."""
    teacher_path = ROOT / "notebooks" / f"{stem}.ipynb"
    assignments.export([teacher_path], course)
    _nbgrader(course, "generate_assignment", stem)
    released = nbformat.read(course / "release" / stem / f"{stem}.ipynb", as_version=4)
    teacher = nbformat.read(teacher_path, as_version=4)
    _submit(course, stem, "reference", _filled(released, teacher))
    _submit(course, stem, "stubs", released)
    _submit(course, stem, "one-wrong", _filled(released, teacher, MISTAKES[stem]))


def _autograde(stem, course, released):
    """nbgrader's autograde (one call for the three submissions) and feedback; the scores per student."""
    try:
        _release_and_submit(stem, course)
    finally:  # the grade run of this course waits for it, even when it failed
        released.set()
    _nbgrader(course, "autograde", stem)
    _nbgrader(course, "generate_feedback", stem)
    return {student: _scores(course, stem, student) for student in STUDENTS}


def _dpclust_grade(stem, course, released, out):
    """``dpclust grade`` on the three submissions, as a teacher without nbgrader would run it."""
    released.wait()
    paths = [course / "submitted" / student / stem / f"{stem}.ipynb" for student in STUDENTS]
    teacher = ROOT / "notebooks" / f"{stem}.ipynb"
    _run(
        course,
        "-m",
        "dpclust",
        "grade",
        *map(str, paths),
        "--out",
        str(out),
        "--time-limit",
        "600",
        "--teacher",
        str(teacher),
    )
    return pd.read_csv(out, keep_default_na=False)


@pytest.fixture(scope="module")
def courses(tmp_path_factory):
    """Every notebook's course autograded by nbgrader and graded by ``dpclust grade``, JOBS runs at a time:
    {stem: (course folder, nbgrader's run, the grade run)}, the runs finished futures (a failed run fails the
    tests of its notebook only).

    The autograde runs are queued first, the grade runs after them, so a grade run (which needs its course's
    submissions) starts only once the autograde run of its course has started, and it waits for the release.
    """
    folders = {stem: tmp_path_factory.mktemp(f"course-{stem}") for stem in NOTEBOOKS}
    released = {stem: threading.Event() for stem in NOTEBOOKS}
    with ThreadPoolExecutor(max_workers=JOBS) as pool:
        autograded = {stem: pool.submit(_autograde, stem, folders[stem], released[stem]) for stem in NOTEBOOKS}
        graded = {
            stem: pool.submit(_dpclust_grade, stem, folders[stem], released[stem], folders[stem] / "grades.csv")
            for stem in NOTEBOOKS
        }
    yield {stem: (folders[stem], autograded[stem], graded[stem]) for stem in NOTEBOOKS}
    for folder in folders.values():
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(
    params=[pytest.param(s, marks=pytest.mark.skip(reason=MISSING[s])) if s in MISSING else s for s in REQUESTED]
)
def course(request, courses):
    """(stem, course folder, nbgrader source, nbgrader's scores per student) of one notebook."""
    stem = request.param
    folder, autograded, _ = courses[stem]
    scores = autograded.result()
    return stem, folder, nbformat.read(folder / "source" / stem / f"{stem}.ipynb", as_version=4), scores


@pytest.fixture
def dpclust_grades(course, courses):
    """(gradebook, its path) of ``dpclust grade`` on the same three submissions."""
    folder, _, graded = courses[course[0]]
    return graded.result(), folder / "grades.csv"


def _test_cells(source):
    return {
        c.metadata["nbgrader"]["grade_id"]: float(c.metadata["nbgrader"]["points"])
        for c in source.cells
        if c.metadata.get("nbgrader", {}).get("grade") and not c.metadata["nbgrader"].get("solution")
    }


def _written(source):
    return {
        c.metadata["nbgrader"]["grade_id"]
        for c in source.cells
        if c.metadata.get("nbgrader", {}).get("grade") and c.metadata["nbgrader"].get("solution")
    }


def _asks_for_writing(cell):
    """A prompt of a derive or a predict-then-run exercise, which has a written answer graded by hand."""
    return cell.cell_type == "markdown" and re.match(r"### Exercise \d+ \((derive|predict, then run),", cell.source)


def test_the_source_has_a_test_cell_per_check_and_a_written_answer(course):
    stem, _, source, scores = course
    teacher = nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)
    checks = sum(
        len(assignments.split_checks(c.source)) for c in teacher.cells if "exercise" in c.metadata.get("tags", [])
    )
    assert len(_test_cells(source)) == checks
    # one written answer per derive and per predict-then-run exercise, with points, left to the teacher
    assert len(_written(source)) == sum(map(bool, map(_asks_for_writing, teacher.cells))) >= 2
    assert set(scores["reference"]) == set(_test_cells(source)) | _written(source)
    for grade_id in _written(source):
        auto, most, cell_type, manual = scores["reference"][grade_id]
        assert cell_type == "markdown" and most > 0 and manual, (stem, grade_id)


def test_the_reference_solution_gets_full_marks(course):
    stem, _, source, scores = course
    got = scores["reference"]
    for grade_id, points in _test_cells(source).items():
        assert got[grade_id][:2] == (points, points), (stem, grade_id)
    for grade_id in _written(source):  # a written answer waits for the teacher
        assert got[grade_id][3], (stem, grade_id)


def test_the_reference_solution_runs_its_exercises_without_errors(course):
    stem, course_dir, _, _ = course
    graded = nbformat.read(course_dir / "autograded" / "reference" / stem / f"{stem}.ipynb", as_version=4)
    exercise_cells = [c for c in graded.cells if c.cell_type == "code" and c.metadata.get("nbgrader")]
    errors = [
        (c.get("id"), o.get("ename") or o.get("text", "")[:200])
        for c in exercise_cells
        for o in c.outputs
        if o.output_type == "error" or o.get("name") == "stderr"
    ]
    assert not errors
    # and every check ran: a test cell that a notebook skipped (data absent) has no error and full points too
    silent = [
        c.get("id")
        for c in exercise_cells
        if c.metadata["nbgrader"].get("grade") and "Correct:" not in "".join(o.get("text", "") for o in c.outputs)
    ]
    assert not silent, f"{stem}: these checks did not run (is the data in DPCLUST_DATA_DIR?): {silent}"


def test_the_stubs_get_zero(course):
    stem, _, source, scores = course
    got = scores["stubs"]
    for grade_id in _test_cells(source) | dict.fromkeys(_written(source)):
        assert got[grade_id][0] == 0, (stem, grade_id)


def test_one_wrong_exercise_loses_exactly_its_points(course):
    stem, course_dir, source, scores = course
    lost = {grade_id for grade_id, (auto, most, *_) in scores["one-wrong"].items() if auto is not None and auto < most}
    assert lost == MISTAKES[stem][3]
    feedback = course_dir / "feedback" / "one-wrong" / stem / f"{stem}.html"
    assert feedback.is_file() and "expected:" in feedback.read_text()


def test_dpclust_grade_and_nbgrader_agree_on_every_test_cell(course, dpclust_grades):
    stem, _, source, scores = course
    book, _ = dpclust_grades
    cell_of = grade.exercises_of(nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4))
    cell_of = cell_of.set_index("exercise")["cell_id"]
    assert set(cell_of) and set(cell_of.values) == set(_test_cells(source))
    for student in STUDENTS:
        rows = book[(book["student"] == f"{student}/{stem}") & (book["exercise"] != grade.NOTEBOOK_ROW)]
        ours = rows.groupby(rows["exercise"].map(cell_of))["points"].sum().to_dict()
        theirs = {grade_id: scores[student][grade_id][0] for grade_id in _test_cells(source)}
        assert ours == theirs, (student, ours, theirs)


def test_dpclust_grade_passes_the_reference_run_and_not_the_stubs(course, dpclust_grades):
    # The (notebook) row says whether every cell ran: the stubs' cells raise NotImplementedError.
    stem = course[0]
    book, out = dpclust_grades
    run = book[book["exercise"] == grade.NOTEBOOK_ROW].set_index("student")["passed"].to_dict()
    assert run[f"reference/{stem}"] and not run[f"stubs/{stem}"], run
    assert sorted(p.name for p in out.with_name("grades_feedback").iterdir()) == sorted(
        f"{s}_{stem}.md" for s in STUDENTS
    )


def test_the_scores_add_up(course, capsys):
    """The totals per submission (printed, with ``-s``, for the notes on a release): autograded points out of the
    autograded maximum, and the written answers' points that wait for the teacher."""
    stem, _, source, scores = course
    auto_max = sum(_test_cells(source).values())
    manual_max = sum(scores["reference"][g][1] for g in _written(source))
    totals = {}
    for student in STUDENTS:
        got = scores[student]
        auto = sum(got[g][0] or 0 for g in _test_cells(source))
        pending = sum(got[g][1] for g in _written(source) if got[g][3])
        totals[student] = (auto, pending)
    lost = sum(_test_cells(source)[g] for g in MISTAKES[stem][3])
    assert totals["reference"] == (auto_max, manual_max)
    assert totals["stubs"] == (0, 0)  # unchanged answers score 0 without the teacher
    assert totals["one-wrong"] == (auto_max - lost, manual_max)
    with capsys.disabled():
        print(
            f"\n{stem}: autograded / {auto_max:g} (manual pending / {manual_max:g}): "
            + ", ".join(f"{s} {a:g} ({m:g})" for s, (a, m) in totals.items())
        )

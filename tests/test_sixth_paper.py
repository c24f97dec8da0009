"""Room for a sixth paper: a tiny test-only paper is added to a copy of the compendium by the steps of
docs/DESIGN.md ("Adding a paper"): its notebook, its published numbers, its data module and its estimator, each
registered where the steps say. Then every check that should pick it up is collected or run in the copy (with the
copy's own packages first on the path), and the paper's name turns up in each: nothing lists the papers or the
estimators but the registries the steps name.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parents[1]
STEM = "06_toy_means"
ESTIMATOR = "ToyMeans"

NOTEBOOK_CELLS = [
    'import os\n\nprofile = os.environ.get("DPCLUST_PROFILE", "paper")\nresults_dir = None\nfigures_dir = None',
    "from dpclust import datasets, experiments, verdicts\nfrom dpclust_lib import ToyMeans\n\n"
    f'NOTEBOOK = "{STEM}"\n'
    "P = experiments.resolve_profile(profile)\n"
    "RESULTS, FIGURES = experiments.output_dirs(NOTEBOOK, P, results_dir, figures_dir)\n"
    'published = experiments.load_published(NOTEBOOK).set_index("id")',
    'data = datasets.load("toy_points")\n'
    "est = ToyMeans(2, epsilon=1.0, bounds=data.bounds, random_state=0).fit(data.X)\n"
    'ledger = verdicts.Ledger("Toy 2026 (toy means)", NOTEBOOK)\n'
    '_ = ledger.add("k", "two clusters", published.loc["k", "value"], str(len(est.cluster_centers_)), '
    '"reproduced", artefact="Table 1")\n'
    "_ = ledger.save(RESULTS)",
]
DATA_MODULE = '''"""Toy 2026 (toy means), notebook 06: a generated data set (test-only)."""

import numpy as np

from ._registry import Dataset, register

__all__ = ["NOTEBOOK", "PAPER", "make_toy_points"]

NOTEBOOK = "06_toy_means"
PAPER = "Toy 2026 (toy means)"


def make_toy_points(raw_dir=None, **_):
    """Two blobs in the unit square."""
    rng = np.random.default_rng(0)
    X = np.clip(np.vstack([rng.normal(0.25, 0.05, (50, 2)), rng.normal(0.75, 0.05, (50, 2))]), 0, 1)
    return Dataset("toy_points", "raw", X, None, ["x", "y"], None, "two blobs", [], bounds=((0, 0), (1, 1)))


register("toy_points", "Toy points", (), (PAPER,), "none", {"raw": (make_toy_points, "two blobs")})
'''
ESTIMATOR_MODULE = f'''"""{ESTIMATOR}: DP k-means under another name (test-only)."""

from .kmeans import DPKMeans

__all__ = ["{ESTIMATOR}"]


class {ESTIMATOR}(DPKMeans):
    """DPKMeans under another name."""
'''


def _copy_compendium(target):
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("the copy of the compendium is made from git's file list")
    for name in listed.stdout.splitlines():
        source = ROOT / name
        if source.is_file() and not name.startswith(("data/", "figures/")):
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def _register(path, anchor, entry):
    """Add ``entry`` at the end of the registry that ``anchor`` opens in ``path`` (the last paper comes last)."""
    text = path.read_text()
    assert anchor in text, f"{path.name} no longer holds {anchor!r}: update this test and docs/DESIGN.md"
    start = text.index(anchor)
    end = text.index(")" if anchor.endswith("(") else "}", start)
    path.write_text(text[:end] + entry + text[end:])


def _add_the_paper(home):
    """The steps of docs/DESIGN.md, "Adding a paper"."""
    nb = new_notebook(cells=[new_markdown_cell("# Toy means: a test-only paper")])
    nb.cells += [new_code_cell(source) for source in NOTEBOOK_CELLS]
    nb.cells[1].metadata["tags"] = ["parameters"]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, home / "notebooks" / f"{STEM}.ipynb")
    published = "id,kind,quantity,value,source\nk,protocol,K,2,Sec. 1\n"
    (home / "dpclust" / "published" / f"{STEM}.csv").write_text(published)
    (home / "dpclust" / "datasets" / "toy_means.py").write_text(DATA_MODULE)
    _register(home / "dpclust" / "datasets" / "__init__.py", "PAPER_MODULES = (", ', "toy_means"')
    (home / "dpclust_lib" / "cluster" / "toy_means.py").write_text(ESTIMATOR_MODULE)
    _register(home / "dpclust_lib" / "cluster" / "__init__.py", "MODULES = {", '    "toy_means": "the toy",\n')


pytestmark = pytest.mark.slow  # a copy of the compendium and three pytest runs in it: make test-full


@pytest.fixture(scope="module")
def compendium(tmp_path_factory):
    home = tmp_path_factory.mktemp("sixth") / "compendium"
    home.mkdir()
    _copy_compendium(home)
    _add_the_paper(home)
    if (ROOT / ".venv-reader").exists():  # the reader's set the smoke runs use (make test makes it)
        (home / ".venv-reader").symlink_to(ROOT / ".venv-reader")
    return home


def _pytest(home, *args):
    env = {**os.environ, "PYTHONPATH": str(home), "DPCLUST_HOME": str(home), "DPCLUST_PROFILE": "smoke"}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args]
    return subprocess.run(command, cwd=home, env=env, capture_output=True, text=True, timeout=600).stdout


# The checks that discover the papers (by the notebook's stem) and the estimators (by the estimator's name).
BY_PAPER = [
    "tests/test_notebooks.py",
    "tests/test_notebooks_without_data.py",
    "tests/test_committed_notebooks.py",
    "tests/test_exercises.py",
    "tests/test_nbgrader.py",
]
BY_ESTIMATOR = ["tests/test_contract_numeric.py"]


def test_every_check_that_lists_papers_or_estimators_collects_the_sixth(compendium):
    collected = _pytest(compendium, "--collect-only", *BY_PAPER, *BY_ESTIMATOR)
    assert "error" not in collected.lower().split("\n")[-2], collected[-3000:]
    for path in BY_PAPER:
        assert any(line.startswith(path) and STEM in line for line in collected.splitlines()), path
    for path in BY_ESTIMATOR:
        assert any(line.startswith(path) and ESTIMATOR in line for line in collected.splitlines()), path


def test_the_checks_run_on_the_sixth_paper_and_name_what_it_lacks(compendium):
    report = _pytest(
        compendium,
        f"tests/test_notebooks.py::test_the_notebook_runs_in_the_smoke_profile[{STEM}]",
        "tests/test_committed_notebooks.py",
        "tests/test_datasets.py::test_every_paper_module_is_listed_and_names_its_notebook",
        "tests/test_packaging.py::test_published_numbers_are_package_data",
        "tests/test_packaging.py::test_every_estimator_module_is_listed_once",
        "tests/test_properties.py::test_every_estimator_has_its_properties_tested",
        "tests/test_contract_categorical.py::test_every_categorical_estimator_lists_its_expected_failures",
        "tests/test_wheel.py::test_each_wheel_holds_its_own_package_only",
    )
    failed = {line.split(" ")[1].split(" - ")[0] for line in report.splitlines() if line.startswith("FAILED ")}
    # The properties test wants a configuration for the new estimator, and says which: the only failure.
    assert failed == {"tests/test_properties.py::test_every_estimator_has_its_properties_tested"}, report[-4000:]
    assert f"give CATEGORICAL or NUMERIC a configuration of: ['{ESTIMATOR}']" in report
    assert f"{STEM}" in _pytest(compendium, "--collect-only", "tests/test_committed_notebooks.py")


def test_a_paper_module_left_out_of_the_registry_fails(compendium, tmp_path):
    init = compendium / "dpclust" / "datasets" / "__init__.py"
    listed = init.read_text()
    try:
        init.write_text(listed.replace(', "toy_means"', ""))
        report = _pytest(compendium, "tests/test_datasets.py::test_every_paper_module_is_listed_and_names_its_notebook")
    finally:
        init.write_text(listed)
    assert "1 failed" in report and "toy_means" in report

"""Every notebook runs to the end without its data sets: one message per experiment and
``not run`` ledger rows, never a traceback."""

import shutil
from pathlib import Path

import pandas as pd
import pytest

from dpclust import reproduce

from . import discover

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = [path.name for path in discover.notebooks()]  # one unit of work each (tests/conftest.py)


@pytest.fixture(scope="module")
def bare_compendium(tmp_path_factory):
    """A compendium with the notebooks and nothing else: no data folder, no download."""
    home = tmp_path_factory.mktemp("bare")
    shutil.copytree(ROOT / "notebooks", home / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    (home / "pyproject.toml").write_text("")
    shutil.copy2(ROOT / "uv.lock", home / "uv.lock")
    (home / "empty").mkdir()
    (home / "executed").mkdir()
    return home


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_a_notebook_runs_to_the_end_without_its_data(bare_compendium, notebook, monkeypatch):
    monkeypatch.setenv("DPCLUST_HOME", str(bare_compendium))
    monkeypatch.setenv("DPCLUST_DATA_DIR", str(bare_compendium / "empty"))
    monkeypatch.setenv("DPCLUST_NO_DOWNLOAD", "1")
    stem = notebook.removesuffix(".ipynb")
    results = bare_compendium / "results" / stem
    run = reproduce.run_notebook(
        bare_compendium / "notebooks" / notebook,
        output_path=bare_compendium / "executed" / notebook,
        parameters={"results_dir": str(results), "figures_dir": str(bare_compendium / "figures" / stem)},
        profile="smoke",
    )
    assert run["status"] == "ok", run["error"]
    if stem != "00_overview":  # the overview has no ledger of its own
        ledger = pd.read_csv(results / "ledger.csv", keep_default_na=False)
        assert (ledger["verdict"] == "not run").any(), "no experiment was marked 'not run'"

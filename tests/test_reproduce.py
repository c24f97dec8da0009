"""Batch runs with papermill and the command line, on small notebooks written by the tests."""
import subprocess
import sys

import nbformat
import pandas as pd
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from dpclust_lib import reproduce


def _notebook(path, *sources, params="import os\nprofile = os.environ.get('DPCLUST_PROFILE', 'paper')\n"
                                    "epsilon = 1.0\nresults_dir = None\nfigures_dir = None"):
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cell = new_code_cell(params)
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [cell] + [new_code_cell(s) for s in sources]
    nbformat.write(nb, path)
    return path


WRITE_RESULTS = """
import sys
from pathlib import Path
import pandas as pd
out = Path(results_dir or "results")
out.mkdir(parents=True, exist_ok=True)
pd.DataFrame({"epsilon": [epsilon], "profile": [profile], "python": [sys.executable]}).to_csv(out / "demo.csv", index=False)
"""


def test_sweep_runs_one_execution_per_point_and_concatenates(tmp_path):
    nb = _notebook(tmp_path / "10_demo.ipynb", WRITE_RESULTS)
    summary, tables = reproduce.sweep_notebook(nb, {"epsilon": [0.5, 2.0]}, tmp_path / "out", profile="smoke", jobs=2)
    assert summary["status"].tolist() == ["ok", "ok"]
    demo = tables["demo"]
    assert demo["param_epsilon"].tolist() == [0.5, 2.0] and demo["epsilon"].tolist() == [0.5, 2.0]
    assert (demo["profile"] == "smoke").all()
    assert (demo["python"] == sys.executable).all()  # the current environment's kernel
    assert pd.read_csv(tmp_path / "out" / "demo.csv").shape == (2, 4)
    assert (tmp_path / "out" / "epsilon=0.5" / "10_demo.ipynb").is_file()


def test_sweep_refuses_undeclared_parameters(tmp_path):
    nb = _notebook(tmp_path / "10_demo.ipynb", WRITE_RESULTS)
    with pytest.raises(ValueError, match="'delta' is not declared"):
        reproduce.sweep_notebook(nb, {"delta": [1]}, tmp_path / "out")


def test_failing_notebook_reports_notebook_and_cell(tmp_path):
    nb = _notebook(tmp_path / "11_broken.ipynb", "x = 1", "raise RuntimeError('boom')")
    summary = reproduce.reproduce([str(nb)], profile="smoke", output_dir=tmp_path / "out")
    row = summary.iloc[0]
    assert row["notebook"] == "11_broken" and row["status"] == "failed"
    assert "cell 2" in row["error"] and "RuntimeError: boom" in row["error"]


def test_reproduce_runs_the_paper_profile_in_place(tmp_path):
    nb = _notebook(tmp_path / "12_inplace.ipynb", "print(profile)")
    summary = reproduce.reproduce([str(nb)], profile="paper")
    assert summary["status"].tolist() == ["ok"]
    out = nbformat.read(nb, as_version=4)
    assert out.cells[1].outputs[0]["text"].strip() == "paper"
    assert not any("injected-parameters" in c.metadata.get("tags", []) for c in out.cells)


def test_reproduce_leaves_the_notebook_alone_under_the_smoke_profile(tmp_path):
    nb = _notebook(tmp_path / "12_smoke.ipynb", "print(profile)")
    before = nb.read_text()
    summary = reproduce.reproduce([str(nb)], profile="smoke", output_dir=tmp_path / "out")
    assert summary["status"].tolist() == ["ok"] and nb.read_text() == before
    out = nbformat.read(tmp_path / "out" / "12_smoke.ipynb", as_version=4)
    assert out.cells[1].outputs[0]["text"].strip() == "smoke"


def test_the_overview_runs_after_the_notebooks_whose_results_it_reads(tmp_path):
    stamp = "import time\nfrom pathlib import Path\ntime.sleep(0.2)\nPath('{}.done').write_text(str(time.time()))"
    paths = [_notebook(tmp_path / f"{stem}.ipynb", stamp.format(stem)) for stem in ("00_summary", "01_a", "02_b")]
    summary = reproduce.reproduce([str(p) for p in paths], profile="paper", jobs=2)
    assert summary["notebook"].tolist() == ["00_summary", "01_a", "02_b"] and (summary["status"] == "ok").all()
    done = {stem: float((tmp_path / f"{stem}.done").read_text()) for stem in ("00_summary", "01_a", "02_b")}
    assert done["00_summary"] > max(done["01_a"], done["02_b"])


def test_resolve_notebook_by_number_and_stem():
    assert reproduce.resolve_notebook("00").name == "00_overview.ipynb"
    assert reproduce.resolve_notebook("00_overview").name == "00_overview.ipynb"
    with pytest.raises(ValueError, match="unknown notebook='99'"):
        reproduce.resolve_notebook("99")


def test_parse_value():
    assert reproduce.parse_value("0.5") == 0.5 and reproduce.parse_value("[1, 2]") == [1, 2]
    assert reproduce.parse_value("paper") == "paper"


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "dpclust_lib", *args], capture_output=True, text=True)


@pytest.mark.parametrize("args, needle", [
    ((), "usage"),
    (("frobnicate",), "invalid choice"),
    (("reproduce", "--profile", "full"), "invalid choice"),
    (("reproduce", "--jobs", "0"), "positive integer"),
    (("sweep", "00"), "--grid"),
    (("sweep", "00", "--grid", "epsilon", "--out", "x"), "NAME=V1"),
])
def test_cli_wrong_arguments_print_usage_and_exit_2(args, needle):
    result = _cli(*args)
    assert result.returncode == 2
    assert needle in result.stderr


def test_cli_unknown_notebook_is_a_message_not_a_traceback():
    result = _cli("reproduce", "99")
    assert result.returncode == 2 and "unknown notebook='99'" in result.stderr and "Traceback" not in result.stderr


def test_cli_data_lists_every_file():
    result = _cli("data")
    assert result.returncode == 0 and "car_evaluation/car.data" in result.stdout


def test_executed_notebook_does_not_record_machine_paths(tmp_path):
    nb = _notebook(tmp_path / "13_paths.ipynb", "x = 1")
    reproduce.reproduce([str(nb)], profile="paper")
    meta = nbformat.read(nb, as_version=4).metadata["papermill"]
    assert meta["input_path"] == "13_paths.ipynb" and meta["output_path"] == "13_paths.ipynb"

"""Parameter sweeps on this machine: every point's tables, figures and notebook gathered under --out, whatever
the working folder; a point without its tables is a failure; grids that keep lists; nothing created before the
values are checked and the scheduler reached."""

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from dpclust import sweep

PARAMS = """import os
from typing import Optional

from dpclust.parameters import NonNegativeInt, PositiveFloats, Profile

profile: Profile = os.environ.get("DPCLUST_PROFILE", "paper")  # the profile
epsilons: Optional[PositiveFloats] = None  # the privacy levels
seed: NonNegativeInt = 0  # root seed
results_dir = None  # tables
figures_dir = None  # figures"""

# Tables that depend on the parameters only (so that two routes can be compared exactly), and a figure.
WRITE = """
from pathlib import Path
import numpy as np
import pandas as pd
rows = [(e, np.random.default_rng([seed, int(e * 1000)]).normal()) for e in epsilons]
frame = pd.DataFrame(rows, columns=["epsilon", "draw"]).assign(profile=profile, env=os.environ["DPCLUST_PROFILE"])
Path(results_dir).mkdir(parents=True, exist_ok=True)
frame.to_csv(Path(results_dir) / "draws.csv", index=False)
(Path(results_dir) / "timings").mkdir(exist_ok=True)  # where save_results writes the run times
frame[["epsilon"]].assign(seconds=1.5).to_csv(Path(results_dir) / "timings" / "draws.csv", index=False)
Path(figures_dir).mkdir(parents=True, exist_ok=True)
(Path(figures_dir) / "figure.png").write_bytes(b"a figure")
"""


def _notebook(folder, stem="10_demo", body=WRITE):
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cell = new_code_cell(PARAMS)
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [cell, new_code_cell(body)]
    path = Path(folder) / "notebooks" / f"{stem}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


@pytest.fixture
def compendium(tmp_path, monkeypatch):
    home = tmp_path / "compendium"
    _notebook(home)
    (home / "pyproject.toml").write_text("")
    monkeypatch.setenv("DPCLUST_HOME", str(home))
    monkeypatch.delenv("DPCLUST_PROFILE", raising=False)
    return home


def _cli(*args, cwd, env=None):
    return subprocess.run(
        [sys.executable, "-m", "dpclust", "sweep", *args], capture_output=True, text=True, cwd=cwd, env=env
    )


def test_a_relative_out_gathers_every_table_figure_and_notebook_whatever_the_working_folder(compendium, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    args = ["10", "--grid", "epsilons=0.5,2", "--profile", "smoke", "--jobs", "2", "--out", "runs/eps"]
    result = _cli(*args, cwd=elsewhere)
    assert result.returncode == 0, result.stdout + result.stderr
    # not on a terminal: one line per point as it ends, not a silent run
    finished = sorted(line.split("] ")[1] for line in result.stdout.splitlines() if " done, " in line)
    assert [f.split(" in ")[0] for f in finished] == ["epsilons=0.5: ok", "epsilons=2: ok"], result.stdout
    out = elsewhere / "runs" / "eps"  # relative to where the command ran, not to the kernel's folder
    draws = pd.read_csv(out / "draws.csv")
    assert draws["param_epsilons"].tolist() == [0.5, 2.0] and draws["epsilon"].tolist() == [0.5, 2.0]
    assert (draws["profile"] == "smoke").all() and (draws["env"] == "smoke").all()
    timings = pd.read_csv(out / "timings" / "draws.csv")  # gathered apart, as each point wrote them
    assert timings.columns.tolist() == ["param_epsilons", "epsilon", "seconds"] and len(timings) == 2
    for label in ("epsilons=0.5", "epsilons=2"):
        assert (out / label / "10_demo.ipynb").is_file() and (out / label / "figures" / "figure.png").is_file()
    points = pd.read_csv(out / "sweep_points.csv")
    assert points.columns.tolist() == ["point", "epsilons", "status", "seconds", "attempts", "tables", "error"]
    assert points["status"].tolist() == ["ok", "ok"] and points["tables"].tolist() == [1, 1]
    assert "draws.csv 2" in result.stdout and str(out) in result.stdout
    assert not (compendium / "notebooks" / "runs").exists()


def test_a_point_that_ends_without_its_tables_is_a_failure_named_in_the_summary(compendium, tmp_path):
    quiet = _notebook(compendium, "11_quiet", body="x = 1  # writes nothing")
    summary, tables = sweep.sweep_notebook(quiet, {"epsilons": [1.0]}, tmp_path / "out", profile="smoke")
    row = summary.iloc[0]
    assert row["point"] == "epsilons=1.0" and row["status"] == "failed" and row["tables"] == 0
    assert "without writing a result table" in row["error"] and tables == {}


def test_grids_keep_lists_from_brackets_and_from_json_and_yaml_files(compendium, tmp_path):
    assert sweep.parse_grid("epsilons=[0.5, 1],[2]") == ("epsilons", [[0.5, 1], [2]])
    for suffix, text in ((".json", '{"epsilons": [[0.5, 1], [2]]}'), (".yaml", "epsilons:\n  - [0.5, 1]\n  - [2]\n")):
        path = tmp_path / f"grid{suffix}"
        path.write_text(text)
        assert sweep.read_grid_file(path) == {"epsilons": [[0.5, 1], [2]]}
    summary, tables = sweep.sweep_notebook("10", {"epsilons": [[0.5, 1], [2]]}, tmp_path / "out", profile="smoke")
    assert summary["status"].tolist() == ["ok", "ok"]
    assert tables["draws"]["param_epsilons"].tolist() == ["[0.5, 1]", "[0.5, 1]", "[2]"]
    assert tables["draws"]["epsilon"].tolist() == [0.5, 1.0, 2.0]


@pytest.mark.parametrize(
    "grid, fixed, needle",
    [
        ({"epsilons": [0.5, -1]}, {}, r"parameter epsilons=-1 must be a list of numbers > 0 .*: not > 0"),
        ({"delta": [1]}, {}, "'delta' is not declared"),
        ({"results_dir": ["x"]}, {}, "results_dir is set by the sweep"),
        ({"epsilons": [1, 1]}, {}, "repeats a value"),
        ({"epsilons": [1]}, {"epsilons": [2]}, "both as a grid and as a fixed parameter"),
    ],
)
def test_bad_grids_are_refused_before_anything_is_created(compendium, tmp_path, grid, fixed, needle):
    with pytest.raises(ValueError, match=needle):
        sweep.sweep_notebook("10", grid, tmp_path / "out", parameters=fixed)
    assert not (tmp_path / "out").exists()


def test_a_folder_of_other_files_is_refused_and_an_earlier_sweep_is_replaced(compendium, tmp_path):
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="holds files that no sweep wrote"):
        sweep.sweep_notebook("10", {"epsilons": [1.0]}, foreign)
    assert [p.name for p in foreign.iterdir()] == ["notes.txt"]
    out = tmp_path / "out"
    sweep.sweep_notebook("10", {"epsilons": [0.5, 1.0]}, out, profile="smoke")
    (out / "mine.txt").write_text("kept")
    summary, _ = sweep.sweep_notebook("10", {"epsilons": [2.0]}, out, profile="smoke")
    assert summary["status"].tolist() == ["ok"]
    assert sorted(p.name for p in out.iterdir()) == [
        ".sweep.lock",
        "draws.csv",
        "epsilons=2.0",
        "mine.txt",
        "sweep.json",
        "sweep_points.csv",
        "timings",
    ]
    assert pd.read_csv(out / "draws.csv")["epsilon"].tolist() == [2.0]
    assert pd.read_csv(out / "timings" / "draws.csv")["epsilon"].tolist() == [2.0]
    assert json.loads((out / "sweep.json").read_text())["points"] == ["epsilons=2.0"]


def _closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("how", ["refused", "no file", "not an address"])
def test_an_unreachable_scheduler_fails_at_once_in_one_line_creating_nothing(compendium, tmp_path, how):
    pytest.importorskip("distributed")
    where = {
        "refused": ["--scheduler", f"tcp://127.0.0.1:{_closed_port()}"],
        "no file": ["--scheduler-file", str(tmp_path / "scheduler.json")],
        "not an address": ["--scheduler", "tcp://127.0.0.1:port"],
    }[how]
    start = time.perf_counter()
    result = _cli("10", "--grid", "epsilons=1", "--out", "out", *where, cwd=tmp_path)
    assert time.perf_counter() - start < 30  # the interpreter's start included; the connection fails at once
    assert result.returncode == 2 and result.stdout == "", result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: could not reach the Dask scheduler"), result.stderr
    assert where[1] in lines[0] and "Nothing was run or created" in lines[0]
    assert not (tmp_path / "out").exists()


def test_parse_value_and_split_values():
    assert sweep.parse_value("0.5") == 0.5 and sweep.parse_value("[1, 2]") == [1, 2]
    assert sweep.parse_value("paper") == "paper"
    assert sweep.split_values("'a,b',[1,(2,3)],c") == ["'a,b'", "[1,(2,3)]", "c"]

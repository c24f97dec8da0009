"""A reproduce run never damages the compendium: a failing cell, Ctrl-C, SIGKILL and a second run at
once leave the target notebook, tables and figures byte for byte as they were (sha256), no kernel
behind, and a message that says what was kept. Each test runs a real ``python -m dpclust reproduce``
on a tiny notebook in a temporary compendium."""

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from dpclust import experiments, reproduce, sweep

STEM = "01_demo"
PARAMS = "import os\nprofile = os.environ.get('DPCLUST_PROFILE', 'paper')\nresults_dir = None\nfigures_dir = None"
# Writes a table and a figure where output_dirs says, records the kernel's pid, then (DEMO_SLEEP) waits.
BODY = """
import time
from pathlib import Path
from dpclust import experiments
results, figures = experiments.output_dirs("01_demo", profile, results_dir, figures_dir)
results.mkdir(parents=True, exist_ok=True)
figures.mkdir(parents=True, exist_ok=True)
(results / "table.csv").write_text("x\\n" + os.environ.get("DEMO_VALUE", "new") + "\\n")
(figures / "figure.png").write_bytes(b"new figure")
Path(os.environ["DEMO_MARK"]).write_text(str(os.getpid()))
time.sleep(float(os.environ.get("DEMO_SLEEP", "0")))
"""


def _compendium(root, *extra):
    (root / "notebooks").mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cell = new_code_cell(PARAMS)
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [cell, new_code_cell(BODY), *(new_code_cell(s) for s in extra)]
    nbformat.write(nb, root / "notebooks" / f"{STEM}.ipynb")
    return root


def _targets(root, profile):
    """The files a run replaces, each made with known old content first."""
    if profile == "paper":
        files = [root / "notebooks" / f"{STEM}.ipynb"]
        files += [root / "data" / "results" / STEM / "table.csv", root / "figures" / STEM / "figure.png"]
    else:
        files = [root / "data" / "results" / "smoke" / "notebooks" / f"{STEM}.ipynb"]
        files += [
            root / "data" / "results" / "smoke" / STEM / "table.csv",
            root / "figures" / "smoke" / STEM / "figure.png",
        ]
    for path in files[1:] + ([] if profile == "paper" else files[:1]):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"old " + path.name.encode())
    return files


def _sha(files):
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


def _start(root, profile, sleep, mark, value="new", env=None, extra=(), stems=(STEM,)):
    env = {**os.environ, **(env or {}), "DPCLUST_HOME": str(root), "DEMO_SLEEP": str(sleep), "DEMO_MARK": str(mark)}
    env["DEMO_VALUE"] = value
    env.pop(experiments.OUTPUT_ENV, None)
    return subprocess.Popen(
        [sys.executable, "-m", "dpclust", "reproduce", *stems, "--profile", profile, *extra],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal would give it
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a test runner may ignore SIGINT
    )


def _wait_for(path, proc, seconds=120):
    end = time.monotonic() + seconds
    while not path.is_file():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end, "the notebook did not reach its slow cell"
        time.sleep(0.1)
    time.sleep(0.3)
    return int(path.read_text())


def _gone(pid, seconds=15):
    end = time.monotonic() + seconds
    while Path(f"/proc/{pid}").exists() and time.monotonic() < end:
        time.sleep(0.2)
    status = Path(f"/proc/{pid}/status")
    return not status.exists() or "zombie" in status.read_text()


pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="processes are looked up in /proc")


def test_a_failing_cell_leaves_the_committed_files_and_keeps_the_failed_notebook(tmp_path):
    root = _compendium(tmp_path / "c", "raise RuntimeError('boom')")
    files = _targets(root, "paper")
    before = _sha(files)
    proc = _start(root, "paper", 0, tmp_path / "mark")
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, err
    assert _sha(files) == before
    kept = root / "data" / "results" / "failed" / f"{STEM}.ipynb"
    assert "RuntimeError: boom" in out and "unchanged" in out and f"data/results/failed/{STEM}.ipynb" in out
    assert "boom" in kept.read_text()
    assert not list((root / "data" / "results" / "staging").glob("*.run-*"))


def test_a_successful_run_replaces_notebook_tables_and_figures_together(tmp_path):
    root = _compendium(tmp_path / "c")
    files = _targets(root, "smoke")
    before = _sha(files)
    proc = _start(root, "smoke", 0, tmp_path / "mark", value="fresh")
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, out + err
    after = _sha(files)
    assert all(after[f] != before[f] for f in before), "every target is replaced"
    assert files[1].read_text() == "x\nfresh\n" and files[2].read_bytes() == b"new figure"
    assert "[1/1 done, " in out and f"] {STEM}: ok in " in out, "no line for the finished run off a terminal"
    assert not list(root.rglob(f"*{reproduce.TMP_SUFFIX}"))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "sigkill"])
def test_an_interrupted_run_changes_nothing_and_leaves_no_kernel(tmp_path, sig):
    root = _compendium(tmp_path / "c")
    files = _targets(root, "smoke")
    before = _sha(files)
    proc = _start(root, "smoke", 120, tmp_path / "mark")
    kernel = _wait_for(tmp_path / "mark", proc)
    os.killpg(proc.pid, sig)
    out, err = proc.communicate(timeout=60)
    assert _sha(files) == before
    assert _gone(kernel), "the kernel outlived the run"
    if sig == signal.SIGINT:
        assert proc.returncode == 130, out + err
        assert "unchanged" in err and f"data/results/failed/{STEM}.ipynb" in err and "Traceback" not in err
    # The next run cleans what a killed one left and commits normally.
    again = _start(root, "smoke", 0, tmp_path / "mark2")
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, out + err
    assert files[1].read_text() == "x\nnew\n"
    assert not list((root / "data" / "results" / "staging").glob("*.run-*"))


def test_ctrl_c_stops_every_kernel_of_runs_side_by_side_and_changes_nothing(tmp_path):
    root = _compendium(tmp_path / "c")
    source = (root / "notebooks" / f"{STEM}.ipynb").read_text()
    other = source.replace(STEM, "02_demo").replace("DEMO_MARK", "DEMO_MARK_2")
    (root / "notebooks" / "02_demo.ipynb").write_text(other)
    files = _targets(root, "smoke")
    before = _sha(files)
    marks = tmp_path / "mark", tmp_path / "mark2"
    env = {"DEMO_MARK_2": str(marks[1])}
    proc = _start(root, "smoke", 120, marks[0], env=env, extra=("--jobs", "2"), stems=(STEM, "02_demo"))
    kernels = [_wait_for(mark, proc) for mark in marks]  # both kernels in their slow cell at once
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert all(_gone(kernel) for kernel in kernels), "a kernel outlived the run"
    assert _sha(files) == before
    assert not (root / "data" / "results" / "smoke" / "02_demo").exists()
    assert len(err.splitlines()) == 1 and err.startswith("interrupted: ") and "unchanged" in err, err
    assert f"data/results/failed/{STEM}.ipynb" in err and "data/results/failed/02_demo.ipynb" in err


def test_a_second_run_of_the_same_notebook_is_refused(tmp_path):
    root = _compendium(tmp_path / "c")
    files = _targets(root, "smoke")
    before = _sha(files)
    first = _start(root, "smoke", 120, tmp_path / "mark")
    _wait_for(tmp_path / "mark", first)
    second = _start(root, "smoke", 0, tmp_path / "mark2", value="second")
    out, err = second.communicate(timeout=120)
    assert second.returncode == 2 and "being reproduced by another run" in err, out + err
    assert not (tmp_path / "mark2").exists(), "the second run started a kernel"
    os.killpg(first.pid, signal.SIGINT)
    first.communicate(timeout=60)
    assert _sha(files) == before


NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_notebook_parameter_declares_a_type_and_meaning_its_default_meets_and_the_notebook_checks(path):
    import ast

    import nbformat
    import papermill as pm

    from dpclust import parameters

    found = pm.inspect_notebook(str(path))
    # the output folders are the sweep's and reproduce's to set (and a path or None)
    typed = {name: info for name, info in found.items() if name not in {"results_dir", "figures_dir"}}
    assert typed and all(parameters._kind_of(info["inferred_type_name"])[0] for info in typed.values()), typed
    assert all(info["help"] for info in found.values()), "a parameter without its meaning"
    for name, info in typed.items():
        try:
            default = ast.literal_eval(info["default"])
        except ValueError:
            continue  # profile: read from the environment
        parameters.convert(name, default, info["inferred_type_name"])
    cells = nbformat.read(path, as_version=4).cells
    at = next(i for i, c in enumerate(cells) if "parameters" in c.metadata.get("tags", []))
    assert "check(globals())" in cells[at + 1].source, "the cell after the parameters cell checks them"


def test_a_bad_sweep_value_is_refused_before_any_run_naming_the_notebook_parameter(tmp_path):
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"04_idp_kmeans.ipynb: notebook parameter max_iter='abc' must be an integer"):
        sweep.sweep_notebook("04", {"max_iter": ["abc"]}, tmp_path / "out")
    with pytest.raises(ValueError, match=r"epsilons=\[0.5, -1\] must be a list of numbers > 0.*: not > 0"):
        sweep.sweep_notebook("04", {"epsilons": [[0.5, -1]]}, tmp_path / "out")
    assert time.perf_counter() - start < 10 and not (tmp_path / "out").exists()


# Writes a ledger whose claim is graded, unless DEMO_NODATA: then the data set is absent, as load_dataset says it.
LEDGER = """
from dpclust import verdicts
lost = os.environ.get("DEMO_NODATA") == "1"
if lost:
    print("not run: the data set 'car' is not on this machine and could not be downloaded")
ledger = verdicts.Ledger("A paper", "01_demo")
ledger.add("c1", "a claim", "1", "1", "not run" if lost else "reproduced", artefact="Fig. 1").save(results)
"""


def test_a_run_that_lacked_the_committed_runs_data_is_not_committed_unless_asked_for(tmp_path):
    root = _compendium(tmp_path / "c", LEDGER)
    env = {"DPCLUST_DATA_DIR": str(tmp_path / "empty")}
    # A first run has no committed results to lose: it is committed without its data.
    first = _start(root, "smoke", 0, tmp_path / "mark", value="first", env={**env, "DEMO_NODATA": "1"})
    assert first.wait(timeout=300) == 0, first.communicate()
    first = _start(root, "smoke", 0, tmp_path / "mark", env=env)
    assert first.wait(timeout=300) == 0, first.communicate()
    files = [p for p in root.rglob("*") if p.is_file() and "smoke" in p.parts and "staging" not in p.parts]
    before = _sha(files)
    lacking = _start(root, "smoke", 0, tmp_path / "mark", value="other", env={**env, "DEMO_NODATA": "1"})
    out, err = lacking.communicate(timeout=300)
    assert lacking.returncode == 1, out + err
    assert _sha(files) == before, "a run without the data replaced results that had it"
    assert "could not reach the data sets car (car_evaluation/car.data from https://" in out
    assert "claims graded there and 'not run' now: c1" in out and "make data" in out and "--allow-missing-data" in out
    asked = _start(
        root,
        "smoke",
        0,
        tmp_path / "mark",
        value="other",
        env={**env, "DEMO_NODATA": "1"},
        extra=["--allow-missing-data"],
    )
    out, err = asked.communicate(timeout=300)
    assert asked.returncode == 0, out + err
    assert "committed without its data, as asked (--allow-missing-data)" in out
    assert (root / "data" / "results" / "smoke" / STEM / "table.csv").read_text() == "x\nother\n"


def test_a_paper_run_whose_outputs_show_a_warning_is_not_committed(tmp_path):
    root = _compendium(tmp_path / "c", "import warnings\nwarnings.warn('the machine is loaded')")
    files = _targets(root, "paper")
    before = _sha(files)
    proc = _start(root, "paper", 0, tmp_path / "mark")
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, out + err
    assert "not committed: its outputs show a warning or a path of this machine" in out
    assert "cell 2: warning:" in out and "UserWarning: the machine is loaded" in out
    assert _sha(files) == before


def test_a_commit_cut_short_by_sigkill_is_completed_by_the_next_command_of_any_kind(tmp_path):
    root = _compendium(tmp_path / "c")
    files = _targets(root, "smoke")
    # The run is killed (os._exit, as SIGKILL would) right after its table replaced the old one.
    dying = (
        "import os, sys\nfrom dpclust import reproduce\nreal = os.replace\n"
        "def replace(a, b):\n    real(a, b)\n    if str(b).endswith('table.csv'):\n        os._exit(9)\n"
        "os.replace = replace\nreproduce.reproduce(['01_demo'], profile='smoke')\n"
    )
    env = {**os.environ, "DPCLUST_HOME": str(root), "DEMO_MARK": str(tmp_path / "mark"), "DEMO_VALUE": "new"}
    killed = subprocess.run([sys.executable, "-c", dying], env=env, capture_output=True, text=True, timeout=300)
    assert killed.returncode == 9, killed.stdout + killed.stderr
    assert files[1].read_text() == "x\nnew\n" and files[2].read_bytes().startswith(b"old"), "not cut in the middle"
    data = subprocess.run([sys.executable, "-m", "dpclust", "data"], env=env, capture_output=True, text=True)
    assert data.returncode in (0, 1) and f"completed the commit of {STEM}" in data.stderr, data.stderr
    assert files[2].read_bytes() == b"new figure" and b"old" not in files[0].read_bytes()
    assert not list((root / "data" / "results" / "staging").glob("*.json")) and not list(
        root.rglob(f"*{reproduce.TMP_SUFFIX}")
    )


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
@pytest.mark.parametrize("python", ["python3.9", "no-such-python"])
def test_a_refused_make_changes_nothing_on_disk(tmp_path, python):
    shutil.copy(Path(__file__).resolve().parents[1] / "Makefile", tmp_path / "Makefile")
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").symlink_to(sys.executable)
    (tmp_path / ".venv" / ".installed").touch()
    fake = tmp_path / "python3.9"
    fake.write_text("#!/bin/sh\necho 3.9\n")  # what `python3.9 -c 'print the version'` prints
    fake.chmod(0o755)
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    result = subprocess.run(
        ["make", "reproduce", f"PYTHON={fake if python == 'python3.9' else python}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0 and "the compendium supports Python 3.10 3.11 3.12 3.13" in result.stderr
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before


def test_data_prints_a_readable_table_and_leaves_no_empty_folder(tmp_path, monkeypatch, capsys):
    from dpclust import datasets
    from dpclust.__main__ import main

    root = tmp_path / "c"
    (root / "notebooks").mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    monkeypatch.setenv("DPCLUST_HOME", str(root))
    monkeypatch.setenv("DPCLUST_DATA_DIR", "")

    def failing_download(datafile, raw_dir):  # what a download that fails half way leaves: its folder
        (Path(raw_dir) / datafile.key).parent.mkdir(parents=True, exist_ok=True)
        raise datasets.DataError(f"could not download {datafile.url} (network error): ConnectionError: " + "x" * 500)

    monkeypatch.setattr(datasets, "fetch", failing_download)
    # The committed 01 was made with car; the committed 02 without nursery (its output says so).
    nbformat.write(new_notebook(cells=[new_code_cell('load("car")')]), root / "notebooks" / "01_a.ipynb")
    absent = new_code_cell("load('nursery')")
    said = "not run: the data set 'nursery' is not on this machine and could not be downloaded\n"
    absent.outputs = [nbformat.v4.new_output("stream", name="stdout", text=said)]
    nbformat.write(new_notebook(cells=[absent]), root / "notebooks" / "02_b.ipynb")
    assert main(["data", "--fetch"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["dataset", "file", "status", "location"]
    assert any(line.split()[:4] == ["car", "car_evaluation/car.data", "download", "failed"] for line in lines)
    assert max(len(line) for line in lines) <= 170 and not any("https://" in line for line in lines)
    assert lines[-1] == "The committed results were made with car, which this machine lacks."
    assert sorted(p.name for p in root.iterdir()) == ["notebooks", "pyproject.toml"]

    # An offline machine with every file the committed results were made with: success, and what is absent said.
    (root / "notebooks" / "01_a.ipynb").unlink()
    assert main(["data", "--fetch"]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("Every file the committed results were made with is here. They were made without nursery")


LEAVE_A_FAILED_TASK = """
import asyncio
from dpclust import reproduce

def leave_a_failed_task():
    async def dies():
        raise RuntimeError("Kernel died")

    loop = asyncio.get_event_loop()
    loop.create_task(dies())
    loop.run_until_complete(asyncio.sleep(0.01))

reproduce._in_own_event_loop(leave_a_failed_task)
"""


def test_a_task_a_stopped_run_leaves_behind_prints_no_traceback():
    """Ctrl-C shuts the kernel down while nbclient still waits for its reply: that wait ends with an exception
    nobody retrieves, which asyncio prints as a traceback when the task is collected, at the latest when the
    process exits (an interrupted run showed one under load)."""
    done = subprocess.run([sys.executable, "-c", LEAVE_A_FAILED_TASK], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "never retrieved" not in done.stderr, done.stderr

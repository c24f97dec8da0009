"""A reproduce run never damages the compendium: a failing cell, Ctrl-C, SIGKILL and a second run at
once leave the target notebook, tables and figures byte for byte as they were (sha256), no kernel
behind, and a message that says what was kept. Each test runs a real ``python -m dpclust reproduce``
on a tiny notebook in a temporary compendium."""

import hashlib
import os
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


def _start(root, profile, sleep, mark, value="new"):
    env = {**os.environ, "DPCLUST_HOME": str(root), "DEMO_SLEEP": str(sleep), "DEMO_MARK": str(mark)}
    env["DEMO_VALUE"] = value
    env.pop(experiments.OUTPUT_ENV, None)
    return subprocess.Popen(
        [sys.executable, "-m", "dpclust", "reproduce", STEM, "--profile", profile],
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
def test_every_notebook_parameter_declares_a_type_and_range_its_default_meets(path):
    import ast

    import papermill as pm

    found = pm.inspect_notebook(str(path))
    declared = reproduce.declared_parameters(path)
    assert set(declared) == set(found) and all(declared.values()), [n for n, d in declared.items() if d is None]
    for name, info in found.items():
        try:
            default = ast.literal_eval(info["default"])
        except ValueError:
            continue  # profile: read from the environment
        assert reproduce.violates(default, declared[name]) == "", (name, info["default"])


def test_a_bad_sweep_value_is_refused_before_any_run_naming_the_notebook_parameter(tmp_path):
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"notebook parameter max_iter='abc' of 04_idp_kmeans.ipynb must be int ≥ 1"):
        sweep.sweep_notebook("04", {"max_iter": ["abc"]}, tmp_path / "out")
    with pytest.raises(ValueError, match=r"epsilons=\[0.5, -1\].*fails > 0"):
        sweep.sweep_notebook("04", {"epsilons": [[0.5, -1]]}, tmp_path / "out")
    assert time.perf_counter() - start < 10 and not (tmp_path / "out").exists()

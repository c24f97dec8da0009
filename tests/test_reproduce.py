"""Batch runs with papermill and the command line, on small notebooks written by the tests."""

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from dpclust import reproduce


@pytest.fixture(autouse=True)
def _own_compendium(tmp_path, monkeypatch):
    """Runs stage, lock and keep their failed notebooks in a compendium of the test's own, never the repository's."""
    home = tmp_path / "compendium"
    (home / "notebooks").mkdir(parents=True)
    (home / "pyproject.toml").write_text("")
    monkeypatch.setenv("DPCLUST_HOME", str(home))


def _notebook(
    path,
    *sources,
    params="import os\nprofile = os.environ.get('DPCLUST_PROFILE', 'paper')\n"
    "epsilon = 1.0\nresults_dir = None\nfigures_dir = None",
):
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cell = new_code_cell(params)
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [cell] + [new_code_cell(s) for s in sources]
    nbformat.write(nb, path)
    return path


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


def test_the_overview_runs_after_the_notebooks_whose_results_it_reads_with_every_worker(tmp_path):
    stamp = (
        "import os, time\nfrom pathlib import Path\ntime.sleep(0.2)\n"
        "Path('{}.done').write_text(f\"{{time.time()}} {{os.environ.get('DPCLUST_JOBS', '-')}}\")"
    )
    paths = [_notebook(tmp_path / f"{stem}.ipynb", stamp.format(stem)) for stem in ("00_summary", "01_a", "02_b")]
    summary = reproduce.reproduce([str(p) for p in paths], profile="paper", jobs=2)
    assert summary["notebook"].tolist() == ["00_summary", "01_a", "02_b"] and (summary["status"] == "ok").all()
    done = {stem: (tmp_path / f"{stem}.done").read_text().split() for stem in ("00_summary", "01_a", "02_b")}
    assert float(done["00_summary"][0]) > max(float(done["01_a"][0]), float(done["02_b"][0]))
    # the overview runs alone: it may use both workers; the others share them, one each
    assert [done[stem][1] for stem in ("00_summary", "01_a", "02_b")] == ["2", "-", "-"]


WRITES_A_TABLE = (
    "from pathlib import Path\nfrom dpclust import experiments\n"
    "results, _ = experiments.output_dirs('{stem}', profile, results_dir, figures_dir)\n"
    "results.mkdir(parents=True, exist_ok=True)\n(results / 'table.csv').write_text('x\\n1\\n')\n"
    "if Path('{stem}.fail').exists():\n    raise RuntimeError('boom')"
)


def test_resume_runs_again_only_the_notebooks_that_did_not_finish_or_whose_inputs_changed(tmp_path):
    stems = ("00_summary", "11_a", "12_b")  # the overview runs in a batch of its own, after the others
    paths = [_notebook(tmp_path / f"{stem}.ipynb", WRITES_A_TABLE.format(stem=stem)) for stem in stems]
    a = paths[1]
    (tmp_path / "12_b.fail").touch()
    first = reproduce.reproduce([str(p) for p in paths], profile="paper")
    assert first["status"].tolist() == ["ok", "ok", "failed"]
    committed = a.read_bytes()
    (tmp_path / "12_b.fail").unlink()

    def resumed():
        summary = reproduce.reproduce([str(p) for p in paths], profile="paper", resume=True).set_index("notebook")
        assert (summary["status"] == "ok").all()
        return [stem for stem in summary.index if not summary.loc[stem, "note"].startswith("up to date")]

    assert resumed() == ["12_b"] and a.read_bytes() == committed  # 11_a was not run again
    assert resumed() == [] and resumed() == []
    nb = nbformat.read(a, as_version=4)
    nb.cells.append(new_code_cell("print('a changed notebook')"))
    nbformat.write(nb, a)
    assert resumed() == ["11_a"]
    assert reproduce.reproduce([str(p) for p in paths], profile="paper")["note"].tolist() == ["", "", ""]  # unasked


def test_resolve_notebook_by_number_and_stem():
    folder = Path(__file__).resolve().parents[1] / "notebooks"  # the compendium's own notebooks
    assert reproduce.resolve_notebook("00", folder).name == "00_overview.ipynb"
    assert reproduce.resolve_notebook("00_overview", folder).name == "00_overview.ipynb"
    with pytest.raises(ValueError, match="unknown notebook='99'"):
        reproduce.resolve_notebook("99", folder)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "dpclust", *args], capture_output=True, text=True)


@pytest.mark.parametrize(
    "args, needle",
    [
        ((), "usage"),
        (("frobnicate",), "invalid choice"),
        (("reproduce", "--profile", "full"), "invalid choice"),
        (("reproduce", "--jobs", "0"), "positive integer"),
        (("sweep", "00"), "--out"),
        (("sweep", "00", "--grid", "epsilon", "--out", "x"), "NAME=V1"),
        (("sweep", "00", "--grid", "e=1", "--out", "x", "--scheduler", "a", "--scheduler-file", "b"), "not allowed"),
    ],
)
def test_cli_wrong_arguments_print_usage_and_exit_2(args, needle):
    result = _cli(*args)
    assert result.returncode == 2
    assert needle in result.stderr


def test_cli_unknown_notebook_is_a_message_not_a_traceback():
    result = _cli("reproduce", "99")
    assert result.returncode == 2 and "unknown notebook='99'" in result.stderr and "Traceback" not in result.stderr


def test_cli_data_lists_every_file():
    result = _cli("data")  # fails, saying so, on a machine without the files the committed results were made with
    lacks = result.stdout.splitlines()[-1].startswith("The committed results were made with")
    assert result.returncode == int(lacks) and "car_evaluation/car.data" in result.stdout, result.stderr


def test_executed_notebook_does_not_record_machine_paths(tmp_path):
    nb = _notebook(tmp_path / "13_paths.ipynb", "x = 1")
    reproduce.reproduce([str(nb)], profile="paper")
    meta = nbformat.read(nb, as_version=4).metadata["papermill"]
    assert meta["input_path"] == "13_paths.ipynb" and meta["output_path"] == "13_paths.ipynb"


LEDGER = """
from dpclust import verdicts
ledger = verdicts.Ledger("A paper", "14_ledger")
for i, verdict in enumerate(["reproduced", "reproduced", "partly", "not run"]):
    ledger.add(f"c{i}", "a claim", "1", "1", verdict, artefact=f"Fig. {i}")
ledger.save(results_dir)
"""


def test_batch_keeps_kernel_stderr_off_the_terminal_and_counts_ledger_verdicts(tmp_path, capfd):
    nb = _notebook(tmp_path / "14_ledger.ipynb", "import os\nos.write(2, b'kernel noise\\n')", LEDGER)
    calls = [
        dict(
            notebook=nb,
            output_path=tmp_path / "out.ipynb",
            profile="smoke",
            parameters={"results_dir": str(tmp_path / "results")},
        )
    ]
    summary = reproduce.run_batch(calls, progress=False)
    row = summary.iloc[0]
    assert row["status"] == "ok", row["error"]
    assert (row["reproduced"], row["partly"], row["not reproduced"], row["not testable"], row["not run"]) == (
        2,
        1,
        0,
        0,
        1,
    )
    captured = capfd.readouterr()
    assert "without encryption" not in captured.err and "kernel noise" not in captured.err
    assert captured.out == ""  # nothing per notebook on success


def test_cli_reproduce_prints_only_the_progress_and_the_summary(tmp_path, capfd):
    from dpclust.__main__ import main

    nb = _notebook(tmp_path / "15_quiet.ipynb", "print('cell output stays in the notebook')")
    assert main(["reproduce", str(nb), "--profile", "smoke", "--out", str(tmp_path / "out")]) == 0
    captured = capfd.readouterr()
    progress, *lines = captured.out.strip().splitlines()  # off a terminal: one line per finished notebook
    assert progress.startswith("[1/1 done, ") and "15_quiet" in progress
    assert lines[0].split()[:3] == ["notebook", "status", "seconds"] and "not run" in lines[0]
    assert lines[1].split()[:2] == ["15_quiet", "ok"] and lines[2].startswith("wall time ") and len(lines) == 3
    assert captured.err == ""


class _Terminal:
    def __init__(self):
        self.text = ""

    def isatty(self):
        return True

    def write(self, text):
        self.text += text

    def flush(self):
        pass


def test_progress_line_names_notebook_cell_and_elapsed_time_then_clears():
    import queue
    import time

    events, terminal = queue.Queue(), _Terminal()
    with reproduce._Progress(events, total=2, stream=terminal):
        events.put(("01_a", 3, 10))
        events.put(("02_b", 1, 7))
        events.put(("02_b", None, None))
        time.sleep(1.0)
    assert "[1/2 done, 0s] 01_a cell 3/10 0s" in terminal.text and "02_b" not in terminal.text
    assert terminal.text.endswith("\r\x1b[K")  # erased at the end: a successful batch leaves only its summary


@pytest.mark.parametrize("jobs", [1, 2])
def test_every_kernel_sums_on_one_thread_alone_or_side_by_side(tmp_path, monkeypatch, jobs):
    """Threaded sums change their last digits with the thread count: no table may depend on how the runs were laid
    out, so a kernel uses one BLAS and OpenMP thread whether it runs alone or beside another."""
    monkeypatch.setenv("OMP_NUM_THREADS", "2")  # what a reader's shell may hold; the kernel must not keep it
    probe = "import numpy, threadpoolctl\nprint(sorted({p['num_threads'] for p in threadpoolctl.threadpool_info()}))"
    paths = [_notebook(tmp_path / f"1{i}_threads.ipynb", probe) for i in range(jobs)]
    summary = reproduce.reproduce([str(p) for p in paths], profile="smoke", output_dir=tmp_path / "out", jobs=jobs)
    assert summary["status"].tolist() == ["ok"] * jobs
    for path in paths:
        out = nbformat.read(tmp_path / "out" / path.name, as_version=4)
        assert out.cells[1].outputs[0]["text"].strip() == "[1]"

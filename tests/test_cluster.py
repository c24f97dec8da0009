"""Sweeps on a Dask cluster give the tables of a local run: with several points side by side in one worker's
threads, after a worker is killed mid-run (the point is run again, and said so), and Ctrl-C stops every kernel
on the workers. The notebooks are small ones written by the tests."""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
from jupyter_core.utils import ensure_event_loop

from dpclust import sweep
from tests.test_sweep import WRITE, _notebook

distributed = pytest.importorskip("distributed")

# The kernel records its pid (named after the point) and its parent (the worker), then works a while.
MARKED = (
    "import time\nfrom pathlib import Path\n"
    "mark = Path(os.environ['TEST_MARKS']) / f'{epsilons[0]}-{os.getpid()}'\n"
    "mark.write_text(str(os.getppid()))\n"
    "time.sleep(float(os.environ.get('TEST_SLEEP', '0')))\n" + WRITE
)


@pytest.fixture
def compendium(tmp_path, monkeypatch):
    home = tmp_path / "compendium"
    _notebook(home, body=MARKED)
    (home / "pyproject.toml").write_text("")
    marks = tmp_path / "marks"
    marks.mkdir()
    monkeypatch.chdir(home)  # as the README runs a sweep: from the compendium, with no $DPCLUST_HOME
    monkeypatch.delenv("DPCLUST_HOME", raising=False)
    monkeypatch.setenv("TEST_MARKS", str(marks))
    monkeypatch.delenv("DPCLUST_PROFILE", raising=False)
    return home


def _alive(pid):
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "zombie" not in status.read_text()


def _marks(tmp_path):
    return [(p.name, int(p.read_text())) for p in (tmp_path / "marks").iterdir() if p.read_text()]


def test_points_side_by_side_in_one_worker_threads_give_a_local_runs_tables(compendium, tmp_path):
    grid = {"epsilons": [0.5, 1.0, 2.0]}
    _, local = sweep.sweep_notebook("10", grid, tmp_path / "local", profile="smoke", jobs=2)
    environ = dict(os.environ)
    # the event loop an earlier run of this process left in its context, which the worker's threads may copy
    ensure_event_loop()
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0", local_directory=tmp_path / "workers"
    ) as cluster:
        summary, tables = sweep.sweep_notebook(
            "10", grid, tmp_path / "dask", profile="smoke", scheduler=cluster.scheduler_address
        )
    assert dict(os.environ) == environ  # the runs in this process's threads changed none of its variables
    assert summary["status"].tolist() == ["ok"] * 3, summary["error"].tolist()
    assert summary["attempts"].tolist() == [1] * 3
    pd.testing.assert_frame_equal(tables["draws"], local["draws"])
    assert (tables["draws"]["env"] == "smoke").all()  # the profile travelled with each point
    for label in summary["point"]:
        assert (tmp_path / "dask" / label / "figures" / "figure.png").read_bytes() == b"a figure"
        assert (tmp_path / "dask" / label / "10_demo.ipynb").is_file()
    assert not list((tmp_path / "workers").rglob("dpclust-point-*"))


@pytest.mark.slow
def test_a_sweep_of_eight_points_survives_a_killed_worker_with_a_local_runs_tables(
    compendium, tmp_path, monkeypatch, capsys
):
    grid = {"epsilons": [0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0]}
    _, local = sweep.sweep_notebook("10", grid, tmp_path / "local", profile="smoke", jobs=2)
    for mark in (tmp_path / "marks").iterdir():
        mark.unlink()
    monkeypatch.setenv("TEST_SLEEP", "4")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", local_directory=tmp_path / "workers"
    ) as cluster:
        result = {}

        def run():
            where = cluster.scheduler_address
            result["out"] = sweep.sweep_notebook("10", grid, tmp_path / "dask", profile="smoke", scheduler=where)

        thread = threading.Thread(target=run)
        thread.start()
        end = time.monotonic() + 120
        while not _marks(tmp_path):
            assert time.monotonic() < end and thread.is_alive(), "no point started"
            time.sleep(0.2)
        (name, worker), *_ = _marks(tmp_path)
        kernel = int(name.split("-")[1])
        os.kill(worker, signal.SIGKILL)  # the worker dies mid-run; its nanny starts another
        thread.join(timeout=300)
        summary, tables = result["out"]
    assert summary["status"].tolist() == ["ok"] * 8, summary["error"].tolist()
    killed = summary.set_index("point").loc[f"epsilons={name.split('-')[0]}"]
    assert killed["attempts"] == 2
    assert f"epsilons={name.split('-')[0]}: its worker tcp://" in capsys.readouterr().out  # said as it happened
    pd.testing.assert_frame_equal(tables["draws"], local["draws"])
    for label in summary["point"]:
        pd.testing.assert_frame_equal(
            pd.read_csv(tmp_path / "dask" / label / "results" / "draws.csv"),
            pd.read_csv(tmp_path / "local" / label / "results" / "draws.csv"),
        )
    assert not _alive(kernel), "the killed worker's kernel outlived it"
    assert not list((tmp_path / "workers").rglob("dpclust-point-*")), "a point's folder was left behind"


@pytest.mark.slow
def test_ctrl_c_cancels_every_point_and_stops_the_kernels_on_the_workers(compendium, tmp_path, monkeypatch):
    # The workers' kernels work for two minutes (the workers take the variable from this process), so the two
    # points that have started are both running when Ctrl-C comes, and the other two have not started.
    monkeypatch.setenv("TEST_SLEEP", "120")
    env = dict(os.environ)
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            local_directory=tmp_path / "workers",
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        args = ["sweep", "10", "--grid", "epsilons=0.5,1,2,4", "--out", str(tmp_path / "out")]
        proc = subprocess.Popen(
            [sys.executable, "-m", "dpclust", *args, "--scheduler", cluster.scheduler_address],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a test runner may ignore SIGINT
        )
        end = time.monotonic() + 120
        while len(_marks(tmp_path)) < 2:
            assert time.monotonic() < end and proc.poll() is None, proc.communicate()
            time.sleep(0.2)
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C on a terminal does
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, out + err
        assert "cancelled every point on the cluster and stopped 2 running kernel(s)" in err, err
        kernels = [int(name.split("-")[1]) for name, _ in _marks(tmp_path)]
        end = time.monotonic() + 30
        while any(_alive(k) for k in kernels) or client.processing() != {w: () for w in client.processing()}:
            assert time.monotonic() < end, "a kernel or a task outlived the interrupt"
            time.sleep(0.2)
    assert len(_marks(tmp_path)) == 2, "a point started after the interrupt"
    assert not list((tmp_path / "workers").rglob("dpclust-point-*"))

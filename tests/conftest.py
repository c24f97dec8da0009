"""The harness: shared fixtures, the order of work over pytest-xdist's workers, and each notebook's smoke run.

``make test`` runs pytest over two workers. Work goes to them in units (:func:`pytest_xdist_make_scheduler`): the
tests of one file form one unit, so a module's fixtures (the wheels, the book, the nbgrader courses) are made
once, on one worker; the notebook runs of tests/test_notebooks.py and tests/test_notebooks_without_data.py are a
unit each, so the notebooks spread over the workers. The heaviest units go first (:data:`HEAVIEST_FIRST`), so that
no long one starts last. A notebook's smoke run is made once, by the worker of its unit (:func:`smoke_run`).
"""

import http.server
import json
import os
import re
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

from dpclust import datasets

ROOT = Path(__file__).resolve().parents[1]

# One unit of work per notebook run in these files (the notebook's stem, from the test's parameter).
ONE_UNIT_PER_NOTEBOOK = ("tests/test_notebooks.py", "tests/test_notebooks_without_data.py")
NOTEBOOK_PARAMETER = re.compile(r"\[(\d\d_\w+?)(?:\.ipynb)?\]")
# The files whose units took the most CPU (docs/install.md, "What make test checks"), heaviest first; the rest follow in
# the order pytest collects them.
HEAVIEST_FIRST = (
    "tests/test_nbgrader.py",
    "tests/test_exercises.py",
    "tests/test_notebooks.py",
    "tests/test_notebooks_without_data.py",
    "tests/test_reproduce_safety.py",
    "tests/test_reproduce.py",
    "tests/test_grade.py",
    "tests/test_wheel.py",
    "tests/test_audit_blackbox.py",
    "tests/test_verify.py",
    "tests/test_book.py",
    "tests/test_lock.py",
)


def unit_of_work(nodeid):
    """The unit of work of a test: its file, or for a notebook run, its file and notebook."""
    path = nodeid.split("::", 1)[0]
    notebook = NOTEBOOK_PARAMETER.search(nodeid)
    return f"{path}::{notebook.group(1)}" if path in ONE_UNIT_PER_NOTEBOOK and notebook else path


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook
def pytest_xdist_make_scheduler(config, log):
    # xdist's loadgroup marks its groups by rewriting node ids, which pytest 9.2 no longer allows; the units are
    # computed from the node ids instead.
    from xdist.scheduler import LoadScopeScheduling

    class ByUnitOfWork(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return unit_of_work(nodeid)

    config.option.loadscopereorder = False  # keep the order of the collection (heaviest first)
    return ByUnitOfWork(config, log)


def pytest_collection_modifyitems(items):
    """The units of the heaviest files first, each unit's tests in their order."""
    rank = {path: i for i, path in enumerate(HEAVIEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


def pytest_configure(config):
    if not any(line.split(":")[0].strip() == "slow" for line in config.getini("markers")):
        config.addinivalue_line("markers", "slow: takes more than about 30 s (a cluster of worker processes)")


def bonferroni(alpha, tests):
    """Per-test level so that the chance of any false alarm is at most ``alpha``."""
    return alpha / tests


@pytest.fixture
def rng():
    return np.random.default_rng(20261121)


def _mirror_has(*datafiles):
    try:
        for f in datafiles:
            datasets.locate(f, download=False)
    except datasets.DataError:
        return False
    return True


@pytest.fixture
def needs_data():
    """Skip a test when the named registry files are neither in $DPCLUST_DATA_DIR nor in data/raw."""

    def check(*datafiles):
        if not _mirror_has(*datafiles):
            pytest.skip("data file not available offline: " + ", ".join(f.key for f in datafiles))

    return check


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves files from ``server.root``; ``/truncated/<name>`` announces more bytes than it sends."""

    def translate_path(self, path):
        return str(Path(self.server.root) / path.lstrip("/").replace("truncated/", ""))

    def do_GET(self):
        if self.path.startswith("/truncated/"):
            body = Path(self.translate_path(self.path)).read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body) + 1000))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        super().do_GET()

    def log_message(self, *args):
        pass


@pytest.fixture
def http_root(tmp_path):
    """A local HTTP server on 127.0.0.1 serving a temporary folder; yields (root, base_url)."""
    root = tmp_path / "served"
    root.mkdir()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.root = root
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


# The reader's set (the notebooks extra alone), in an environment of its own that make test makes as make reproduce
# makes .venv (Makefile, install-reader-test).
READER_PYTHON = ROOT / ".venv-reader" / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
# One notebook run in the reader's environment, its summary printed as JSON on the last line.
RUN_IN_READERS_SET = """
import json, sys
from pathlib import Path
from dpclust import reproduce
notebook, output, parameters = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
row = reproduce.run_notebook(Path(notebook), Path(output), parameters, profile="smoke")
print(json.dumps(row))
"""


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory):
    """``smoke_run(stem)``: the notebook run once in the smoke profile, with the data, in the reader's set (the
    environment ``make reproduce`` installs), outputs in a scratch folder.

    Returns the dict of :func:`dpclust.reproduce.run_notebook` (status, error, seconds, output: the executed
    notebook). The run is made once per worker: the tests that read it are in its unit of work
    (:func:`unit_of_work`), so one worker makes it, once. The kernel keeps to one BLAS thread, since the workers
    share the cores.
    """
    runs = {}

    def run(stem):
        if stem not in runs:
            folder = tmp_path_factory.mktemp(f"smoke-{stem}")
            parameters = {"results_dir": str(folder / "results"), "figures_dir": str(folder / "figures")}
            argv = [str(ROOT / "notebooks" / f"{stem}.ipynb"), str(folder / f"{stem}.ipynb"), json.dumps(parameters)]
            # The reader's packages, and this compendium's own first (a copy of it has its own: test_sixth_paper).
            env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"} | {"PYTHONPATH": str(ROOT)}
            if not READER_PYTHON.exists():
                pytest.fail("the smoke runs need the reader's set: make install-reader-test (make test makes it)")
            done = subprocess.run(
                [str(READER_PYTHON), "-c", RUN_IN_READERS_SET, *argv], env=env, capture_output=True, text=True
            )
            assert done.returncode == 0, done.stderr[-3000:]
            runs[stem] = json.loads(done.stdout.splitlines()[-1])
        return runs[stem]

    return run


# Under xdist a test's subprocesses share the cores with the other worker: one at a time each.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("DPCLUST_NBGRADER_JOBS", "1")

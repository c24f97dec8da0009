"""The harness: shared fixtures, the order of work over pytest-xdist's workers, and each notebook's smoke run.

``make test`` runs pytest over two workers with ``--dist loadgroup``. The tests of one file form one group (so a
module's fixtures are set up once, on one worker), except where a test names its own group: each notebook's tests
(``xdist_group(<stem>)``), so that the notebooks spread over the workers. A notebook's smoke run is made once, by
the worker of its group (:func:`smoke_run`), and every test that reads its outputs reads that one run.
"""

import http.server
import os
import threading
from pathlib import Path

import numpy as np
import pytest

from dpclust import datasets, reproduce

ROOT = Path(__file__).resolve().parents[1]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    # Before xdist reads the groups: a test without a group of its own is in its file's.
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))


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


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory):
    """``smoke_run(stem)``: the notebook run once in the smoke profile, with the data, outputs in a scratch folder.

    Returns the dict of :func:`dpclust.reproduce.run_notebook` (status, error, seconds, output: the executed
    notebook). The run is made once per worker: a test that reads it is in the notebook's xdist group
    (``pytest.mark.xdist_group(stem)``), so that the worker of that group makes it, once. The kernel keeps to one
    BLAS thread, since the workers share the cores.
    """
    runs = {}

    def run(stem):
        if stem not in runs:
            folder = tmp_path_factory.mktemp(f"smoke-{stem}")
            runs[stem] = reproduce.run_notebook(
                ROOT / "notebooks" / f"{stem}.ipynb",
                output_path=folder / f"{stem}.ipynb",
                parameters={"results_dir": str(folder / "results"), "figures_dir": str(folder / "figures")},
                profile="smoke",
                single_thread=True,
            )
        return runs[stem]

    return run


# Under xdist a test's subprocesses share the cores with the other worker: one at a time each.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("DPCLUST_NBGRADER_JOBS", "1")

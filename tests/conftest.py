import http.server
import threading
from pathlib import Path

import numpy as np
import pytest

from dpclust import datasets


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

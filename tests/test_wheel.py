"""The packages as a new user gets them: build the sdists and the wheels of the working tree (the
algorithms, ``dpclust_lib/``, and the compendium's tooling, the root), install the wheels (not editable) into
a fresh virtual environment, and use them from a folder outside the repository. The algorithms' wheel
alone must import and fit without the tooling or any of its dependencies.

uv builds them once for the module (each wheel from its sdist). To stay fast and work offline, the fresh
environment borrows the dependencies of the running one (a ``.pth`` line pointing at its site-packages) and the
wheel is installed with ``--no-deps``; the package itself must then come from the wheel, which the test checks.
"""

import os
import subprocess
import sys
import sysconfig
import tarfile
import textwrap
import zipfile
from pathlib import Path

import pytest

from . import discover

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = [path.stem for path in discover.paper_notebooks()]  # each paper's published numbers: package data
LIB_SUBPACKAGES = ["dpclust_lib/cluster/__init__.py", "dpclust_lib/audit/__init__.py"]
TOOLING_SUBPACKAGES = ["dpclust/__init__.py", "dpclust/exercises/__init__.py", "dpclust/datasets/__init__.py"]
# What the tooling imports and the algorithms must not (joblib comes with scikit-learn): with these blocked,
# the algorithms' wheel still works.
TOOLING_ONLY = ["dpclust", "pooch", "tqdm", "papermill", "nbformat", "nbclient", "matplotlib", "seaborn"]

# Run inside the fresh environment, with only the algorithms' wheel and the tooling's modules blocked.
USE_THE_ALGORITHMS = textwrap.dedent(
    """
    import importlib, pkgutil, sys

    class Block:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in %(blocked)r:
                raise ImportError(f"{name} is blocked: the algorithms must not need it")

    sys.meta_path.insert(0, Block())
    import numpy as np
    import dpclust_lib

    modules = [m.name for m in pkgutil.walk_packages(dpclust_lib.__path__, "dpclust_lib.")]
    for name in modules:
        importlib.import_module(name)
    X = np.random.default_rng(0).random((300, 2))
    est = dpclust_lib.DPKMeans(n_clusters=2, epsilon=1.0, bounds=(0.0, 1.0), random_state=0).fit(X)
    assert est.cluster_centers_.shape == (2, 2) and est.epsilon_guaranteed_ == 1.0
    print(len(modules), "modules of the algorithms imported without the tooling")
    """
) % {"blocked": TOOLING_ONLY}

# Run inside the fresh environment, from a folder outside the repository.
USE_THE_WHEEL = textwrap.dedent(
    """
    import importlib, pkgutil, sys
    from pathlib import Path

    import numpy as np

    import dpclust_lib
    from dpclust_lib import Birch, DPKMeans, DPQTKMeans, KModes, LDPKModes
    from dpclust import _paths, experiments

    venv = Path(sys.argv[1]).resolve()
    where = Path(dpclust_lib.__file__).resolve()
    assert venv in where.parents, f"dpclust_lib was imported from {where}, not from the fresh environment"
    print("dpclust_lib from", where.relative_to(venv))

    modules = [m.name for m in pkgutil.walk_packages(dpclust_lib.__path__, "dpclust_lib.")]
    for name in modules:
        importlib.import_module(name)
    print(len(modules), "modules imported")

    rng = np.random.default_rng(0)
    codes = rng.integers(0, 3, size=(200, 2))
    points = np.vstack([rng.normal(0.25, 0.05, (100, 2)), rng.normal(0.75, 0.05, (100, 2))]).clip(0, 1)
    box = ((0.0, 0.0), (1.0, 1.0))
    fits = {
        "KModes": (KModes(n_clusters=2, domain_sizes=(3, 3), random_state=0), codes),
        "LDPKModes": (LDPKModes(n_clusters=2, epsilon=2.0, domain_sizes=(3, 3), random_state=0), codes),
        "DPKMeans": (DPKMeans(n_clusters=2, epsilon=1.0, bounds=box, random_state=0), points),
        "DPQTKMeans": (DPQTKMeans(n_clusters=2, epsilon=1.0, bounds=box, n_public=len(points), random_state=0),
                       points),
        "Birch": (Birch(n_clusters=2, threshold=0.1), points),
    }
    for name, (est, X) in fits.items():
        labels = est.fit(X).predict(X)
        assert labels.shape == (len(X),) and set(np.unique(labels)) <= {0, 1}, name
    print("fitted:", ", ".join(fits))

    for stem in %(published)r:
        assert len(experiments.load_published(stem)) > 0, stem
    print("load_published: %%d tables" %% len(%(published)r))

    assert _paths.find_project_dir() is None
    try:
        experiments.results_path("01_ldpk_modes", "x")
    except _paths.CompendiumNotFoundError as exc:
        print("outside a compendium:", str(exc)[:60], "...")
    else:
        raise AssertionError("results_path worked without a compendium")
    """
) % {"published": PUBLISHED}


def _run(cmd, cwd, env, timeout=300):
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{cmd} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def _uv():
    uv = pytest.importorskip("uv", reason="the wheel check needs the test set (uv)")
    return uv.find_uv_bin()


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    """The sdists and wheels of the working tree, built once (each wheel from its sdist, as pip does)."""
    out = tmp_path_factory.mktemp("dist")
    for folder in (ROOT / "dpclust_lib", ROOT):
        build = [_uv(), "build", "--quiet", "--sdist", "--wheel", "--out-dir", str(out), str(folder)]
        _run(build, out, os.environ.copy())
    return {name: (*out.glob(f"{name}-*.tar.gz"), *out.glob(f"{name}-*.whl")) for name in ("dpclust_lib", "dpclust")}


def _contents(sdist, wheel):
    with tarfile.open(sdist) as tar:
        in_sdist = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    return in_sdist, set(zipfile.ZipFile(wheel).namelist())


def test_each_wheel_holds_its_own_package_only(dist):
    lib_sdist, lib_wheel = _contents(*dist["dpclust_lib"])
    tool_sdist, tool_wheel = _contents(*dist["dpclust"])
    # The algorithms' project folder is its package folder: the sdist holds cluster/..., the wheel dpclust_lib/...
    assert all(init.removeprefix("dpclust_lib/") in lib_sdist for init in LIB_SUBPACKAGES)
    assert all(init in lib_wheel for init in LIB_SUBPACKAGES)
    for files in (lib_sdist, lib_wheel):
        assert not any(name.startswith("dpclust/") for name in files)
    for files in (tool_sdist, tool_wheel):
        assert all(init in files for init in TOOLING_SUBPACKAGES)
        assert all(f"dpclust/published/{stem}.csv" in files for stem in PUBLISHED)
        assert not any(name.startswith("dpclust_lib/") for name in files)
    assert any(name.endswith("entry_points.txt") for name in tool_wheel)
    assert not any(name.endswith("entry_points.txt") for name in lib_wheel)
    assert "pyproject.toml" in lib_sdist and "pyproject.toml" in tool_sdist and "requirements.lock" not in tool_wheel


def _fresh_venv(tmp_path, wheels):
    """A new environment holding ``wheels`` (not editable), borrowing the running one's third-party packages."""
    venv = tmp_path / "venv"
    _run([_uv(), "venv", "--quiet", "--python", sys.executable, str(venv)], tmp_path, os.environ.copy())
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    site = Path(
        _run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            cwd=tmp_path,
            env=os.environ.copy(),
        ).strip()
    )
    borrowed = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "_borrowed_dependencies.pth").write_text("\n".join(sorted(borrowed)) + "\n")
    install = [_uv(), "pip", "install", "--quiet", "--python", str(python), "--no-deps", "--offline", *map(str, wheels)]
    _run(install, tmp_path, os.environ.copy())
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "DPCLUST_HOME", "VIRTUAL_ENV"}}
    env["PATH"] = os.pathsep.join([str(python.parent), env.get("PATH", "")])
    return python, outside, env


def test_the_algorithms_wheel_works_without_the_tooling(dist, tmp_path):
    python, outside, env = _fresh_venv(tmp_path, [dist["dpclust_lib"][1]])
    report = _run([str(python), "-c", USE_THE_ALGORITHMS], cwd=outside, env=env)
    print(report)
    assert "imported without the tooling" in report


def test_the_wheels_install_and_work_outside_the_repository(dist, tmp_path):
    python, outside, env = _fresh_venv(tmp_path, [dist["dpclust_lib"][1], dist["dpclust"][1]])
    venv = python.parent.parent
    report = _run([str(python), "-c", USE_THE_WHEEL, str(venv)], cwd=outside, env=env)
    print(report)
    assert "fitted: KModes, LDPKModes, DPKMeans, DPQTKMeans, Birch" in report

    for cmd in ([str(python), "-m", "dpclust", "--help"], [str(python.parent / "dpclust"), "--help"]):
        usage = _run(cmd, cwd=outside, env=env)
        assert "reproduce" in usage and "sweep" in usage and "assignments" in usage
        print(" ".join(Path(c).name for c in cmd), "->", usage.splitlines()[0])
    # The library alone lists the data files (from $DPCLUST_DATA_DIR or the user's cache), no compendium needed.
    listing = subprocess.run(
        [str(python.parent / "dpclust"), "data"], cwd=outside, env=env, capture_output=True, text=True, timeout=120
    )
    assert listing.returncode == 0 and "car_evaluation/car.data" in listing.stdout, listing.stderr
    result = subprocess.run(
        [str(python.parent / "dpclust"), "reproduce", "01"],
        cwd=outside,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and "DPCLUST_HOME" in result.stderr and "Traceback" not in result.stderr

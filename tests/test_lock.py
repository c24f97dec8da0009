"""uv.lock, the one lock of both distributions: it holds what pyproject.toml asks for, on every supported Python
and platform, with a hash for every file; make installs from it, and environment.yml is written from it.

The checks read the lock itself (no network, no resolver): for each supported (platform, Python), the packages an
install of every extra reaches from the two distributions, through the lock's own dependency edges and markers,
must each have a wheel for that platform and Python.
"""

import re
import sys
from pathlib import Path

import pandas as pd
import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import compatible_tags, cpython_tags, mac_platforms
from packaging.utils import canonicalize_name, parse_wheel_filename

from dpclust import environment

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
LOCK = tomllib.loads((ROOT / "uv.lock").read_text())
PACKAGES = LOCK["package"]
OURS = {"dpclust", "dpclust-lib"}


def _supported():
    return re.search(r"^SUPPORTED := (.*)$", (ROOT / "Makefile").read_text(), re.M).group(1).split()


def _glibc(machine):  # manylinux wheels a glibc 2.28 system (RHEL 8, Debian 10 and later) installs
    legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
    return [f"manylinux_2_{v}_{machine}" for v in range(28, 4, -1)] + [f"{t}_{machine}" for t in legacy.values()]


# The platforms docs/install.md promises, with the wheel platforms each installs and its marker values.
PLATFORMS = {
    "linux-x86_64": (_glibc("x86_64"), {"sys_platform": "linux", "platform_machine": "x86_64", "os_name": "posix"}),
    "linux-aarch64": (_glibc("aarch64"), {"sys_platform": "linux", "platform_machine": "aarch64", "os_name": "posix"}),
    "macos-arm64": (list(mac_platforms((14, 0), "arm64")), {"sys_platform": "darwin", "platform_machine": "arm64"}),
    "macos-x86_64": (list(mac_platforms((13, 0), "x86_64")), {"sys_platform": "darwin", "platform_machine": "x86_64"}),
    "windows-amd64": (["win_amd64"], {"sys_platform": "win32", "platform_machine": "AMD64", "os_name": "nt"}),
}
SYSTEMS = {"linux": "Linux", "darwin": "Darwin", "win32": "Windows"}
TARGETS = [(platform, python) for platform in PLATFORMS for python in _supported()]


def _environment(platform, python):
    values = PLATFORMS[platform][1]
    return {
        "python_version": python,
        "python_full_version": f"{python}.9",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "platform_system": SYSTEMS[values["sys_platform"]],
        "os_name": "posix",
        **values,
        "extra": "",
    }


def _holds(marker, env):
    return marker is None or Marker(marker).evaluate(env)


def _package(name, version, env):
    """The lock's entry of ``name`` for this environment (of ``version`` when the edge names one)."""
    found = [
        p
        for p in PACKAGES
        if p["name"] == name
        and (version is None or p["version"] == version)
        and any(_holds(m, env) for m in p.get("resolution-markers", [None]))
    ]
    assert len(found) == 1, f"{name} {version or ''}: {len(found)} entries of the lock fit {env['sys_platform']}"
    return found[0]


def _reached(env):
    """Every package an install of both distributions with every extra reaches in ``env``."""
    dpclust = next(p for p in PACKAGES if p["name"] == "dpclust")
    todo = [(dpclust, set(dpclust.get("optional-dependencies", {})))]
    seen = {}
    while todo:
        package, extras = todo.pop()
        key = (package["name"], package["version"])
        if key in seen and extras <= seen[key]:
            continue
        seen[key] = seen.get(key, set()) | extras
        edges = list(package.get("dependencies", []))
        for extra in extras:
            edges += package.get("optional-dependencies", {}).get(extra, [])
        for edge in edges:
            if _holds(edge.get("marker"), env):
                todo.append((_package(edge["name"], edge.get("version"), env), set(edge.get("extra", []))))
    return [next(p for p in PACKAGES if (p["name"], p["version"]) == key) for key in seen]


def _tags(platform, python):
    version = tuple(int(part) for part in python.split("."))
    platforms = PLATFORMS[platform][0]
    return set(cpython_tags(version, platforms=platforms)) | set(
        compatible_tags(version, f"cp{version[0]}{version[1]}", platforms)
    )


@pytest.mark.parametrize("platform, python", TARGETS, ids=[f"{p}-py{v}" for p, v in TARGETS])
def test_every_package_has_a_wheel_on_every_supported_platform_and_python(platform, python):
    env, tags = _environment(platform, python), _tags(platform, python)
    reached = _reached(env)
    assert {"numpy", "scikit-learn", "jupyterlab", "pytest"} <= {p["name"] for p in reached}
    missing = [
        f"{p['name']} {p['version']}"
        for p in reached
        if p["name"] not in OURS
        and not any(tags & parse_wheel_filename(w["url"].rsplit("/", 1)[1])[3] for w in p["wheels"])
    ]
    assert not missing, f"no wheel for {platform}, Python {python}: {missing}"


def test_every_file_has_a_hash():
    files = [f for p in PACKAGES for f in p.get("wheels", []) + ([p["sdist"]] if "sdist" in p else [])]
    assert len(files) > 1000
    assert all(re.fullmatch(r"sha256:[0-9a-f]{64}", f.get("hash", "")) for f in files)
    assert {p["name"] for p in PACKAGES if "editable" in p["source"]} == OURS  # the rest comes from PyPI
    assert {url for p in PACKAGES for url in p["source"].values() if "://" in str(url)} == {"https://pypi.org/simple"}


def _pyproject(folder):
    return tomllib.loads((folder / "pyproject.toml").read_text())["project"]


def test_the_lock_holds_what_the_pyprojects_ask_for():
    # uv records each distribution's requirements in the lock; they must be today's (make uses --locked too).
    for folder, name in ((ROOT, "dpclust"), (ROOT / "dpclust_lib", "dpclust-lib")):
        project = _pyproject(folder)
        asked = list(project["dependencies"])
        for extra, specs in project.get("optional-dependencies", {}).items():
            asked += [f"{s}{' and' if ';' in s else ';'} extra == '{extra}'" for s in specs]
        locked = next(p for p in PACKAGES if p["name"] == name)["metadata"]["requires-dist"]
        wanted, found = (
            sorted(map(_canonical, map(Requirement, asked)), key=str),
            sorted(map(_canonical, map(_lock_req, locked)), key=str),
        )
        assert wanted == found, f"uv.lock is not {name}'s pyproject.toml: run make lock"


def _lock_req(entry):
    extras = f"[{','.join(entry['extras'])}]" if entry.get("extras") else ""
    marker = f"; {entry['marker']}" if entry.get("marker") else ""
    return Requirement(f"{entry['name']}{extras}{entry.get('specifier', '')}{marker}")


def _canonical(req):
    """A requirement as (name, extras, specifier, where its marker holds): uv writes markers in a form of its own."""
    name = canonicalize_name(req.name)
    specifier = "" if name in OURS else str(req.specifier)  # the lock names the workspace's own by its folder
    extras = [""] + list(_pyproject(ROOT)["optional-dependencies"])
    where = frozenset(
        (target, extra)
        for target in TARGETS
        for extra in extras
        if req.marker is None or req.marker.evaluate({**_environment(*target), "extra": extra})
    )
    return (name, tuple(sorted(req.extras)), specifier, where)


@pytest.mark.parametrize("platform, python", TARGETS[:: len(_supported())] + TARGETS[: len(_supported())])
def test_every_direct_requirement_is_locked_at_a_version_that_satisfies_it(platform, python):
    env = _environment(platform, python)
    pins = environment.read_lock(ROOT / "uv.lock", env)
    for folder in (ROOT, ROOT / "dpclust_lib"):
        project = _pyproject(folder)
        specs = project["dependencies"] + [
            s for specs in project.get("optional-dependencies", {}).values() for s in specs
        ]
        for req in map(Requirement, specs):
            name = canonicalize_name(req.name)
            if name in OURS or (req.marker is not None and not req.marker.evaluate(env)):
                continue
            assert name in pins, f"{req} is not in uv.lock"
            assert req.specifier.contains(pins[name], prereleases=True), f"{req}: uv.lock has {pins[name]}"


def test_the_supported_pythons_are_the_locks_and_the_readmes():
    supported = _supported()
    requires = SpecifierSet(_pyproject(ROOT)["requires-python"])
    assert all(requires.contains(f"{v}.0") for v in supported)
    below = f"3.{int(supported[0][2:]) - 1}.0"
    assert not requires.contains(below), "requires-python allows an untested Python"
    assert _pyproject(ROOT / "dpclust_lib")["requires-python"] == _pyproject(ROOT)["requires-python"]
    # the lock resolves exactly the supported Pythons, on the three systems
    markers = LOCK["supported-markers"]
    for v in supported:
        for system in SYSTEMS:
            assert any(Marker(m).evaluate(_environment(_first(system), v)) for m in markers), (system, v)
    after = f"3.{int(supported[-1][2:]) + 1}"
    assert not any(Marker(m).evaluate(_environment("linux-x86_64", after)) for m in markers)
    readme = (ROOT / "README.md").read_text()
    assert f"Python {supported[0]} to {supported[-1]}" in readme, "the README names the supported Pythons"


def _first(system):
    return next(p for p, (_, values) in PLATFORMS.items() if values["sys_platform"] == system)


def test_make_installs_every_set_from_the_lock():
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^SYNC\s*= \$\(UV\) sync --locked ", makefile, re.M), "make installs exactly uv.lock's versions"
    assert "pip install" not in makefile.replace("pip install --quiet uv==", "").replace("$(UV) pip install", "")
    for target, extra in (("install-test", "test"), ("install-lab", "lab"), ("install-teach", "teach")):
        recipe = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", makefile, re.M).group(1)
        assert f"--extra {extra}" in recipe, target
    reader = re.search(r"^\$\(VENV\)/\.installed:.*\n((?:\t.*\n)+)", makefile, re.M).group(1)
    assert "--extra notebooks" in reader
    lab = re.search(r"^install-lab:.*\n((?:\t.*\n)+)", makefile, re.M).group(1)
    assert "--inexact" not in lab, "make lab syncs the reader's set exactly: no teaching extension in JupyterLab"


def _conda_writer():
    import importlib.util

    spec = importlib.util.spec_from_file_location("conda_writer", ROOT / "requirements" / "conda.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_environment_yml_is_the_readers_set_at_the_locked_versions():
    import yaml

    writer = _conda_writer()
    assert (ROOT / "environment.yml").read_text() == writer.environment_yml(), (
        "environment.yml is not what `python requirements/conda.py > environment.yml` writes from uv.lock"
    )
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    pinned = dict(d.split("==") for d in conda if "==" in d)
    pins = environment.read_lock(ROOT / "uv.lock", writer.MARKERS)
    project, lib = _pyproject(ROOT), _pyproject(ROOT / "dpclust_lib")
    wanted = lib["dependencies"] + project["dependencies"] + project["optional-dependencies"]["notebooks"]
    wanted += project["optional-dependencies"]["lab"]
    for req in map(Requirement, wanted):
        name = canonicalize_name(req.name)
        if name in OURS or (req.marker is not None and not req.marker.evaluate(writer.MARKERS | {"extra": ""})):
            continue
        assert pinned[writer.CONDA_NAMES.get(name, name)] == pins[name], name
    assert "pytest" not in pinned and "nbgrader" not in pinned, "the reader's set holds no test or teaching tools"
    # but nbval, to run the notebooks as tests (pytest --nbval-lax notebooks/), at the locked version
    assert pinned.get("nbval") == pins["nbval"], "environment.yml lacks nbval at uv.lock's version"
    assert f"python={writer.LOCK_PYTHON}" in conda and "conda-forge" in env["channels"]
    assert next(d for d in env["dependencies"] if isinstance(d, dict))["pip"] == ["-e ./dpclust_lib", "-e ."]


@pytest.mark.slow  # a fresh copy with its own install from uv.lock (uv's cache, else PyPI), three sweep points: CI
def test_the_readers_set_installs_alone_and_runs_the_sweep_and_plain_papermill(tmp_path):
    """The reader's path in the reader's install: a copy of the compendium's files (a fresh clone) whose .venv
    holds the notebooks extra alone, as make makes it, runs the sweep (make sweep, smoke) and plain papermill on a
    number and on a list, as docs/sweeps.md writes them. (Every notebook's smoke run is made in the reader's set
    too: tests/test_notebooks.py.)"""
    import os
    import subprocess

    uv = pytest.importorskip("uv", reason="the install test needs the test set (uv)").find_uv_bin()
    clone = tmp_path / "clone"
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True)
    for name in filter(None, tracked.stdout.split("\0")):
        if (ROOT / name).is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            (clone / name).write_bytes((ROOT / name).read_bytes())
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH", "DPCLUST_HOME", "CI"}}
    env |= {
        "UV_PYTHON_DOWNLOADS": "never",
        "DPCLUST_DATA_DIR": os.environ.get("DPCLUST_DATA_DIR", str(ROOT / "data" / "raw")),
    }
    env.pop("UV_PROJECT_ENVIRONMENT", None)

    def run(*argv, timeout=1800):
        done = subprocess.run(argv, cwd=clone, env=env, capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, f"{' '.join(argv)}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done.stdout

    run(uv, "sync", "--locked", "--extra", "notebooks", "--python", sys.executable, "--quiet")  # what make runs
    listed = run(uv, "pip", "list", "--python", str(clone / ".venv" / "bin" / "python"))
    installed = {line.split()[0].lower() for line in listed.splitlines()[2:] if line.strip()}
    assert {"numpy", "scikit-learn", "papermill", "ipykernel", "matplotlib", "jinja2"} <= installed
    assert not installed & {"pytest", "nbgrader", "sphinx", "opendp", "jupyterlab", "selenium"}, "not the reader's"

    run("make", "sweep", "PROFILE=smoke", f"UV={uv}", f"PYTHON={sys.executable}")
    points = pd.read_csv(clone / "data" / "results" / "sweeps" / "04_idp_kmeans" / "sweep_points.csv")
    assert points["status"].tolist() == ["ok"] * 3, points["error"].tolist()
    ledger = pd.read_csv(
        clone / "data" / "results" / "sweeps" / "04_idp_kmeans" / "epsilons=2" / "results" / "ledger.csv"
    )
    assert set(ledger.set_index("claim_id").loc[["dp_falls", "larger_data"], "verdict"]) == {"not testable"}

    for value in ("1.0", "[0.5,2]"):  # a number and a list, with -p
        papermill = [".venv/bin/papermill", "notebooks/04_idp_kmeans.ipynb", str(tmp_path / "out.ipynb")]
        run(*papermill, "-p", "profile", "smoke", "-p", "epsilons", value, "-p", "results_dir", str(tmp_path / value))
        assert (tmp_path / value / "ledger.csv").is_file()

"""The project's contract: dependency lists agree, the README's commands are what CI runs, notebooks
follow the conventions, and the data table (docs/data.md) matches the registry."""

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from dpclust import datasets

from . import discover

ROOT = Path(__file__).resolve().parents[1]


def _name(spec):
    return re.split(r"[<>=!~ ]", spec, maxsplit=1)[0].lower().replace("_", "-")


# The two distributions of the repository: the algorithms (dpclust_lib/) and the compendium's tooling (root).
LIB = ROOT / "dpclust_lib"
OURS = {"dpclust", "dpclust-lib"}


def _pyproject(folder=ROOT):
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: tomli, which pytest and build need there
        tomllib = pytest.importorskip("tomli", reason="tomllib is in the standard library from Python 3.11")
    return tomllib.loads((folder / "pyproject.toml").read_text())


def _requirements(extras, folder=ROOT, with_lib=True):
    """Third-party requirements of a distribution (with the extras named, and those they include); this
    repository's own are left out.

    The compendium's (``folder=ROOT``) include those of the algorithms it requires, unless ``with_lib`` is False.
    """
    from packaging.requirements import Requirement

    project = _pyproject(folder)["project"]
    specs, wanted = list(project["dependencies"]), list(extras)
    for extra in wanted:  # an extra may include others: dpclust[notebooks]
        for spec in map(Requirement, project["optional-dependencies"][extra]):
            if _name(spec.name) in OURS:
                wanted += [e for e in spec.extras if e not in wanted]
            else:
                specs.append(str(spec))
    if folder == ROOT and with_lib:
        specs += _pyproject(LIB)["project"]["dependencies"]
    return [r for r in map(Requirement, specs) if _name(r.name) not in OURS]


def test_the_compendium_requires_exactly_this_version_of_the_algorithms():
    lib = _pyproject(LIB)["project"]
    assert f"dpclust_lib=={lib['version']}" in _pyproject()["project"]["dependencies"]
    assert lib["version"] == _pyproject()["project"]["version"]
    # The algorithms need no tooling: their one extra is the secure generator of random_state="os".
    assert lib.get("optional-dependencies", {}) == {"secure": ["randomgen>=2.1"]}


def test_the_minimum_lock_installs_every_lower_bound():
    from packaging.version import Version

    from dpclust.environment import canonical_name, read_lock

    pins = read_lock(ROOT / "requirements" / "minimum.lock")
    for req in _requirements(["test"]) + _requirements([], LIB):
        if req.marker is not None and not req.marker.evaluate({"python_version": "3.10", "extra": ""}):
            continue
        (lower,) = [s.version for s in req.specifier if s.operator == ">="]
        pinned = pins[canonical_name(req.name)]
        assert Version(pinned) == Version(lower), f"{req}: requirements/minimum.lock has {pinned}"
        for extra in req.extras:
            assert canonical_name(extra) in pins, f"{req}: {extra} is not pinned"


def _module_level(body):
    """The statements run at import: the module's own, and those nested in its with/if/try blocks."""
    for node in body:
        yield node
        if isinstance(node, (ast.With, ast.If, ast.Try)):
            for part in (node.body, getattr(node, "orelse", []), getattr(node, "finalbody", [])):
                yield from _module_level(part)
            for handler in getattr(node, "handlers", []):
                yield from _module_level(handler.body)


def _imported_top_level_modules(folder, package, anywhere=False):
    """Top-level third-party modules a package imports at module level (or ``anywhere``, functions included)."""
    import ast
    import sys

    found = set()
    for path in (folder / package).rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree) if anywhere else _module_level(tree.body):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            found |= {n.split(".")[0] for n in names if n.split(".")[0] not in sys.stdlib_module_names}
    return found - {package, "tomllib"}  # tomllib: the standard library from Python 3.11 (tomli before)


# Import name -> distribution name, where they differ.
_DISTRIBUTIONS = {"sklearn": "scikit-learn", "yaml": "pyyaml"}


def test_runtime_dependencies_are_what_each_package_imports():
    from dpclust.environment import canonical_name

    for folder, package in ((LIB, "dpclust_lib"), (ROOT, "dpclust")):
        runtime = {canonical_name(r.name) for r in _requirements([], folder, with_lib=False)}
        imported = {canonical_name(_DISTRIBUTIONS.get(m, m)) for m in _imported_top_level_modules(ROOT, package)}
        imported -= OURS | {"dpclust_lib"}
        assert imported <= runtime, f"{package} imports at module level what it does not require: {imported - runtime}"
        # fastcluster is imported where the Ward step needs it (above scipy's limit), inside a function.
        assert runtime - imported <= {"fastcluster"}, f"{package} requires what it never imports: {runtime - imported}"
    # The algorithms never import the tooling nor its dependencies.
    lib_imports = _imported_top_level_modules(ROOT, "dpclust_lib", anywhere=True)
    assert not lib_imports & {"dpclust", "pooch", "tqdm", "papermill", "nbformat", "matplotlib", "seaborn"}


def test_versions_compares_the_lock_with_what_is_installed(tmp_path):
    import importlib.metadata

    from dpclust import environment

    numpy_version = importlib.metadata.version("numpy")
    lock = tmp_path / "uv.lock"
    package = 'version = 1\n[[package]]\nname = "{}"\nversion = "{}"\n'
    lock.write_text(package.format("numpy", numpy_version) + package.format("Pandas", "0.0.1").split("\n", 1)[1])
    table = environment.versions(lock, packages=["numpy", "pandas", "surely-not-installed"])
    assert list(table.columns) == ["package", "locked", "installed", "match"]
    assert table["package"].tolist() == ["numpy", "pandas", "surely-not-installed"]
    assert table["locked"].tolist()[:2] == [numpy_version, "0.0.1"] and pd.isna(table["locked"].iloc[2])
    assert table["installed"].iloc[0] == numpy_version and pd.isna(table["installed"].iloc[2])
    assert table["match"].tolist() == [True, False, False]
    default = environment.versions(ROOT / "uv.lock")
    assert {"numpy", "scikit-learn", "papermill"} <= set(default["package"]) and default["locked"].notna().all()
    assert "pytest" not in set(default["package"]), "the reader's set, not the test tools"
    requirements = tmp_path / "minimum.lock"
    requirements.write_text("numpy>=1\n")
    with pytest.raises(ValueError, match="name==version"):
        environment.read_lock(requirements)


def test_published_numbers_are_package_data():
    from dpclust import experiments

    papers = [path.stem for path in discover.paper_notebooks()]
    assert len(papers) >= 5
    for stem in papers:
        frame = experiments.load_published(stem)
        assert (ROOT / "dpclust" / "published" / f"{stem}.csv").is_file() and len(frame) > 0
    assert not (ROOT / "data" / "published").exists()
    with pytest.raises(FileNotFoundError, match="99_nothing"):
        experiments.load_published("99_nothing")


def _compendium(folder):
    (folder / "notebooks").mkdir(parents=True)
    (folder / "pyproject.toml").write_text("")
    return folder.resolve()


def test_project_dir_from_dpclust_home_then_upwards_from_the_working_directory(tmp_path, monkeypatch):
    from dpclust import _paths

    home = _compendium(tmp_path / "home")
    other = _compendium(tmp_path / "other")
    deep = other / "notebooks" / "a" / "b"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    monkeypatch.delenv("DPCLUST_HOME", raising=False)
    assert _paths.project_dir() == other
    assert _paths.results_dir() == other / "data" / "results" and _paths.figures_dir() == other / "figures"
    assert _paths.notebook_dir() == other / "notebooks"
    monkeypatch.setenv("DPCLUST_HOME", str(home))
    assert _paths.project_dir() == home


def test_without_a_compendium_commands_say_what_they_need(tmp_path, monkeypatch):
    from dpclust import _paths, datasets, experiments

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DPCLUST_HOME", raising=False)
    if _paths.find_project_dir() is not None:
        pytest.skip("the temporary folder lies inside a compendium")
    with pytest.raises(_paths.CompendiumNotFoundError, match="DPCLUST_HOME") as err:
        experiments.results_path("01_x", "t")
    assert "compendium" in str(err.value) and str(tmp_path) in str(err.value)
    assert experiments.results_path("01_x", "t", tmp_path) == tmp_path / "t.csv"  # an explicit folder needs none
    monkeypatch.setenv("DPCLUST_HOME", str(tmp_path / "nowhere"))
    with pytest.raises(_paths.CompendiumNotFoundError, match="nowhere"):
        experiments.output_dirs("01_x", "paper")
    # The library alone: data sets fall back to the user's download cache.
    monkeypatch.delenv("DPCLUST_HOME")
    assert "data/raw" not in datasets.default_raw_dir().as_posix()


def test_readme_leads_with_the_two_commands_and_ci_runs_the_test_command():
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```bash\n(.*?)```", readme, re.S).group(1)
    commands = [line.split("#")[0].strip() for line in block.strip().splitlines()]
    assert commands == ["make reproduce", "make test"]
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^make test$", ci, re.M), "CI runs exactly the README's test command"
    assert "DPCLUST_DATA_DIR" in ci and "CI=true" in ci
    makefile = (ROOT / "Makefile").read_text()
    test, full = (re.search(rf"^{t}:.*\n((?:\t.*\n)+)", makefile, re.M).group(1) for t in ("test", "test-full"))
    # make test leaves the slow tests out but under CI=true, where it is make test-full
    assert full == test.replace(" $(SLOW)", ""), "make test-full is make test with the slow tests"
    assert re.search(r'^SLOW = \$\(if \$\(filter true,\$\(CI\)\),,-m "not slow"\)$', makefile, re.M)


def test_makefile_has_every_target():
    makefile = (ROOT / "Makefile").read_text()
    for target in ["reproduce", "test", "test-full", "sweep", "bench", "data", "lab", "book", "lock"]:
        assert re.search(rf"^{target}:", makefile, re.M), target
    test = re.search(r"^test:.*\n((?:\t.*\n)+)", makefile, re.M).group(1)
    assert "ruff check" in test and "ruff format --check" in test and "-n $(JOBS)" in makefile


def test_every_notebook_has_a_parameters_cell_reading_the_profile_from_the_environment():
    notebooks = discover.notebooks()
    assert notebooks
    for path in notebooks:
        nb = json.loads(path.read_text())
        params = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(params) == 1, path.name
        source = "".join(params[0]["source"])
        assert 'profile: Profile = os.environ.get("DPCLUST_PROFILE", "paper")' in source, path.name
        assert "results_dir: Optional[Folder] = None" in source and "figures_dir: Optional[Folder] = None" in source
        injected = [c for c in nb["cells"] if "injected-parameters" in c.get("metadata", {}).get("tags", [])]
        assert not injected, f"{path.name} carries a papermill-injected cell"
        errors = [o for c in nb["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
        assert not errors, f"{path.name} carries an error output"


def test_the_data_table_matches_the_registry():
    readme = (ROOT / "docs" / "data.md").read_text()
    for entry in datasets._registry._REGISTRY.values():
        for f in entry.files:
            assert f"`{f.key}`" in readme, f.key
            if f.sha256:
                assert f.sha256 in readme, f.key


def test_no_data_files_are_committed_and_raw_is_ignored():
    assert "data/raw/" in (ROOT / ".gitignore").read_text()


def test_a_missing_optional_dependency_names_the_extra_to_install():
    from dpclust._optional import require

    assert require("json", "notebooks").dumps([1]) == "[1]"
    with pytest.raises(ImportError, match=r"pip install 'dpclust\[notebooks\]'") as err:
        require("surely_not_a_module_xyz", "notebooks")
    assert "surely_not_a_module_xyz" in str(err.value)


MAX_FUNCTION_LINES = 60  # a function a reader can hold in their head: signature and code, docstring apart
NOTEBOOK_CELL_LINES = 40  # a notebook cell a reader takes in at once


def _code_lines(node):
    """A function's lines without its docstring (numpydoc Examples make docstrings long, not the code)."""
    lines = node.end_lineno - node.lineno + 1
    first = node.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        lines -= first.end_lineno - first.lineno + 1
    return lines


def test_no_function_is_longer_than_sixty_lines():
    long = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({_code_lines(node)} lines)"
        for folder in ("dpclust_lib", "dpclust", "benchmarks", "book")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _code_lines(node) > MAX_FUNCTION_LINES
    ]
    assert not long, "split these functions: " + "; ".join(long)


def test_notebook_code_cells_stay_short():
    long = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            lines = "".join(cell["source"]).count("\n") + 1
            if cell["cell_type"] == "code" and lines > NOTEBOOK_CELL_LINES:
                long.append(f"{path.stem} {cell.get('id')} ({lines} lines)")
    assert not long, "split these cells: " + "; ".join(long)


def test_every_estimator_module_is_listed_once():
    from dpclust_lib import cluster

    folder = LIB / "cluster"
    assert {p.stem for p in folder.glob("*.py") if not p.stem.startswith("_")} == set(cluster.MODULES)
    exported = [name for module in cluster.MODULES for name in getattr(cluster, module).__all__]
    assert cluster.__all__ == exported and len(set(exported)) == len(exported), "a name exported by two modules"


def test_the_algorithms_load_on_first_use_and_export_every_name():
    # a kernel that needs one module (the noise, the mechanisms) does not pay for scikit-learn and scipy.stats
    probe = (
        "import sys, dpclust_lib, dpclust_lib.mechanisms, dpclust_lib.validation\n"
        "assert not {'sklearn', 'scipy.stats', 'pandas'} & set(sys.modules), sorted(sys.modules)\n"
        "from dpclust_lib import *\n"
        "import dpclust_lib as lib\n"
        "assert all(hasattr(lib, name) for name in lib.__all__) and set(lib.__all__) <= set(dir(lib))\n"
        "assert DPKMeans is lib.cluster.DPKMeans and lib.audit.__name__ == 'dpclust_lib.audit'\n"
        "try:\n    lib.NoSuchEstimator\nexcept AttributeError as exc:\n    print(exc)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "module 'dpclust_lib' has no attribute 'NoSuchEstimator'"

"""The project's contract: dependency lists agree, the README's commands are what CI runs, notebooks
follow the conventions, and the README's data table matches the registry."""
import json
import re
from pathlib import Path

import pytest
import yaml

from dpclust_lib import datasets

ROOT = Path(__file__).resolve().parents[1]


def _name(spec):
    return re.split(r"[<>=!~ ]", spec, maxsplit=1)[0].lower().replace("_", "-")


def test_pyproject_and_environment_yml_list_the_same_dependencies():
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pip_deps = {_name(d): d.replace(" ", "") for d in project["dependencies"]}
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    conda_deps = {_name(d): d.replace(" ", "") for d in conda if _name(d) not in {"python", "pip"}}
    assert pip_deps == conda_deps
    python = next(d for d in conda if _name(d) == "python").replace(" ", "")
    assert python == "python" + project["requires-python"]
    assert "conda-forge" in env["channels"]
    pip_section = next(d for d in env["dependencies"] if isinstance(d, dict))["pip"]
    assert pip_section == ["-e ."]


def test_readme_leads_with_the_two_commands_and_ci_runs_the_test_command():
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```bash\n(.*?)```", readme, re.S).group(1)
    commands = [line.split("#")[0].strip() for line in block.strip().splitlines()]
    assert commands == ["make reproduce", "make test"]
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^make test$", ci, re.M)
    assert "DPCLUST_DATA_DIR" in ci and "CI=true" in ci


def test_makefile_has_every_target():
    makefile = (ROOT / "Makefile").read_text()
    for target in ["reproduce", "test", "sweep", "bench", "data", "lab"]:
        assert re.search(rf"^{target}:", makefile, re.M), target
    assert "--nbval-lax" in makefile and "--nbval-current-env" in makefile and "DPCLUST_PROFILE=smoke" in makefile


def test_every_notebook_has_a_parameters_cell_reading_the_profile_from_the_environment():
    notebooks = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert notebooks
    for path in notebooks:
        nb = json.loads(path.read_text())
        params = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(params) == 1, path.name
        source = "".join(params[0]["source"])
        assert 'profile = os.environ.get("DPCLUST_PROFILE", "paper")' in source, path.name
        assert "results_dir = None" in source and "figures_dir = None" in source, path.name
        injected = [c for c in nb["cells"] if "injected-parameters" in c.get("metadata", {}).get("tags", [])]
        assert not injected, f"{path.name} carries a papermill-injected cell"
        errors = [o for c in nb["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
        assert not errors, f"{path.name} carries an error output"


def test_readme_data_table_matches_the_registry():
    readme = (ROOT / "README.md").read_text()
    for entry in datasets._REGISTRY.values():
        for f in entry.files:
            assert f"`{f.key}`" in readme, f.key
            if f.sha256:
                assert f.sha256 in readme, f.key


def test_no_data_files_are_committed_and_raw_is_ignored():
    assert "data/raw/" in (ROOT / ".gitignore").read_text()

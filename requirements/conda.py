"""Write environment.yml (conda, Binder / repo2docker) from requirements.lock: every direct requirement of the
compendium (pyproject.toml and dpclust_lib/pyproject.toml, with the notebooks and test extras) pinned to the exact
version the lock gives it, on the lock's Python, so a conda user gets the stack that produced the committed
outputs. conda resolves what those packages need in turn.

    python requirements/conda.py > environment.yml      # after changing requirements.lock or a pyproject.toml

tests/test_packaging.py checks that environment.yml is what this script writes.
"""

import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
LOCK_PYTHON = "3.11"  # the Python of requirements.lock
# conda-forge names of the pip distributions whose conda package is named otherwise.
CONDA_NAMES = {"build": "python-build"}
OURS = {"dpclust", "dpclust-lib"}

HEADER = """\
# The compendium's environment for conda and Binder (repo2docker), the exact versions that produced the
# committed outputs: every direct requirement of pyproject.toml and dpclust_lib/pyproject.toml (runtime, notebooks
# and test extras) pinned to its version in requirements.lock, on the lock's Python.
#   conda env create -f environment.yml && conda activate dpclust
# Written by `python requirements/conda.py > environment.yml`; do not edit by hand
# (tests/test_packaging.py checks it against requirements.lock).
name: dpclust
channels:
  - conda-forge
dependencies:
"""


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(path):
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            pins[canonical(name)] = version
    return pins


def direct_requirements(root=ROOT):
    """``[(section, pip name)]`` of the direct requirements, extras' own packages (dask[distributed]) included."""
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    lib = tomllib.loads((root / "dpclust_lib" / "pyproject.toml").read_text())["project"]
    sections = [
        ("runtime", lib["dependencies"] + project["dependencies"]),
        ("notebooks extra", project["optional-dependencies"]["notebooks"]),
        ("test extra", project["optional-dependencies"]["test"]),
    ]
    seen, out = set(), []
    for section, specs in sections:
        for spec in specs:
            name, extras = re.match(r"([A-Za-z0-9_.-]+)(?:\[([^\]]*)\])?", spec).groups()
            for n in [name] + (extras.split(",") if extras else []):
                if canonical(n) not in seen | OURS:
                    seen.add(canonical(n))
                    out.append((section, canonical(n)))
    return out


def environment_yml(root=ROOT):
    pins = read_lock(root / "requirements.lock")
    lines = [HEADER.rstrip("\n"), f"  - python={LOCK_PYTHON}"]
    current = None
    for section, name in direct_requirements(root):
        if section != current:
            lines.append(f"  # {section}")
            current = section
        lines.append(f"  - {CONDA_NAMES.get(name, name)}=={pins[name]}")
    lines += ["  - pip", "  - pip:", "      - -e ./dpclust_lib", "      - -e ."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(environment_yml())

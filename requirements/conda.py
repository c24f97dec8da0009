"""Write environment.yml (conda, Binder / repo2docker) from uv.lock: the reader's set, every direct requirement of
the compendium's runtime (pyproject.toml and dpclust_lib/pyproject.toml) and of its notebooks and lab extras, and
nbval (to run the notebooks as tests), pinned to the version uv.lock gives it on Linux with Python 3.11 (the
versions that produced the committed outputs). conda resolves what those packages need in turn.

    python requirements/conda.py > environment.yml      # after uv.lock changes (make lock does both)

tests/test_lock.py checks that environment.yml is what this script writes.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # dpclust's lock reader, from this checkout

from dpclust.environment import canonical_name, read_lock  # noqa: E402

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

LOCK_PYTHON = "3.11"  # the Python of the committed outputs' run
# The platform whose pins conda gets: Linux, CPython 3.11 (conda-forge builds the same versions elsewhere).
MARKERS = {
    "python_version": LOCK_PYTHON,
    "python_full_version": f"{LOCK_PYTHON}.7",
    "sys_platform": "linux",
    "platform_system": "Linux",
    "platform_machine": "x86_64",
    "os_name": "posix",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
}
EXTRAS = ("notebooks", "lab")  # the reader's set: run the notebooks, read them in JupyterLab
# Packages of the test extra a conda user gets too: nbval runs the notebooks as tests (pytest --nbval-lax notebooks/).
TOOLS = ("nbval",)
# conda-forge names of the pip distributions whose conda package is named otherwise.
CONDA_NAMES = {"build": "python-build"}
OURS = {"dpclust", "dpclust-lib"}

HEADER = """\
# The reader's environment for conda and Binder (repo2docker): every direct requirement of pyproject.toml and
# dpclust_lib/pyproject.toml (runtime, notebooks and lab extras) and nbval (pytest --nbval-lax notebooks/), pinned
# to its version in uv.lock for Linux and Python 3.11, the versions that produced the committed outputs.
#   conda env create -f environment.yml && conda activate dpclust
# Written by `python requirements/conda.py > environment.yml` (make lock); do not edit by hand
# (tests/test_lock.py checks it against uv.lock).
name: dpclust
channels:
  - conda-forge
dependencies:
"""


def _name_and_extras(spec):
    from packaging.requirements import Requirement

    req = Requirement(spec)
    if req.marker is not None and not req.marker.evaluate({**MARKERS, "extra": ""}):
        return None, ()
    return canonical_name(req.name), tuple(sorted(req.extras))


def direct_requirements(root=ROOT):
    """``[(section, pip name)]`` of the reader's direct requirements, extras' own packages (dask[distributed]) in."""
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    lib = tomllib.loads((root / "dpclust_lib" / "pyproject.toml").read_text())["project"]
    sections = [("runtime", lib["dependencies"] + project["dependencies"])]
    sections += [(f"{extra} extra", project["optional-dependencies"][extra]) for extra in EXTRAS]
    tools = [s for s in project["optional-dependencies"]["test"] if _name_and_extras(s)[0] in TOOLS]
    sections.append(("the notebooks as tests", tools))
    seen, out = set(), []
    for section, specs in sections:
        for spec in specs:
            name, extras = _name_and_extras(spec)
            for n in [name, *extras] if name not in OURS else []:
                if n is not None and n not in seen:
                    seen.add(n)
                    out.append((section, n))
    return out


def environment_yml(root=ROOT):
    pins = read_lock(root / "uv.lock", MARKERS)
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

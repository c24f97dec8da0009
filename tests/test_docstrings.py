"""The docstrings are documentation that runs: every module's examples pass, and the public API has them.

Every module of ``dpclust_lib`` and of the tooling ``dpclust`` is imported (``pkgutil.walk_packages``;
``dpclust.__main__`` too, which runs the command line only as a script) and its doctests run, so an
example that drifts from the code fails ``make test``. The tooling's examples run in an empty
compendium (``$DPCLUST_HOME``), without ``$DPCLUST_DATA_DIR`` and with downloads off: none may need
the data files, which a wheel user does not have, and none may write into the compendium. Then the
structure: every public estimator (``dpclust_lib.__all__``) has numpydoc ``Parameters`` and
``Examples`` sections, and every public function and helper class (the names in a module's
``__all__``) of every module of both packages has ``Examples``.
"""

import doctest
import importlib
import inspect
import pkgutil
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator

import dpclust
import dpclust_lib

LIB_MODULES = sorted(
    info.name for info in pkgutil.walk_packages(dpclust_lib.__path__, prefix="dpclust_lib.") if not info.ispkg
) + ["dpclust_lib", "dpclust_lib.cluster", "dpclust_lib.audit"]

# The tooling, packages included; importing __main__ has no side effect (the command line runs under
# ``if __name__ == "__main__"`` only).
TOOLING_MODULES = ["dpclust"] + sorted(info.name for info in pkgutil.walk_packages(dpclust.__path__, prefix="dpclust."))

MODULES = LIB_MODULES + TOOLING_MODULES

# Every module's public functions (the names in its __all__) have an Examples section.
FUNCTION_MODULES = MODULES


def test_every_module_is_found():
    assert {"dpclust_lib.validation", "dpclust_lib.cluster.kmeans", "dpclust_lib.cluster.dpqt_kmeans"} <= set(MODULES)
    assert {"dpclust.datasets", "dpclust.reproduce", "dpclust.__main__", "dpclust.exercises._core"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_doctests_pass(name, monkeypatch, tmp_path):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    globs = {"np": np, **vars(module)}
    if name in TOOLING_MODULES:
        globs = {"np": np, "pd": pd, **vars(module)}
        home = _bare_compendium(tmp_path)
        monkeypatch.setenv("DPCLUST_HOME", str(home))  # not this repository, whose data/raw holds data files
        monkeypatch.delenv("DPCLUST_DATA_DIR", raising=False)
        monkeypatch.setenv("DPCLUST_NO_DOWNLOAD", "1")  # an example that would download fails at once
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # examples of leaky options warn by design
        for test in finder.find(module, name, globs=globs):
            runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctest examples of {name} failed (see stdout)"
    if name in TOOLING_MODULES:
        written = sorted(p.relative_to(home).as_posix() for p in home.rglob("*"))
        assert written == ["Makefile", "notebooks"], f"the examples of {name} wrote into the compendium: {written}"


def _bare_compendium(folder):
    """A compendium with nothing in it: no data files, no results; examples must write elsewhere."""
    home = folder / "compendium"
    (home / "notebooks").mkdir(parents=True)
    (home / "Makefile").touch()
    return home


def _sections(obj):
    """The numpydoc section titles of a docstring: lines underlined with dashes."""
    lines = (inspect.getdoc(obj) or "").splitlines()
    return {a.strip() for a, b in zip(lines, lines[1:]) if a.strip() and set(b.strip()) == {"-"}}


ESTIMATORS = sorted(
    name
    for name in dpclust_lib.__all__
    if inspect.isclass(getattr(dpclust_lib, name)) and issubclass(getattr(dpclust_lib, name), BaseEstimator)
)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_estimator_docstring_has_parameters_attributes_and_examples(name):
    missing = {"Parameters", "Attributes", "Examples"} - _sections(getattr(dpclust_lib, name))
    assert not missing, f"{name}'s docstring has no {sorted(missing)} section"


@pytest.mark.parametrize("name", ESTIMATORS)
def test_estimator_declares_every_parameter(name):
    # validate_params checks the table: a parameter missing from it would go unchecked.
    est = getattr(dpclust_lib, name)
    assert set(est._parameter_constraints) == set(est().get_params(deep=False))


def _public_functions(module_name):
    module = importlib.import_module(module_name)
    for name in getattr(module, "__all__", []):
        obj = getattr(module, name)
        # Functions and helper classes; estimators have their own test, exceptions need no example.
        if inspect.isfunction(obj) or (inspect.isclass(obj) and not issubclass(obj, (BaseEstimator, Exception))):
            yield f"{module_name}.{name}", obj


@pytest.mark.parametrize("qualname, obj", [f for m in FUNCTION_MODULES for f in _public_functions(m)])
def test_public_function_has_examples(qualname, obj):
    assert "Examples" in _sections(obj), f"{qualname} has no Examples section"

"""The docstrings are documentation that runs: every module's examples pass, and the public API has them.

Every module of ``dpclust_lib`` is imported (``pkgutil.walk_packages``) and its doctests run, so an
example that drifts from the code fails ``make test``. Then the structure: every public estimator
(``dpclust_lib.__all__``) has numpydoc ``Parameters`` and ``Examples`` sections, and every public
function of the modules that are done has ``Examples``.
"""

import doctest
import importlib
import inspect
import pkgutil
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator

import dpclust_lib

MODULES = sorted(
    info.name for info in pkgutil.walk_packages(dpclust_lib.__path__, prefix="dpclust_lib.") if not info.ispkg
) + ["dpclust_lib", "dpclust_lib.cluster", "dpclust_lib.audit"]

# Estimators whose docstrings are being rewritten with their redesign (BIRCH family, another
# engineer's files for now): exempt from the structural check only; their doctests still run.
ESTIMATORS_PENDING = set()  # every estimator declares its constraints

# Modules whose public functions must all have an Examples section.
FUNCTION_MODULES = [
    "dpclust_lib.accounting",
    "dpclust_lib.frequency",
    "dpclust_lib.metrics",
    "dpclust_lib.cluster.kmeans",
    "dpclust_lib.cluster.idp_kmeans",
    "dpclust_lib.cluster.dpkmeans_pp",
    "dpclust_lib.cluster.eug_kmeans",
    "dpclust_lib.cluster.dpqt_kmeans",
    "dpclust_lib.cluster.birch",
    "dpclust_lib.cluster.dp_birch",
    "dpclust_lib.noise",
    "dpclust_lib.audit.floating",
    "dpclust_lib.cluster.kmodes",
    "dpclust_lib.cluster.ldpk_modes",
    "dpclust_lib.cluster.sampling_kmodes",
]


def test_every_module_is_found():
    assert {"dpclust_lib.validation", "dpclust_lib.cluster.kmeans", "dpclust_lib.cluster.dpqt_kmeans"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_doctests_pass(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    globs = {"np": np, **vars(module)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # examples of leaky options warn by design
        for test in finder.find(module, name, globs=globs):
            runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctest examples of {name} failed (see stdout)"


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


@pytest.mark.parametrize("name", [n for n in ESTIMATORS if n not in ESTIMATORS_PENDING])
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

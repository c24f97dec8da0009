"""What the tests discover instead of listing it: the notebooks, the paper notebooks and the estimators.

A sixth paper's notebook, published numbers and estimators are picked up by every check that uses these
(tests/test_sixth_paper.py proves it on a temporary compendium).
"""

import inspect
from pathlib import Path

from sklearn.base import BaseEstimator, ClusterMixin

from dpclust.reproduce import OVERVIEW_PREFIX, list_notebooks

ROOT = Path(__file__).resolve().parents[1]


def notebooks():
    """Every notebook of the compendium (``notebooks/NN_*.ipynb``), the overview first."""
    return list_notebooks(ROOT / "notebooks")


def paper_notebooks():
    """The notebooks of the papers: every notebook but the overview."""
    return [path for path in notebooks() if not path.name.startswith(OVERVIEW_PREFIX)]


def estimators():
    """Every clustering estimator the algorithms' package exports, in the order of ``dpclust_lib.cluster``."""
    from dpclust_lib import cluster

    return [
        obj
        for obj in (getattr(cluster, name) for name in cluster.__all__)
        if inspect.isclass(obj) and issubclass(obj, BaseEstimator) and issubclass(obj, ClusterMixin)
    ]


def is_private(cls):
    """A private estimator spends a budget: it takes ``epsilon``."""
    return "epsilon" in cls().get_params()


def is_categorical(cls):
    """A categorical estimator clusters category codes (it takes ``domain_sizes``, and no ``bounds``)."""
    params = cls().get_params()
    return "domain_sizes" in params and "bounds" not in params

"""Every data set the papers use, with each paper's preprocessing.

One module per paper (:data:`PAPER_MODULES`, in the order of the notebooks) declares the files it
reads (canonical URL, sha256, license), their readers, and its data sets, each with named *variants*:
one per paper's preprocessing, each documented in its ``description``. The shared registry
(:mod:`dpclust.datasets._registry`) finds, checks and downloads the files, and :func:`load` returns a
:class:`Dataset`. Every name of the paper modules (``CAR``, ``read_car``, ``make_uniform_square``, ...)
is also a name of this package.

Where files are looked for, in this order:

1. every folder in ``$DPCLUST_DATA_DIR`` (``os.pathsep``-separated), as
   ``<folder>/<key>`` or ``<folder>/<file name>``;
2. ``<raw_dir>/<key>``: ``data/raw/`` of the compendium, or outside one the
   user's download cache (:func:`default_raw_dir`);
3. the canonical URL, fetched with pooch into ``<raw_dir>/<key>``.

The sha256 is checked every time a file is used. pooch downloads to a
temporary file that is moved into place only once its checksum is right, so a
failed or interrupted download leaves nothing behind.

Data codes: categorical attributes are coded ``0 .. k_j - 1`` in the order of
``Dataset.categories[j]`` (the papers count from 1).
"""

import importlib

from . import _registry
from ._registry import *  # noqa: F401,F403

# The papers' data modules, in the order of their notebooks: each registers its data sets when imported.
# A new paper's module is added here (tests/test_datasets.py fails while one is left out).
PAPER_MODULES = ("ldpk_modes", "sampling_kmodes", "dpqt_kmeans", "idp_kmeans", "dp_birch", "lsh_coreset")

for _name in PAPER_MODULES:
    _module = importlib.import_module(f".{_name}", __name__)
    globals().update({name: getattr(_module, name) for name in _module.__all__ if name not in ("NOTEBOOK", "PAPER")})


def papers():
    """Each paper's notebook and the paper it reproduces, in the order of the notebooks (from :data:`PAPER_MODULES`).

    The one list of the papers: the overview and the README read it, so a new paper's module adds its row.

    Examples
    --------
    >>> list(papers().items())[0]
    ('01_ldpk_modes', 'Peng et al. 2021 (LDPK-modes)')
    """
    modules = (importlib.import_module(f".{name}", __name__) for name in PAPER_MODULES)
    return {module.NOTEBOOK: module.PAPER for module in modules}


__all__ = [*_registry.__all__, "make_uniform_square", "make_gaussian_mixture_ball", "PAPER_MODULES", "papers"]  # noqa: F405

"""Other libraries' implementations that a notebook runs beside the papers' methods (the ``peers`` extra).

:func:`diffprivlib_kmeans` gives IBM diffprivlib's ``KMeans`` (Holohan et al., 2019), the private baseline of
Google's clustering benchmarks (notebook 06), or None with the reason when it cannot be loaded.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import importlib.util
import sys
import types

__all__ = ["diffprivlib_kmeans"]


def _clear(package):
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
        del sys.modules[name]


def _kmeans_module_alone():
    """diffprivlib's k_means module, loaded without the package's ``__init__`` (which imports every model)."""
    spec = importlib.util.find_spec("diffprivlib")
    root = types.ModuleType("diffprivlib")
    root.__path__, root.__spec__ = list(spec.submodule_search_locations), spec
    models = types.ModuleType("diffprivlib.models")
    models.__path__ = [f"{folder}/models" for folder in root.__path__]
    sys.modules["diffprivlib"], sys.modules["diffprivlib.models"] = root, models
    try:
        return importlib.import_module("diffprivlib.models.k_means")
    except Exception:
        _clear("diffprivlib")
        raise


@functools.lru_cache(maxsize=1)
def diffprivlib_kmeans():
    """(diffprivlib's KMeans class or None, what was loaded and how, or why not).

    diffprivlib 0.6.6's package ``__init__`` imports all its models, and its forest model needs a private name of
    ``sklearn.tree._tree`` that scikit-learn 1.7 removed; its ``KMeans`` imports no such name. Where the package
    cannot be imported whole, its ``models/k_means.py`` is loaded with the package's ``__init__`` files skipped
    (its own code, unchanged); where that fails too, or diffprivlib is absent, the class is None. Loaded once per
    process.

    Examples
    --------
    >>> cls, how = diffprivlib_kmeans()
    >>> cls is None or cls.__name__ == "KMeans", isinstance(how, str)
    (True, True)
    """
    try:
        version = importlib.metadata.version("diffprivlib")
    except importlib.metadata.PackageNotFoundError:
        return None, "diffprivlib is not installed (pip install 'dpclust[peers]')"
    try:
        from diffprivlib.models import KMeans

        return KMeans, f"diffprivlib {version}, imported whole"
    except ImportError as exc:
        whole = f"{type(exc).__name__}: {str(exc).split(' (')[0]}"  # the message without the install path
    _clear("diffprivlib")
    try:
        module = _kmeans_module_alone()
    except Exception as exc:
        return None, f"diffprivlib {version} cannot be imported ({whole}), nor its k_means module alone ({exc})"
    return module.KMeans, (
        f"diffprivlib {version}, its k_means module loaded alone: the package cannot be imported whole here ({whole})"
    )

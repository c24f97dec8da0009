"""Optional dependencies: imported where they are used, with a message naming the extra to install."""

from __future__ import annotations

import importlib

__all__ = ["require"]


def require(module, extra):
    """Import ``module``, or raise ImportError saying which extra of dpclust provides it.

    Parameters
    ----------
    module : str
        The module to import (e.g. ``"seaborn"``).
    extra : str
        The extra of ``dpclust`` that installs it (e.g. ``"notebooks"``).

    Returns
    -------
    module
        The imported module.

    Examples
    --------
    >>> require("json", "notebooks").dumps([1, 2])
    '[1, 2]'
    >>> require("no_such_module", "notebooks")
    Traceback (most recent call last):
    ...
    ImportError: no_such_module is needed here but is not installed; it comes with the 'notebooks' extra: ...
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{module} is needed here but is not installed; it comes with the {extra!r} extra: "
            f"pip install 'dpclust[{extra}]'"
        ) from exc

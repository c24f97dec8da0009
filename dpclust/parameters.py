"""The notebooks' parameters: the types their ``parameters`` cells declare, and the check that enforces them.

A parameters cell declares each parameter once, as an annotated assignment with its meaning beside it::

    seed: NonNegativeInt = 0  # root seed of every random choice in this notebook
    epsilons: Optional[PositiveFloats] = None  # None: the paper's grid; or a list of values

papermill reads these lines (``papermill --help-notebook`` shows each type and meaning), and the cell right after
the parameters cell, which runs after papermill's injected values, calls :func:`check`: a value of the wrong type
is an error naming the parameter, and a number given where a list is expected becomes a one-element list. So
papermill, JupyterLab and ``python -m dpclust`` behave the same; ``python -m dpclust`` reads the same declarations
(:func:`declared`) to refuse a bad value before any notebook runs.

The types are classes (papermill reads an annotation of names, brackets and commas only, so ``Optional[X]`` rather
than ``X | None``).
"""

from __future__ import annotations

import ast
import math
import numbers
import re
import typing
from pathlib import Path
from typing import Optional

__all__ = [
    "Optional",
    "Profile",
    "Schedule",
    "NonNegativeInt",
    "PositiveInt",
    "NonZeroInt",
    "AtLeastTwoInt",
    "PositiveFloat",
    "OpenUnitFloat",
    "PositiveFloats",
    "Folder",
    "check",
    "declared",
    "convert",
]


class Kind:
    """A parameter's type: ``means`` is what a value must be, :meth:`convert` returns the value the notebook uses
    (or raises ValueError saying why not)."""

    means = ""

    @classmethod
    def convert(cls, value):
        raise NotImplementedError


def _choice(values):
    class Choice(Kind):
        means = " or ".join(f'"{v}"' for v in values)

        @classmethod
        def convert(cls, value):
            if value not in values:
                raise ValueError("not one of them")
            return value

    return Choice


def _number(integral, holds, bound):
    class Number(Kind):
        means = f"{'an integer' if integral else 'a number'} {bound}"

        @classmethod
        def convert(cls, value):
            ok = isinstance(value, numbers.Integral if integral else numbers.Real) and not isinstance(value, bool)
            if not ok or not math.isfinite(value):
                raise ValueError(f"not {'an integer' if integral else 'a finite number'}")
            if not holds(value):
                raise ValueError(f"not {bound}")
            return int(value) if integral else float(value)

    return Number


class Profile(_choice(("paper", "smoke"))):
    """``paper``: the paper's experiments at full size; ``smoke``: the same cells on tiny sizes, for tests.

    Examples
    --------
    >>> Profile.convert("smoke"), Profile.means
    ('smoke', '"paper" or "smoke"')
    """


class Schedule(_choice(("halving", "fixed"))):
    """A budget schedule over iterations: ε/2, ε/4, ... (halving) or ε/N each (fixed).

    Examples
    --------
    >>> Schedule.convert("fixed")
    'fixed'
    """


class NonNegativeInt(_number(True, lambda v: v >= 0, "≥ 0")):
    """An integer ≥ 0 (a seed).

    Examples
    --------
    >>> NonNegativeInt.convert(0)
    0
    """


class PositiveInt(_number(True, lambda v: v >= 1, "≥ 1")):
    """An integer ≥ 1 (a number of runs or iterations).

    Examples
    --------
    >>> PositiveInt.convert(10)
    10
    """


class AtLeastTwoInt(_number(True, lambda v: v >= 2, "≥ 2")):
    """An integer ≥ 2 (a number of clusters or categories).

    Examples
    --------
    >>> AtLeastTwoInt.means
    'an integer ≥ 2'
    """


class NonZeroInt(_number(True, lambda v: v != 0, "≠ 0")):
    """An integer other than 0 (a number of parallel jobs: -1 for every core).

    Examples
    --------
    >>> NonZeroInt.convert(-1)
    -1
    """


class PositiveFloat(_number(False, lambda v: v > 0, "> 0")):
    """A finite number > 0.

    Examples
    --------
    >>> PositiveFloat.convert(2)
    2.0
    """


class OpenUnitFloat(_number(False, lambda v: 0 < v < 1, "in (0, 1)")):
    """A number strictly between 0 and 1 (a share of a budget).

    Examples
    --------
    >>> OpenUnitFloat.convert(0.3)
    0.3
    """


class PositiveFloats(Kind):
    """A list of numbers > 0. One number is a list of one (``papermill -p epsilons 0.5``); a list written as text
    (``-p epsilons [0.5,2]``, which papermill passes as a string) is read as a list.

    Examples
    --------
    >>> PositiveFloats.convert(1), PositiveFloats.convert("[0.5,2]")
    ([1.0], [0.5, 2.0])
    """

    means = "a list of numbers > 0 (or one number)"

    @classmethod
    def convert(cls, value):
        if isinstance(value, str):
            try:
                value = ast.literal_eval(value.strip())
            except (ValueError, SyntaxError):
                raise ValueError("not a list of numbers") from None
        items = list(value) if isinstance(value, (list, tuple)) else [value]
        if not items:
            raise ValueError("an empty list")
        return [PositiveFloat.convert(v) for v in items]


class Folder(Kind):
    """A folder, as a path (a string or a :class:`~pathlib.Path`); the notebook makes it if it is not there.

    Examples
    --------
    >>> Folder.convert("data/results/sweeps/x"), Folder.means
    ('data/results/sweeps/x', 'a folder (a path)')
    """

    means = "a folder (a path)"

    @classmethod
    def convert(cls, value):
        if not isinstance(value, (str, Path)) or not str(value).strip():
            raise ValueError("not a path")
        return str(value)


_KINDS = {name: globals()[name] for name in __all__ if isinstance(globals().get(name), type)}
_ANNOTATION = re.compile(r"(?:Optional\[\s*(\w+)\s*\]|(\w+))")


def _kind_of(annotation):
    """(kind, None allowed) of an annotation: a kind, ``Optional[kind]``, or its text as papermill reads it."""
    if isinstance(annotation, str):
        match = _ANNOTATION.fullmatch(annotation.strip())
        name = match and (match.group(1) or match.group(2))
        if name not in _KINDS:
            return None, False
        return _KINDS[name], bool(match.group(1))
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is typing.Union and type(None) in args:
        (annotation,) = [a for a in args if a is not type(None)]
        return annotation, True
    return annotation, False


def convert(name, value, annotation):
    """The value a notebook uses for parameter ``name`` declared with ``annotation``; ValueError naming it if the
    value is not of that type.

    Examples
    --------
    >>> convert("epsilons", 0.5, Optional[PositiveFloats])
    [0.5]
    >>> convert("epsilons", "[0.5, 2]", "Optional[PositiveFloats]")
    [0.5, 2.0]
    >>> convert("max_iter", "abc", PositiveInt)
    Traceback (most recent call last):
    ...
    ValueError: notebook parameter max_iter='abc' must be an integer ≥ 1 (PositiveInt): not an integer
    """
    kind, optional = _kind_of(annotation)
    if not (isinstance(kind, type) and issubclass(kind, Kind)):
        return value
    if value is None:
        if optional:
            return None
        problem = "None is not allowed"
    else:
        try:
            return kind.convert(value)
        except ValueError as exc:
            problem = str(exc)
    raise ValueError(
        f"notebook parameter {name}={value!r} must be {kind.means}{' or None' if optional else ''} "
        f"({kind.__name__}): {problem}"
    )


def check(namespace):
    """Check and convert, in place, the parameters a notebook's parameters cell declares (``check(globals())``).

    Called in the cell after the parameters cell: the values are the cell's defaults, or those papermill (or
    ``python -m dpclust``) injected after it.

    Examples
    --------
    >>> namespace = {"__annotations__": {"epsilons": "Optional[PositiveFloats]"}, "epsilons": 0.5}
    >>> check(namespace)
    >>> namespace["epsilons"]
    [0.5]
    """
    for name, annotation in namespace.get("__annotations__", {}).items():
        if name in namespace:
            namespace[name] = convert(name, namespace[name], annotation)


def declared(notebook):
    """``{name: annotation text}`` of a notebook's parameters cell, as papermill reads it ("None": no type).

    Examples
    --------
    >>> from dpclust import _paths
    >>> declared(_paths.notebook_path("04_idp_kmeans"))["epsilons"]  # doctest: +SKIP
    'Optional[PositiveFloats]'
    """
    import papermill as pm

    return {name: info["inferred_type_name"] for name, info in pm.inspect_notebook(str(Path(notebook))).items()}

"""The registry shared by the papers' data modules: files, variants, and where files are found.

A paper's module (``dpclust.datasets.<paper>``) declares its files (:class:`DataFile`: canonical URL,
sha256, license), reads them, and registers each data set with :func:`register`: its files and its
named *variants*, one per paper's preprocessing, each documented in its ``description``. This module
knows where files come from, checks them and downloads them; :func:`load` builds a :class:`Dataset`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import TqdmWarning

with warnings.catch_warnings():
    # pooch imports tqdm.auto, which in a Jupyter kernel without ipywidgets warns that it falls back to
    # text progress bars; pooch never shows one here (progressbar=False), so the warning says nothing.
    warnings.simplefilter("ignore", TqdmWarning)
    import pooch

from .. import _paths
from ._parsers import DataError, codes

__all__ = [
    "DataFile",
    "Dataset",
    "DataError",
    "DataNotFoundError",
    "ChecksumError",
    "DownloadError",
    "register",
    "add_variant",
    "default_raw_dir",
    "data_dirs",
    "entries",
    "variants",
    "locate",
    "fetch",
    "fetch_missing",
    "load",
    "available",
    "ENV_VAR",
    "NO_DOWNLOAD_ENV",
    "CACHE_NAME",
    "UNIT_BOX_NOTE",
    "ROUNDED_BOX_NOTE",
]

ENV_VAR = "DPCLUST_DATA_DIR"
CACHE_NAME = "dpclust"
UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"  # the UCI repository's files, by their old URLs
UCI_LICENSE = "CC BY 4.0"


class DataNotFoundError(DataError, FileNotFoundError):
    """A file is in none of the data folders and could not be downloaded."""


class ChecksumError(DataError, ValueError):
    """A file's sha256 is not the registered one."""


class DownloadError(DataError, OSError):
    """A download failed (HTTP error, network error, interrupted transfer)."""


# The errors are part of the public API as dpclust.datasets.<Error>, and their tracebacks say so.
for _error in (DataNotFoundError, ChecksumError, DownloadError):
    _error.__module__ = "dpclust.datasets"


@dataclass(frozen=True)
class DataFile:
    """One file of a data set.

    ``key`` is its path inside a data folder (e.g. ``"car_evaluation/car.data"``).
    ``sha256`` is None only for files that vary by user (the IPUMS extract) or
    whose upstream checksum is not known (the full Gowalla file); such a file
    is loaded only when the caller says so (``allow_unverified=True``).

    Attributes
    ----------
    key : str
        The file's path inside a data folder.
    url : str or None
        Its canonical URL; None when it cannot be downloaded.
    sha256 : str or None
        Its registered checksum (hex).
    license : str
        The license it is published under.
    note : str
        What a reader should know to get or check it.

    Examples
    --------
    >>> points = DataFile("toy/points.txt", "https://example.org/points.txt", None, "CC0")
    >>> points.key, points.filename, points.license
    ('toy/points.txt', 'points.txt', 'CC0')
    """

    key: str
    url: str | None
    sha256: str | None
    license: str
    note: str = ""

    @property
    def filename(self):
        return Path(self.key).name


@dataclass
class Dataset:
    """A data set after one paper's preprocessing.

    Attributes
    ----------
    name, variant : registry name and variant name
    X : ndarray (n, d); int64 category codes for categorical data, float otherwise
    y : ndarray (n,) of labels, or None when the data set has none
    feature_names : list of d names
    label_name : name of the label column (or None)
    domain_sizes : tuple of d domain sizes for categorical data, else None
    categories : for categorical data, the category labels of each attribute
    description : what the variant does to the file, in words
    provenance : list of dicts (file, path, url, sha256, verified)
    bounds : for numeric data, the declared data domain (lower, upper) that DP
        estimators take as public, or None; ``bounds_note`` says where it comes from

    Examples
    --------
    >>> toy = Dataset("toy", "raw", np.array([[0, 1], [1, 1], [0, 0]]), np.array(["a", "b", "a"]),
    ...               ["colour", "size"], "class", "three records", [],
    ...               domain_sizes=(2, 2), categories=[["red", "blue"], ["small", "big"]])
    >>> toy
    Dataset('toy', variant='raw', n=3, d=2, domain_sizes=(2, 2))
    >>> toy.frame().values.tolist()
    [['red', 'big', 'a'], ['blue', 'big', 'b'], ['red', 'small', 'a']]
    >>> toy.summary()
    {'dataset': 'toy', 'variant': 'raw', 'records': 3, 'attributes': 2, 'domain sizes': '{2,2}', 'classes': 2}
    """

    name: str
    variant: str
    X: np.ndarray
    y: np.ndarray | None
    feature_names: list
    label_name: str | None
    description: str
    provenance: list
    domain_sizes: tuple | None = None
    categories: list | None = None
    bounds: tuple | None = None
    bounds_note: str = ""

    @property
    def n_samples(self):
        return int(self.X.shape[0])

    @property
    def n_features(self):
        return int(self.X.shape[1])

    @property
    def is_categorical(self):
        return self.domain_sizes is not None

    def frame(self):
        """X (decoded to category labels for categorical data) and y as a DataFrame."""
        if self.is_categorical:
            cols = {
                f: np.asarray(cats, dtype=object)[self.X[:, j]]
                for j, (f, cats) in enumerate(zip(self.feature_names, self.categories))
            }
        else:
            cols = {f: self.X[:, j] for j, f in enumerate(self.feature_names)}
        df = pd.DataFrame(cols)
        if self.y is not None:
            df[self.label_name or "label"] = self.y
        return df

    def summary(self):
        """One row for a data table: name, variant, records, attributes, domains, classes."""
        return {
            "dataset": self.name,
            "variant": self.variant,
            "records": self.n_samples,
            "attributes": self.n_features,
            "domain sizes": "{" + ",".join(str(k) for k in self.domain_sizes) + "}"
            if self.is_categorical
            else "numeric",
            "classes": int(np.unique(self.y).size) if self.y is not None else None,
        }

    def __repr__(self):
        kind = f"domain_sizes={self.domain_sizes}" if self.is_categorical else "numeric"
        return f"Dataset({self.name!r}, variant={self.variant!r}, n={self.n_samples}, d={self.n_features}, {kind})"


@dataclass(frozen=True)
class Variant:
    """One paper's preprocessing of a data set: ``build(raw_dir, **options) -> Dataset`` and what it does."""

    build: Callable
    description: str


@dataclass(frozen=True)
class Entry:
    """A registered data set: its files, the papers that use it, and its variants (:func:`register`)."""

    name: str
    title: str
    files: tuple
    papers: tuple
    citation: str
    variants: dict
    default_variant: str = "raw"


_REGISTRY = {}


def register(name, title, files, papers, citation, variants, default_variant="raw"):
    """Register a data set (a paper's data module calls this once per data set, when it is imported).

    Parameters
    ----------
    name : str
        The registry name that :func:`load` takes; a name registered twice is an error.
    title : str
        What the data set is called where it is published.
    files : tuple of DataFile
        The files it is read from (empty for a generated data set).
    papers : tuple of str
        The papers (and notebooks) that use it.
    citation : str
        How to cite the data.
    variants : dict
        Variant name -> ``(build, description)``: ``build(raw_dir, **options)`` returns the
        :class:`Dataset` of that preprocessing, and the description says what it does.
    default_variant : str, default "raw"
        The variant :func:`load` builds when none is named.

    Returns
    -------
    Entry

    Examples
    --------
    >>> entry = register("toy_points", "Toy points", (), ("a test",), "none", {"raw": (lambda raw_dir: None, "none")})
    >>> "toy_points" in entries(), variants("toy_points")
    (True, {'raw': 'none'})
    >>> register("toy_points", "Toy points", (), (), "none", {"raw": (lambda raw_dir: None, "none")})
    Traceback (most recent call last):
    ...
    ValueError: data set name='toy_points' is registered already
    >>> _ = _REGISTRY.pop("toy_points")
    """
    if name in _REGISTRY:
        raise ValueError(f"data set name={name!r} is registered already")
    if default_variant not in variants:
        raise ValueError(f"default_variant={default_variant!r} is none of the variants {list(variants)}")
    built = {key: Variant(*value) for key, value in variants.items()}
    _REGISTRY[name] = Entry(name, title, tuple(files), tuple(papers), citation, built, default_variant)
    return _REGISTRY[name]


def add_variant(name, variant, build, description, paper):
    """Add a paper's preprocessing to a data set another paper's module registered (its files and readers reused).

    Parameters
    ----------
    name : str
        A registered data set (:func:`entries`).
    variant : str
        The new variant's name; a name the data set has already is an error.
    build : callable
        ``build(raw_dir, **options) -> Dataset``.
    description : str
        What the variant does to the file.
    paper : str
        The paper that uses it, added to the data set's papers.

    Returns
    -------
    Entry

    Examples
    --------
    >>> _ = register("toy_points", "Toy points", (), ("a test",), "none", {"raw": (lambda raw_dir: None, "none")})
    >>> entry = add_variant("toy_points", "centred", lambda raw_dir: None, "centred", "another test")
    >>> variants("toy_points"), entry.papers
    ({'raw': 'none', 'centred': 'centred'}, ('a test', 'another test'))
    >>> add_variant("toy_points", "raw", lambda raw_dir: None, "again", "another test")
    Traceback (most recent call last):
    ...
    ValueError: data set 'toy_points' has a variant='raw' already
    >>> _ = _REGISTRY.pop("toy_points")
    """
    entry = _entry(name)
    if variant in entry.variants:
        raise ValueError(f"data set {name!r} has a variant={variant!r} already")
    papers = entry.papers if paper in entry.papers else (*entry.papers, paper)
    _REGISTRY[name] = replace(entry, variants={**entry.variants, variant: Variant(build, description)}, papers=papers)
    return _REGISTRY[name]


# ---------------------------------------------------------------------------
# Finding, checking and downloading files
# ---------------------------------------------------------------------------


def default_raw_dir():
    """Where files are looked for after ``$DPCLUST_DATA_DIR``, and downloaded to.

    ``data/raw`` of the compendium when there is one (see :mod:`dpclust._paths`),
    else the user's download cache (``pooch.os_cache("dpclust")``, e.g. ``~/.cache/dpclust``),
    so the library works outside any compendium.

    Returns
    -------
    Path

    Examples
    --------
    >>> import os, pathlib, tempfile
    >>> from unittest import mock
    >>> with tempfile.TemporaryDirectory() as home, mock.patch.dict(os.environ, {"DPCLUST_HOME": home}):
    ...     print(default_raw_dir().name)  # not a compendium (no notebooks/): the user's cache
    ...     os.mkdir(os.path.join(home, "notebooks"))
    ...     pathlib.Path(home, "Makefile").touch()
    ...     print(default_raw_dir().relative_to(pathlib.Path(home).resolve()).as_posix())
    dpclust
    data/raw
    """
    project = _paths.find_project_dir()
    if project is not None:
        return project / "data" / "raw"
    return Path(pooch.os_cache(CACHE_NAME))


def data_dirs():
    """The folders listed in $DPCLUST_DATA_DIR, in order (may be empty).

    Returns
    -------
    list of Path

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"DPCLUST_DATA_DIR": os.pathsep.join(["/srv/mirror", "/srv/uci"])}):
    ...     [folder.as_posix() for folder in data_dirs()]
    ['/srv/mirror', '/srv/uci']
    """
    value = os.environ.get(ENV_VAR, "")
    return [Path(p).expanduser() for p in value.split(os.pathsep) if p.strip()]


def _sha256(path):
    return pooch.file_hash(str(path), alg="sha256")


def _check_file(path, datafile):
    digest = _sha256(path)
    if datafile.sha256 is not None and digest != datafile.sha256:
        raise ChecksumError(
            f"{path} has sha256 {digest}, but {datafile.key} is registered with {datafile.sha256}. "
            f"The file is corrupt, truncated or a different version; delete it and fetch it again from {datafile.url}."
            + (f" Note: {datafile.note}" if datafile.note else "")
        )
    return digest


def _candidates(datafile, raw_dir):
    for folder in data_dirs():
        yield folder / datafile.key
        yield folder / datafile.filename
    yield Path(raw_dir) / datafile.key


@contextlib.contextmanager
def _quiet_pooch():
    """pooch logs every download at INFO level; the caller reports what happened instead."""
    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


def _fetcher(datafiles, raw_dir):
    """The pooch registry of ``datafiles`` (key -> URL and sha256), stored under ``raw_dir``."""
    return pooch.create(
        path=raw_dir,
        base_url="",
        registry={f.key: None if f.sha256 is None else f"sha256:{f.sha256}" for f in datafiles},
        urls={f.key: f.url for f in datafiles},
        retry_if_failed=0,
        allow_updates=False,
    )


def _download(datafile, raw_dir, timeout=60):
    """Fetch ``datafile`` from its URL into ``<raw_dir>/<key>`` through pooch; return the path.

    pooch streams to a temporary file in the target folder, checks the sha256 and only
    then moves it into place. Failures become :class:`DownloadError` (HTTP status,
    network error, interrupted transfer) or :class:`ChecksumError`, naming the URL.
    """
    url = datafile.url
    downloader = pooch.HTTPDownloader(progressbar=False, timeout=timeout)
    try:
        with _quiet_pooch():
            return Path(_fetcher([datafile], raw_dir).fetch(datafile.key, downloader=downloader))
    except OSError as exc:  # requests' errors are OSErrors; an HTTP error carries the response
        response = getattr(exc, "response", None)
        if response is not None and response.status_code >= 400:
            raise DownloadError(f"HTTP {response.status_code} ({response.reason}) for {url}") from exc
        reason = "interrupted" if "IncompleteRead" in str(exc) or "ChunkedEncoding" in type(exc).__name__ else ""
        raise DownloadError(
            f"could not download {url} ({reason or 'network error'}): {type(exc).__name__}: {exc}"
        ) from exc
    except ValueError as exc:  # pooch: the sha256 of the download is not the registered one
        raise ChecksumError(
            f"the file downloaded from {url} does not have the registered sha256 {datafile.sha256}; "
            f"it was not kept ({exc})"
        ) from exc


NO_DOWNLOAD_ENV = "DPCLUST_NO_DOWNLOAD"
"""Set to ``1``, no file is downloaded: what the data folders hold is all there is."""


def locate(datafile, raw_dir=None, download=True, allow_unverified=False):
    """Path of a checked copy of ``datafile`` (see the module docstring for the order).

    Raises :class:`ChecksumError` when a copy with the wrong sha256 is found,
    :class:`DataNotFoundError` when no copy is found and none can be downloaded.

    Parameters
    ----------
    datafile : DataFile
    raw_dir : path-like, optional
        The folder searched after ``$DPCLUST_DATA_DIR`` and downloaded to (default :func:`default_raw_dir`).
    download : bool, default True
        Download a missing file (never when ``$DPCLUST_NO_DOWNLOAD`` is ``1``).
    allow_unverified : bool, default False
        Accept a file that has no registered checksum.

    Returns
    -------
    Path

    Examples
    --------
    >>> import hashlib, pathlib, tempfile
    >>> text = b"1 2\\n3 4\\n"
    >>> points = DataFile("toy/points.txt", None, hashlib.sha256(text).hexdigest(), "CC0")
    >>> tmp = tempfile.TemporaryDirectory()
    >>> raw = pathlib.Path(tmp.name)
    >>> locate(points, raw)
    Traceback (most recent call last):
    ...
    dpclust.datasets.DataNotFoundError: points.txt was not found. Looked in ... Put it at .../toy/points.txt or ...
    >>> (raw / "toy").mkdir()
    >>> _ = (raw / "toy" / "points.txt").write_bytes(text)
    >>> locate(points, raw).relative_to(raw).as_posix()
    'toy/points.txt'
    >>> _ = (raw / "toy" / "points.txt").write_bytes(b"1 2\\n3 5\\n")
    >>> locate(points, raw)
    Traceback (most recent call last):
    ...
    dpclust.datasets.ChecksumError: ...points.txt has sha256 ..., but toy/points.txt is registered with ...
    >>> tmp.cleanup()
    """
    raw_dir = Path(default_raw_dir() if raw_dir is None else raw_dir)
    download = download and os.environ.get(NO_DOWNLOAD_ENV, "") != "1"
    for path in _candidates(datafile, raw_dir):
        if path.is_file():
            _check_file(path, datafile)
            if datafile.sha256 is None and not allow_unverified:
                raise ChecksumError(
                    f"{path} was found, but no checksum is registered for {datafile.key}, so it cannot be "
                    f"verified. {datafile.note} Pass allow_unverified=True to use it anyway."
                )
            return path
    where = ", ".join(str(d) for d in data_dirs()) or f"(${ENV_VAR} is not set)"
    if datafile.url is None or not download:
        how = f" It is not downloadable: {datafile.note}" if datafile.url is None else ""
        raise DataNotFoundError(
            f"{datafile.filename} was not found. Looked in {where} and {raw_dir}. "
            f"Put it at {raw_dir / datafile.key} or in a folder listed in ${ENV_VAR}.{how}"
        )
    target = raw_dir / datafile.key
    try:
        _download(datafile, raw_dir)
    except DownloadError as exc:
        raise DataNotFoundError(
            f"{datafile.filename} is not present and the download failed ({exc}). Looked in {where} and {raw_dir}. "
            f"Download {datafile.url} by hand and put it at {target} (or in a folder listed in ${ENV_VAR})."
        ) from exc
    if datafile.sha256 is None and not allow_unverified:
        raise ChecksumError(
            f"{target} was downloaded, but no checksum is registered for {datafile.key}. {datafile.note} "
            "Pass allow_unverified=True to use it anyway."
        )
    return target


def fetch(datafile, raw_dir=None):
    """Make sure ``datafile`` is present (download if needed); return its path.

    A file without a registered checksum is accepted (:func:`locate` with ``allow_unverified=True``).

    Parameters
    ----------
    datafile : DataFile
    raw_dir : path-like, optional
        The folder downloaded to (default :func:`default_raw_dir`).

    Returns
    -------
    Path

    Examples
    --------
    >>> import pathlib, tempfile
    >>> extract = DataFile("toy/extract.csv", None, None, "the user's own", "Request an extract and save it there.")
    >>> tmp = tempfile.TemporaryDirectory()
    >>> (pathlib.Path(tmp.name) / "toy").mkdir()
    >>> _ = pathlib.Path(tmp.name, "toy", "extract.csv").write_text("a,b\\n1,2\\n")
    >>> fetch(extract, tmp.name).name  # present: nothing to download
    'extract.csv'
    >>> locate(extract, tmp.name)  # no checksum to check it against: refused unless allowed
    Traceback (most recent call last):
    ...
    dpclust.datasets.ChecksumError: ...extract.csv was found, but no checksum is registered for toy/extract.csv, ...
    >>> tmp.cleanup()
    """
    return locate(datafile, raw_dir=raw_dir, download=True, allow_unverified=True)


# ---------------------------------------------------------------------------
# What the paper modules' variants share
# ---------------------------------------------------------------------------


def provenance(datafile, path):
    """Where a data set's file came from: its key, the path read, the URL, its sha256 and whether it was verified."""
    return {
        "file": datafile.key,
        "path": str(path),
        "url": datafile.url,
        "sha256": _sha256(path),
        "verified": datafile.sha256 is not None,
    }


UNIT_BOX_NOTE = (
    "[0, 1]^d after min-max scaling; the scaling itself uses each column's minimum and maximum, "
    "which the papers treat as public"
)
ROUNDED_BOX_NOTE = (
    "a box around the data with rounded edges, chosen by looking at it: no public domain is "
    "published for this data set, so this declaration reveals the extremes at the rounding's precision"
)


def read_registered(datafile, reader, raw_dir, **options):
    """Locate ``datafile`` and read it with ``reader``: (datafile, path, frame)."""
    path = locate(datafile, raw_dir, **options)
    return datafile, path, reader(path)


def categorical_dataset(name, variant, df, columns, categories, label, description, prov, label_name):
    """A categorical :class:`Dataset`: each of ``columns`` coded by its position in ``categories[column]``."""
    X = np.column_stack([codes(df[c].tolist(), categories[c], c) for c in columns])
    return Dataset(
        name,
        variant,
        X,
        label,
        list(columns),
        label_name,
        description,
        prov,
        domain_sizes=tuple(len(categories[c]) for c in columns),
        categories=[list(categories[c]) for c in columns],
    )


def scaled(build):
    """The min-max scaled variant of a numeric variant's ``build`` (which takes ``scale``)."""
    return lambda raw_dir, **kw: build(raw_dir, scale=True, **kw)


# ---------------------------------------------------------------------------
# The registry's contents
# ---------------------------------------------------------------------------


def entries():
    """Names of every registered data set.

    Returns
    -------
    list of str

    Examples
    --------
    >>> entries()  # doctest: +NORMALIZE_WHITESPACE
    ['auto_mpg', 'car', 'nursery', 'covertype', 'adult', 'ipums_usa', 'unbalance', 'birch3', 'gowalla_sample10k',
     'gowalla', 'pytest_uniform', 'iris', 'wine', 'letter', 'abalone', 'magic', 'lsh_synthetic']
    """
    return list(_REGISTRY)


def _entry(name):
    if not isinstance(name, str) or name not in _REGISTRY:
        raise ValueError(f"unknown data set name={name!r}; known: {', '.join(_REGISTRY)}")
    return _REGISTRY[name]


def variants(name):
    """{variant: description} of a data set.

    Parameters
    ----------
    name : str
        A registry name (:func:`entries`).

    Returns
    -------
    dict

    Examples
    --------
    >>> variants("car")
    {'raw': 'original domains {4,4,4,3,3,3}', 'ldpk_modes': 'Peng et al. D2, six binary attributes'}
    >>> variants("cars")
    Traceback (most recent call last):
    ...
    ValueError: unknown data set name='cars'; known: auto_mpg, car, nursery, covertype, adult, ...
    """
    return {k: v.description for k, v in _entry(name).variants.items()}


def load(name, variant=None, raw_dir=None, **options):
    """Load a registered data set in one paper's preprocessing.

    Parameters
    ----------
    name : str, a registry name (see :func:`entries` / :func:`available`)
    variant : str, the preprocessing (see :func:`variants`); default: the entry's main one
    raw_dir : folder for downloads (default ``data/raw`` of the project)
    **options : passed to the variant (e.g. ``n_samples`` for ``pytest_uniform``)

    Returns
    -------
    Dataset

    Examples
    --------
    The synthetic set needs no file:

    >>> data = load("pytest_uniform", n_samples=4, random_state=1)
    >>> data, data.bounds
    (Dataset('pytest_uniform', variant='uniform', n=4, d=2, numeric), ((-2.0, -2.0), (2.0, 2.0)))
    >>> load("car", variant="binary")
    Traceback (most recent call last):
    ...
    ValueError: unknown variant='binary' for data set 'car'; known: raw, ldpk_modes
    """
    entry = _entry(name)
    variant = entry.default_variant if variant is None else variant
    if variant not in entry.variants:
        raise ValueError(f"unknown variant={variant!r} for data set {name!r}; known: {', '.join(entry.variants)}")
    return entry.variants[variant].build(Path(default_raw_dir() if raw_dir is None else raw_dir), **options)


def available(raw_dir=None):
    """A table of every registered file: present or missing, where, verified.

    Parameters
    ----------
    raw_dir : path-like, optional
        The folder searched after ``$DPCLUST_DATA_DIR`` (default :func:`default_raw_dir`).

    Returns
    -------
    DataFrame
        One row per file (and one per generated data set): dataset, title, file, status
        (present, present (unverified), checksum mismatch, missing, generated), present,
        location, url, sha256, license, papers.

    Examples
    --------
    >>> import os, pathlib, tempfile
    >>> from unittest import mock
    >>> with tempfile.TemporaryDirectory() as raw, mock.patch.dict(os.environ, {"DPCLUST_DATA_DIR": ""}):
    ...     (pathlib.Path(raw) / "car_evaluation").mkdir()
    ...     _ = pathlib.Path(raw, "car_evaluation", "car.data").write_text("not the car data\\n")
    ...     table = available(raw)
    >>> table["status"].value_counts().to_dict()
    {'missing': 15, 'generated': 2, 'checksum mismatch': 1}
    >>> table.loc[table["dataset"] == "car", ["file", "status", "license"]].values.tolist()
    [['car_evaluation/car.data', 'checksum mismatch', 'CC BY 4.0']]
    """
    raw_dir = Path(default_raw_dir() if raw_dir is None else raw_dir)
    rows = []
    for entry in _REGISTRY.values():
        for f in entry.files:
            status, where = "missing", None
            for path in _candidates(f, raw_dir):
                if path.is_file():
                    where = str(path)
                    digest = _sha256(path)
                    status = "present" if f.sha256 is None or digest == f.sha256 else "checksum mismatch"
                    if f.sha256 is None:
                        status = "present (unverified)"
                    break
            rows.append(
                {
                    "dataset": entry.name,
                    "title": entry.title,
                    "file": f.key,
                    "status": status,
                    "present": where is not None and status.startswith("present"),
                    "location": where,
                    "url": f.url,
                    "sha256": f.sha256,
                    "license": f.license,
                    "papers": "; ".join(entry.papers),
                }
            )
        if not entry.files:
            rows.append(
                {
                    "dataset": entry.name,
                    "title": entry.title,
                    "file": None,
                    "status": "generated",
                    "present": True,
                    "location": None,
                    "url": None,
                    "sha256": None,
                    "license": "n/a",
                    "papers": "; ".join(entry.papers),
                }
            )
    return pd.DataFrame(rows)


def fetch_missing(raw_dir=None):
    """Download every downloadable file that is missing; return a status table.

    Files that cannot be downloaded (the IPUMS extract) are reported, not fetched.

    Parameters
    ----------
    raw_dir : path-like, optional
        The folder downloaded to (default :func:`default_raw_dir`).

    Returns
    -------
    DataFrame
        :func:`available`'s table, the status of each missing file replaced by ``downloaded``,
        ``download failed: <why>`` or ``missing (not downloadable)``.

    Examples
    --------
    Offline (``$DPCLUST_NO_DOWNLOAD=1``) every missing file fails, and says why:

    >>> import os, tempfile
    >>> from unittest import mock
    >>> offline = {"DPCLUST_DATA_DIR": "", "DPCLUST_NO_DOWNLOAD": "1"}
    >>> with tempfile.TemporaryDirectory() as raw, mock.patch.dict(os.environ, offline):
    ...     table = fetch_missing(raw).set_index("file")
    >>> table.loc["ipums_usa/ipums_usa.csv", "status"]
    'missing (not downloadable)'
    >>> table.loc["car_evaluation/car.data", "status"]
    'download failed: car.data was not found. Looked in ($DPCLUST_DATA_DIR is not set) and ...'
    """
    raw_dir = Path(default_raw_dir() if raw_dir is None else raw_dir)
    table = available(raw_dir)
    files = {f.key: f for e in _REGISTRY.values() for f in e.files}
    for i, row in table.iterrows():
        if row["file"] is None or row["status"] != "missing":
            continue
        datafile = files[row["file"]]
        if datafile.url is None:
            table.loc[i, "status"] = "missing (not downloadable)"
            continue
        try:
            path = fetch(datafile, raw_dir)
            table.loc[i, ["status", "present", "location"]] = ["downloaded", True, str(path)]
        except DataError as exc:
            table.loc[i, "status"] = f"download failed: {exc.__cause__ or exc}"
    return table

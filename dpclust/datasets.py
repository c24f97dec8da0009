"""Registry of every data set the five papers use, with each paper's preprocessing.

Each entry lists its files (canonical URL, sha256, license) and named
*variants*: one per paper's preprocessing, each documented in its
``description``. :func:`load` returns a :class:`Dataset`. The file formats are
read by :mod:`dpclust._parsers`; this module knows where files come from.

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

from __future__ import annotations

import contextlib
import logging
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import TqdmWarning

from dpclust_lib.validation import check_int, check_random_state

with warnings.catch_warnings():
    # pooch imports tqdm.auto, which in a Jupyter kernel without ipywidgets warns that it falls back to
    # text progress bars; pooch never shows one here (progressbar=False), so the warning says nothing.
    warnings.simplefilter("ignore", TqdmWarning)
    import pooch

from . import _paths
from ._parsers import (
    CAR_CATS,
    ELU,
    IPUMS_COLS,
    MAGIC_COLS,
    NURSERY_CATS,
    DataError,
    codes,
    minmax,
    numeric,
    read_adult,
    read_auto,
    read_car,
    read_covertype,
    read_ipums,
    read_nursery,
    read_table,
)

__all__ = [
    "DataFile",
    "Dataset",
    "DataError",
    "DataNotFoundError",
    "ChecksumError",
    "DownloadError",
    "default_raw_dir",
    "data_dirs",
    "entries",
    "variants",
    "locate",
    "fetch",
    "fetch_missing",
    "load",
    "available",
    "make_uniform_square",
]

ENV_VAR = "DPCLUST_DATA_DIR"
CACHE_NAME = "dpclust"


class DataNotFoundError(DataError, FileNotFoundError):
    """A file is in none of the data folders and could not be downloaded."""


class ChecksumError(DataError, ValueError):
    """A file's sha256 is not the registered one."""


class DownloadError(DataError, OSError):
    """A download failed (HTTP error, network error, interrupted transfer)."""


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
    >>> CAR.key, CAR.filename, CAR.license
    ('car_evaluation/car.data', 'car.data', 'CC BY 4.0')
    >>> DataFile("toy/points.txt", "https://example.org/points.txt", None, "CC0").filename
    'points.txt'
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
class _Variant:
    build: Callable
    description: str


@dataclass(frozen=True)
class _Entry:
    name: str
    title: str
    files: tuple
    papers: tuple
    citation: str
    variants: dict = field(default_factory=dict)
    default_variant: str = "raw"


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
# Provenance and declared boxes
# ---------------------------------------------------------------------------


def _provenance(datafile, path):
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


# ---------------------------------------------------------------------------
# The files
# ---------------------------------------------------------------------------

UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"
UCI_LICENSE = "CC BY 4.0"
SIPU_LICENSE = "no license stated upstream"

AUTO_MPG = DataFile(
    "auto_mpg/auto-mpg.data",
    f"{UCI}/auto-mpg/auto-mpg.data",
    "48b830e11feee5572525f8f1691ddb9d38d3d7b7063edcd8fca672c2a5e17d8d",
    UCI_LICENSE,
)
CAR = DataFile(
    "car_evaluation/car.data",
    f"{UCI}/car/car.data",
    "b703a9ac69f11e64ce8c223c0a40de4d2e9d769f7fb20be5f8f2e8a619893d83",
    UCI_LICENSE,
)
NURSERY = DataFile(
    "nursery/nursery.data",
    f"{UCI}/nursery/nursery.data",
    "8e0389c3dd37590248a921c2726d869ee96b817761a35eb8416afa24f31f931d",
    UCI_LICENSE,
)
COVERTYPE = DataFile(
    "covertype/covtype.data.gz",
    f"{UCI}/covtype/covtype.data.gz",
    "614360d0257557dd1792834a85a1cdebfadc3c4f30b011d56afee7ffb5b15771",
    UCI_LICENSE,
    "The same bytes are served by figshare: https://ndownloader.figshare.com/files/5976039",
)
ADULT = DataFile(
    "adult/adult.data",
    f"{UCI}/adult/adult.data",
    "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
    UCI_LICENSE,
)
IPUMS = DataFile(
    "ipums_usa/ipums_usa.csv",
    None,
    None,
    "IPUMS USA terms of use (no redistribution; citation required)",
    "IPUMS USA data may not be redistributed. Request an extract at https://usa.ipums.org/ with the variables "
    "FAMSIZE, SEX, RACE, SCHOOL and EMPSTAT, download it as CSV, and save it as ipums_usa/ipums_usa.csv "
    "(or ipums_usa.csv.gz) in data/raw/ or in a folder listed in $DPCLUST_DATA_DIR.",
)
IPUMS_GZ = DataFile("ipums_usa/ipums_usa.csv.gz", None, None, IPUMS.license, IPUMS.note)
MAGIC = DataFile(
    "magic_gamma_telescope/magic04.data",
    f"{UCI}/magic/magic04.data",
    "e9314b7ebd4b4b59a3b3d65f7316663963777b16a46786877651dbbaa640b36a",
    UCI_LICENSE,
)
UNBALANCE = DataFile(
    "sipu_unbalance/unbalance.txt",
    "http://cs.joensuu.fi/sipu/datasets/unbalance.txt",
    "41263f3801181a68857a6361c29a6865c8b66c4c74fdee2320ebd8cce28ad438",
    SIPU_LICENSE,
    "SIPU publishes no checksum; the registered one is of a copy whose values match two "
    "independent copies (6500 rows, no final newline). Upstream bytes may differ in whitespace.",
)
UNBALANCE_GT = DataFile(
    "sipu_unbalance/derived_denmune/unbalance-gt.txt",
    "https://raw.githubusercontent.com/scikit-learn-contrib/denmune-clustering-algorithm/"
    "06928207c382b1f4a526e1fecaaaa56dc79ae35a/data/unbalance-gt.txt",
    "56000381e1c21fcf9d5a91524e4dfb23f95046c1a57d34d52fc3c0de36cceee7",
    "BSD-3-Clause (repository); data: none stated",
    "Per-point labels 1..8, most likely SIPU's unbalance-gt.pa with its header removed (a derived file).",
)
BIRCH3 = DataFile(
    "sipu_birch3/birch3.txt",
    "http://cs.joensuu.fi/sipu/datasets/birch3.txt",
    "ee8b8916d0a9a120be207f97a1c0f22bcc24d2b4d45d4e18790ddad7117e22d5",
    SIPU_LICENSE,
    "SIPU publishes no checksum; the registered one is of a copy whose values match two "
    "independent copies (100000 rows, no final newline). Upstream bytes may differ in whitespace.",
)
GOWALLA_SAMPLE = DataFile(
    "gowalla/loc-gowalla_totalCheckins.head10000.txt",
    "https://raw.githubusercontent.com/slvn-lefebvre/spark-isep-vm/"
    "37fcfde91211d0c7fbe5a149d34512de7f5cde56/datasets/loc-gowalla_totalCheckins.txt",
    "55fd6710d3eaf1065003bda7c31fd5ebc8c24fbf8de92d1994a3a4baa04ab86b",
    "SNAP: no formal license, for research use",
    "The first 10,000 lines (users 0-53) of SNAP's loc-gowalla_totalCheckins.txt, as published in a tutorial "
    "repository.",
)
GOWALLA_FULL = DataFile(
    "gowalla/loc-gowalla_totalCheckins.txt.gz",
    "https://snap.stanford.edu/data/loc-gowalla_totalCheckins.txt.gz",
    None,
    "SNAP: no formal license, for research use",
    "SNAP publishes no checksum for this file, and none has been pinned here yet.",
)
IRIS = DataFile(
    "uci_small_classics/iris/iris.data",
    f"{UCI}/iris/iris.data",
    "6f608b71a7317216319b4d27b4d9bc84e6abd734eda7872b71a458569e2656c0",
    UCI_LICENSE,
)
WINE = DataFile(
    "uci_small_classics/wine/wine.data",
    f"{UCI}/wine/wine.data",
    "6be6b1203f3d51df0b553a70e57b8a723cd405683958204f96d23d7cd6aea659",
    UCI_LICENSE,
)
LETTER = DataFile(
    "uci_small_classics/letter_recognition/letter-recognition.data",
    f"{UCI}/letter-recognition/letter-recognition.data",
    "2b89f3602cf768d3c8355267d2f13f2417809e101fc2b5ceee10db19a60de6e2",
    UCI_LICENSE,
)
ABALONE = DataFile(
    "uci_small_classics/abalone/abalone.data",
    f"{UCI}/abalone/abalone.data",
    "de37cdcdcaaa50c309d514f248f7c2302a5f1f88c168905eba23fe2fbc78449f",
    UCI_LICENSE,
)


# ---------------------------------------------------------------------------
# Variants (one per paper's preprocessing)
# ---------------------------------------------------------------------------


def _read(datafile_name, reader, raw_dir, **options):
    """Locate the registered file ``datafile_name`` (looked up when called) and read it: (datafile, path, frame)."""
    datafile = globals()[datafile_name]
    path = locate(datafile, raw_dir, **options)
    return datafile, path, reader(path)


def _categorical_dataset(name, variant, df, columns, categories, label, description, prov, label_name):
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


def _auto_raw(raw_dir, **_):
    _, path, df = _read("AUTO_MPG", read_auto, raw_dir)
    cols = ["cylinders", "displacement", "weight", "acceleration", "model_year", "origin"]
    X = numeric(df, path, cols)
    return Dataset(
        "auto_mpg",
        "raw",
        X,
        df["mpg"].to_numpy(float),
        cols,
        "mpg",
        "All 398 cars; numeric attributes without horsepower (missing for 6 cars); label: mpg.",
        [_provenance(AUTO_MPG, path)],
    )


def _auto_ldpk(raw_dir, **_):
    _, path, df = _read("AUTO_MPG", read_auto, raw_dir)
    cyl = np.select([df["cylinders"] <= 4, df["cylinders"] <= 6], ["<=4", "5-6"], "8")
    year = np.where(df["model_year"] <= 76, "1970-76", "1977-82")
    origin = df["origin"].map({1: "USA", 2: "Europe", 3: "Japan"})
    tertile = pd.qcut(df["mpg"], 3, labels=["low", "mid", "high"]).astype(str).to_numpy()
    frame = pd.DataFrame({"cylinders": cyl, "model_year": year, "origin": origin})
    cats = {
        "cylinders": ["<=4", "5-6", "8"],
        "model_year": ["1970-76", "1977-82"],
        "origin": ["USA", "Europe", "Japan"],
    }
    return _categorical_dataset(
        "auto_mpg",
        "ldpk_modes",
        frame,
        list(cats),
        cats,
        tertile,
        "Peng et al. D1, domains {3,2,3} (our reading; the paper does not say which attributes): "
        "cylinders {<=4, 5-6, 8}, model year {1970-76, 1977-82}, origin {USA, Europe, Japan}; "
        "label: mpg tertile (low/mid/high). All 398 cars.",
        [_provenance(AUTO_MPG, path)],
        "mpg_tertile",
    )


def _categorical_raw(name, datafile_name, reader, categories, what):
    """The ``raw`` variant of a categorical UCI file: every attribute with its original domain."""

    def build(raw_dir, **_):
        datafile, path, df = _read(datafile_name, reader, raw_dir)
        sizes = ",".join(str(len(values)) for values in categories.values())
        return _categorical_dataset(
            name,
            "raw",
            df,
            list(categories),
            categories,
            df["class"].to_numpy(),
            f"All {len(df)} records, {what} with their original domains {{{sizes}}}; label: class.",
            [_provenance(datafile, path)],
            "class",
        )

    return build


_car_raw = _categorical_raw("car", "CAR", read_car, CAR_CATS, "the six attributes")
_nursery_raw = _categorical_raw("nursery", "NURSERY", read_nursery, NURSERY_CATS, "eight attributes")

_CAR_BINARY = {  # attribute -> the values of the first group
    "buying": {"vhigh", "high"},
    "maint": {"vhigh", "high"},
    "doors": {"2", "3"},
    "persons": {"2"},
    "lug_boot": {"small"},
    "safety": {"low"},
}


def _car_ldpk(raw_dir, **_):
    _, path, df = _read("CAR", read_car, raw_dir)
    frame, cats = {}, {}
    for col, first in _CAR_BINARY.items():
        a = "|".join(v for v in CAR_CATS[col] if v in first)
        b = "|".join(v for v in CAR_CATS[col] if v not in first)
        frame[col] = np.where(df[col].isin(first), a, b)
        cats[col] = [a, b]
    return _categorical_dataset(
        "car",
        "ldpk_modes",
        pd.DataFrame(frame),
        list(cats),
        cats,
        df["class"].to_numpy(),
        "Peng et al. D2, six binary attributes (our reading): buying and maint {vhigh,high | med,low}, "
        "doors {2,3 | 4,5more}, persons {2 | 4,more}, lug_boot {small | med,big}, safety {low | med,high}; "
        "label: class. All 1728 records.",
        [_provenance(CAR, path)],
        "class",
    )


def _nursery_ldpk(raw_dir, **_):
    _, path, df = _read("NURSERY", read_nursery, raw_dir)
    frame, cats = {}, {}
    for col, values in NURSERY_CATS.items():
        first = "not_recom" if col == "health" else values[0]
        rest = "|".join(v for v in values if v != first)
        frame[col] = np.where(df[col] == first, first, rest)
        cats[col] = [first, rest]
    return _categorical_dataset(
        "nursery",
        "ldpk_modes",
        pd.DataFrame(frame),
        list(cats),
        cats,
        df["class"].to_numpy(),
        "Peng et al. D3, eight binary attributes (our reading): each attribute's first value vs the rest, "
        "health as not_recom vs the rest; label: class. All 12960 records.",
        [_provenance(NURSERY, path)],
        "class",
    )


def _covertype_raw(raw_dir, **_):
    _, path, df = _read("COVERTYPE", read_covertype, raw_dir)
    X = df.iloc[:, :54].to_numpy(float)
    names = [
        "elevation",
        "aspect",
        "slope",
        "h_dist_hydrology",
        "v_dist_hydrology",
        "h_dist_roadways",
        "hillshade_9am",
        "hillshade_noon",
        "hillshade_3pm",
        "h_dist_fire_points",
    ]
    names += [f"wilderness_{i + 1}" for i in range(4)] + [f"soil_type_{i + 1}" for i in range(40)]
    return Dataset(
        "covertype",
        "raw",
        X,
        df[54].to_numpy(),
        names,
        "cover_type",
        "All 581012 records, 54 columns as published; label: cover type 1-7.",
        [_provenance(COVERTYPE, path)],
    )


def _covertype_ldpk(raw_dir, geologic=False, **_):
    _, path, df = _read("COVERTYPE", read_covertype, raw_dir)
    wilderness = df.iloc[:, 10:14].to_numpy().argmax(axis=1)
    elu = np.asarray(ELU)[df.iloc[:, 14:54].to_numpy().argmax(axis=1)]
    climatic = elu // 1000
    climatic_values = [2, 3, 4, 5, 6, 7, 8]
    X2 = np.searchsorted(climatic_values, climatic)
    if geologic:
        geo_values = [1, 2, 5, 7]
        X1 = np.searchsorted(geo_values, (elu // 100) % 10)
        names, cats = (
            ["geologic_zone", "climatic_zone"],
            [[str(v) for v in geo_values], [str(v) for v in climatic_values]],
        )
        what = "geologic zone (4, second digit of the soil type's ELU code)"
        variant = "ldpk_modes_elu"
    else:
        X1 = wilderness
        names, cats = ["wilderness_area", "climatic_zone"], [["1", "2", "3", "4"], [str(v) for v in climatic_values]]
        what = "wilderness area (4)"
        variant = "ldpk_modes"
    X = np.column_stack([X1, X2]).astype(np.int64)
    return Dataset(
        "covertype",
        variant,
        X,
        df[54].to_numpy(),
        names,
        "cover_type",
        f"Peng et al. D4, domains {{4,7}} (our reading): {what} and climatic zone (7, first digit of the "
        "soil type's ELU code); label: cover type. All 581012 records.",
        [_provenance(COVERTYPE, path)],
        domain_sizes=(4, 7),
        categories=cats,
    )


_ADULT_SAMPLING = ["workclass", "education", "marital_status", "relationship", "race", "sex"]


def _adult_sampling(raw_dir, **_):
    _, path, df = _read("ADULT", read_adult, raw_dir)
    complete = ~(df == "?").any(axis=1)
    dropped = int((~complete).sum())
    df = df[complete].reset_index(drop=True)
    cats = {c: sorted(df[c].unique()) for c in _ADULT_SAMPLING}
    return _categorical_dataset(
        "adult",
        "ldp_kmodes_sampling",
        df,
        _ADULT_SAMPLING,
        cats,
        df["income"].to_numpy(),
        f"Zhang et al. (2022): adult.data without the {dropped} rows that contain '?' ({len(df)} records); "
        "attributes WORKCLASS, EDUCATION, MARITAL, RELATIONSHIP, RACE, SEX (categories sorted alphabetically); "
        "label: income (<=50K / >50K), our choice for AC and E.",
        [_provenance(ADULT, path)],
        "income",
    )


def _ipums_sampling(raw_dir, label="EMPSTAT", **_):
    try:
        datafile, path = IPUMS, locate(IPUMS, raw_dir, download=False, allow_unverified=True)
    except DataNotFoundError as not_found:
        try:
            datafile, path = IPUMS_GZ, locate(IPUMS_GZ, raw_dir, download=False, allow_unverified=True)
        except DataNotFoundError:
            raise not_found from None
    df = read_ipums(path)
    cats = {c: sorted(df[c].unique().tolist()) for c in IPUMS_COLS}
    if label not in IPUMS_COLS:
        raise ValueError(f"label must be one of {IPUMS_COLS}, got label={label!r}")
    features = [c for c in IPUMS_COLS if c != label]
    return _categorical_dataset(
        "ipums_usa",
        "ldp_kmodes_sampling",
        df,
        features,
        cats,
        df[label].to_numpy(),
        f"Zhang et al. (2022): a user-supplied IPUMS USA extract ({len(df)} records), attributes {features} "
        f"coded by their sorted IPUMS codes; label: {label} (our choice).",
        [_provenance(datafile, path)],
        label,
    )


def _magic(raw_dir, scale=False, **_):
    path = locate(MAGIC, raw_dir)
    df = read_table(path, 11, names=MAGIC_COLS + ["class"])
    X = numeric(df, path, MAGIC_COLS)
    desc = f"All {len(X)} events, 10 numeric features; label: class (g = gamma, h = hadron)."
    if scale:
        X = minmax(X)
        desc = f"All {len(X)} events, 10 features min-max scaled to [0, 1] (Wang et al.); label: class (g/h)."
    unit = ((np.zeros(X.shape[1]), np.ones(X.shape[1])), UNIT_BOX_NOTE) if scale else (None, "")
    return Dataset(
        "magic",
        "minmax" if scale else "raw",
        X,
        df["class"].to_numpy(),
        MAGIC_COLS,
        "class",
        desc,
        [_provenance(MAGIC, path)],
        bounds=unit[0],
        bounds_note=unit[1],
    )


# SIPU ----------------------------------------------------------------------
def _unbalance(raw_dir, **_):
    path = locate(UNBALANCE, raw_dir)
    gt_path = locate(UNBALANCE_GT, raw_dir)
    X = numeric(read_table(path, 2, sep=r"\s+"), path, [0, 1])
    y = numeric(read_table(gt_path, 1, sep=r"\s+"), gt_path, [0])[:, 0].astype(np.int64)
    if y.shape[0] != X.shape[0]:
        raise DataError(f"{gt_path} has {y.shape[0]} labels but {path} has {X.shape[0]} points")
    return Dataset(
        "unbalance",
        "raw",
        X,
        y,
        ["x", "y"],
        "cluster",
        "SIPU unbalance: 6500 points in 2-D, 8 clusters (three of 2000, five of 100); label: ground-truth "
        "cluster 1-8 (derived file).",
        [_provenance(UNBALANCE, path), _provenance(UNBALANCE_GT, gt_path)],
        bounds=((100_000.0, 250_000.0), (600_000.0, 450_000.0)),
        bounds_note=ROUNDED_BOX_NOTE,
    )


def _birch3(raw_dir, **_):
    path = locate(BIRCH3, raw_dir)
    X = numeric(read_table(path, 2, sep=r"\s+"), path, [0, 1])
    return Dataset(
        "birch3",
        "raw",
        X,
        None,
        ["x", "y"],
        None,
        "SIPU birch3: 100000 points in 2-D, 100 clusters of random size and position; no published ground truth.",
        [_provenance(BIRCH3, path)],
        bounds=((0.0, 0.0), (1_000_000.0, 1_000_000.0)),
        bounds_note=ROUNDED_BOX_NOTE,
    )


# Gowalla -------------------------------------------------------------------
def _gowalla(raw_dir, full=False, allow_unverified=False, **_):
    datafile = GOWALLA_FULL if full else GOWALLA_SAMPLE
    path = locate(datafile, raw_dir, allow_unverified=allow_unverified)
    df = read_table(path, 5, sep="\t", names=["user", "time", "latitude", "longitude", "location"])
    X = numeric(df, path, ["longitude", "latitude"])
    what = (
        "the full SNAP file"
        if full
        else "a 10,000-line sample of the SNAP file (its first lines: users 0-53), not the full data set"
    )
    return Dataset(
        "gowalla" if full else "gowalla_sample10k",
        "lonlat",
        X,
        None,
        ["longitude", "latitude"],
        None,
        f"Gowalla check-ins, (longitude, latitude) of {len(X)} check-ins: {what}.",
        [_provenance(datafile, path)],
        bounds=((-180.0, -90.0), (180.0, 90.0)),
        bounds_note="the whole globe (public)",
    )


# Small UCI classics --------------------------------------------------------
def _classic(datafile_name, name, n_columns, label_col, feature_cols, names, read_kwargs=None):
    def build(raw_dir, scale=False, **_):
        def reader(path):
            return read_table(path, n_columns, skip_blank_lines=True, **(read_kwargs or {}))

        datafile, path, df = _read(datafile_name, reader, raw_dir)
        X = numeric(df, path, feature_cols)
        y = df[label_col].to_numpy()
        if scale:
            X = minmax(X)
        desc = (
            f"UCI {name}: {len(X)} records, {X.shape[1]} numeric features"
            + (" min-max scaled to [0, 1]" if scale else "")
            + "; label: class."
        )
        unit = ((np.zeros(X.shape[1]), np.ones(X.shape[1])), UNIT_BOX_NOTE) if scale else (None, "")
        return Dataset(
            name,
            "minmax" if scale else "raw",
            X,
            y,
            names,
            "class",
            desc,
            [_provenance(datafile, path)],
            bounds=unit[0],
            bounds_note=unit[1],
        )

    return build


# Synthetic -----------------------------------------------------------------
def make_uniform_square(n_samples=10_000, low=-2.0, high=2.0, random_state=0):
    """Points uniform in (low, high)^2: the "Pytest" set of Zhang & Cheng (2021).

    Parameters
    ----------
    n_samples : int >= 1
    low, high : float, low < high
        The square's edges, declared as the data set's public bounds.
    random_state : int, Generator or None

    Returns
    -------
    Dataset

    Examples
    --------
    >>> data = make_uniform_square(1000, low=0.0, high=1.0, random_state=0)
    >>> data.X.shape, bool(((data.X >= 0) & (data.X < 1)).all()), data.bounds
    ((1000, 2), True, ((0.0, 0.0), (1.0, 1.0)))
    >>> data.description
    "Synthetic: 1000 points uniform in (0, 1)^2, seed 0 (the paper's size is not stated; ours is a choice)."
    """
    n = check_int(n_samples, "n_samples", minimum=1)
    if not float(high) > float(low):
        raise ValueError(f"high must exceed low, got low={low!r}, high={high!r}")
    rng = check_random_state(random_state)
    X = rng.uniform(low, high, size=(n, 2))
    return Dataset(
        "pytest_uniform",
        "uniform",
        X,
        None,
        ["x", "y"],
        None,
        f"Synthetic: {n} points uniform in ({low:g}, {high:g})^2, seed {random_state!r} "
        "(the paper's size is not stated; ours is a choice).",
        [
            {
                "file": None,
                "generator": "make_uniform_square",
                "n_samples": n,
                "low": low,
                "high": high,
                "random_state": random_state,
            }
        ],
        bounds=((float(low), float(low)), (float(high), float(high))),
        bounds_note="the generator's square (public)",
    )


_IRIS = _classic("IRIS", "iris", 5, 4, [0, 1, 2, 3], ["sepal_length", "sepal_width", "petal_length", "petal_width"])
_WINE = _classic("WINE", "wine", 14, 0, list(range(1, 14)), [f"f{i}" for i in range(1, 14)])
_LETTER = _classic("LETTER", "letter", 17, 0, list(range(1, 17)), [f"f{i}" for i in range(1, 17)])
_ABALONE = _classic("ABALONE", "abalone", 9, 8, list(range(1, 8)), [f"f{i}" for i in range(1, 8)])


def _scaled(build):
    return lambda raw_dir, **kw: build(raw_dir, scale=True, **kw)


# ---------------------------------------------------------------------------
# The registry
# ---------------------------------------------------------------------------

PEN = "Peng et al. 2021 (LDPK-modes)"
ZHA = "Zhang et al. 2022 (sampling LDP k-modes)"
ZC = "Zhang & Cheng 2021 (DPQTk-means)"
LI = "Li et al. 2013 (IDP k-means)"
WANG = "Wang et al. (DPBIRCH)"

_REGISTRY = {
    e.name: e
    for e in [
        _Entry(
            "auto_mpg",
            "UCI Auto MPG",
            (AUTO_MPG,),
            (PEN,),
            "Quinlan, UCI ML Repository, 1993",
            {
                "raw": _Variant(_auto_raw, "numeric attributes, label mpg"),
                "ldpk_modes": _Variant(_auto_ldpk, "Peng et al. D1 {3,2,3}"),
            },
            "ldpk_modes",
        ),
        _Entry(
            "car",
            "UCI Car Evaluation",
            (CAR,),
            (PEN, "overview"),
            "Bohanec & Rajkovic, UCI ML Repository, 1997",
            {
                "raw": _Variant(_car_raw, "original domains {4,4,4,3,3,3}"),
                "ldpk_modes": _Variant(_car_ldpk, "Peng et al. D2, six binary attributes"),
            },
            "ldpk_modes",
        ),
        _Entry(
            "nursery",
            "UCI Nursery",
            (NURSERY,),
            (PEN, "overview"),
            "Rajkovic, UCI ML Repository, 1997",
            {
                "raw": _Variant(_nursery_raw, "original domains {3,5,4,4,3,2,3,3}"),
                "ldpk_modes": _Variant(_nursery_ldpk, "Peng et al. D3, eight binary attributes"),
            },
            "ldpk_modes",
        ),
        _Entry(
            "covertype",
            "UCI Covertype",
            (COVERTYPE,),
            (PEN,),
            "Blackard, UCI ML Repository, 1998",
            {
                "raw": _Variant(_covertype_raw, "54 columns as published"),
                "ldpk_modes": _Variant(_covertype_ldpk, "Peng et al. D4 {4,7}: wilderness area, climatic zone"),
                "ldpk_modes_elu": _Variant(
                    lambda raw_dir, **kw: _covertype_ldpk(raw_dir, geologic=True, **kw),
                    "Peng et al. D4 {4,7}, alternative: geologic zone, climatic zone",
                ),
            },
            "ldpk_modes",
        ),
        _Entry(
            "adult",
            "UCI Adult",
            (ADULT,),
            (ZHA, "overview"),
            "Becker & Kohavi, UCI ML Repository, 1996",
            {
                "ldp_kmodes_sampling": _Variant(
                    _adult_sampling, "Zhang et al. 2022: 30,162 complete records, 6 attributes"
                )
            },
            "ldp_kmodes_sampling",
        ),
        _Entry(
            "ipums_usa",
            "IPUMS USA extract (user-supplied)",
            (IPUMS,),
            (ZHA,),
            "Ruggles et al., IPUMS USA, Minneapolis, MN: IPUMS (cite the version you extract)",
            {
                "ldp_kmodes_sampling": _Variant(
                    _ipums_sampling, "Zhang et al. 2022: FAMSIZE, SEX, RACE, SCHOOL, EMPSTAT"
                )
            },
            "ldp_kmodes_sampling",
        ),
        _Entry(
            "magic",
            "UCI MAGIC Gamma Telescope",
            (MAGIC,),
            (WANG, LI, "overview"),
            "Bock, UCI ML Repository, 2004",
            {
                "raw": _Variant(_magic, "10 numeric features"),
                "minmax": _Variant(_scaled(_magic), "min-max scaled to [0, 1]"),
            },
            "raw",
        ),
        _Entry(
            "unbalance",
            "SIPU unbalance",
            (UNBALANCE, UNBALANCE_GT),
            (ZC, "overview"),
            "Rezaei & Franti, IEEE TKDE 28(8), 2016",
            {"raw": _Variant(_unbalance, "6500 x 2 with ground truth")},
        ),
        _Entry(
            "birch3",
            "SIPU birch3",
            (BIRCH3,),
            (ZC, "overview"),
            "Zhang, Ramakrishnan & Livny, DMKD 1(2), 1997",
            {"raw": _Variant(_birch3, "100000 x 2, no ground truth")},
        ),
        _Entry(
            "gowalla_sample10k",
            "Gowalla check-ins, 10,000-line sample",
            (GOWALLA_SAMPLE,),
            (ZC,),
            "Cho, Myers & Leskovec, KDD 2011",
            {"lonlat": _Variant(_gowalla, "(longitude, latitude)")},
            "lonlat",
        ),
        _Entry(
            "gowalla",
            "Gowalla check-ins, full SNAP file",
            (GOWALLA_FULL,),
            (ZC,),
            "Cho, Myers & Leskovec, KDD 2011",
            {"lonlat": _Variant(lambda raw_dir, **kw: _gowalla(raw_dir, full=True, **kw), "(longitude, latitude)")},
            "lonlat",
        ),
        _Entry(
            "iris",
            "UCI Iris",
            (IRIS,),
            (LI,),
            "Fisher, UCI ML Repository, 1936",
            {"raw": _Variant(_IRIS, "4 features"), "minmax": _Variant(_scaled(_IRIS), "4 features in [0, 1]")},
        ),
        _Entry(
            "wine",
            "UCI Wine",
            (WINE,),
            (LI,),
            "Aeberhard & Forina, UCI ML Repository, 1991",
            {"raw": _Variant(_WINE, "13 features"), "minmax": _Variant(_scaled(_WINE), "13 features in [0, 1]")},
        ),
        _Entry(
            "letter",
            "UCI Letter Recognition",
            (LETTER,),
            (LI,),
            "Slate, UCI ML Repository, 1991",
            {"raw": _Variant(_LETTER, "16 features"), "minmax": _Variant(_scaled(_LETTER), "16 features in [0, 1]")},
        ),
        _Entry(
            "abalone",
            "UCI Abalone",
            (ABALONE,),
            (LI,),
            "Nash et al., UCI ML Repository, 1995",
            {
                "raw": _Variant(_ABALONE, "7 numeric features (sex left out); label: rings"),
                "minmax": _Variant(_scaled(_ABALONE), "7 numeric features in [0, 1]"),
            },
        ),
        _Entry(
            "pytest_uniform",
            'Synthetic uniform square ("Pytest")',
            (),
            (ZC,),
            "Zhang & Cheng 2021",
            {"uniform": _Variant(lambda raw_dir, **kw: make_uniform_square(**kw), "n points uniform in (-2, 2)^2")},
            "uniform",
        ),
    ]
}


def entries():
    """Names of every registered data set.

    Returns
    -------
    list of str

    Examples
    --------
    >>> entries()  # doctest: +NORMALIZE_WHITESPACE
    ['auto_mpg', 'car', 'nursery', 'covertype', 'adult', 'ipums_usa', 'magic', 'unbalance', 'birch3',
     'gowalla_sample10k', 'gowalla', 'iris', 'wine', 'letter', 'abalone', 'pytest_uniform']
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
    {'missing': 15, 'checksum mismatch': 1, 'generated': 1}
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

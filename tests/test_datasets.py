"""The data registry: parsers on small fixture files, checksums, lookup order, downloads, errors."""

import gzip
import hashlib
import importlib
import os
from pathlib import Path

import numpy as np
import pytest

from dpclust import datasets
from dpclust.datasets import ChecksumError, DataError, DataFile, DataNotFoundError


def _sha(data: bytes):
    return hashlib.sha256(data).hexdigest()


def _paper_module(attr):
    """The paper's data module that declares the file ``attr`` (its loaders read it there, when called)."""
    modules = [importlib.import_module(f"dpclust.datasets.{name}") for name in datasets.PAPER_MODULES]
    [module] = [m for m in modules if attr in m.__all__]
    return module


def _register_file(monkeypatch, attr, datafile):
    monkeypatch.setattr(_paper_module(attr), attr, datafile)
    monkeypatch.setattr(datasets, attr, datafile)


def _install(monkeypatch, tmp_path, attr, key, data: bytes):
    """Write ``data`` as ``key`` in a raw folder and register it as the paper module's ``<attr>``."""
    raw = tmp_path / "raw"
    path = raw / key
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    _register_file(monkeypatch, attr, DataFile(key, "http://127.0.0.1:9/none", _sha(data), "test"))
    monkeypatch.delenv("DPCLUST_DATA_DIR", raising=False)
    return raw


def _listing(folder):
    return sorted(p.relative_to(folder).as_posix() for p in Path(folder).rglob("*") if p.is_file())


# --------------------------------------------------------------------------- parsers on fixtures


def test_parse_auto_mpg_ldpk_variant(monkeypatch, tmp_path):
    text = (
        b'18.0   8   307.0      130.0      3504.      12.0   70  1\t"chevrolet chevelle malibu"\n'
        b'25.0   4   98.00      ?          2046.      19.0   71  1\t"ford pinto"\n'
        b'31.0   4   119.0      82.00      2720.      19.4   82  3\t"chevy s-10"\n'
        b'20.0   6   200.0      85.00      2965.      15.8   78  2\t"some car"\n'
    )
    raw = _install(monkeypatch, tmp_path, "AUTO_MPG", "auto_mpg/auto-mpg.data", text)
    ds = datasets.load("auto_mpg", "ldpk_modes", raw_dir=raw)
    assert ds.domain_sizes == (3, 2, 3)
    np.testing.assert_array_equal(ds.X, [[2, 0, 0], [0, 0, 0], [0, 1, 2], [1, 1, 1]])
    assert ds.provenance[0]["verified"]


def test_parse_car_both_variants(monkeypatch, tmp_path):
    text = b"vhigh,vhigh,2,2,small,low,unacc\nlow,med,5more,more,big,high,vgood\nmed,low,3,4,med,med,acc\n"
    raw = _install(monkeypatch, tmp_path, "CAR", "car_evaluation/car.data", text)
    full = datasets.load("car", "raw", raw_dir=raw)
    assert full.domain_sizes == (4, 4, 4, 3, 3, 3)
    np.testing.assert_array_equal(full.X[1], [3, 2, 3, 2, 2, 2])
    binary = datasets.load("car", "ldpk_modes", raw_dir=raw)
    assert binary.domain_sizes == (2,) * 6
    np.testing.assert_array_equal(binary.X, [[0] * 6, [1] * 6, [1, 1, 0, 1, 1, 1]])
    assert binary.y.tolist() == ["unacc", "vgood", "acc"]


def test_parse_nursery_with_trailing_blank_line(monkeypatch, tmp_path):
    text = (
        b"usual,proper,complete,1,convenient,convenient,nonprob,recommended,recommend\n"
        b"great_pret,very_crit,foster,more,critical,inconv,problematic,not_recom,not_recom\n\n"
    )
    raw = _install(monkeypatch, tmp_path, "NURSERY", "nursery/nursery.data", text)
    ds = datasets.load("nursery", "ldpk_modes", raw_dir=raw)
    assert ds.n_samples == 2 and ds.domain_sizes == (2,) * 8
    np.testing.assert_array_equal(ds.X, [[0, 0, 0, 0, 0, 0, 0, 1], [1, 1, 1, 1, 1, 1, 1, 0]])
    assert datasets.load("nursery", "raw", raw_dir=raw).domain_sizes == (3, 5, 4, 4, 3, 2, 3, 3)


def test_parse_adult_drops_rows_with_question_marks_and_says_so(monkeypatch, tmp_path):
    text = (
        b"39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, "
        b"White, Male, 2174, 0, 40, United-States, <=50K\n"
        b"50, ?, 83311, Bachelors, 13, Married-civ-spouse, ?, Husband, White, Male, 0, 0, 13, United-States, <=50K\n"
        b"38, Private, 215646, HS-grad, 9, Divorced, Handlers-cleaners, "
        b"Not-in-family, Black, Female, 0, 0, 40, United-States, >50K\n\n"
    )
    raw = _install(monkeypatch, tmp_path, "ADULT", "adult/adult.data", text)
    ds = datasets.load("adult", raw_dir=raw)
    assert ds.n_samples == 2
    assert "1 rows" in ds.description
    assert ds.feature_names == ["workclass", "education", "marital_status", "relationship", "race", "sex"]
    assert ds.y.tolist() == ["<=50K", ">50K"]
    assert ds.frame()["workclass"].tolist() == ["State-gov", "Private"]


def test_parse_magic_and_minmax(monkeypatch, tmp_path):
    text = (
        b"28.7967,16.0021,2.6449,0.3918,0.1982,27.7004,22.011,-8.2027,40.092,81.8828,g\n"
        b"31.6036,11.7235,2.5185,0.5303,0.3773,26.2722,23.8238,-9.9574,6.3609,205.261,h\n"
        b"10.0,1.0,2.0,0.1,0.1,1.0,1.0,1.0,1.0,1.0,g\n"
    )
    raw = _install(monkeypatch, tmp_path, "MAGIC", "magic_gamma_telescope/magic04.data", text)
    ds = datasets.load("magic", "minmax", raw_dir=raw)
    assert ds.X.shape == (3, 10) and ds.X.min() == 0.0 and ds.X.max() == 1.0


def test_parse_sipu_files_without_final_newline(monkeypatch, tmp_path):
    raw = _install(monkeypatch, tmp_path, "UNBALANCE", "sipu_unbalance/unbalance.txt", b"1 2\n3 4\n5 6")
    gt = raw / "sipu_unbalance/derived_denmune/unbalance-gt.txt"
    gt.parent.mkdir(parents=True)
    gt.write_bytes(b"1\n1\n2")
    _register_file(monkeypatch, "UNBALANCE_GT", DataFile(gt.relative_to(raw).as_posix(), None, _sha(b"1\n1\n2"), "t"))
    ds = datasets.load("unbalance", raw_dir=raw)
    np.testing.assert_array_equal(ds.X, [[1, 2], [3, 4], [5, 6]])
    assert ds.y.tolist() == [1, 1, 2]
    raw = _install(monkeypatch, tmp_path, "BIRCH3", "sipu_birch3/birch3.txt", b" 118879 887164\n118415 867117")
    assert datasets.load("birch3", raw_dir=raw).X.shape == (2, 2)


def test_parse_gowalla_sample_gives_longitude_latitude(monkeypatch, tmp_path):
    text = b"0\t2010-10-19T23:55:27Z\t30.2359091167\t-97.7951395833\t22847\n"
    raw = _install(monkeypatch, tmp_path, "GOWALLA_SAMPLE", "gowalla/sample.txt", text)
    ds = datasets.load("gowalla_sample10k", raw_dir=raw)
    np.testing.assert_allclose(ds.X, [[-97.7951395833, 30.2359091167]])
    assert "sample" in ds.description and ds.name == "gowalla_sample10k"


def test_parse_covertype_gz_and_the_ldpk_variant(monkeypatch, tmp_path):
    rows = []
    for wild, soil, label in [(0, 0, 1), (3, 39, 7), (1, 17, 2)]:
        vals = [2596, 51, 3, 258, 0, 510, 221, 232, 148, 6279] + [0] * 44 + [label]
        vals[10 + wild] = 1
        vals[14 + soil] = 1
        rows.append(",".join(map(str, vals)))
    data = gzip.compress(("\n".join(rows) + "\n").encode())
    raw = _install(monkeypatch, tmp_path, "COVERTYPE", "covertype/covtype.data.gz", data)
    ds = datasets.load("covertype", raw_dir=raw)
    assert ds.domain_sizes == (4, 7)
    # Soil 1 -> ELU 2702 (climatic 2 -> code 0); soil 40 -> 8776 (climatic 8 -> 6); soil 18 -> 6731 (6 -> 4).
    np.testing.assert_array_equal(ds.X, [[0, 0], [3, 6], [1, 4]])
    elu = datasets.load("covertype", "ldpk_modes_elu", raw_dir=raw)
    np.testing.assert_array_equal(elu.X[:, 0], [3, 3, 3])  # geologic zone 7 for all three soils


def test_parse_iris_classic_with_blank_line(monkeypatch, tmp_path):
    text = b"5.1,3.5,1.4,0.2,Iris-setosa\n7.0,3.2,4.7,1.4,Iris-versicolor\n\n"
    raw = _install(monkeypatch, tmp_path, "IRIS", "uci_small_classics/iris/iris.data", text)
    ds = datasets.load("iris", "minmax", raw_dir=raw)
    assert ds.X.shape == (2, 4) and ds.y.tolist() == ["Iris-setosa", "Iris-versicolor"]


def test_ipums_extract_is_read_from_a_user_supplied_csv(monkeypatch, tmp_path):
    raw = tmp_path / "raw"
    (raw / "ipums_usa").mkdir(parents=True)
    (raw / "ipums_usa" / "ipums_usa.csv").write_text(
        "YEAR,FAMSIZE,SEX,RACE,SCHOOL,EMPSTAT\n2016,3,1,1,2,1\n2016,1,2,2,1,3\n"
    )
    monkeypatch.delenv("DPCLUST_DATA_DIR", raising=False)
    ds = datasets.load("ipums_usa", raw_dir=raw)
    # Default label: EMPSTAT, the outcome-like attribute (the analogue of Adult's income); the others cluster.
    assert ds.feature_names == ["FAMSIZE", "SEX", "RACE", "SCHOOL"] and ds.label_name == "EMPSTAT"
    assert ds.y.tolist() == [1, 3] and ds.domain_sizes == (2, 2, 2, 2)
    assert not ds.provenance[0]["verified"]
    other = datasets.load("ipums_usa", raw_dir=raw, label="SEX")
    assert other.feature_names == ["FAMSIZE", "RACE", "SCHOOL", "EMPSTAT"] and other.label_name == "SEX"


def test_ipums_missing_explains_how_to_get_an_extract(monkeypatch, tmp_path):
    monkeypatch.delenv("DPCLUST_DATA_DIR", raising=False)
    with pytest.raises(DataNotFoundError, match="usa.ipums.org") as err:
        datasets.load("ipums_usa", raw_dir=tmp_path)
    assert "FAMSIZE" in str(err.value) and "ipums_usa.csv" in str(err.value)


# --------------------------------------------------------------------------- corruption


def test_wrong_column_count_is_a_clear_error(monkeypatch, tmp_path):
    raw = _install(monkeypatch, tmp_path, "CAR", "car_evaluation/car.data", b"vhigh,vhigh,2,2,small,low\n")
    with pytest.raises(DataError, match="6 columns per row, expected 7"):
        datasets.load("car", raw_dir=raw)


def test_unknown_category_is_a_clear_error(monkeypatch, tmp_path):
    raw = _install(monkeypatch, tmp_path, "CAR", "car_evaluation/car.data", b"vhigh,vhigh,2,2,small,extreme,unacc\n")
    with pytest.raises(DataError, match="'extreme'"):
        datasets.load("car", raw_dir=raw)


def test_truncated_numeric_file_is_a_clear_error(monkeypatch, tmp_path):
    raw = _install(monkeypatch, tmp_path, "BIRCH3", "sipu_birch3/birch3.txt", b"1 2\n3")
    with pytest.raises(DataError, match="row 1"):
        datasets.load("birch3", raw_dir=raw)


def test_checksum_mismatch_names_the_file_and_both_hashes(monkeypatch, tmp_path):
    raw = _install(monkeypatch, tmp_path, "CAR", "car_evaluation/car.data", b"vhigh,vhigh,2,2,small,low,unacc\n")
    path = raw / "car_evaluation/car.data"
    path.write_bytes(b"vhigh,vhigh,2,2,small,low,unacc\nlow")  # changed after registration
    with pytest.raises(ChecksumError) as err:
        datasets.load("car", raw_dir=raw)
    msg = str(err.value)
    assert str(path) in msg and datasets.CAR.sha256 in msg and _sha(path.read_bytes()) in msg


def test_file_without_registered_checksum_needs_consent(monkeypatch, tmp_path):
    raw = tmp_path / "raw"
    (raw / "gowalla").mkdir(parents=True)
    (raw / "gowalla" / "loc-gowalla_totalCheckins.txt.gz").write_bytes(
        gzip.compress(b"0\t2010-10-19T23:55:27Z\t30.0\t-97.0\t1\n")
    )
    monkeypatch.delenv("DPCLUST_DATA_DIR", raising=False)
    with pytest.raises(ChecksumError, match="allow_unverified"):
        datasets.load("gowalla", raw_dir=raw)
    ds = datasets.load("gowalla", raw_dir=raw, allow_unverified=True)
    assert ds.X.shape == (1, 2) and not ds.provenance[0]["verified"]


# --------------------------------------------------------------------------- lookup order


def test_data_dir_is_searched_before_raw_and_accepts_flat_layout(monkeypatch, tmp_path):
    good = b"vhigh,vhigh,2,2,small,low,unacc\n"
    monkeypatch.setattr(datasets, "CAR", DataFile("car_evaluation/car.data", None, _sha(good), "t"))
    first, second, raw = tmp_path / "a", tmp_path / "b", tmp_path / "raw"
    for d in (first, second, raw):
        d.mkdir()
    (second / "car.data").write_bytes(good)  # flat: file name only
    (raw / "car_evaluation").mkdir()
    (raw / "car_evaluation" / "car.data").write_bytes(good)
    monkeypatch.setenv("DPCLUST_DATA_DIR", os.pathsep.join([str(first), str(second)]))
    assert datasets.locate(datasets.CAR, raw_dir=raw) == second / "car.data"
    monkeypatch.setenv("DPCLUST_DATA_DIR", str(first))
    assert datasets.locate(datasets.CAR, raw_dir=raw) == raw / "car_evaluation" / "car.data"


def test_available_reports_missing_files(monkeypatch, tmp_path):
    monkeypatch.delenv("DPCLUST_DATA_DIR", raising=False)
    table = datasets.available(raw_dir=tmp_path)
    assert set(table["dataset"]) == set(datasets.entries())
    assert set(table.columns) >= {
        "dataset",
        "file",
        "status",
        "present",
        "location",
        "url",
        "sha256",
        "license",
        "papers",
    }
    files = table[table["file"].notna()]
    assert (files["status"] == "missing").all() and not files["present"].any()


def test_available_reports_present_files(needs_data):
    needs_data(datasets.CAR)
    table = datasets.available()
    row = table[table["file"] == datasets.CAR.key].iloc[0]
    assert row["status"] == "present" and row["present"] and row["location"].endswith("car.data")


def test_fetch_missing_reports_each_file_without_network(monkeypatch, tmp_path):
    monkeypatch.delenv("DPCLUST_DATA_DIR", raising=False)
    offline = datasets.DownloadError("offline")
    monkeypatch.setattr(datasets._registry, "_download", lambda *a, **k: (_ for _ in ()).throw(offline))
    table = datasets.fetch_missing(raw_dir=tmp_path)
    statuses = dict(zip(table["file"], table["status"]))
    assert statuses["ipums_usa/ipums_usa.csv"] == "missing (not downloadable)"
    assert statuses["car_evaluation/car.data"].startswith("download failed")
    assert _listing(tmp_path) == []


# --------------------------------------------------------------------------- downloads (local HTTP server)


def test_download_success(http_root, tmp_path, monkeypatch):
    root, base = http_root
    data = b"1 2\n3 4\n"
    (root / "points.txt").write_bytes(data)
    monkeypatch.delenv("DPCLUST_DATA_DIR", raising=False)
    f = DataFile("demo/points.txt", f"{base}/points.txt", _sha(data), "t")
    raw = tmp_path / "raw"
    path = datasets.locate(f, raw_dir=raw)
    assert path == raw / "demo/points.txt" and path.read_bytes() == data
    assert _listing(raw) == ["demo/points.txt"]


def test_download_http_404_names_file_url_and_folder(http_root, tmp_path, monkeypatch):
    _, base = http_root
    monkeypatch.delenv("DPCLUST_DATA_DIR", raising=False)
    f = DataFile("demo/missing.txt", f"{base}/missing.txt", "0" * 64, "t")
    raw = tmp_path / "raw"
    with pytest.raises(DataNotFoundError) as err:
        datasets.locate(f, raw_dir=raw)
    msg = str(err.value)
    assert "missing.txt" in msg and f.url in msg and "HTTP 404" in msg and str(raw / "demo/missing.txt") in msg
    assert _listing(raw) == []


def test_download_wrong_checksum_keeps_nothing(http_root, tmp_path, monkeypatch):
    root, base = http_root
    (root / "points.txt").write_bytes(b"1 2\n")
    monkeypatch.delenv("DPCLUST_DATA_DIR", raising=False)
    f = DataFile("demo/points.txt", f"{base}/points.txt", _sha(b"something else"), "t")
    raw = tmp_path / "raw"
    with pytest.raises(ChecksumError, match="was not kept"):
        datasets.locate(f, raw_dir=raw)
    assert _listing(raw) == []


def test_interrupted_download_keeps_nothing(http_root, tmp_path, monkeypatch):
    root, base = http_root
    data = b"1 2\n" * 1000
    (root / "points.txt").write_bytes(data)
    monkeypatch.delenv("DPCLUST_DATA_DIR", raising=False)
    f = DataFile("demo/points.txt", f"{base}/truncated/points.txt", _sha(data), "t")
    raw = tmp_path / "raw"
    with pytest.raises(DataNotFoundError, match="interrupted|IncompleteRead|could not download"):
        datasets.locate(f, raw_dir=raw)
    assert _listing(raw) == []


def test_offline_error_names_file_url_and_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("DPCLUST_DATA_DIR", raising=False)
    f = DataFile("demo/points.txt", "http://127.0.0.1:9/points.txt", "0" * 64, "t")  # port 9: nothing listens
    raw = tmp_path / "raw"
    with pytest.raises(DataNotFoundError) as err:
        datasets.locate(f, raw_dir=raw)
    msg = str(err.value)
    assert "points.txt" in msg and f.url in msg and str(raw / "demo/points.txt") in msg and "DPCLUST_DATA_DIR" in msg
    assert _listing(raw) == []


# --------------------------------------------------------------------------- names and generators


@pytest.mark.parametrize(
    "name, variant, needle",
    [
        ("carz", None, "name='carz'"),
        (3, None, "name=3"),
        ("car", "binary", "variant='binary'"),
    ],
)
def test_unknown_names_and_variants(name, variant, needle):
    with pytest.raises(ValueError, match=needle):
        datasets.load(name, variant)


def test_uniform_square_is_seeded_and_inside():
    a = datasets.load("pytest_uniform", n_samples=500, random_state=3)
    b = datasets.load("pytest_uniform", n_samples=500, random_state=3)
    np.testing.assert_array_equal(a.X, b.X)
    assert a.X.shape == (500, 2) and a.X.min() > -2 and a.X.max() < 2


@pytest.mark.parametrize(
    "kwargs, exc",
    [(dict(n_samples=0), ValueError), (dict(low=1.0, high=1.0), ValueError), (dict(n_samples=2.5), TypeError)],
)
def test_uniform_square_bad_input(kwargs, exc):
    with pytest.raises(exc):
        datasets.make_uniform_square(**kwargs)


# --------------------------------------------------------------------------- the real files (when present)


@pytest.mark.parametrize(
    "name, variant, datafile, shape, sizes",
    [
        ("auto_mpg", "ldpk_modes", "AUTO_MPG", (398, 3), (3, 2, 3)),
        ("car", "ldpk_modes", "CAR", (1728, 6), (2,) * 6),
        ("nursery", "ldpk_modes", "NURSERY", (12960, 8), (2,) * 8),
        ("nursery", "raw", "NURSERY", (12960, 8), (3, 5, 4, 4, 3, 2, 3, 3)),
        ("adult", "ldp_kmodes_sampling", "ADULT", (30162, 6), (7, 16, 7, 6, 5, 2)),
        ("magic", "minmax", "MAGIC", (19020, 10), None),
        ("unbalance", "raw", "UNBALANCE", (6500, 2), None),
        ("birch3", "raw", "BIRCH3", (100000, 2), None),
        ("gowalla_sample10k", "lonlat", "GOWALLA_SAMPLE", (10000, 2), None),
        ("iris", "minmax", "IRIS", (150, 4), None),
        ("wine", "minmax", "WINE", (178, 13), None),
        ("letter", "minmax", "LETTER", (20000, 16), None),
        ("abalone", "minmax", "ABALONE", (4177, 7), None),
    ],
)
def test_real_files(needs_data, name, variant, datafile, shape, sizes):
    needs_data(getattr(datasets, datafile))
    ds = datasets.load(name, variant)
    assert ds.X.shape == shape and ds.domain_sizes == sizes
    if sizes is not None:
        assert ds.X.dtype == np.int64 and all(ds.X[:, j].max() == k - 1 for j, k in enumerate(sizes))
    if variant == "minmax":
        assert ds.X.min() == 0.0 and ds.X.max() == 1.0


def test_real_unbalance_labels(needs_data):
    needs_data(datasets.UNBALANCE, datasets.UNBALANCE_GT)
    ds = datasets.load("unbalance")
    assert sorted(np.bincount(ds.y)[1:].tolist()) == [100] * 5 + [2000] * 3


@pytest.mark.parametrize(
    "name, variant, datafile",
    [
        ("unbalance", "raw", "UNBALANCE"),
        ("birch3", "raw", "BIRCH3"),
        ("gowalla_sample10k", "lonlat", "GOWALLA_SAMPLE"),
        ("magic", "minmax", "MAGIC"),
        ("iris", "minmax", "IRIS"),
    ],
)
def test_declared_bounds_contain_the_data(needs_data, name, variant, datafile):
    needs_data(getattr(datasets, datafile))
    ds = datasets.load(name, variant)
    lower, upper = (np.asarray(b, dtype=float) for b in ds.bounds)
    assert lower.shape == upper.shape == (ds.n_features,) and ds.bounds_note
    assert np.all(ds.X >= lower) and np.all(ds.X <= upper)
    assert ds.X.flags["C_CONTIGUOUS"]


def test_uniform_square_bounds_are_its_square():
    ds = datasets.make_uniform_square(50, low=-1.0, high=3.0)
    assert ds.bounds == ((-1.0, -1.0), (3.0, 3.0))


# --------------------------------------------------------------------------- one module per paper


def test_every_paper_module_is_listed_and_names_its_notebook():
    from dpclust.reproduce import list_notebooks

    folder = Path(datasets.__file__).parent
    assert {p.stem for p in folder.glob("*.py") if not p.stem.startswith("_")} == set(datasets.PAPER_MODULES)
    notebooks = [p.stem for p in list_notebooks(Path(__file__).resolve().parents[1] / "notebooks")]
    numbers = [importlib.import_module(f"dpclust.datasets.{name}").NOTEBOOK for name in datasets.PAPER_MODULES]
    assert set(numbers) <= set(notebooks) and numbers == sorted(numbers), "in the order of the notebooks"


def test_the_flat_module_names_still_resolve():
    # dpclust.datasets was one module: every public name it had is still a name of the package.
    names = [*"DataFile Dataset DataError DataNotFoundError ChecksumError DownloadError".split()]
    names += "default_raw_dir data_dirs entries variants locate fetch fetch_missing load available".split()
    names += "make_uniform_square ENV_VAR NO_DOWNLOAD_ENV CACHE_NAME UNIT_BOX_NOTE ROUNDED_BOX_NOTE".split()
    names += "AUTO_MPG CAR NURSERY COVERTYPE ADULT IPUMS IPUMS_GZ MAGIC UNBALANCE UNBALANCE_GT BIRCH3".split()
    names += "GOWALLA_SAMPLE GOWALLA_FULL IRIS WINE LETTER ABALONE".split()
    assert [name for name in names if not hasattr(datasets, name)] == []
    assert isinstance(datasets.CAR, DataFile) and datasets.DataNotFoundError.__module__ == "dpclust.datasets"

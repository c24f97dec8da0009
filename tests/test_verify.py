"""verify: reruns compared with the committed tables, on a tiny compendium written by the tests."""

import json

import nbformat
import numpy as np
import pandas as pd
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from dpclust import experiments, reproduce
from dpclust.__main__ import main
from dpclust.verify import compare_folders, compare_tables

PARAMS = "results_dir = None\nfigures_dir = None"
WRITE = """
import time
import pandas as pd
from dpclust import experiments
runs = pd.DataFrame({"run": [2, 0, 1], "value": [0.25, 1.0 / 3.0, 7.0], "method": ["a", "b", "c"],
                     "fit_seconds": [time.perf_counter_ns() % 997 / 10.0] * 3})
experiments.save_results(runs, "20_demo", "runs", results_dir, key="run")
experiments.save_results(pd.DataFrame({"n": [1, 2], "seconds": [time.perf_counter_ns() % 991, 1.0]}),
                         "20_demo", "timing", results_dir)
"""


def _notebook(path, *sources):
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cell = new_code_cell(PARAMS)
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [cell] + [new_code_cell(s) for s in sources]
    nbformat.write(nb, path)
    return path


@pytest.fixture
def compendium(tmp_path, monkeypatch):
    """One notebook and its committed results, made by running it once."""
    nb = _notebook(tmp_path / "20_demo.ipynb", WRITE)
    committed = tmp_path / "committed"
    monkeypatch.setattr(reproduce, "committed_results_dir", lambda stem: committed / stem)
    row = reproduce.run_notebook(nb, tmp_path / "run0.ipynb", parameters={"results_dir": str(committed / "20_demo")})
    assert row["status"] == "ok", row["error"]
    return nb, committed / "20_demo"


def test_verify_matches_a_rerun_and_reports_changed_cells_and_missing_tables(compendium, capsys):
    from dpclust.verify import verify

    nb, committed = compendium
    manifest = json.loads((committed / "tables.json").read_text())
    assert manifest["runs"] == {"key": ["run"], "timing": ["fit_seconds"], "rtol": 0.0, "atol": 0.0}
    (committed / "replicates.csv").write_text("claim_id,seed,verdict\nx,1,reproduced\n")  # the stability run's
    summary, diffs = verify([str(nb)])
    assert summary["status"].tolist() == ["ok"] and diffs.empty  # the timings differ and are ignored

    runs = pd.read_csv(committed / "runs.csv")
    runs.loc[runs["run"] == 1, "value"] = 7.000001  # a changed cell
    runs["fit_seconds"] = 123.0  # a changed timing: ignored
    runs.to_csv(committed / "runs.csv", index=False)
    (committed / "timing.csv").rename(committed / "old_name.csv")  # new has "timing", committed "old_name"
    assert main(["verify", str(nb)]) == 1
    out = capsys.readouterr().out
    assert "3 differences" in out
    diffs = verify([str(nb)])[1]
    got = {tuple(r) for r in diffs[["table", "row", "column", "committed", "new"]].itertuples(index=False)}
    assert got == {
        ("runs", "run=1", "value", "7.000001", "7.0"),
        ("old_name", "(table)", "", "(table)", "(absent)"),
        ("timing", "(table)", "", "(absent)", "(table)"),
    }


def test_compare_tables_exact_by_default_within_declared_tolerance_otherwise():
    a = pd.DataFrame({"k": ["x", "y"], "v": [1.0, np.nan], "s": ["p", "q"]})
    b = pd.DataFrame({"k": ["y", "x"], "v": [np.nan, 1.0 + 1e-12], "s": ["q", "p"]})
    spec = {"key": ["k"], "timing": [], "rtol": 0.0, "atol": 0.0}
    assert compare_tables(a, b, spec) == [("k=x", "v", "1.0", "1.000000000001")]  # rows matched by key, NaN = NaN
    assert compare_tables(a, b, {**spec, "rtol": 1e-9}) == []
    assert {d[:2] for d in compare_tables(a, b, None)} == {(r, c) for r in "01" for c in "kvs"}  # by position


def test_compare_tables_reports_rows_and_columns_on_one_side():
    a = pd.DataFrame({"k": [1, 2], "v": [1, 2], "gone": [0, 0]})
    b = pd.DataFrame({"k": [2, 3], "v": [2, 3], "extra_seconds": [9.0, 9.0]})
    diffs = compare_tables(a, b, {"key": ["k"], "timing": ["extra_seconds"]})
    assert set(diffs) == {
        ("(all)", "gone", "(column)", "(absent)"),
        ("k=1", "(row)", "(row)", "(absent)"),
        ("k=3", "(row)", "(absent)", "(row)"),
    }


def test_timings_are_written_apart_so_a_rerun_with_other_times_leaves_the_tables_unchanged(tmp_path):
    frame = pd.DataFrame({"n": [1, 2], "fit": [0.1, 0.2], "seconds": [1.0, 2.0]})
    runs = [tmp_path / "first", tmp_path / "second"]
    for folder, times in zip(runs, ([1.0, 2.0], [3.0, 4.0])):
        experiments.save_results(frame.assign(seconds=times), "x", "t", folder, key="n", timing=True)
        experiments.save_results(frame.assign(seconds=times), "x", "d", folder, rtol=1e-6)
    manifest = json.loads((runs[0] / "tables.json").read_text())
    assert manifest["t"]["timing"] == ["fit", "seconds"]
    assert manifest["d"] == {"key": [], "timing": ["seconds"], "rtol": 1e-6, "atol": 0.0}
    first, second = ({p.relative_to(f).as_posix(): p.read_text() for p in f.rglob("*.csv")} for f in runs)
    assert sorted(first) == ["d.csv", "timings/d.csv", "timings/t.csv"]  # a timing table is written whole apart
    assert first["d.csv"] == second["d.csv"] == "n,fit\n1,0.1\n2,0.2\n"  # the table holds no timing
    assert first["timings/d.csv"] == "row,seconds\n0,1.0\n1,2.0\n"  # joined back by position
    assert second["timings/t.csv"] == "n,fit,seconds\n1,0.1,3.0\n2,0.2,4.0\n"  # or by the key
    assert compare_folders("x", *runs).empty
    frame.assign(fit=[0.1, 0.2000001]).to_csv(runs[1] / "d.csv", index=False)  # within rtol
    experiments.save_results(frame, "x", "t", runs[1], key="n")  # no longer a timing table: its old copy goes
    assert (runs[1] / "timings" / "t.csv").read_text() == "n,seconds\n1,1.0\n2,2.0\n"
    assert compare_folders("x", *runs)[["table", "committed"]].values.tolist() == [["t", "(absent)"]]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(key="nope"), "key names columns"),
        (dict(key="a"), "does not identify the rows"),
        (dict(timing=["zz"]), "timing names columns"),
        (dict(rtol=-1.0), "rtol must be"),
        (dict(atol=float("nan")), "atol must be"),
    ],
)
def test_save_results_refuses_bad_declarations(tmp_path, kwargs, message):
    with pytest.raises(ValueError, match=message):
        experiments.save_results(pd.DataFrame({"a": [1, 1], "b": [1, 2]}), "x", "t", tmp_path, **kwargs)
    assert not (tmp_path / "t.csv").exists()


def test_a_row_computed_from_timings_is_not_compared(tmp_path):
    import pandas as pd

    from dpclust import experiments, verdicts, verify

    ledger = verdicts.Ledger("Demo et al.", "99_demo")
    ledger.add("fast", "A is faster than B", "yes", "1.8x", "reproduced", artefact="Table 2", timing=True)
    ledger.add("exact", "a seeded result", "0.5", "0.5", "reproduced", artefact="Fig. 1")
    ledger.save(tmp_path)
    spec = experiments.read_manifest(tmp_path)["ledger"]
    committed = pd.read_csv(tmp_path / "ledger.csv", keep_default_na=False)
    rerun = committed.copy()
    rerun.loc[0, ["ours", "verdict"]] = ["0.9x", "not reproduced"]  # another machine: only the timed row moves
    assert verify.compare_tables(committed, rerun, spec) == []
    rerun.loc[1, "verdict"] = "partly"
    assert [d[:2] for d in verify.compare_tables(committed, rerun, spec)] == [("claim_id=exact", "verdict")]


def test_an_empty_table_is_a_difference_not_a_crash(tmp_path):
    # A rerun without its data may save a table with no columns (a file holding one newline): the comparison
    # reports its cells as absent and goes on with the other tables.
    committed, new = tmp_path / "committed", tmp_path / "new"
    committed.mkdir(), new.mkdir()
    for folder in (committed, new):
        pd.DataFrame({"epsilon": [1.0], "nicv": [0.5]}).to_csv(folder / "other.csv", index=False)
    pd.DataFrame({"epsilon": [1.0], "nicv": [0.1]}).to_csv(committed / "nicv.csv", index=False)
    pd.DataFrame().to_csv(new / "nicv.csv", index=False)
    diffs = compare_folders("03_x", committed, new)
    assert set(diffs["table"]) == {"nicv"} and (diffs["new"] == "(absent)").all()
    assert {"epsilon", "nicv"} <= set(diffs["column"])

"""The stability run and a verify at another root seed, end to end on a tiny compendium written by the test."""

import nbformat
import pandas as pd
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from dpclust import reproduce, verdicts
from dpclust.verify import stability, verify

PARAMS = "seed = 0\nresults_dir = None\nfigures_dir = None"
# Three claims: one holds at every seed, one at even seeds only, one at every seed but 3.
LEDGER = """
from dpclust import verdicts
ledger = verdicts.Ledger("Demo et al.", "20_demo", seed=seed, replicates=verdicts.load_replicates("20_demo"))
ledger.add("always", "holds", "Fig. 1", "", "reproduced", artefact="Fig. 1")
ledger.add("even", "holds at even seeds", "Fig. 2", "", "reproduced" if seed % 2 == 0 else "partly", artefact="Fig. 2")
ledger.add("low", "fails at 3", "Fig. 3", "", "reproduced" if seed != 3 else "partly", artefact="Fig. 3")
ledger.save(results_dir)
"""


@pytest.fixture
def compendium(tmp_path, monkeypatch):
    for name in ("Makefile", "pyproject.toml"):
        (tmp_path / name).touch()
    (tmp_path / "notebooks").mkdir()
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    params = new_code_cell(PARAMS)
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, new_code_cell(LEDGER)]
    path = tmp_path / "notebooks" / "20_demo.ipynb"
    nbformat.write(nb, path)
    monkeypatch.setenv("DPCLUST_HOME", str(tmp_path))
    return path, tmp_path / "data" / "results" / "20_demo"


def _commit(path, committed, tmp_path):
    # as reproduce commits a run: the executed notebook in place of the source, the tables beside the ledger
    row = reproduce.run_notebook(path, tmp_path / "run.ipynb", parameters={"results_dir": str(committed)})
    assert row["status"] == "ok", row["error"]
    path.write_bytes((tmp_path / "run.ipynb").read_bytes())
    return pd.read_csv(committed / "ledger.csv", keep_default_na=False).set_index("claim_id")


def test_stability_then_a_rerun_at_another_seed(compendium, tmp_path):
    path, committed = compendium
    assert _commit(path, committed, tmp_path)["replicates"].tolist() == ["1 of 1"] * 3
    summary, written = stability(["20"], seeds=(1, 2))
    assert summary["status"].tolist() == ["ok", "ok"] and written == [committed / "replicates.csv"]
    table = pd.read_csv(written[0], keep_default_na=False)
    assert sorted(set(table["seed"])) == [1, 2]
    assert table.set_index(["claim_id", "seed"]).loc[("even", 1), "run_verdicts"] == "partly"
    assert set(table["notebook_source"]) == {verdicts.notebook_source_hash(path)}

    ledger = _commit(path, committed, tmp_path)  # reproduce: seed 0 joins seeds 1 and 2
    assert ledger.loc["always", ["verdict", "replicates"]].tolist() == ["reproduced", "3 of 3"]
    assert ledger.loc["even", ["verdict", "replicates"]].tolist() == ["unstable", "2 of 3 reproduced, 1 partly"]
    assert ledger.loc["low", "verdict"] == "reproduced"

    summary, diffs = verify(["20"], seed=3)  # "low" fails at seed 3: its unanimous verdict would not survive
    assert summary["status"].tolist() == ["ok"]
    assert diffs[["row", "committed", "new"]].values.tolist() == [["claim_id=low", "reproduced", "unstable"]]
    summary, diffs = verify(["20"], seed=6)  # every claim holds at seed 6
    assert diffs.empty


def test_stability_refuses_seeds_that_add_no_replicate(compendium):
    with pytest.raises(ValueError, match="seeds"):
        stability(["20"], seeds=(0,))


def test_the_readme_command_writes_the_ledgers_verdicts(compendium, tmp_path, capsys):
    from dpclust.__main__ import main

    path, committed = compendium
    _commit(path, committed, tmp_path)
    readme = tmp_path / "README.md"
    readme.write_text(f"# Demo\n{verdicts.README_START}\n{verdicts.README_END}\n")
    assert main(["readme"]) == 0
    assert "| [Demo et al.](notebooks/20_demo.ipynb) | 3 | 3 | 0 | 0 | 0 | 0 | 0 | 0 |" in readme.read_text()
    assert "verdict section" in capsys.readouterr().out
    assert main(["readme"]) == 0 and capsys.readouterr().out == ""  # unchanged: nothing to say


DATA_LEDGER = """
import os
from dpclust import verdicts
ledger = verdicts.Ledger("Demo et al.", "20_demo", seed=seed, replicates=verdicts.load_replicates("20_demo"))
here = os.environ.get("DEMO_DATA") == "1"
if not here:
    print("not run: the data set 'demo' is not on this machine and could not be downloaded")
ledger.add("data", "holds on the data", "Fig. 1", "", "reproduced" if here else "not run", artefact="Fig. 1")
ledger.save(results_dir)
"""


@pytest.mark.parametrize("committed_with_data", [True, False])
def test_a_replicate_without_the_data_is_written_only_if_the_committed_run_had_none(
    compendium, tmp_path, monkeypatch, committed_with_data
):
    path, committed = compendium
    nb = nbformat.read(path, as_version=4)
    nb.cells[1].source = DATA_LEDGER
    nbformat.write(nb, path)
    monkeypatch.setenv("DEMO_DATA", "1" if committed_with_data else "0")
    _commit(path, committed, tmp_path)
    assert stability(["20"], seeds=(1,))[0]["status"].tolist() == ["ok"]  # replicates drawn as the committed run
    _commit(path, committed, tmp_path)  # the headline now joins them: a run without data still shows a verdict
    monkeypatch.setenv("DEMO_DATA", "0")
    before = (committed / "replicates.csv").read_text()
    summary, written = stability(["20"], seeds=(2,))
    if committed_with_data:  # its draw would be "not run" where the committed run graded the claim
        assert summary["status"].tolist() == ["failed"] and "demo" in summary["note"][0] and not written
        assert (committed / "replicates.csv").read_text() == before
    else:
        assert summary["status"].tolist() == ["ok"] and written == [committed / "replicates.csv"]

"""The README's ledger table is the ledgers' own count: it cannot drift from them."""

import re
from pathlib import Path

import pandas as pd

from dpclust import experiments

ROOT = Path(__file__).resolve().parents[1]


def _readme_table():
    """The README's verdict table, one row per notebook (the 'all five' row last)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## What the reproductions found", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    rows = {}
    for line in lines[2:]:
        cells = [cell.strip().strip("*") for cell in line.strip("|").split("|")]
        link = re.search(r"notebooks/(\d\d_[a-z_]+)\.ipynb", cells[0])
        rows[link.group(1) if link else "all"] = [int(c) for c in cells[1:]]
    return pd.DataFrame.from_dict(rows, orient="index", columns=header[1:])


def test_the_readme_counts_are_the_ledgers_counts():
    table = _readme_table()
    notebooks = [stem for stem in table.index if stem != "all"]
    counts = experiments.verdict_counts(experiments.read_ledgers(notebooks, ROOT / "data" / "results"), notebooks)
    assert list(table.columns) == list(counts.columns), "the README's columns are the verdicts"
    pd.testing.assert_frame_equal(table.loc[notebooks], counts, check_names=False, check_dtype=False)
    assert table.loc["all"].tolist() == counts.sum().tolist()

"""The README's verdicts are written from the ledgers (`python -m dpclust readme`): they cannot drift from them."""

import re
from pathlib import Path

from dpclust import reproduce, verdicts

ROOT = Path(__file__).resolve().parents[1]


def test_the_readme_verdicts_are_the_ledgers_own():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(re.escape(verdicts.README_START) + r"\n(.*?)\n" + re.escape(verdicts.README_END), text, re.S)
    assert found, "the README has no verdict section between its markers"
    papers = [path.stem for path in reproduce.list_notebooks(ROOT / "notebooks") if not path.stem.startswith("00_")]
    expected = verdicts.readme_section(papers, ROOT / "data" / "results")
    assert found.group(1) == expected, "the README's verdicts differ from the ledgers: run `python -m dpclust readme`"


HEADING = re.compile(r"^### Exercise (\d+) \((.+?), about (\d+) minutes\): (.+)$", re.M)


def test_the_readme_exercise_table_is_the_notebooks_headings():
    import nbformat

    rows = []
    for path in reproduce.list_notebooks(ROOT / "notebooks"):
        cells = nbformat.read(path, as_version=4).cells
        for number, kind, minutes, title in HEADING.findall(
            "\n".join(c.source for c in cells if c.cell_type == "markdown")
        ):
            rows.append(f"| `{path.stem}` | {number}. {title[0].upper() + title[1:]} | {kind} | {minutes} min |")
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = [line for line in text.splitlines() if re.match(r"^\| `\d\d_\w+` \| \d+\. ", line)]
    assert rows and table == rows, "the README's exercise table differs from the notebooks' exercise headings"

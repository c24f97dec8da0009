"""Build the compendium's book: ``python book/build.py [OUT]`` (default ``_build/html``).

1. Assemble the sources in ``_build/book_src``: the README as the front page (with the table of
   contents), the committed notebooks as chapters (their outputs as committed: nothing is
   re-executed), the design notes, the figures the README shows, and one page gathering the
   five reproduction ledgers from ``data/results/<notebook>/ledger.csv``.
2. Run Sphinx with every warning an error (a missing reference, image or equation fails the build).
3. Check every internal link and image of the HTML output: a target file or anchor that does not
   exist fails the build too.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
CONF_DIR = ROOT / "book"
# The verdict next to the artefact: a reader sees it before the table scrolls.
LEDGER_COLUMNS = ["claim_id", "artefact", "verdict", "claim", "published", "ours", "replicates", "reading"]
SENSITIVITY_COLUMNS = ["claim_id", "choice", "reading", "verdict", "replicates", "changes"]
COVERAGE_COLUMNS = ["artefact", "claim_id", "verdict", "why_no_row"]
# The pages of docs/, in the book's order (after the notebooks and the ledgers).
DOCS = ["install", "running", "sweeps", "cluster", "library", "benchmarks", "data", "teaching", "DESIGN"]


def _notebooks():
    return sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _cell(value):
    """A value as the text of a Markdown table cell."""
    text = "" if pd.isna(value) else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def _markdown_table(frame, columns):
    columns = [c for c in columns if c in frame.columns]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    return lines + ["| " + " | ".join(_cell(row[c]) for c in columns) + " |" for _, row in frame.iterrows()]


def ledgers_page():
    """The page gathering every ledger: the README's verdict counts, then each notebook's rows, its
    sensitivity entries and its coverage table."""
    from dpclust import verdicts

    stems = [nb.stem for nb in _notebooks()]
    root = ROOT / "data" / "results"
    ledgers = verdicts.read_ledgers(stems, root)
    present = [stem for stem in stems if stem in set(ledgers["notebook"])]
    lines = [
        "# The reproduction ledgers",
        "",
        "Every published artefact of the papers beside ours, with a verdict graded under the paper's "
        "primary reading and over its replicates, as the notebooks wrote them "
        "(`data/results/<notebook>/ledger.csv`); then what the other readings change (never counted), "
        "and each paper's coverage: every artefact and the row that grades it, or why none can.",
        "",
    ]
    if present:
        lines += [verdicts.verdict_table(ledgers, present), ""]
    tables = {name: verdicts.read_ledgers(present, root, table=name) for name in ("sensitivity", "coverage")}
    for stem in present:
        lines += [f"## {stem}", "", f"Chapter: [{stem}](notebooks/{stem}.ipynb).", ""]
        lines += _markdown_table(ledgers[ledgers["notebook"] == stem], LEDGER_COLUMNS) + [""]
        for name, columns in (("sensitivity", SENSITIVITY_COLUMNS), ("coverage", COVERAGE_COLUMNS)):
            rows = tables[name][tables[name]["notebook"] == stem]
            if len(rows):
                lines += [f"**{name.capitalize()}.**", ""] + _markdown_table(rows, columns) + [""]
    return "\n".join(lines)


def _title(nb):
    """The first heading of a notebook."""
    for cell in json.loads(nb.read_text(encoding="utf-8"))["cells"]:
        for line in "".join(cell["source"]).splitlines():
            if cell["cell_type"] == "markdown" and line.startswith("# "):
                return line[2:].strip()
    return nb.stem


def _write_chapter(nb, target):
    """Copy a notebook, ending it with links to the other chapters and to the ledgers."""
    doc = json.loads(nb.read_text(encoding="utf-8"))
    others = [f"[{_title(o)}]({o.name})" for o in _notebooks() if o != nb]
    text = "**Elsewhere in the compendium:** [every ledger, gathered](../ledgers.md); " + "; ".join(others) + "."
    doc["cells"].append({"cell_type": "markdown", "id": "book-elsewhere", "metadata": {}, "source": text})
    target.write_text(json.dumps(doc), encoding="utf-8")


def assemble(src):
    """Write the book's sources into ``src`` (emptied first)."""
    if src.exists():
        shutil.rmtree(src)
    (src / "notebooks").mkdir(parents=True)
    for nb in _notebooks():
        _write_chapter(nb, src / "notebooks" / nb.name)
    shutil.copytree(ROOT / "figures", src / "figures", ignore=shutil.ignore_patterns("smoke"))
    (src / "docs").mkdir()
    for page in DOCS:  # the README links to them
        shutil.copy2(ROOT / "docs" / f"{page}.md", src / "docs" / f"{page}.md")
    for name in ("LICENSE", "CITATION.cff"):  # the README links to them
        shutil.copy2(ROOT / name, src / name)
    (src / "ledgers.md").write_text(ledgers_page(), encoding="utf-8")
    toc = ["", "```{toctree}", ":hidden:", ":caption: The notebooks", ""]
    toc += [f"notebooks/{nb.stem}" for nb in _notebooks()]
    pages = ["ledgers", *(f"docs/{page}" for page in DOCS)]
    toc += ["```", "", "```{toctree}", ":hidden:", ":caption: The compendium", "", *pages, "```", ""]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (src / "index.md").write_text(readme + "\n" + "\n".join(toc), encoding="utf-8")
    import jupyter_server_mathjax  # MathJax 2, as a Python package: the book needs no network

    shutil.copytree(Path(jupyter_server_mathjax.__file__).parent / "static", src / "_static" / "mathjax")
    shutil.copy2(CONF_DIR / "book.css", src / "_static" / "book.css")


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("name"):
            self.ids.add(attrs["name"])
        for key in ("href", "src"):
            if attrs.get(key) and not (tag == "link" and key == "href" and attrs.get("rel") == "preload"):
                self.links.append(attrs[key])


def broken_links(html_dir):
    """Internal links and images of the built site whose file or anchor does not exist."""
    pages = {}
    for page in html_dir.rglob("*.html"):
        if "_static" in page.relative_to(html_dir).parts:  # the theme's templates, not pages
            continue
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8", errors="replace"))
        pages[page.resolve()] = parser
    broken = []
    for page, parser in pages.items():
        for link in parser.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "javascript:", "data:")):
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append((page.relative_to(html_dir.resolve()), link, "no such file"))
            elif (
                parts.fragment
                and target.suffix == ".html"
                and target in pages
                and unquote(parts.fragment) not in pages[target].ids
            ):
                broken.append((page.relative_to(html_dir.resolve()), link, "no such anchor"))
    return broken


def build(out):
    """Assemble, build with warnings as errors, check the links; return the HTML folder."""
    out = Path(out).resolve()
    src = out.parent / "book_src"
    assemble(src)
    cmd = [
        sys.executable,
        "-m",
        "sphinx",
        "-W",
        "--keep-going",
        "-q",
        "-b",
        "html",
        "-c",
        str(CONF_DIR),
        str(src),
        str(out),
    ]
    subprocess.run(cmd, check=True)
    broken = broken_links(out)
    if broken:
        listing = "\n".join(f"  {page}: {link} ({why})" for page, link, why in broken)
        raise SystemExit(f"{len(broken)} broken internal links:\n{listing}")
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=str(ROOT / "_build" / "html"))
    out = build(parser.parse_args(argv).out)
    print(f"book: {out / 'index.html'}")


if __name__ == "__main__":
    main()

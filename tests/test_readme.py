"""The README's verdicts are written from the ledgers (`python -m dpclust readme`): they cannot drift from them. Every
command the README and the pages of docs/ show for reading, reviewing and sweeping works as typed."""

import re
import sys
from pathlib import Path

import pytest

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
    text = (ROOT / "docs" / "teaching.md").read_text(encoding="utf-8")
    table = [line for line in text.splitlines() if re.match(r"^\| `\d\d_\w+` \| \d+\. ", line)]
    assert rows and table == rows, "docs/teaching.md's exercise table differs from the notebooks' exercise headings"


# The pages whose commands a reader, reviewer or batch user types (the teachers' own, docs/teaching.md, follow them
# in tests/test_nbgrader.py; docs/cluster.md's start workers on other machines).
PAGES = ["README.md", "docs/running.md", "docs/sweeps.md"]


def _readme_commands():
    """Each command of the pages' bash blocks: (line, argv without variables and '&')."""
    import shlex

    out = []
    for page in PAGES:
        text = (ROOT / page).read_text(encoding="utf-8")
        for block in re.findall(r"^```bash\n(.*?)^```", text, re.S | re.M):
            for line in block.splitlines():
                words = shlex.split(line.split("  #")[0].rstrip(" &"))
                while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
                    words = words[1:]
                if words:
                    out.append((line, words))
    return out


def test_every_page_with_commands_is_read():
    """A page of docs/ whose bash blocks a user types is in PAGES, and each page in PAGES still shows commands, so a
    command that moves between pages stays tested."""
    for page in PAGES:
        assert "```bash" in (ROOT / page).read_text(encoding="utf-8"), f"{page} shows no command"
    for page in sorted((ROOT / "docs").glob("*.md")):
        name = f"docs/{page.name}"
        if name not in PAGES and name not in ("docs/teaching.md", "docs/cluster.md"):
            assert "```bash" not in page.read_text(encoding="utf-8"), f"{name} shows commands no test runs: add it"


COMMANDS = _readme_commands()


@pytest.mark.parametrize("line, argv", COMMANDS, ids=[" ".join(argv[:3]) for _, argv in COMMANDS])
def test_every_command_the_readme_shows_works_as_shown(line, argv, tmp_path):
    """A make target is dry-run (it exists and takes these variables); a command names the environment make
    installs (.venv/bin/...: the README says to activate nothing) and is run, or for dpclust's runs, parsed and
    its notebooks and files found. The slow tests run the users' paths in full (tests/test_lock.py,
    tests/test_cluster.py)."""
    import subprocess

    from dpclust.__main__ import build_parser

    if argv[0] == "make":
        dry = subprocess.run(["make", "-n", *argv[1:]], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert dry.returncode == 0, f"{line}\n{dry.stderr}"
        return
    assert argv[0].startswith(".venv/bin/"), f"not found as typed without an activated environment: {line}"
    tool = Path(sys.executable).parent / argv[0].removeprefix(".venv/bin/")  # the environment make installed
    assert tool.is_file(), f"{line}: make installs no {tool.name}"
    if argv[1:3] == ["-m", "dpclust"]:
        args = build_parser().parse_args(argv[3:])
        for name in getattr(args, "notebooks", None) or [getattr(args, "notebook", None)] * hasattr(args, "notebook"):
            reproduce.resolve_notebook(name, ROOT / "notebooks")
        assert getattr(args, "grid_file", None) is None or (ROOT / args.grid_file).is_file(), line
        return
    if tool.name == "papermill" and "--help-notebook" not in argv:
        argv = [*argv, "-p", "results_dir", str(tmp_path), "-p", "figures_dir", str(tmp_path)]
        argv[argv.index("out.ipynb")] = str(tmp_path / "out.ipynb")
    elif tool.name != "papermill":
        argv = [*argv[:2], "--help"]  # dask scheduler / dask worker: that they run (a cluster is a slow test)
    run = subprocess.run([str(tool), *argv[1:]], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"{line}\n{run.stderr[-3000:]}"

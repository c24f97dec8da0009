"""Every notebook runs to the end in the smoke profile, with its data, in the reader's set (the environment
``make reproduce`` installs: the notebooks extra alone): each code cell ran, none raised (what ``nbval --nbval-lax``
checked: the notebooks declare no output to compare).

One run per notebook in the session (tests/conftest.py, ``smoke_run``), a unit of work of its own; a test that reads
a notebook's smoke outputs reads this run.
"""

import nbformat
import pytest

from . import discover

NOTEBOOKS = [path.stem for path in discover.notebooks()]


@pytest.mark.parametrize("stem", NOTEBOOKS)
def test_the_notebook_runs_in_the_smoke_profile(stem, smoke_run):
    run = smoke_run(stem)
    assert run["status"] == "ok", run["error"]
    code = [c for c in nbformat.read(run["output"], as_version=4).cells if c.cell_type == "code"]
    assert code and all(c.execution_count is not None for c in code), "a cell did not run"
    errors = [(c.get("id"), o.get("ename")) for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors

"""What a reader of the book sees in the committed notebooks: no warning, no path of the machine that ran them,
and every figure written through plotting.save_figure (which checks its title, labels and legend)."""

import json
import re
from pathlib import Path

import pytest

from . import discover

NOTEBOOKS = discover.notebooks()
# a warning as Python prints it ("...: SomeWarning: message"), and absolute paths of a machine
WARNING = re.compile(r"\b\w*Warning: ")
MACHINE_PATH = re.compile(
    r"(?<![\w.])(/(home|Users|tmp|work|root|opt|usr|var)/[\w.-]+|[A-Z]:\\\\[\w.-]+|site-packages)"
)


def _texts(output):
    if "text" in output:
        yield "".join(output["text"])
    for value in output.get("data", {}).values():
        if isinstance(value, (str, list)):
            yield "".join(value)
    if output.get("output_type") == "error":
        yield "\n".join(output.get("traceback", []))


def findings(notebook):
    """(cell index, what, excerpt) for every output a reader should not see."""
    cells = json.loads(Path(notebook).read_text(encoding="utf-8"))["cells"]
    found = []
    for i, cell in enumerate(cells):
        for output in cell.get("outputs", []):
            for text in _texts(output):
                for pattern, what in ((WARNING, "warning"), (MACHINE_PATH, "machine path")):
                    match = pattern.search(text)
                    if match:
                        found.append((i, what, text[max(0, match.start() - 40) : match.end() + 40]))
    return found


def test_the_checks_can_fail(tmp_path):
    nb = {
        "cells": [
            {
                "cell_type": "code",
                "source": [],
                "outputs": [
                    {
                        "output_type": "stream",
                        "name": "stderr",
                        "text": ["/srv/x/experiments.py:128: PrivacyLeakWarning: protect_cluster_index=False\n"],
                    }
                ],
            },
            {
                "cell_type": "code",
                "source": [],
                "outputs": [
                    {"output_type": "execute_result", "data": {"text/plain": ["PosixPath('/work/r/data/t.csv')"]}}
                ],
            },
            {
                "cell_type": "code",
                "source": [],
                "outputs": [
                    {"output_type": "stream", "name": "stdout", "text": ["ε = 0.5: NICV 0.31 (mean of 50 runs)\n"]}
                ],
            },
        ]
    }
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    assert [(i, what) for i, what, _ in findings(path)] == [(0, "warning"), (1, "machine path")]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_warning_nor_machine_path_in_the_outputs(notebook):
    found = findings(notebook)
    assert not found, f"{notebook.name}: " + "; ".join(f"cell {i}: {what}: {text!r}" for i, what, text in found[:5])


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_figures_go_through_save_figure(notebook):
    # save_figure checks the title, the axis labels and the legend before it writes; a bare savefig would not
    source = "\n".join("".join(c["source"]) for c in json.loads(notebook.read_text(encoding="utf-8"))["cells"])
    assert ".savefig(" not in source
    if "plt.show()" in source or "subplots(" in source:
        assert "save_figure(" in source

"""Student versions of the paper notebooks (``make assignments``).

In a teacher notebook, an exercise is a cell tagged ``exercise`` (the prompt
and a call of a :mod:`dpclust.exercises` checker) next to a cell tagged
``solution`` (the reference solution: imports and function definitions only).
A markdown cell tagged ``solution`` holds the teacher's explanation of a
predict-then-run result. The student version keeps everything but replaces
each solution function's body by ``raise NotImplementedError`` and each
explanation by a placeholder for the student's own, clears every output, drops
execution metadata and opens with a header that says what to do. The
``assignments/`` folder is generated; edit the teacher notebooks instead.
"""

from __future__ import annotations

import ast
from pathlib import Path

from . import _paths
from ._optional import require

__all__ = ["assignments_dir", "EXPLANATION_PLACEHOLDER", "stub_solution", "student_version", "export"]


def assignments_dir():
    """``<project>/assignments``, where :func:`export` writes by default."""
    return _paths.project_dir() / "assignments"


HEADER = """# Assignment: {title}

This is the student version of `{name}`. It runs like the original, except that every exercise
function is left for you to write.

1. Cells marked **Exercise** describe a task. The cell just before each check holds a function whose
   body is `raise NotImplementedError(...)`: replace that line with your solution.
2. Run the check cell below it. A check prints `Correct: ...` when your answer is right. When it is
   not, it says what was expected, what came back, and gives a hint.
3. A predict-then-run exercise asks for your prediction first (a function that returns "up", "down"
   or "same"), then runs a small experiment. Write your explanation of the result in the cell that
   starts with **Your explanation.**
4. Before you hand in, run the whole notebook from the top (Kernel > Restart Kernel and Run All Cells).
   To run it quickly, start Jupyter with `DPCLUST_PROFILE=smoke`: the experiments then run on tiny
   sizes, while the checks stay exactly as strict.

The randomised checks use fixed seeds and a stated error rate. A correct solution is rejected at
most once in a thousand times (for other seeds).
"""


EXPLANATION_PLACEHOLDER = "**Your explanation.** Replace this line by two or three sentences: what changed, and why."


def stub_solution(source):
    """Replace the body of every function in a solution cell by ``raise NotImplementedError``.

    Imports are kept; docstrings are kept (they are part of the task). Anything
    else in a solution cell is an authoring error.
    """
    tree = ast.parse(source)
    body = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            body.append(node)
        elif isinstance(node, ast.FunctionDef):
            keep = [node.body[0]] if ast.get_docstring(node) is not None else []
            message = ast.Constant(f"write {node.name}")
            raise_stmt = ast.Raise(exc=ast.Call(ast.Name("NotImplementedError", ast.Load()), [message], []), cause=None)
            node.body = keep + [raise_stmt]
            body.append(node)
        else:
            raise ValueError(
                f"a solution cell may hold only imports and function definitions; found "
                f"{type(node).__name__} at line {node.lineno}:\n{source}"
            )
    if not any(isinstance(n, ast.FunctionDef) for n in body):
        raise ValueError(f"a solution cell holds no function definition:\n{source}")
    return ast.unparse(ast.fix_missing_locations(ast.Module(body=body, type_ignores=[])))


def _title(nb, fallback):
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return fallback


def student_version(nb, name):
    """The student version of a teacher notebook (a new notebook object)."""
    nbformat = require("nbformat", "notebooks")
    out = nbformat.v4.new_notebook(metadata={k: v for k, v in nb.metadata.items() if k != "papermill"})
    header = nbformat.v4.new_markdown_cell(HEADER.format(title=_title(nb, name), name=name))
    header["id"] = "assignment-header"
    cells = [header]
    for cell in nb.cells:
        new = nbformat.from_dict(dict(cell))
        new.metadata = {k: v for k, v in cell.metadata.items() if k not in {"papermill", "execution"}}
        solution = "solution" in new.metadata.get("tags", [])
        if new.cell_type == "code":
            new.outputs = []
            new.execution_count = None
            if solution:
                new.source = stub_solution(cell.source)
        elif solution:
            new.source = EXPLANATION_PLACEHOLDER
        cells.append(new)
    out.cells = cells
    return out


def export(notebooks=None, out_dir=None):
    """Write the student versions of the paper notebooks; return their paths."""
    nbformat = require("nbformat", "notebooks")
    out_dir = Path(out_dir) if out_dir is not None else assignments_dir()
    paths = (
        [Path(p) for p in notebooks]
        if notebooks
        else sorted(p for p in _paths.notebook_dir().glob("[0-9][0-9]_*.ipynb") if not p.name.startswith("00_"))
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        target = out_dir / path.name
        nbformat.write(student_version(nb, path.name), target)
        written.append(target)
    return written

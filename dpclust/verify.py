"""``verify``: rerun the notebooks and compare every result table with the committed one.

Each notebook runs under the paper profile with its ``results_dir`` and
``figures_dir`` parameters pointing into a temporary folder, so nothing
committed is touched. Every CSV it writes is then compared with the committed
CSV of the same name, cell by cell, as the committed ``tables.json`` declares
(:func:`dpclust.experiments.save_results`): rows matched by the table's key
(or by position), numeric cells within ``rtol``/``atol`` (exact by default, as
seeded results are). The timings, which ``save_results`` writes apart (in
``timings/``), and a ledger's rows graded on run times are not compared. A table
on one side only is reported too.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from .experiments import is_timing_column, read_manifest
from .verdicts import REPLICATES

__all__ = ["compare_tables", "compare_folders", "verify", "stability"]

DIFF_COLUMNS = ["notebook", "table", "row", "column", "committed", "new"]
ABSENT = "(absent)"


def _default_spec(frame):
    return {"key": [], "timing": [c for c in frame.columns if is_timing_column(c)], "rtol": 0.0, "atol": 0.0}


def _row_labels(frame, key):
    if not key:
        return [str(i) for i in range(len(frame))]
    return [", ".join(f"{k}={v}" for k, v in zip(key, values)) for values in frame[key].itertuples(index=False)]


def _show(value):
    return "" if pd.isna(value) else repr(value.item() if isinstance(value, np.generic) else value)


def _same(committed, new, rtol, atol):
    """Element-wise equality of two columns (NaN equals NaN); numbers within rtol/atol."""
    both_na = committed.isna().to_numpy() & new.isna().to_numpy()
    if (
        pd.api.types.is_numeric_dtype(committed)
        and pd.api.types.is_numeric_dtype(new)
        and not pd.api.types.is_bool_dtype(committed)
        and not pd.api.types.is_bool_dtype(new)
    ):
        a, b = committed.to_numpy(dtype=float), new.to_numpy(dtype=float)
        with np.errstate(invalid="ignore"):
            close = np.isclose(b, a, rtol=rtol, atol=atol) if (rtol or atol) else (a == b)
        return close | both_na
    return (committed.astype(str).to_numpy() == new.astype(str).to_numpy()) | both_na


def compare_tables(committed, new, spec=None):
    """The differing cells of two versions of one table: a list of (row, column, committed, new).

    ``spec`` is the table's declaration (key, timing, rtol, atol); None: rows by
    position, the ``seconds``/``*_seconds`` columns ignored, exact.

    Parameters
    ----------
    committed, new : DataFrame
    spec : dict, optional
        As :func:`dpclust.experiments.table_spec` returns it.

    Returns
    -------
    list of (row, column, committed, new)
        Cells as text; ``"(absent)"`` marks a row or column on one side only.

    Examples
    --------
    >>> committed = pd.DataFrame({"epsilon": [0.5, 1.0, 2.0], "nicv": [0.31, 0.12, 0.05], "seconds": [0.8, 0.7, 0.6]})
    >>> new = pd.DataFrame({"epsilon": [0.5, 1.0, 4.0], "nicv": [0.31, 0.125, 0.02], "seconds": [0.9, 0.6, 0.5]})
    >>> compare_tables(committed, new)  # rows by position, exact; the timings are ignored
    [('2', 'epsilon', '2.0', '4.0'), ('1', 'nicv', '0.12', '0.125'), ('2', 'nicv', '0.05', '0.02')]
    >>> compare_tables(committed, new, {"key": ["epsilon"], "timing": ["seconds"], "rtol": 0.05})
    [('epsilon=2.0', '(row)', '(row)', '(absent)'), ('epsilon=4.0', '(row)', '(absent)', '(row)')]
    """
    spec = spec or _default_spec(committed)
    key, timing = list(spec.get("key", [])), set(spec.get("timing", []))
    rtol, atol = float(spec.get("rtol", 0.0)), float(spec.get("atol", 0.0))
    diffs = []
    for column in committed.columns.union(new.columns, sort=False):
        if column in timing:
            continue
        if column not in new.columns:
            diffs.append(("(all)", column, "(column)", ABSENT))
        elif column not in committed.columns:
            diffs.append(("(all)", column, ABSENT, "(column)"))
    if any(k not in committed.columns or k not in new.columns for k in key):
        return diffs  # reported above: a key column is missing on one side
    old_rows = dict(zip(_row_labels(committed, key), range(len(committed))))
    new_rows = dict(zip(_row_labels(new, key), range(len(new))))
    for label in old_rows.keys() - new_rows.keys():
        diffs.append((label, "(row)", "(row)", ABSENT))
    for label in new_rows.keys() - old_rows.keys():
        diffs.append((label, "(row)", ABSENT, "(row)"))
    timed = {", ".join(f"{k}={v}" for k, v in zip(key, row)) for row in spec.get("timing_rows", [])}
    shared = [label for label in old_rows if label in new_rows and label not in timed]
    if not shared:
        return diffs
    a = committed.iloc[[old_rows[label] for label in shared]].reset_index(drop=True)
    b = new.iloc[[new_rows[label] for label in shared]].reset_index(drop=True)
    for column in committed.columns:
        if column in timing or column in key or column not in new.columns:
            continue
        same = _same(a[column], b[column], rtol, atol)
        for i in np.flatnonzero(~same):
            diffs.append((shared[i], column, _show(a[column].iloc[i]), _show(b[column].iloc[i])))
    return diffs


def _read_table(path):
    """A result table; an empty file (a table saved with no columns, e.g. a run without its data) is an
    empty frame to compare, not an error that stops the comparison of every other table."""
    try:
        return pd.read_csv(path)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()


def compare_folders(notebook, committed_dir, new_dir):
    """Every difference between the result CSVs of two folders, as a DataFrame (DIFF_COLUMNS).

    The committed folder's ``tables.json`` says how each table is compared. Its ``replicates.csv`` (the
    stability run's draws, which no rerun writes) is not a table of the run.

    Parameters
    ----------
    notebook : str
        The notebook's stem, written in the ``notebook`` column.
    committed_dir, new_dir : path-like
        The committed results and a rerun's.

    Returns
    -------
    DataFrame with columns notebook, table, row, column, committed, new

    Examples
    --------
    >>> import os, tempfile
    >>> from dpclust.experiments import save_results
    >>> frame = pd.DataFrame({"epsilon": [0.5, 1.0], "nicv": [0.31, 0.12], "seconds": [0.8, 0.7]})
    >>> with tempfile.TemporaryDirectory() as committed, tempfile.TemporaryDirectory() as new:
    ...     _ = save_results(frame, "03_x", "nicv", committed, key="epsilon", rtol=0.05)
    ...     _ = save_results(frame, "03_x", "ledger", committed)
    ...     _ = save_results(frame.assign(nicv=[0.32, 0.10], seconds=[2.0, 3.0]), "03_x", "nicv", new)
    ...     diffs = compare_folders("03_x", committed, new)
    >>> diffs.values.tolist()  # 0.32 is within 5% of 0.31, 0.10 is not; the ledger was not written again
    [['03_x', 'ledger', '(table)', '', '(table)', '(absent)'], ['03_x', 'nicv', 'epsilon=1.0', 'nicv', '0.12', '0.1']]
    """
    committed_dir, new_dir = Path(committed_dir), Path(new_dir)
    manifest = read_manifest(committed_dir)
    old = {p.stem: p for p in committed_dir.glob("*.csv") if p.name != REPLICATES} if committed_dir.is_dir() else {}
    new = {p.stem: p for p in new_dir.glob("*.csv")} if new_dir.is_dir() else {}
    rows = []
    for table in sorted(old.keys() | new.keys()):
        if table not in new:
            rows.append((notebook, table, "(table)", "", "(table)", ABSENT))
            continue
        if table not in old:
            rows.append((notebook, table, "(table)", "", ABSENT, "(table)"))
            continue
        a, b = _read_table(old[table]), _read_table(new[table])
        for row, column, x, y in compare_tables(a, b, manifest.get(table)):
            rows.append((notebook, table, row, str(column), x, y))
    return pd.DataFrame(rows, columns=DIFF_COLUMNS)


def _calls(paths, root, timeout, seed=None):
    """The paper-profile runs of notebooks into ``root/<stem>/`` (at another root seed if given)."""
    from . import reproduce as rep

    calls = []
    for path in paths:
        params = {"results_dir": str(root / path.stem / "results"), "figures_dir": str(root / path.stem / "figures")}
        if seed is not None:
            params["seed"] = int(seed)
        call = dict(notebook=path, output_path=root / path.stem / path.name, parameters=params, profile="paper")
        calls.append({**call, "timeout": timeout or rep.DEFAULT_CELL_TIMEOUT})
        Path(call["output_path"]).parent.mkdir(parents=True, exist_ok=True)
    return calls


def _rerun(paths, root, jobs, timeout, progress, seed=None):
    """Run notebooks in the paper profile into ``root/<stem>/`` (at another root seed if given): (summary, calls)."""
    from . import reproduce as rep

    calls = _calls(paths, root, timeout, seed)
    return rep.run_batch(calls, jobs, progress=progress), calls


def verify(notebooks=None, jobs=1, timeout=None, keep=None, progress=None, seed=None):
    """Rerun notebooks (paper profile) into a temporary folder and compare their result tables.

    With ``seed``, the notebooks run at that root seed instead, and each headline verdict is compared with
    the verdict once the rerun joins its replicates (:func:`dpclust.verdicts.rerun_headlines`): a verdict that
    survives a rerun at another seed is the same.

    Parameters
    ----------
    notebooks : names, numbers or paths (default: all)
    jobs : notebooks run side by side
    timeout : seconds allowed per cell (default: reproduce's)
    keep : a folder to keep the reruns in (default: a temporary folder, removed)
    progress : show progress (None: on a terminal)
    seed : int, optional
        Another root seed: compare the headline verdicts, not the tables (paper notebooks with a ledger only).

    Returns
    -------
    (summary of the runs, DataFrame of the differing cells and missing tables)
        A rerun that could not reach a data set the committed run had says so in its ``note``.

    Examples
    --------
    A rerun runs every notebook asked for, so each name is resolved before any starts:

    >>> import os, pathlib, tempfile
    >>> from unittest import mock
    >>> with tempfile.TemporaryDirectory() as home, mock.patch.dict(os.environ, {"DPCLUST_HOME": home}):
    ...     pathlib.Path(home, "notebooks").mkdir()
    ...     pathlib.Path(home, "Makefile").touch()
    ...     pathlib.Path(home, "notebooks", "01_toy.ipynb").touch()
    ...     verify(["01", "07"])
    Traceback (most recent call last):
    ...
    ValueError: unknown notebook='07'; known: 01_toy
    """
    from . import reproduce as rep

    paths = [rep.resolve_notebook(n) for n in notebooks] if notebooks else rep.list_notebooks()
    rep.recover_interrupted_commits()  # compare with whole commits, never with a half-done one
    if seed is not None:
        paths = [p for p in paths if (rep.committed_results_dir(p.stem) / "ledger.csv").is_file()]
    with tempfile.TemporaryDirectory(prefix="dpclust-verify-") as tmp:
        root = Path(keep) if keep is not None else Path(tmp)
        summary, calls = _rerun(paths, root, jobs, timeout, progress, seed)
        diffs = []
        for i, (path, call, status) in enumerate(zip(paths, calls, summary["status"])):
            if status != "ok":
                continue  # a failed run is in the summary; its partial tables would only add noise
            lacked = _lacked_data(path, call)
            if lacked:  # its tables differ for that reason: say so beside them
                summary.loc[i, "note"] = f"the rerun could not reach the data sets {lacked} (python -m dpclust data)"
            committed, new = rep.committed_results_dir(path.stem), call["parameters"]["results_dir"]
            diffs.append(compare_folders(path.stem, committed, new) if seed is None else _verdict_diffs(path, new))
    table = pd.concat(diffs, ignore_index=True) if diffs else pd.DataFrame(columns=DIFF_COLUMNS)
    return summary, table


def _lacked_data(path, call):
    """The data sets a rerun could not reach that the committed run had ("" when none)."""
    from . import reproduce as rep

    return ", ".join(sorted(set(rep.absent_data_sets(call["output_path"])) - set(rep.absent_data_sets(path))))


def _verdict_diffs(path, rerun_dir):
    """The headline verdicts of a notebook that a rerun at another seed would change, as verify's rows."""
    from . import reproduce as rep
    from .verdicts import rerun_headlines

    found = rerun_headlines(rep.committed_results_dir(path.stem), rerun_dir, path)
    moved = found[~found["survives"]]
    rows = [
        [path.stem, "verdicts", f"claim_id={c}" + (f", reading={r}" if r else ""), "verdict", old, new]
        for c, r, old, new in moved[["claim_id", "reading", "committed", "with_rerun"]].itertuples(index=False)
    ]
    return pd.DataFrame(rows, columns=DIFF_COLUMNS)


def stability(notebooks=None, seeds=(1, 2, 3, 4), jobs=1, timeout=None, progress=None):
    """The stability run: rerun the paper notebooks at other root seeds and commit every draw beside each ledger.

    Each notebook's ``replicates.csv`` (:func:`dpclust.verdicts.replicate_table`) is replaced only when all its
    runs succeeded. The committed notebooks then need a ``reproduce`` to show the new replicates.

    Parameters
    ----------
    notebooks : names, numbers or paths (default: every notebook with a ledger)
    seeds : sequence of int
        The root seeds of the replicates (the committed run's seed, 0, is the other one).
    jobs, timeout, progress : as in :func:`verify`

    Returns
    -------
    (summary of the runs, list of the replicates files written)

    Examples
    --------
    >>> stability(seeds=())
    Traceback (most recent call last):
    ...
    ValueError: seeds must name at least one root seed, got seeds=()
    """
    from . import reproduce as rep
    from .verdicts import replicate_table

    seeds = [int(s) for s in seeds]
    if not seeds or len(set(seeds)) != len(seeds) or min(seeds) < 1:
        raise ValueError(f"seeds must name at least one root seed, got seeds={tuple(seeds)!r}")
    paths = [rep.resolve_notebook(n) for n in notebooks] if notebooks else rep.list_notebooks()
    paths = [p for p in paths if (rep.committed_results_dir(p.stem) / "ledger.csv").is_file()]
    rep.recover_interrupted_commits()
    written = []
    with tempfile.TemporaryDirectory(prefix="dpclust-stability-") as tmp:
        # every (seed, notebook) run in one batch, so that jobs runs side by side whatever the number of notebooks
        calls = [call for seed in seeds for call in _calls(paths, Path(tmp) / f"seed-{seed}", timeout, seed)]
        summary = rep.run_batch(calls, jobs, progress=progress)
        summary["seed"] = [call["parameters"]["seed"] for call in calls]
        for i, call in enumerate(calls):
            path = Path(call["notebook"])
            lacked = _lacked_data(path, call)
            lost = rep.claims_lost(call["parameters"]["results_dir"], rep.committed_results_dir(path.stem))
            if lacked or lost:  # its draws would be "not run" where the committed run graded: never written
                summary.loc[i, ["status", "note"]] = ["failed", f"could not reach the data sets {lacked}"]
        for path in paths:
            if not (summary.loc[summary["notebook"] == path.stem, "status"] == "ok").all():
                continue
            runs = {seed: Path(tmp) / f"seed-{seed}" / path.stem / "results" for seed in seeds}
            target = rep.committed_results_dir(path.stem) / REPLICATES
            replicate_table(runs, path).to_csv(target, index=False)
            written.append(target)
    return summary, written

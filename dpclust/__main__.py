"""Command line: ``dpclust {reproduce, verify, stability, readme, sweep, grade, data, assignments} ...`` (or
``python -m dpclust ...``).

``reproduce``, ``verify``, ``sweep``, ``grade`` and ``assignments`` work on the compendium (its
notebooks and result folders), found from ``$DPCLUST_HOME`` or upwards from the working directory.
Every command first completes a commit that a killed ``reproduce`` left half done.

  reproduce [--profile paper|smoke] [--jobs N] [--timeout S] [--out DIR] [--allow-missing-data] [--resume]
            [NOTEBOOK ...]
      run notebooks with papermill into a staging folder; a run that finished replaces the
      notebook, its tables and its figures together (paper profile: the committed ones), a failed
      or interrupted one changes nothing and is kept in data/results/failed/, and so is one that
      could not reach data the committed results had (unless --allow-missing-data); with --resume,
      skip each notebook whose last committed run read the same notebook, code, packages and data
      (after an interrupted or failed batch: only what did not finish); print a summary (with each
      ledger's verdict counts and the wall time)
  verify [--jobs N] [--timeout S] [--keep DIR] [--seed S] [NOTEBOOK ...]
      rerun notebooks (paper profile) into a temporary folder and compare every result table
      with the committed one; exit 1 and list the differing cells if any differ. With --seed, rerun
      at another root seed and list the headline verdicts that the rerun's draws would change
  stability [--seeds S ...] [--jobs N] [--timeout S] [NOTEBOOK ...]
      rerun the paper notebooks at other root seeds (default 1 2 3 4), write each one's draws
      beside its ledger (replicates.csv), then reproduce them and the overview with those replicates
  readme
      write the README's verdict section from the committed ledgers (reproduce does it too)
  sweep NOTEBOOK (--grid NAME=V1,V2,... | --grid-file FILE) ... [-p NAME VALUE ...] [--profile P] --out DIR
        [--jobs N] [--timeout S] [--scheduler ADDRESS | --scheduler-file FILE]
      one papermill run per grid point (on a Dask cluster with --scheduler or --scheduler-file);
      every point's notebook, tables and figures under DIR/<point>/, each table concatenated
      over the points in DIR/<table>.csv, one row per point in DIR/sweep_points.csv
  grade SUBMISSION.ipynb ... --out grades.csv [--time-limit S] [--teacher NOTEBOOK] [--unsandboxed]
      grade submissions with nbgrader's autograde in a temporary course (for a teacher without one);
      write nbgrader's export of it (grades.csv) and the autograded notebooks (grades_autograded/)
  data [--fetch]
      show which data files are present (and download the missing ones)
  assignments [--out DIR] [--student] [NOTEBOOK ...]
      write the paper notebooks as an nbgrader course (default: assignments/): source/<stem>/<stem>.ipynb,
      grading/<stem>.json (never released) and nbgrader_config.py; with --student, the handouts
      <name>.ipynb instead (graded by `grade`); never overwrites a notebook that exists
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import pandas as pd

from ._paths import CompendiumNotFoundError

__all__ = ["build_parser", "main"]


def _grid_arg(text):
    from .sweep import parse_grid

    try:
        return parse_grid(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _int_at_least(text, low, what):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
    return value


def _positive_int(text):
    return _int_at_least(text, 1, "a positive integer")


def _non_negative_int(text):
    return _int_at_least(text, 0, "an integer >= 0")


def build_parser(prog="python -m dpclust"):
    """The command line's argument parser: one subcommand per task (see the module docstring).

    Parameters
    ----------
    prog : str, default "python -m dpclust"
        The program's name in the usage and error messages.

    Returns
    -------
    argparse.ArgumentParser

    Examples
    --------
    >>> argv = ["sweep", "03", "--grid", "epsilons=[0.5,1],[2]", "-p", "seed", "7", "--out", "runs"]
    >>> args = build_parser().parse_args(argv)
    >>> args.command, args.notebook, args.grid, args.parameter, args.out, args.jobs
    ('sweep', '03', [('epsilons', [[0.5, 1], [2]])], [['seed', '7']], 'runs', 1)
    >>> args = build_parser().parse_args(["reproduce", "--profile", "smoke", "01", "02"])
    >>> args.notebooks, args.profile, args.timeout
    (['01', '02'], 'smoke', 1800)
    """
    parser = argparse.ArgumentParser(prog=prog, description="dpclust: run the executable papers.")
    sub = parser.add_subparsers(dest="command", required=True)

    rep = sub.add_parser(
        "reproduce",
        help="run notebooks with papermill (paper profile: replace the committed outputs) and print a summary",
    )
    rep.add_argument("notebooks", nargs="*", metavar="NOTEBOOK", help="paths, names or numbers (default: all)")
    rep.add_argument("--profile", choices=["paper", "smoke"], default="paper")
    rep.add_argument("--jobs", type=_positive_int, default=1, help="notebooks run side by side")
    rep.add_argument("--timeout", type=_positive_int, default=1800, help="seconds allowed per cell")
    rep.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="where the executed notebooks go (default: in place for paper, data/results/smoke/notebooks for smoke); "
        "the tables and figures still go to the profile's folders, the committed ones for paper "
        "(verify reruns without touching them)",
    )
    rep.add_argument(
        "--allow-missing-data",
        action="store_true",
        help="commit a run that could not reach data the committed results had (it is refused otherwise)",
    )
    rep.add_argument(
        "--resume",
        action="store_true",
        help="skip the notebooks whose last committed run under this profile read the same notebook, code, "
        "installed packages and data sets (after an interrupted or failed batch: only what did not finish)",
    )

    _add_sweep(sub)

    _add_checks(sub)
    _add_grade(sub)

    data = sub.add_parser("data", help="show (and fetch) the data files")
    data.add_argument("--fetch", action="store_true", help="download the missing files")

    _add_assignments(sub)
    return parser


def _add_checks(sub):
    """The reviewer's subcommands: ``verify``, ``stability`` and ``readme``."""
    ver = sub.add_parser(
        "verify", help="rerun notebooks (paper profile) and compare their tables with the committed ones"
    )
    ver.add_argument("notebooks", nargs="*", metavar="NOTEBOOK", help="paths, names or numbers (default: all)")
    ver.add_argument("--jobs", type=_positive_int, default=1, help="notebooks run side by side")
    ver.add_argument("--timeout", type=_positive_int, default=1800, help="seconds allowed per cell")
    ver.add_argument("--keep", default=None, metavar="DIR", help="keep the reruns in DIR (default: a temporary folder)")
    ver.add_argument(
        "--seed",
        type=_non_negative_int,
        default=None,
        help="rerun at another root seed and check that every headline verdict survives (tables are not compared)",
    )

    stab = sub.add_parser(
        "stability",
        help="rerun the paper notebooks at other root seeds, commit their draws (replicates.csv), then reproduce",
    )
    stab.add_argument("notebooks", nargs="*", metavar="NOTEBOOK", help="paths, names or numbers (default: all)")
    stab.add_argument("--seeds", type=_positive_int, nargs="+", default=[1, 2, 3, 4], help="the replicates' seeds")
    stab.add_argument("--jobs", type=_positive_int, default=1, help="notebooks run side by side")
    stab.add_argument("--timeout", type=_positive_int, default=1800, help="seconds allowed per cell")

    sub.add_parser("readme", help="write the README's verdict section from the committed ledgers")


def _add_grade(sub):
    """The ``grade`` subcommand: nbgrader's autograde of submissions in a temporary course."""
    gr = sub.add_parser(
        "grade", help="grade submissions with nbgrader's autograde in a temporary course (needs the [teach] extra)"
    )
    gr.add_argument("submissions", nargs="+", metavar="SUBMISSION.ipynb")
    gr.add_argument(
        "--out", required=True, metavar="grades.csv", help="nbgrader's export; the autograded notebooks go next to it"
    )
    gr.add_argument(
        "--time-limit", type=_positive_int, default=300, metavar="S", help="seconds per cell and per function call"
    )
    gr.add_argument(
        "--teacher",
        default=None,
        metavar="NOTEBOOK",
        help="the teacher notebook (default: the compendium's notebook the submission's header names)",
    )
    gr.add_argument(
        "--unsandboxed",
        action="store_true",
        help="grade where bubblewrap is not available, the students' code running with your rights (it can read "
        "the grading keys and write every file you can); without it, grading refuses there",
    )


def _add_sweep(sub):
    """The ``sweep`` subcommand: one papermill run per grid point, here or on a Dask cluster."""
    sw = sub.add_parser(
        "sweep",
        help="one papermill run per point of a parameter grid, here or on a Dask cluster",
        description="One papermill run of NOTEBOOK per point of the grid; every point's notebook, tables and "
        "figures under DIR/<point>/, each table over the points in DIR/<table>.csv, one row per point in "
        "DIR/sweep_points.csv. A parameter declared a list (PositiveFloats) given one number gets a list of one "
        "(--grid epsilons=0.5,1,2 is one run per value); lists go in brackets (--grid 'epsilons=[0.5,1],[2]').",
    )
    sw.add_argument("notebook", metavar="NOTEBOOK")
    sw.add_argument("--grid", type=_grid_arg, action="append", default=[], metavar="NAME=V1,V2,...")
    sw.add_argument("--grid-file", default=None, metavar="FILE", help="a JSON or YAML mapping NAME: [V1, V2, ...]")
    sw.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"))
    sw.add_argument("--profile", choices=["paper", "smoke"], default=None, help="default: $DPCLUST_PROFILE, else paper")
    sw.add_argument("--jobs", type=_positive_int, default=1, help="points run side by side here")
    sw.add_argument("--out", required=True, metavar="DIR")
    sw.add_argument("--timeout", type=_positive_int, default=1800, help="seconds allowed per cell")
    where = sw.add_mutually_exclusive_group()
    where.add_argument("--scheduler", default=None, metavar="ADDRESS", help="a Dask scheduler (tcp://host:8786)")
    where.add_argument(
        "--scheduler-file",
        default=None,
        metavar="FILE",
        help="the scheduler file a Dask scheduler wrote (dask scheduler --scheduler-file, dask-jobqueue, dask-mpi)",
    )


def _add_assignments(sub):
    """The ``assignments`` subcommand: an nbgrader course by default, the plain student versions with --student."""
    asg = sub.add_parser(
        "assignments",
        help="write the paper notebooks as an nbgrader course (or, with --student, as plain student versions)",
        description="Write the paper notebooks as an nbgrader course: DIR/source/<stem>/<stem>.ipynb (the nbgrader "
        "source notebooks: solution regions, autograded locked test cells, manually graded answers), "
        "DIR/grading/<stem>.json (what the grader needs and students never see) and DIR/nbgrader_config.py "
        "(kept if it exists). With --student: DIR/<name>.ipynb, the notebooks as nbgrader releases them (handouts, "
        "graded by `grade`). A file that exists is never overwritten.",
    )
    asg.add_argument("notebooks", nargs="*", metavar="NOTEBOOK", help="paths, names or numbers (default: 01-05)")
    asg.add_argument("--out", default=None, metavar="DIR", help="default: assignments/ in the compendium")
    asg.add_argument(
        "--student",
        action="store_true",
        help="write the plain student versions (DIR/<name>.ipynb) instead of an nbgrader course",
    )


def _print_summary(summary, wall):
    """The batch summary: one row per notebook with its ledger's verdict counts; errors and notes below it."""
    print(summary.drop(columns=["error", "note"], errors="ignore").to_string(index=False))
    for row in summary.itertuples(index=False):
        if row.status != "ok":
            print(f"\n{row.notebook} failed: {row.error}")
        if getattr(row, "note", ""):
            print(f"\n{row.notebook}: {row.note}")
    print(f"wall time {_clock(wall)} (the notebooks' own times add up to {_clock(summary['seconds'].sum())})")


def _clock(seconds):
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes} min {secs} s" if minutes else f"{secs} s"


def main(argv=None):
    """Run the command line (the ``dpclust`` console script); return the exit status.

    Bad notebook names, bad notebook parameters, a notebook another run is reproducing and a
    missing compendium give a message on stderr and status 2, not a traceback; Ctrl-C gives
    what was kept and status 130.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: 0 when every run succeeded (and, for ``verify``, every table matched), 1 when
        one failed, 2 for bad input, 130 after Ctrl-C.

    Examples
    --------
    >>> import contextlib, os, pathlib, sys, tempfile
    >>> from unittest import mock
    >>> with tempfile.TemporaryDirectory() as home, mock.patch.dict(os.environ, {"DPCLUST_HOME": home}):
    ...     pathlib.Path(home, "notebooks").mkdir()
    ...     pathlib.Path(home, "Makefile").touch()
    ...     pathlib.Path(home, "notebooks", "01_toy.ipynb").touch()
    ...     with contextlib.redirect_stderr(sys.stdout):  # show the message printed on stderr
    ...         status = main(["reproduce", "--profile", "smoke", "07"])
    error: unknown notebook='07'; known: 01_toy
    >>> status
    2
    """
    prog = "dpclust" if Path(sys.argv[0]).name == "dpclust" else "python -m dpclust"
    args = build_parser(prog).parse_args(argv)
    try:
        _complete_interrupted_commits()
        return _run(args)
    except (ValueError, CompendiumNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        print(f"interrupted: {exc}" if str(exc) else "interrupted", file=sys.stderr)
        return 130


def _complete_interrupted_commits():
    from .reproduce import recover_interrupted_commits

    for stem in recover_interrupted_commits():
        print(f"completed the commit of {stem} that a killed run had left half done", file=sys.stderr)


def _reproduce(args):
    from .reproduce import reproduce

    start = time.perf_counter()
    summary = reproduce(
        args.notebooks,
        profile=args.profile,
        jobs=args.jobs,
        timeout=args.timeout,
        output_dir=args.out,
        allow_missing_data=args.allow_missing_data,
        resume=args.resume,
    )
    _print_summary(summary, time.perf_counter() - start)
    if args.profile == "paper" and args.out is None:
        _write_readme()
    return 0 if (summary["status"] == "ok").all() else 1


def _verify(args):
    from .verify import verify

    start = time.perf_counter()
    summary, diffs = verify(args.notebooks, jobs=args.jobs, timeout=args.timeout, keep=args.keep, seed=args.seed)
    _print_summary(summary, time.perf_counter() - start)
    if len(diffs):
        what = "headline verdicts a rerun at this seed would change" if args.seed is not None else "differences"
        print(f"\n{len(diffs)} {what} with the committed results:")
        print(diffs.to_string(index=False))
    elif args.seed is not None:
        print(f"every headline verdict survives a rerun at root seed {args.seed}")
    else:
        print("every result table matches the committed one")
    return 0 if (summary["status"] == "ok").all() and not len(diffs) else 1


def _write_readme():
    """The README's verdict section from the committed ledgers; say when it changed."""
    from . import _paths
    from .reproduce import OVERVIEW_PREFIX, list_notebooks
    from .verdicts import update_readme

    papers = [p.stem for p in list_notebooks() if not p.stem.startswith(OVERVIEW_PREFIX)]
    if update_readme(_paths.project_dir() / "README.md", papers):
        print("README.md: the verdict section now says what the ledgers say")


def _readme(args):
    _write_readme()
    return 0


def _stability(args):
    from .reproduce import OVERVIEW_PREFIX, list_notebooks, reproduce
    from .verify import stability

    start = time.perf_counter()
    summary, written = stability(args.notebooks, seeds=args.seeds, jobs=args.jobs, timeout=args.timeout)
    _print_summary(summary, time.perf_counter() - start)
    for path in written:
        print(f"wrote {path}")
    if not written:
        return 1
    # The committed notebooks and ledgers combine their own draw with the new replicates, and the overview gathers them.
    again = [path.parent.name for path in written] + [
        p.stem for p in list_notebooks() if p.stem.startswith(OVERVIEW_PREFIX)
    ]
    rerun = reproduce(again, profile="paper", jobs=args.jobs, timeout=args.timeout)
    _print_summary(rerun, time.perf_counter() - start)
    _write_readme()
    return 0 if (summary["status"] == "ok").all() and (rerun["status"] == "ok").all() else 1


def _grade(args):
    from .grade import grade

    book = grade(
        args.submissions, args.out, teacher=args.teacher, time_limit=args.time_limit, unsandboxed=args.unsandboxed
    )
    columns = ["student_id", "assignment", "status", "autograded", "autograded_max", "written_pending", "flags"]
    print(book[columns].to_string(index=False))
    print(f"grades: {args.out}")
    return 0 if book["status"].isin(["graded", "written answers pending"]).all() else 1


def _sweep(args):
    from .sweep import parse_value, read_grid_file, sweep_notebook

    grid = dict(args.grid)
    if args.grid_file is not None:
        from_file = read_grid_file(args.grid_file)
        twice = sorted(set(grid) & set(from_file))
        if twice:
            raise ValueError(f"{', '.join(twice)} is given both by --grid and in --grid-file {args.grid_file}")
        grid.update(from_file)
    if not grid:
        raise ValueError("give the grid: --grid NAME=V1,V2,... (repeatable) or --grid-file FILE")
    params = {name: parse_value(value) for name, value in args.parameter}
    client = _connect(args)
    start = time.perf_counter()
    try:
        summary, tables = sweep_notebook(
            args.notebook,
            grid,
            args.out,
            parameters=params,
            profile=args.profile,
            jobs=args.jobs,
            timeout=args.timeout,
            scheduler=client,
        )
    finally:
        if client is not None:
            client.close()
    _print_points(summary, tables, Path(args.out).expanduser().resolve(), time.perf_counter() - start)
    return 0 if (summary["status"] == "ok").all() else 1


def _connect(args):
    """The Dask client of --scheduler / --scheduler-file (None: run here); one line says where the points go."""
    if args.scheduler is None and args.scheduler_file is None:
        print(f"running the points here, {args.jobs} side by side", flush=True)
        return None
    from .cluster import connect, describe_workers

    client = connect(args.scheduler, args.scheduler_file)
    print(f"running the points on the Dask scheduler at {client.scheduler.address} ({describe_workers(client)})")
    return client


def _print_points(summary, tables, out, wall):
    """The sweep's summary: one row per point, the failures, what was gathered where, the wall time."""
    print(summary.drop(columns="error").to_string(index=False))
    for row in summary.itertuples(index=False):
        if row.status != "ok":
            print(f"\n{row.point} failed: {row.error}")
    rows = ", ".join(f"{name}.csv {len(frame)}" for name, frame in tables.items())
    print(f"\nin {out}: each point's notebook, tables and figures in its folder; one row per point in sweep_points.csv")
    print(f"{len(tables)} tables over the points that succeeded (rows): {rows or 'none'}")
    print(f"wall time {_clock(wall)}")


def _assignments(args):
    from .assignments import export
    from .reproduce import resolve_notebook

    kind = "student" if args.student else "nbgrader"
    paths = export([resolve_notebook(n) for n in args.notebooks] or None, args.out, kind=kind)
    for path in paths:
        print(f"wrote {path}")
    return 0


def _data(args):
    """The data files: which are present, where; with --fetch, download the missing ones first."""
    from .datasets import available, default_raw_dir, fetch_missing

    raw = default_raw_dir()
    before = {p for p in [raw, *raw.parents] if p.is_dir()}
    before |= {p for p in raw.rglob("*") if p.is_dir()} if raw.is_dir() else set()
    try:
        table = fetch_missing() if args.fetch else available()
    finally:
        _remove_new_empty_folders(raw, before)
    print(_data_table(table))
    from .reproduce import data_the_notebooks_use

    try:
        named, needed = data_the_notebooks_use(table["dataset"].unique())
    except CompendiumNotFoundError:  # the installed package alone: no committed results to remake
        return 0
    lacking = set(table.loc[~table["present"].astype(bool) & (table["status"] != "generated"), "dataset"])
    if lacking & needed:
        print(f"The committed results were made with {', '.join(sorted(lacking & needed))}, which this machine lacks.")
        return 1
    if lacking:
        ran_without, unread = sorted(lacking & named), sorted(lacking - named)
        print("Every file the committed results were made with is here.", end="")
        print(f" They were made without {', '.join(ran_without)} ('not run' rows)." if ran_without else "", end="")
        print(f" No notebook reads {', '.join(unread)}." if unread else "")
    return 0


def _remove_new_empty_folders(raw, before):
    """A failed download leaves no empty folder behind (folders that were there before are kept)."""
    inside = sorted((p for p in raw.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)) if raw.is_dir() else []
    for folder in inside:
        if folder not in before and not any(folder.iterdir()):
            folder.rmdir()
    for folder in [raw, *raw.parents]:  # then the folders made to hold it, up to the first one that was there
        if folder in before or not folder.is_dir() or any(folder.iterdir()):
            return
        folder.rmdir()


def _data_table(table, width=160):
    """One short line per file, left-aligned; the reasons of failed downloads as numbered notes (URLs left out)."""
    from ._paths import find_project_dir

    home, notes, lines = find_project_dir(), {}, [("dataset", "file", "status", "location")]
    for row in table.itertuples(index=False):
        status = str(row.status)
        if status.startswith("download failed: "):
            reason = status.removeprefix("download failed: ")
            if isinstance(row.url, str):
                reason = reason.replace(row.url, "").replace("/" + row.url.split("/", 3)[-1], "")
            number = notes.setdefault(" ".join(reason.split()), len(notes) + 1)
            status = f"download failed ({number})"
        where = row.location if isinstance(row.location, str) else ""
        if home is not None and where.startswith(f"{home}{os.sep}"):
            where = where[len(str(home)) + 1 :]
        lines.append((row.dataset, row.file if isinstance(row.file, str) else "(generated)", status, where))
    widths = [max(len(line[i]) for line in lines) for i in range(3)]
    text = "\n".join("  ".join([*(v.ljust(w) for v, w in zip(line, widths)), line[3]]).rstrip() for line in lines)
    for reason, number in notes.items():
        note = f"({number}) {reason}"
        text += "\n" + (note if len(note) <= width else note[: width - 1] + "…")
    if notes or (table["status"] == "missing").any():
        text += (
            "\nA missing file goes in data/raw/<file> or in a folder listed in $DPCLUST_DATA_DIR; "
            "docs/data.md gives each URL."
        )
    return text


_COMMANDS = {
    "reproduce": _reproduce,
    "verify": _verify,
    "stability": _stability,
    "readme": _readme,
    "grade": _grade,
    "sweep": _sweep,
    "assignments": _assignments,
    "data": _data,
}


def _run(args):
    with pd.option_context("display.width", 200, "display.max_colwidth", 90, "display.max_rows", 200):
        return _COMMANDS[args.command](args)


if __name__ == "__main__":
    sys.exit(main())

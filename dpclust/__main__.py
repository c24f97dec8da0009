"""Command line: ``dpclust {reproduce, verify, sweep, grade, data, assignments} ...`` (or
``python -m dpclust ...``).

``reproduce``, ``verify``, ``sweep``, ``grade`` and ``assignments`` work on the compendium (its
notebooks and result folders), found from ``$DPCLUST_HOME`` or upwards from the working directory.

  reproduce [--profile paper|smoke] [--jobs N] [--timeout S] [--out DIR] [NOTEBOOK ...]
      run notebooks with papermill into a staging folder; a run that finished replaces the
      notebook, its tables and its figures together (paper profile: the committed ones), a failed
      or interrupted one changes nothing and is kept in data/results/failed/; print a summary
      (with each ledger's verdict counts)
  verify [--jobs N] [--timeout S] [--keep DIR] [NOTEBOOK ...]
      rerun notebooks (paper profile) into a temporary folder and compare every result table
      with the committed one; exit 1 and list the differing cells if any differ
  sweep NOTEBOOK --grid NAME=V1,V2,... [--grid ...] [-p NAME VALUE ...] --out DIR [--jobs N]
        [--scheduler ADDRESS]
      one papermill run per grid point (on a Dask cluster with --scheduler); the result CSVs
      concatenated under DIR
  grade SUBMISSION.ipynb ... --out grades.csv [--time-limit S] [--teacher NOTEBOOK]
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
import sys
from pathlib import Path

import pandas as pd

from ._paths import CompendiumNotFoundError

__all__ = ["build_parser", "main"]


def _grid_arg(text):
    from .reproduce import parse_value

    if "=" not in text:
        raise argparse.ArgumentTypeError(f"--grid needs NAME=V1,V2,..., got {text!r}")
    name, values = text.split("=", 1)
    items = [parse_value(v) for v in values.split(",") if v.strip()]
    if not name.strip() or not items:
        raise argparse.ArgumentTypeError(f"--grid needs a name and at least one value, got {text!r}")
    return name.strip(), items


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


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
    >>> args = build_parser().parse_args(["sweep", "03", "--grid", "epsilon=0.5,1", "-p", "seed", "7", "--out", "runs"])
    >>> args.command, args.notebook, args.grid, args.parameter, args.out, args.jobs
    ('sweep', '03', [('epsilon', [0.5, 1])], [['seed', '7']], 'runs', 1)
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
        help="where the executed notebooks go (default: in place for paper, data/results/smoke/notebooks for smoke)",
    )

    sw = sub.add_parser("sweep", help="one papermill run per point of a parameter grid")
    sw.add_argument("notebook", metavar="NOTEBOOK")
    sw.add_argument("--grid", type=_grid_arg, action="append", required=True, metavar="NAME=V1,V2,...")
    sw.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"))
    sw.add_argument("--profile", choices=["paper", "smoke"], default=None)
    sw.add_argument("--jobs", type=_positive_int, default=1)
    sw.add_argument("--out", required=True, metavar="DIR")
    sw.add_argument("--timeout", type=_positive_int, default=1800)
    sw.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="a Dask scheduler (tcp://host:8786): run the grid on its workers",
    )

    ver = sub.add_parser(
        "verify", help="rerun notebooks (paper profile) and compare their tables with the committed ones"
    )
    ver.add_argument("notebooks", nargs="*", metavar="NOTEBOOK", help="paths, names or numbers (default: all)")
    ver.add_argument("--jobs", type=_positive_int, default=1, help="notebooks run side by side")
    ver.add_argument("--timeout", type=_positive_int, default=1800, help="seconds allowed per cell")
    ver.add_argument("--keep", default=None, metavar="DIR", help="keep the reruns in DIR (default: a temporary folder)")

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

    data = sub.add_parser("data", help="show (and fetch) the data files")
    data.add_argument("--fetch", action="store_true", help="download the missing files")

    _add_assignments(sub)
    return parser


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


def _print_summary(summary):
    """The batch summary: one row per notebook with its ledger's verdict counts; errors below it."""
    print(summary.drop(columns="error").to_string(index=False))
    for row in summary.itertuples(index=False):
        if row.status != "ok":
            print(f"\n{row.notebook} failed: {row.error}")
    print(f"total: {summary['seconds'].sum():.1f} s (wall time is less with --jobs > 1)")


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
        return _run(args)
    except (ValueError, CompendiumNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        print(f"interrupted: {exc}" if str(exc) else "interrupted", file=sys.stderr)
        return 130


def _reproduce(args):
    from .reproduce import reproduce

    summary = reproduce(args.notebooks, profile=args.profile, jobs=args.jobs, timeout=args.timeout, output_dir=args.out)
    _print_summary(summary)
    return 0 if (summary["status"] == "ok").all() else 1


def _verify(args):
    from .verify import verify

    summary, diffs = verify(args.notebooks, jobs=args.jobs, timeout=args.timeout, keep=args.keep)
    _print_summary(summary)
    if len(diffs):
        print(f"\n{len(diffs)} differences with the committed results:")
        print(diffs.to_string(index=False))
    else:
        print("every result table matches the committed one")
    return 0 if (summary["status"] == "ok").all() and not len(diffs) else 1


def _grade(args):
    from .grade import grade

    book = grade(args.submissions, args.out, teacher=args.teacher, time_limit=args.time_limit)
    columns = ["student_id", "assignment", "status", "autograded", "autograded_max", "written_pending", "flags"]
    print(book[columns].to_string(index=False))
    print(f"grades: {args.out}")
    return 0 if book["status"].isin(["graded", "written answers pending"]).all() else 1


def _sweep(args):
    from .reproduce import parse_value, sweep_notebook

    params = {name: parse_value(value) for name, value in args.parameter}
    summary, tables = sweep_notebook(
        args.notebook,
        dict(args.grid),
        args.out,
        parameters=params,
        profile=args.profile,
        jobs=args.jobs,
        timeout=args.timeout,
        scheduler=args.scheduler,
    )
    print(summary.to_string(index=False))
    for name, frame in tables.items():
        print(f"{args.out}/{name}.csv: {len(frame)} rows")
    return 0 if (summary["status"] == "ok").all() else 1


def _assignments(args):
    from .assignments import export
    from .reproduce import resolve_notebook

    kind = "student" if args.student else "nbgrader"
    paths = export([resolve_notebook(n) for n in args.notebooks] or None, args.out, kind=kind)
    for path in paths:
        print(f"wrote {path}")
    return 0


def _data(args):
    from .datasets import available, fetch_missing

    table = fetch_missing() if args.fetch else available()
    print(table[["dataset", "file", "status", "location"]].to_string(index=False))
    failed = table["status"].astype(str).str.startswith("download failed")
    return 1 if failed.any() else 0


_COMMANDS = {
    "reproduce": _reproduce,
    "verify": _verify,
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

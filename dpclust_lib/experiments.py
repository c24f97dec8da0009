"""Experiment sweeps, run profiles, result tables and reproduction ledgers.

:func:`sweep` runs every (algorithm, data set, epsilon, run) combination and
returns one tidy row per fit. The random state of a fit depends only on
``(seed, epsilon, run)``: every algorithm and data set sees the same seed at
the same (epsilon, run) (paired comparisons), and a frame is identical
whatever ``n_jobs`` and whatever the rest of the epsilon grid.

Profiles: ``"paper"`` (the paper's run counts and grids) and ``"smoke"``
(tiny, for tests). A notebook resolves its profile once with
:func:`resolve_profile` and takes each size from ``profile.pick(paper=...,
smoke=...)``, so the two sizes of every experiment sit side by side.
"""
from __future__ import annotations

import contextlib
import os
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
from tqdm import tqdm

from ._paths import FIGURES_DIR, PUBLISHED_DIR, RESULTS_DIR
from ._validation import check_int
from .datasets import Dataset

__all__ = [
    "PROFILES",
    "Profile",
    "resolve_profile",
    "output_dirs",
    "fit_seed",
    "sweep",
    "summarise",
    "VERDICT_RANK",
    "mean_ci95",
    "verdict_by_gap",
    "verdict_by_share",
    "rises_with",
    "best_reading",
    "results_path",
    "save_results",
    "load_published",
    "VERDICTS",
    "Ledger",
    "load_dataset",
]

PROFILES = ("paper", "smoke")
PROFILE_ENV = "DPCLUST_PROFILE"


@dataclass(frozen=True)
class Profile:
    """A run profile: ``pick(paper=..., smoke=...)`` returns the value for this profile."""

    name: str

    @property
    def is_paper(self):
        return self.name == "paper"

    def pick(self, paper, smoke):
        return paper if self.name == "paper" else smoke


def resolve_profile(profile=None):
    """The profile to run: ``profile`` if given, else ``$DPCLUST_PROFILE``, else ``"paper"``."""
    name = profile if profile is not None else os.environ.get(PROFILE_ENV, "paper")
    if name not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got profile={name!r}")
    return Profile(name)


def output_dirs(notebook, profile, results_dir=None, figures_dir=None):
    """Where a notebook writes its result tables and figures: (results_dir, figures_dir).

    Paper profile: ``data/results/<notebook>`` and ``figures/<notebook>``.
    Smoke profile: the same under ``data/results/smoke/`` and ``figures/smoke/``
    (git-ignored), so a test run never overwrites the paper-profile outputs.
    Explicit folders (a sweep passes them) win.
    """
    smoke = resolve_profile(profile.name if isinstance(profile, Profile) else profile).name == "smoke"
    results = Path(results_dir) if results_dir is not None else RESULTS_DIR / ("smoke" if smoke else "") / notebook
    figures = Path(figures_dir) if figures_dir is not None else FIGURES_DIR / ("smoke" if smoke else "") / notebook
    return results, figures


def _epsilon_key(epsilon):
    """A spawn-key integer for an epsilon value (its IEEE-754 bits; None -> NaN's)."""
    value = np.float64(np.nan if epsilon is None else epsilon)
    return int(value.view(np.uint64))


def fit_seed(seed, epsilon, run):
    """The integer random_state of the fit at (epsilon, run) under a sweep seed.

    Spawned from ``SeedSequence(seed)`` with spawn key (epsilon bits, run), so it
    does not depend on the other epsilons of a grid nor on the order of fits.
    """
    ss = np.random.SeedSequence(check_int(seed, "seed", minimum=0), spawn_key=(_epsilon_key(epsilon), check_int(run, "run", minimum=0)))
    return int(ss.generate_state(1, dtype=np.uint32)[0])


def _as_datasets(datasets):
    if isinstance(datasets, Dataset):
        return {datasets.name: datasets}
    if isinstance(datasets, dict) and datasets and all(isinstance(d, Dataset) for d in datasets.values()):
        return dict(datasets)
    raise TypeError("datasets must be a Dataset or a non-empty dict of name -> Dataset")


def _one_fit(make_estimator, dataset, epsilon, random_state, metrics, warning_filters):
    # A worker process starts with the default warning filters: the caller's are applied here,
    # so a warning silenced around the sweep stays silent whatever n_jobs.
    with warnings.catch_warnings():
        warnings.filters[:] = warning_filters
        est = make_estimator(epsilon, random_state)
        start = time.perf_counter()
        est.fit(dataset.X)
        seconds = time.perf_counter() - start
        row = {name: float(fn(est, dataset)) for name, fn in metrics.items()}
    row["seconds"] = seconds
    row["epsilon_spent"] = float(getattr(est, "epsilon_spent_", np.nan))
    return row


def sweep(algorithms, datasets, epsilons, n_runs, metrics, seed=0, n_jobs=1, backend=None, progress=None):
    """Fit every algorithm on every data set at every epsilon, ``n_runs`` times.

    Parameters
    ----------
    algorithms : dict name -> callable(epsilon, random_state) -> unfitted estimator
        The estimator is fitted with ``fit(dataset.X)``. A non-private
        baseline can ignore epsilon (use ``epsilons=[None]`` for it).
    datasets : Dataset or dict name -> Dataset
    epsilons : sequence of floats (or None)
    n_runs : int >= 1
    metrics : dict name -> callable(fitted estimator, dataset) -> float
    seed : int >= 0, the sweep's root seed
    n_jobs : joblib's n_jobs (1 = in this process)
    backend : joblib backend name (e.g. "loky", "threading", or "dask" with a
        dask client registered); None = joblib's default
    progress : show a tqdm progress bar; None = only on an interactive terminal

    Returns
    -------
    DataFrame with columns algorithm, dataset, epsilon, run, seed, <metrics...>,
    seconds, epsilon_spent; one row per fit, in a fixed order.
    """
    if not isinstance(algorithms, dict) or not algorithms:
        raise TypeError("algorithms must be a non-empty dict of name -> callable(epsilon, random_state)")
    if not isinstance(metrics, dict):
        raise TypeError("metrics must be a dict of name -> callable(estimator, dataset)")
    data = _as_datasets(datasets)
    eps_list = list(epsilons)
    if not eps_list:
        raise ValueError("epsilons is empty")
    n_runs = check_int(n_runs, "n_runs", minimum=1)
    tasks = [
        (alg, name, eps, run, fit_seed(seed, eps, run))
        for alg in algorithms for name in data for eps in eps_list for run in range(n_runs)
    ]
    call = joblib.delayed(_one_fit)
    filters = list(warnings.filters)
    jobs = (call(algorithms[a], data[d], e, s, metrics, filters) for a, d, e, _, s in tasks)
    with joblib.parallel_config(backend=backend) if backend else contextlib.nullcontext():
        results = joblib.Parallel(n_jobs=n_jobs, return_as="generator")(jobs)
        rows = list(tqdm(results, total=len(tasks), disable=None if progress is None else not progress,
                         desc="sweep", leave=False))
    keys = pd.DataFrame(tasks, columns=["algorithm", "dataset", "epsilon", "run", "seed"])
    return pd.concat([keys, pd.DataFrame(rows)], axis=1)


def summarise(frame, metrics, by=("algorithm", "dataset", "epsilon")):
    """Mean, standard deviation, run count and 95% CI half-width of each metric per group."""
    by = list(by)
    out = []
    for metric in metrics:
        g = frame.groupby(by, sort=True)[metric]
        s = g.agg(["mean", "std", "count"]).reset_index()
        s["ci95"] = 1.96 * s["std"] / np.sqrt(s["count"])
        s.insert(len(by), "metric", metric)
        out.append(s)
    return pd.concat(out, ignore_index=True)


# ---------------------------------------------------------------------------
# Verdict rules and confidence intervals: one implementation for every notebook
# ---------------------------------------------------------------------------

VERDICT_RANK = {"reproduced": 0, "partly": 1, "not reproduced": 2}
"""Order of the graded verdicts, best first: a claim is graded under the reading that ranks best."""


def mean_ci95(values):
    """Mean and the half-width of its 95% confidence interval (Student t; NaN with fewer than 2 values).

    Parameters
    ----------
    values : array-like of floats (NaN entries are dropped)

    Returns
    -------
    (mean, half_width) : tuple of floats
    """
    from scipy import stats

    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return float("nan"), float("nan")
    if v.size < 2:
        return float(v.mean()), float("nan")
    return float(v.mean()), float(stats.t.ppf(0.975, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size))


def verdict_by_gap(ours, published, close=0.02, near=0.05, partly_share=0.5):
    """Verdict for published numbers: all within ``close`` -> reproduced; enough within ``near`` -> partly.

    Parameters
    ----------
    ours, published : array-like of floats, the same length (our means and the paper's numbers)
    close, near : float, the tolerances (the paper's rounding plus sampling; a looser one)
    partly_share : float in (0, 1], the share of the numbers that must be within ``near`` for
        "partly" (1.0: all of them, for approximate published values)

    Returns
    -------
    (verdict, largest_gap) : the verdict string and the largest |ours - published|
    """
    gaps = np.abs(np.asarray(ours, dtype=float) - np.asarray(published, dtype=float))
    if gaps.size == 0 or np.isnan(gaps).any():
        raise ValueError("ours and published must be non-empty and without NaN")
    verdict = ("reproduced" if (gaps <= close).all() else "partly" if (gaps <= near).mean() >= partly_share
               else "not reproduced")
    return verdict, float(gaps.max())


def verdict_by_share(passed):
    """Verdict for a claim checked in several cases: all pass -> reproduced, some -> partly, none -> not reproduced."""
    passed = np.asarray(passed, dtype=bool)
    if passed.size == 0:
        raise ValueError("passed is empty: nothing was checked")
    return "reproduced" if passed.all() else "partly" if passed.any() else "not reproduced"


def rises_with(x, y, alpha=0.05):
    """One-sided Spearman test that y rises with x: (significant, rho, one-sided p).

    A constant y has no rise (False, NaN, 1.0): Spearman's rho is undefined there.
    """
    from scipy import stats

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if np.unique(y).size < 2 or np.unique(x).size < 2:
        return False, float("nan"), 1.0
    rho, p_two = stats.spearmanr(x, y)
    p_one = p_two / 2 if rho > 0 else 1 - p_two / 2
    return bool(rho > 0 and p_one < alpha), float(rho), float(p_one)


def best_reading(graded):
    """The paper's best case among the readings a claim was graded under.

    Parameters
    ----------
    graded : dict reading -> (verdict, gap)
        The verdict under each reading tried, and a number that says how far
        the claim is from holding under it (smaller is closer; ties between
        equal verdicts go to the smaller gap, then to the first reading).

    Returns
    -------
    (reading, verdict, tried) : the best reading, its verdict, and a text naming
    every reading tried with its verdict (for the ledger row: a "not reproduced"
    must say which readings it failed under).
    """
    if not graded:
        raise ValueError("graded is empty: no reading was tried")
    for reading, (verdict, _) in graded.items():
        if verdict not in VERDICT_RANK:
            raise ValueError(f"verdict of reading {reading!r} must be one of {tuple(VERDICT_RANK)}, got {verdict!r}")
    order = sorted(graded, key=lambda r: (VERDICT_RANK[graded[r][0]], graded[r][1]))
    best = order[0]
    tried = "; ".join(f"{r}: {graded[r][0]}" for r in graded)
    return best, graded[best][0], tried


def results_path(notebook, name, results_dir=None):
    """``<results_dir or data/results/<notebook>>/<name>.csv``."""
    folder = Path(results_dir) if results_dir is not None else RESULTS_DIR / notebook
    return folder / f"{name}.csv"


def save_results(frame, notebook, name, results_dir=None):
    """Write a result table as CSV and return its path."""
    path = results_path(notebook, name, results_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
    return path


def load_published(notebook):
    """The paper's own numbers, kept as data in ``data/published/<notebook>.csv``."""
    path = PUBLISHED_DIR / f"{notebook}.csv"
    if not path.is_file():
        raise FileNotFoundError(f"no published numbers for notebook={notebook!r} at {path}")
    return pd.read_csv(path)


VERDICTS = ("reproduced", "partly", "not reproduced", "not testable", "not run")
"""``not testable``: a claim that restates another, or that cannot hold or fail by construction
under the reading it is graded under. ``not run``: the data is absent."""

LEDGER_COLUMNS = ["paper", "claim_id", "claim", "published", "ours", "verdict", "reading", "depends_on",
                  "evidence"]
READING_COLUMNS = ["choice", "reading", "support", "used_for", "best_case"]


def _ids(value):
    """Claim ids given as one string or a sequence, stored as ``"a; b"``."""
    if value is None or value == "":
        return ""
    return value if isinstance(value, str) else "; ".join(str(v) for v in value)


@dataclass
class Ledger:
    """A notebook's reproduction ledger: one row per published claim or number.

    Rows are added with :meth:`add` from computed results (never typed in). The
    choices the paper leaves open are declared with :meth:`reading`: one row per
    (choice, reading), with the paper's text that supports it. A claim is graded
    under the paper's best case (the reading, consistent with its text, under
    which it comes closest to holding) and ``reading`` names it; stricter variants
    are reported beside it. :meth:`save` writes ``ledger.csv`` and ``readings.csv``.
    """

    paper: str
    notebook: str | None = None
    rows: list = field(default_factory=list)
    readings: list = field(default_factory=list)

    def reading(self, choice, reading, support, used_for=(), best_case=False):
        """Declare one reading of a choice the paper leaves open."""
        if not isinstance(best_case, (bool, np.bool_)):
            raise TypeError(f"best_case must be a bool, got best_case={best_case!r}")
        self.readings.append({"choice": choice, "reading": reading, "support": support,
                              "used_for": _ids(used_for), "best_case": bool(best_case)})
        return self

    def add(self, claim_id, claim, published, ours, verdict, reading="", depends_on=(), evidence=""):
        """Add the row of one claim; ``depends_on`` names the claims it rests on."""
        if verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got verdict={verdict!r}")
        if any(r["claim_id"] == claim_id for r in self.rows):
            raise ValueError(f"claim_id={claim_id!r} is already in the ledger")
        self.rows.append({"paper": self.paper, "claim_id": claim_id, "claim": claim, "published": published,
                          "ours": ours, "verdict": verdict, "reading": reading,
                          "depends_on": _ids(depends_on), "evidence": evidence})
        return self

    def frame(self):
        return pd.DataFrame(self.rows, columns=LEDGER_COLUMNS)

    def readings_frame(self):
        return pd.DataFrame(self.readings, columns=READING_COLUMNS)

    def save(self, results_dir=None):
        """Write ``ledger.csv`` and ``readings.csv``; return the ledger's path."""
        if self.notebook is None:
            raise ValueError("Ledger.notebook is needed to save: Ledger(paper, notebook)")
        save_results(self.readings_frame(), self.notebook, "readings", results_dir)
        return save_results(self.frame(), self.notebook, "ledger", results_dir)


def load_dataset(name, variant=None, **kwargs):
    """``datasets.load(name, variant)``, or None after one clear message when the file is absent.

    A notebook calls this for each experiment's data and, on None, adds ``not run``
    rows to its ledger instead of failing.
    """
    from . import datasets

    try:
        return datasets.load(name, variant, **kwargs) if variant is not None else datasets.load(name, **kwargs)
    except datasets.DataNotFoundError as exc:
        print(f"not run: data set {name!r} is absent ({exc})")
        return None

"""Experiment sweeps, run profiles, intervals and result tables (ledgers and verdict rules: :mod:`dpclust.verdicts`).

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
import importlib.resources
import json
import numbers
import os
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
from tqdm import tqdm

from dpclust_lib.validation import check_int

from . import _paths
from .datasets import Dataset

__all__ = [
    "PROFILES",
    "Profile",
    "resolve_profile",
    "output_dirs",
    "target_dirs",
    "fit_seed",
    "sweep",
    "once_per_fit",
    "fit_labels",
    "summarise",
    "t_interval",
    "mean_ci95",
    "paired_interval",
    "welch_interval",
    "interval_side",
    "format_interval",
    "rises_with",
    "paired_bootstrap",
    "homogeneity_pvalue",
    "ORDERABLE_SECONDS",
    "fit_seconds",
    "results_path",
    "save_results",
    "table_spec",
    "read_manifest",
    "is_timing_column",
    "load_published",
    "load_dataset",
    "skip_rest_of_notebook",
]

PROFILES = ("paper", "smoke")
PROFILE_ENV = "DPCLUST_PROFILE"


@dataclass(frozen=True)
class Profile:
    """A run profile: ``pick(paper=..., smoke=...)`` returns the value for this profile.

    Attributes
    ----------
    name : str
        ``"paper"`` or ``"smoke"`` (:data:`PROFILES`); :func:`resolve_profile` checks it.

    Examples
    --------
    >>> profile = Profile("smoke")
    >>> profile.is_paper, profile.pick(paper=100, smoke=2)
    (False, 2)
    """

    name: str

    @property
    def is_paper(self):
        return self.name == "paper"

    def pick(self, paper, smoke):
        return paper if self.name == "paper" else smoke


def resolve_profile(profile=None):
    """The profile to run: ``profile`` if given, else ``$DPCLUST_PROFILE``, else ``"paper"``.

    Parameters
    ----------
    profile : str, optional
        ``"paper"`` or ``"smoke"``.

    Returns
    -------
    Profile

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> resolve_profile("smoke")
    Profile(name='smoke')
    >>> with mock.patch.dict(os.environ, {"DPCLUST_PROFILE": "smoke"}):
    ...     resolve_profile().name, resolve_profile("paper").name
    ('smoke', 'paper')
    >>> resolve_profile("fast")
    Traceback (most recent call last):
    ...
    ValueError: profile must be one of ('paper', 'smoke'), got profile='fast'
    """
    name = profile if profile is not None else os.environ.get(PROFILE_ENV, "paper")
    if name not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got profile={name!r}")
    return Profile(name)


OUTPUT_ENV = "DPCLUST_OUTPUT_DIR"
"""Set by ``reproduce`` to its staging folder: a notebook's default outputs go to its ``results/`` and
``figures/``."""

JOBS_ENV = "DPCLUST_JOBS"
"""Set by ``reproduce`` for a run that has the machine to itself (the overview, after the others): the joblib
workers its sweeps may use, the default of its ``n_jobs`` parameter (its results do not depend on it)."""

SCRATCH = "scratch"
"""The git-ignored sub-folder of a paper-profile run that ``reproduce`` did not start (Jupyter, nbval, papermill)."""


def target_dirs(notebook, profile):
    """Where ``reproduce`` puts a notebook's tables and figures once its whole run succeeded.

    Paper profile: the committed ``data/results/<notebook>`` and ``figures/<notebook>``; smoke
    profile: the same under ``data/results/smoke/`` and ``figures/smoke/`` (git-ignored).

    Examples
    --------
    >>> import os, pathlib, tempfile
    >>> from unittest import mock
    >>> with tempfile.TemporaryDirectory() as home, mock.patch.dict(os.environ, {"DPCLUST_HOME": home}):
    ...     os.mkdir(os.path.join(home, "notebooks"))
    ...     pathlib.Path(home, "Makefile").touch()
    ...     root = pathlib.Path(home).resolve()
    ...     [p.relative_to(root).as_posix() for p in target_dirs("01_x", "smoke")]
    ['data/results/smoke/01_x', 'figures/smoke/01_x']
    """
    smoke = resolve_profile(profile.name if isinstance(profile, Profile) else profile).name == "smoke"
    sub = ("smoke" if smoke else "", notebook)
    return _paths.results_dir().joinpath(*sub), _paths.figures_dir().joinpath(*sub)


def output_dirs(notebook, profile, results_dir=None, figures_dir=None):
    """Where a notebook writes its result tables and figures: (results_dir, figures_dir).

    Explicit folders (a sweep or ``verify`` passes them) win. Otherwise, under ``reproduce``
    (which sets ``$DPCLUST_OUTPUT_DIR`` to its staging folder) ``results/`` and ``figures/``
    there: ``reproduce`` moves them onto the committed folders only when the whole run
    succeeded. Any other run (Jupyter, nbval, papermill) never writes the committed folders:
    the paper profile writes under the git-ignored ``data/results/scratch/<notebook>`` and
    ``figures/scratch/<notebook>``, the smoke profile under ``data/results/smoke/`` and
    ``figures/smoke/``. Without explicit folders the compendium is needed (see
    :func:`dpclust._paths.project_dir`); with both, it is not (an exported assignment runs
    outside it).

    Examples
    --------
    >>> [p.as_posix() for p in output_dirs("01_x", "smoke", "out/results", "out/figures")]
    ['out/results', 'out/figures']
    """
    smoke = resolve_profile(profile.name if isinstance(profile, Profile) else profile).name == "smoke"
    if results_dir is not None and figures_dir is not None:  # no default needed: no compendium either
        return Path(results_dir), Path(figures_dir)
    staging = os.environ.get(OUTPUT_ENV, "").strip()
    if staging:
        default_results, default_figures = Path(staging) / "results", Path(staging) / "figures"
    else:
        sub = ("smoke" if smoke else SCRATCH, notebook)
        default_results, default_figures = _paths.results_dir().joinpath(*sub), _paths.figures_dir().joinpath(*sub)
    results = Path(results_dir) if results_dir is not None else default_results
    figures = Path(figures_dir) if figures_dir is not None else default_figures
    return results, figures


def _as_datasets(datasets):
    if isinstance(datasets, Dataset):
        return {datasets.name: datasets}
    if isinstance(datasets, dict) and datasets and all(isinstance(d, Dataset) for d in datasets.values()):
        return dict(datasets)
    raise TypeError("datasets must be a Dataset or a non-empty dict of name -> Dataset")


# Seeds of a sweep: every fit's random_state follows from (seed, epsilon, run) alone.
def epsilon_key(epsilon):
    """A spawn-key integer for an epsilon value (its IEEE-754 bits; None -> NaN's)."""
    if epsilon is not None and (isinstance(epsilon, (bool, np.bool_)) or not isinstance(epsilon, numbers.Real)):
        raise TypeError(f"epsilon must be a real number or None, got {epsilon!r} of type {type(epsilon).__name__}")
    value = np.float64(np.nan if epsilon is None else epsilon)
    return int(value.view(np.uint64))


def fit_seed(seed, epsilon, run):
    """The integer random_state of the fit at (epsilon, run) under a sweep seed.

    Spawned from ``SeedSequence(seed)`` with spawn key (epsilon bits, run), so it
    does not depend on the other epsilons of a grid nor on the order of fits.

    Parameters
    ----------
    seed : int >= 0
        The sweep's root seed.
    epsilon : float or None
        None for a non-private baseline.
    run : int >= 0

    Returns
    -------
    int
        A 32-bit seed, the same on every platform.

    Examples
    --------
    >>> fit_seed(0, 1.0, 0), fit_seed(0, 1.0, 1), fit_seed(0, None, 0)
    (3234807279, 514355724, 4250166924)
    >>> fit_seed(0, 1.0, 0) == fit_seed(0, np.float64(1.0), 0)  # a key of the value's bits, not of its type
    True
    """
    ss = np.random.SeedSequence(
        check_int(seed, "seed", minimum=0), spawn_key=(epsilon_key(epsilon), check_int(run, "run", minimum=0))
    )
    return int(ss.generate_state(1, dtype=np.uint32)[0])


_PER_FIT = {}  # id(estimator) -> {key: value}, while :func:`sweep` computes that fit's metrics


def once_per_fit(estimator, key, compute):
    """``compute()`` once per fit of a :func:`sweep` and ``key``: what several metrics of one fit share.

    The metrics of a fit are computed one after the other, on the same estimator; a quantity several
    of them need (the fit's labels, a global step's cut) is computed by the first and kept until the
    fit's metrics are done. Called outside a sweep's metrics, ``compute()`` runs each time.

    Parameters
    ----------
    estimator : the fitted estimator the metrics are given
    key : hashable, what ``compute`` computes
    compute : callable () -> value

    Examples
    --------
    >>> from dpclust_lib import DPKMeans
    >>> from dpclust.datasets import make_uniform_square
    >>> data = make_uniform_square(200, random_state=0)
    >>> predictions = []
    >>> def labels(est, ds):
    ...     return once_per_fit(est, "labels", lambda: predictions.append(1) or est.predict(ds.X))
    >>> metrics = {"clusters": lambda est, ds: len(set(labels(est, ds))), "first": lambda est, ds: labels(est, ds)[0]}
    >>> algorithms = {"DPk-means": lambda eps, rs: DPKMeans(3, epsilon=eps, bounds=data.bounds, random_state=rs)}
    >>> frame = sweep(algorithms, data, epsilons=[1.0], n_runs=2, metrics=metrics)
    >>> len(predictions)  # two fits, two metrics each: one prediction per fit
    2
    """
    values = _PER_FIT.get(id(estimator))
    if values is None:
        return compute()
    if key not in values:
        values[key] = compute()
    return values[key]


def fit_labels(estimator, dataset):
    """The fitted estimator's labels of ``dataset.X``, predicted once per fit of a sweep (:func:`once_per_fit`).

    Examples
    --------
    Outside a sweep's metrics nothing is kept, so each call predicts:

    >>> import types
    >>> import numpy as np
    >>> est = types.SimpleNamespace(predict=lambda X: np.zeros(len(X), dtype=int))
    >>> fit_labels(est, types.SimpleNamespace(X=np.ones((3, 2)))).tolist()
    [0, 0, 0]
    """
    return once_per_fit(estimator, "labels", lambda: estimator.predict(dataset.X))


def _one_fit(make_estimator, dataset, epsilon, random_state, metrics, warning_filters):
    # A worker process starts with the default warning filters: the caller's are applied here,
    # so a warning silenced around the sweep stays silent whatever n_jobs.
    with warnings.catch_warnings():
        warnings.filters[:] = warning_filters
        est = make_estimator(epsilon, random_state)
        if not hasattr(est, "fit"):
            raise TypeError(f"an algorithm of the sweep returned {type(est).__name__}, not an estimator with fit()")
        start = time.perf_counter()
        est.fit(dataset.X)
        seconds = time.perf_counter() - start
        _PER_FIT[id(est)] = {}
        try:
            row = {name: float(fn(est, dataset)) for name, fn in metrics.items()}
        finally:
            del _PER_FIT[id(est)]
    row["seconds"] = seconds
    # What the algorithm's arithmetic spent, and what the release guarantees (inf for a leaky setting);
    # NaN for a non-private baseline.
    row["epsilon_spent"] = float(getattr(est, "epsilon_spent_", np.nan))
    row["epsilon_guaranteed"] = float(getattr(est, "epsilon_guaranteed_", np.nan))
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
        What several of them share is computed once per fit with :func:`once_per_fit` (:func:`fit_labels`).
    seed : int >= 0, the sweep's root seed
    n_jobs : joblib's n_jobs (1 = in this process)
    backend : joblib backend name (e.g. "loky", "threading", or "dask" with a
        dask client registered); None = joblib's default
    progress : show a tqdm progress bar; None = only on an interactive terminal

    Returns
    -------
    DataFrame with columns algorithm, dataset, epsilon, run, seed, <metrics...>,
    seconds, epsilon_spent, epsilon_guaranteed; one row per fit, in a fixed order.

    Examples
    --------
    >>> from dpclust_lib import DPKMeans
    >>> from dpclust_lib.metrics import nicv
    >>> from dpclust.datasets import make_uniform_square
    >>> data = make_uniform_square(200, random_state=0)
    >>> algorithms = {"DPk-means": lambda eps, rs: DPKMeans(3, epsilon=eps, bounds=data.bounds, random_state=rs)}
    >>> metrics = {"nicv": lambda est, ds: nicv(ds.X, est.cluster_centers_)}
    >>> frame = sweep(algorithms, data, epsilons=[0.5, 2.0], n_runs=2, metrics=metrics, seed=0)
    >>> frame.columns.tolist()  # doctest: +NORMALIZE_WHITESPACE
    ['algorithm', 'dataset', 'epsilon', 'run', 'seed', 'nicv', 'seconds', 'epsilon_spent',
     'epsilon_guaranteed']
    >>> frame[["epsilon", "run"]].values.tolist()
    [[0.5, 0.0], [0.5, 1.0], [2.0, 0.0], [2.0, 1.0]]
    >>> frame["seed"].tolist() == [fit_seed(0, e, r) for e, r in [(0.5, 0), (0.5, 1), (2.0, 0), (2.0, 1)]]
    True
    >>> frame["epsilon_spent"].round(9).tolist()  # five releases of epsilon / 5 each
    [0.5, 0.5, 2.0, 2.0]
    """
    if not isinstance(algorithms, dict) or not algorithms:
        raise TypeError("algorithms must be a non-empty dict of name -> callable(epsilon, random_state)")
    if not isinstance(metrics, dict):
        raise TypeError("metrics must be a dict of name -> callable(estimator, dataset)")
    for what, table in (("algorithms", algorithms), ("metrics", metrics)):
        bad = [name for name, fn in table.items() if not callable(fn)]
        if bad:
            raise TypeError(f"{what}[{bad[0]!r}] is not callable")
    data = _as_datasets(datasets)
    if isinstance(epsilons, (str, bytes, numbers.Number)) or not hasattr(epsilons, "__iter__"):
        raise TypeError(f"epsilons must be a sequence of floats or None, got {epsilons!r}")
    eps_list = list(epsilons)
    for eps in eps_list:
        epsilon_key(eps)
    if not eps_list:
        raise ValueError("epsilons is empty")
    n_runs = check_int(n_runs, "n_runs", minimum=1)
    tasks = [
        (alg, name, eps, run, fit_seed(seed, eps, run))
        for alg in algorithms
        for name in data
        for eps in eps_list
        for run in range(n_runs)
    ]
    call = joblib.delayed(_one_fit)
    filters = list(warnings.filters)
    jobs = (call(algorithms[a], data[d], e, s, metrics, filters) for a, d, e, _, s in tasks)
    with joblib.parallel_config(backend=backend) if backend else contextlib.nullcontext():
        results = joblib.Parallel(n_jobs=n_jobs, return_as="generator")(jobs)
        rows = list(
            tqdm(
                results, total=len(tasks), disable=None if progress is None else not progress, desc="sweep", leave=False
            )
        )
    keys = pd.DataFrame(tasks, columns=["algorithm", "dataset", "epsilon", "run", "seed"])
    return pd.concat([keys, pd.DataFrame(rows)], axis=1)


def summarise(frame, metrics, by=("algorithm", "dataset", "epsilon")):
    """Mean, standard deviation, run count and 95% CI half-width of each metric per group.

    The half-width is the normal approximation ``1.96 * std / sqrt(count)``.

    Parameters
    ----------
    frame : DataFrame
        One row per fit (:func:`sweep`).
    metrics : sequence of str
        Numeric columns to summarise.
    by : sequence of str, default ("algorithm", "dataset", "epsilon")
        The grouping columns.

    Returns
    -------
    DataFrame with columns ``*by``, metric, mean, std, count, ci95: one row per group and metric.

    Examples
    --------
    >>> frame = pd.DataFrame({"algorithm": ["A"] * 4, "epsilon": [1.0, 1.0, 2.0, 2.0], "nicv": [0.2, 0.4, 0.1, 0.1]})
    >>> summary = summarise(frame, ["nicv"], by=["algorithm", "epsilon"])
    >>> summary.columns.tolist()
    ['algorithm', 'epsilon', 'metric', 'mean', 'std', 'count', 'ci95']
    >>> summary.round(3).values.tolist()  # std 0.2 / sqrt(2) = 0.141, ci95 1.96 * 0.141 / sqrt(2) = 0.196
    [['A', 1.0, 'nicv', 0.3, 0.141, 2, 0.196], ['A', 2.0, 'nicv', 0.1, 0.0, 2, 0.0]]
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a DataFrame, got {type(frame).__name__}")
    if isinstance(metrics, str) or isinstance(by, str):
        raise TypeError("metrics and by must be sequences of column names, not one string")
    by = list(by)
    missing = [c for c in [*by, *metrics] if c not in frame.columns]
    if missing:
        raise ValueError(f"summarise: column {missing[0]!r} is not in the frame ({list(frame.columns)})")
    not_numeric = [m for m in metrics if not pd.api.types.is_numeric_dtype(frame[m])]
    if not_numeric:
        raise TypeError(f"summarise: metric {not_numeric[0]!r} is not numeric (dtype {frame[not_numeric[0]].dtype})")
    out = []
    for metric in metrics:
        g = frame.groupby(by, sort=True)[metric]
        s = g.agg(["mean", "std", "count"]).reset_index()
        s["ci95"] = 1.96 * s["std"] / np.sqrt(s["count"])
        s.insert(len(by), "metric", metric)
        out.append(s)
    return pd.concat(out, ignore_index=True)


# ---------------------------------------------------------------------------
# Confidence intervals and tests: one implementation for every notebook (the verdict rules are in verdicts)
# ---------------------------------------------------------------------------


def t_interval(values, level=0.95):
    """Student-t confidence interval of the mean of ``values``.

    Parameters
    ----------
    values : array-like of floats (NaN not allowed)
    level : confidence level in (0, 1)

    Returns
    -------
    (mean, low, high) : floats; ``low = -inf`` and ``high = inf`` when there are fewer than two values.

    Examples
    --------
    >>> mean, low, high = t_interval([1.0, 2.0, 3.0, 4.0])
    >>> mean, round(low, 3), round(high, 3)  # 2.5 -+ t(0.975; 3) s / sqrt(4) = 2.5 -+ 3.1824 * 1.2910 / 2
    (2.5, 0.446, 4.554)
    >>> t_interval([7.0])
    (7.0, -inf, inf)
    """
    from scipy import stats

    x = np.asarray(values, dtype=float).ravel()
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got level={level!r}")
    if x.size == 0 or np.isnan(x).any():
        raise ValueError(f"values must be non-empty and hold no NaN (got {x.size} values)")
    mean = float(x.mean())
    if x.size < 2:
        return mean, -np.inf, np.inf
    half = float(stats.t.ppf(0.5 + level / 2, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size))
    return mean, mean - half, mean + half


def mean_ci95(values):
    """Mean and the half-width of its 95% t interval (:func:`t_interval`); NaN entries are dropped.

    Parameters
    ----------
    values : array-like of floats

    Returns
    -------
    (mean, half_width) : NaN half-width with fewer than 2 values, (NaN, NaN) with none.

    Examples
    --------
    >>> mean, half = mean_ci95([1.0, 2.0, np.nan, 3.0, 4.0])
    >>> mean, round(half, 3)
    (2.5, 2.054)
    >>> mean_ci95([np.nan])
    (nan, nan)
    """
    v = np.asarray(values, dtype=float).ravel()
    v = v[~np.isnan(v)]
    if v.size == 0:
        return float("nan"), float("nan")
    mean, _, high = t_interval(v)
    return mean, (high - mean) if np.isfinite(high) else float("nan")


def paired_interval(a, b, level=0.95):
    """t interval of the mean paired difference ``a - b`` (runs paired by their seed).

    Parameters
    ----------
    a, b : array-like of floats, the same length, paired entry by entry
    level : confidence level in (0, 1)

    Returns
    -------
    (mean difference, low, high) : floats, as :func:`t_interval`.

    Examples
    --------
    >>> diff, low, high = paired_interval([1.0, 2.0, 3.0, 4.0], [0.5, 1.5, 2.0, 3.0])
    >>> diff, round(low, 3), round(high, 3)  # the differences 0.5, 0.5, 1, 1: above 0 at every seed
    (0.75, 0.291, 1.209)
    """
    a, b = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
    if a.shape != b.shape:
        raise ValueError(f"a and b must pair up one to one, got {a.size} and {b.size} values")
    return t_interval(a - b, level)


def welch_interval(a, b, level=0.95):
    """Welch interval of ``mean(a) - mean(b)`` for two independent samples: (difference, low, high).

    Parameters
    ----------
    a, b : array-like of floats
        The two samples; with fewer than two values in either, the interval is (-inf, inf).
    level : confidence level in (0, 1)

    Returns
    -------
    (difference, low, high) : floats

    Examples
    --------
    >>> diff, low, high = welch_interval([1.0, 2.0, 3.0, 4.0], [0.0, 0.5, 1.0, 1.5])
    >>> diff, round(low, 3), round(high, 3)
    (1.75, -0.182, 3.682)
    >>> interval_side(low, high)
    'straddles'
    """
    from scipy import stats

    a, b = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
    if a.size < 2 or b.size < 2:
        return float(a.mean() - b.mean()), -np.inf, np.inf
    low, high = stats.ttest_ind(a, b, equal_var=False).confidence_interval(level)
    return float(a.mean() - b.mean()), float(low), float(high)


def interval_side(low, high, value=0.0):
    """Where an interval lies against ``value``: ``"above"``, ``"below"`` or ``"straddles"``.

    Parameters
    ----------
    low, high : float
        The interval's bounds.
    value : float, default 0.0
        The value of no effect.

    Returns
    -------
    str

    Examples
    --------
    >>> interval_side(0.1, 0.4), interval_side(-0.4, -0.1), interval_side(-0.1, 0.4), interval_side(0.9, 1.2, value=1.0)
    ('above', 'below', 'straddles', 'straddles')
    """
    return "above" if low > value else ("below" if high < value else "straddles")


def format_interval(mean, low, high, digits=3):
    """``"+0.012 [-0.003, +0.027]"``: a mean with its interval, for the ``ours`` column of a ledger.

    Parameters
    ----------
    mean, low, high : float
    digits : int, default 3
        Digits after the decimal point.

    Returns
    -------
    str

    Examples
    --------
    >>> format_interval(0.0123, -0.0031, 0.0271)
    '+0.012 [-0.003, +0.027]'
    >>> format_interval(*t_interval([1.0, 2.0, 3.0, 4.0]), digits=2)
    '+2.50 [+0.45, +4.55]'
    """
    return f"{mean:+.{digits}f} [{low:+.{digits}f}, {high:+.{digits}f}]"


def rises_with(x, y, alpha=0.05):
    """One-sided Spearman test that y rises with x: (significant, rho, one-sided p).

    A constant y has no rise (False, NaN, 1.0): Spearman's rho is undefined there.

    Parameters
    ----------
    x, y : array-like of floats, the same length
    alpha : float, default 0.05
        The test's level.

    Returns
    -------
    (significant, rho, p) : bool, float, float

    Examples
    --------
    >>> significant, rho, p = rises_with([1, 2, 3, 4, 5], [0.1, 0.3, 0.2, 0.4, 0.5])  # one swapped pair
    >>> significant, round(rho, 3), round(p, 4)
    (True, 0.9, 0.0187)
    >>> rises_with([1, 2, 3], [0.5, 0.5, 0.5])
    (False, nan, 1.0)
    """
    from scipy import stats

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if np.unique(y).size < 2 or np.unique(x).size < 2:
        return False, float("nan"), 1.0
    rho, p_two = stats.spearmanr(x, y)
    p_one = p_two / 2 if rho > 0 else 1 - p_two / 2
    return bool(rho > 0 and p_one < alpha), float(rho), float(p_one)


def paired_bootstrap(a, b, statistic, n_boot=2_000, level=0.95, random_state=None):
    """Percentile bootstrap interval of ``statistic(mean(a), mean(b))`` for paired samples.

    Each resample draws n pair indices with replacement, so paired values (two methods
    fitted with one seed) stay together. With n rows of k columns (e.g. one column per data set,
    one row per run), a resample draws whole rows, and the statistic reads the k column means.

    Parameters
    ----------
    a, b : array-like of floats, the same shape: n values, or n rows of k columns, paired row by row
    statistic : callable (mean_a, mean_b) -> float, vectorised over arrays of means; with k columns, the means
        come as arrays whose last axis holds the k columns, and the statistic reduces that axis to one value
    n_boot : int, the number of resamples
    level : float in (0, 1), the confidence level
    random_state : None, int or numpy Generator; a Generator is advanced by one draw of
        ``integers(0, n, size=(n_boot, n))``, so several intervals can share one stream

    Returns
    -------
    (estimate, low, high) : ``statistic(mean(a), mean(b))`` and the interval's bounds.

    Examples
    --------
    >>> est, low, high = paired_bootstrap([1.0, 2.0, 3.0, 4.0], [0.5, 1.5, 2.0, 3.0], np.subtract, random_state=0)
    >>> float(est), bool(low <= est <= high)
    (0.75, True)
    >>> rows = [[1.0, 10.0], [2.0, 30.0], [3.0, 20.0]]  # two columns: the gap between their means, row by row
    >>> est, low, high = paired_bootstrap(rows, rows, lambda m, _: m[..., 1] - m[..., 0], random_state=0)
    >>> float(est), bool(low <= est <= high)
    (18.0, True)
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    a, b = (a.ravel(), b.ravel()) if a.ndim < 2 and b.ndim < 2 else (a, b)
    if a.shape != b.shape or a.size == 0 or a.ndim > 2:
        raise ValueError(f"a and b must be non-empty and pair up one to one, got shapes {a.shape} and {b.shape}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got level={level!r}")
    n_boot = check_int(n_boot, "n_boot", minimum=1)
    from decimal import Decimal

    rng = np.random.default_rng(random_state)
    idx = rng.integers(0, len(a), size=(n_boot, len(a)))
    boot = statistic(a[idx].mean(axis=1), b[idx].mean(axis=1))
    # The tails of the level as written (0.95: 0.025 and 0.975), not of the float 1 - 0.95 = 0.05000000000000004
    tail = float((1 - Decimal(repr(float(level)))) / 2)
    estimate = statistic(a.mean(axis=0), b.mean(axis=0))
    return float(estimate), float(np.quantile(boot, tail)), float(np.quantile(boot, 1 - tail))


def homogeneity_pvalue(a, b, n_bins=6):
    """p-value of the chi-squared test that two samples come from one distribution (homogeneity).

    Both samples are binned on the quantiles of the pooled sample (``n_bins`` bins, fewer when
    quantiles coincide, as with integer data); bins empty in both are dropped, and the
    2 x bins table goes to :func:`scipy.stats.chi2_contingency` (Yates' correction at one degree of freedom).

    Parameters
    ----------
    a, b : array-like of floats, the two samples (e.g. the numbers of leaves of R trees from each of two builders)
    n_bins : int >= 2, the number of bins at most

    Returns
    -------
    float : the p-value; small values say the distributions differ.

    Examples
    --------
    >>> p = homogeneity_pvalue([0] * 30 + [1] * 20 + [2] * 10, [0] * 10 + [1] * 20 + [2] * 30, n_bins=3)
    >>> bool(np.isclose(p, np.exp(-10)))  # statistic 20 on 2 degrees of freedom: p = exp(-20 / 2)
    True
    """
    from scipy import stats

    a, b = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
    if a.size == 0 or b.size == 0 or np.isnan(a).any() or np.isnan(b).any():
        raise ValueError("a and b must be non-empty and hold no NaN")
    n_bins = check_int(n_bins, "n_bins", minimum=2)
    edges = np.unique(np.quantile(np.concatenate([a, b]), np.linspace(0, 1, n_bins + 1)))
    if edges.size < 2:
        raise ValueError("a and b hold a single value between them: there is no distribution to compare")
    table = np.array([np.histogram(a, edges)[0], np.histogram(b, edges)[0]])
    return float(stats.chi2_contingency(table[:, table.sum(axis=0) > 0]).pvalue)


ORDERABLE_SECONDS = 0.010
"""Shortest fit time (s) at which methods are ordered by speed: below it, their order changes from
run to run with the load of a shared machine (ratios of 0.8 to 1.6 between two methods were seen)."""


def fit_seconds(make_estimator, X, repeats=1):
    """Wall-clock seconds of ``make_estimator().fit(X)``, the fastest of ``repeats`` timings.

    Other work on the machine can only add time, so the fastest of a few timings is the
    least noisy; each timing fits a new estimator.

    Parameters
    ----------
    make_estimator : callable () -> an estimator with ``fit(X)``
    X : the data passed to ``fit``
    repeats : int >= 1, the number of timings

    Returns
    -------
    float : seconds.

    Examples
    --------
    >>> from dpclust_lib import KMeans
    >>> seconds = fit_seconds(lambda: KMeans(2, random_state=0), np.random.default_rng(0).random((50, 2)), repeats=2)
    >>> seconds > 0
    True
    """
    repeats = check_int(repeats, "repeats", minimum=1)
    best = np.inf
    for _ in range(repeats):
        estimator = make_estimator()  # built outside the timing: only the fit is timed
        start = time.perf_counter()
        estimator.fit(X)
        best = min(best, time.perf_counter() - start)
    return float(best)


def results_path(notebook, name, results_dir=None):
    """``<results_dir or data/results/<notebook>>/<name>.csv``.

    Parameters
    ----------
    notebook : str
        The notebook's stem, e.g. ``"03_dpqt_kmeans"``.
    name : str
        The table's name.
    results_dir : path-like, optional
        The folder; default ``data/results/<notebook>`` of the compendium.

    Returns
    -------
    Path

    Examples
    --------
    >>> results_path("03_dpqt_kmeans", "nicv", "out").as_posix()
    'out/nicv.csv'
    """
    folder = Path(results_dir) if results_dir is not None else _paths.results_dir() / notebook
    return folder / f"{name}.csv"


MANIFEST = "tables.json"
"""The file, next to a notebook's result CSVs, that declares how ``verify`` compares each table."""

TIMINGS = "timings"
"""The folder, next to a notebook's result CSVs, of their timings: run times differ from run to run, so they
are kept out of the tables ``verify`` compares, and a clean rerun leaves the tables unchanged."""


def is_timing_column(name):
    """Whether a column holds a timing by its name: ``seconds`` or ``*_seconds``.

    Parameters
    ----------
    name : str

    Returns
    -------
    bool

    Examples
    --------
    >>> [is_timing_column(c) for c in ["seconds", "fit_seconds", "seconds_per_fit", "nicv"]]
    [True, True, False, False]
    """
    return name == "seconds" or str(name).endswith("_seconds")


def _columns_arg(value, frame, name):
    if value is None:
        return []
    columns = [value] if isinstance(value, str) else list(value)
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{name} names columns that the table does not have: {missing}")
    return columns


def table_spec(frame, key=None, timing=None, rtol=0.0, atol=0.0, timing_rows=()):
    """How ``verify`` compares a table: its row key, timing columns and tolerances (a dict).

    ``timing=None`` takes the columns named ``seconds`` or ending in ``_seconds``;
    ``timing=True`` makes every column outside the key a timing (a timing table).
    ``timing_rows`` lists the keys (tuples of key values) of rows computed from timings
    (e.g. a ledger row graded on run times): ``verify`` ignores them.

    Parameters
    ----------
    frame : DataFrame
    key, timing, rtol, atol, timing_rows
        As in :func:`save_results`.

    Returns
    -------
    dict with key, timing, rtol, atol (and timing_rows when given)

    Examples
    --------
    >>> frame = pd.DataFrame({"epsilon": [0.5, 1.0], "nicv": [0.31, 0.12], "fit_seconds": [0.8, 0.7]})
    >>> table_spec(frame, key="epsilon", rtol=1e-9)
    {'key': ['epsilon'], 'timing': ['fit_seconds'], 'rtol': 1e-09, 'atol': 0.0}
    >>> table_spec(frame, key="epsilon", timing=True)["timing"]
    ['nicv', 'fit_seconds']
    >>> table_spec(pd.concat([frame, frame]), key="epsilon")
    Traceback (most recent call last):
    ...
    ValueError: key=['epsilon'] does not identify the rows: some rows share a key
    """
    key = _columns_arg(key, frame, "key")
    if key and frame.duplicated(key).any():
        raise ValueError(f"key={key} does not identify the rows: some rows share a key")
    timing_rows = [[str(v) for v in (row if isinstance(row, (tuple, list)) else (row,))] for row in timing_rows]
    if timing_rows and not key:
        raise ValueError("timing_rows needs a key that identifies the rows")
    known = {tuple(str(v) for v in values) for values in frame[key].itertuples(index=False)} if key else set()
    unknown = [row for row in timing_rows if tuple(row) not in known]
    if unknown:
        raise ValueError(f"timing_rows names rows that the table does not have: {unknown}")
    if timing is True:
        timing = [c for c in frame.columns if c not in key]
    elif timing is None:
        timing = [c for c in frame.columns if is_timing_column(c)]
    else:
        timing = _columns_arg(timing, frame, "timing")
    for value, label in ((rtol, "rtol"), (atol, "atol")):
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float, np.integer, np.floating))
            or not np.isfinite(value)
            or value < 0
        ):
            raise ValueError(f"{label} must be a finite number >= 0, got {label}={value!r}")
    spec = {"key": [str(c) for c in key], "timing": [str(c) for c in timing], "rtol": float(rtol), "atol": float(atol)}
    if timing_rows:
        spec["timing_rows"] = timing_rows
    return spec


def read_manifest(folder):
    """The table declarations of a results folder (``{}`` when it has none).

    Parameters
    ----------
    folder : path-like

    Returns
    -------
    dict
        Table name -> its :func:`table_spec`, as :func:`save_results` wrote them to ``tables.json``.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as out:
    ...     print(read_manifest(out))
    ...     _ = save_results(pd.DataFrame({"run": [0, 1], "seconds": [0.2, 0.3]}), "03_x", "times", out, key="run")
    ...     print(read_manifest(out))
    {}
    {'times': {'key': ['run'], 'timing': ['seconds'], 'rtol': 0.0, 'atol': 0.0}}
    """
    path = Path(folder) / MANIFEST
    return json.loads(path.read_text()) if path.is_file() else {}


def save_results(frame, notebook, name, results_dir=None, *, key=None, timing=None, rtol=0.0, atol=0.0, timing_rows=()):
    """Write a result table as CSV, its timings apart, declare how ``verify`` compares it, and return its path.

    The timing columns go to ``timings/<name>.csv`` beside it, with the table's key (or a ``row`` column, the
    row's position) to join them back; a timing table (``timing=True``) goes there whole.

    Parameters
    ----------
    frame : DataFrame
    notebook : the notebook's stem, e.g. ``"03_dpqt_kmeans"``
    name : the table's name (the CSV's stem)
    results_dir : folder; default ``data/results/<notebook>``
    key : column or list of columns that identify a row (default: rows are compared by position)
    timing : columns that hold timings, which ``verify`` ignores (default: ``seconds`` and
        ``*_seconds``; ``True``: every column outside the key)
    rtol, atol : tolerances of the numeric cells (default 0: exact, as for seeded results)
    timing_rows : keys of the rows computed from timings, which ``verify`` ignores

    The declaration goes to ``tables.json`` in the same folder (one entry per table).

    Returns
    -------
    Path
        The CSV's path (a timing table's, in ``timings/``).

    Examples
    --------
    >>> import os, tempfile
    >>> frame = pd.DataFrame({"epsilon": [0.5, 1.0], "nicv": [0.31, 0.12], "seconds": [0.8, 0.7]})
    >>> with tempfile.TemporaryDirectory() as out:
    ...     path = save_results(frame, "03_dpqt_kmeans", "nicv", out, key="epsilon", rtol=1e-9)
    ...     print(path.name, sorted(os.listdir(out)))
    ...     print(path.read_text().splitlines())
    ...     print((path.parent / "timings" / "nicv.csv").read_text().splitlines())
    ...     print(read_manifest(out)["nicv"])
    nicv.csv ['nicv.csv', 'tables.json', 'timings']
    ['epsilon,nicv', '0.5,0.31', '1.0,0.12']
    ['epsilon,seconds', '0.5,0.8', '1.0,0.7']
    {'key': ['epsilon'], 'timing': ['seconds'], 'rtol': 1e-09, 'atol': 0.0}
    """
    spec = table_spec(frame, key=key, timing=timing, rtol=rtol, atol=atol, timing_rows=timing_rows)
    path = results_path(notebook, name, results_dir)
    timings = path.parent / TIMINGS / path.name
    path.parent.mkdir(parents=True, exist_ok=True)
    for stale in (path, timings):  # a table that changed kind leaves no older copy on the other side
        stale.unlink(missing_ok=True)
    columns = spec["timing"]
    whole = timing is True
    if columns:
        ids = frame[spec["key"]] if spec["key"] else pd.DataFrame({"row": range(len(frame))}, index=frame.index)
        timings.parent.mkdir(exist_ok=True)
        pd.concat([ids, frame[columns]], axis=1).to_csv(timings, index=False)
    if not whole:
        frame.drop(columns=columns).to_csv(path, index=False)
    manifest = read_manifest(path.parent)
    manifest[name] = spec
    (path.parent / MANIFEST).write_text(json.dumps(dict(sorted(manifest.items())), indent=1) + "\n")
    return timings if whole else path


def load_published(notebook):
    """The paper's own numbers, package data ``dpclust/published/<notebook>.csv``.

    Read through :mod:`importlib.resources`, so they come with an installed wheel.

    Parameters
    ----------
    notebook : str
        The notebook's stem, e.g. ``"02_ldp_kmodes_sampling"``.

    Returns
    -------
    DataFrame
        The columns differ by paper (a table's cells, a figure's points, protocol constants).

    Examples
    --------
    >>> published = load_published("02_ldp_kmodes_sampling")
    >>> published.columns.tolist()
    ['source', 'dataset', 'metric', 'epsilon', 'value', 'note']
    >>> published.head(1).to_dict("records")  # doctest: +NORMALIZE_WHITESPACE
    [{'source': 'Table 4', 'dataset': 'adult', 'metric': 'E', 'epsilon': 1.0, 'value': 0.48,
      'note': 'K = 3; log base not stated'}]
    >>> load_published("99_x")
    Traceback (most recent call last):
    ...
    FileNotFoundError: no published numbers for notebook='99_x' (dpclust/published/)
    """
    resource = importlib.resources.files("dpclust").joinpath("published", f"{notebook}.csv")
    if not resource.is_file():
        raise FileNotFoundError(f"no published numbers for notebook={notebook!r} (dpclust/published/)")
    with resource.open("rb") as f:
        return pd.read_csv(f)


def skip_rest_of_notebook(reason):
    """End a notebook early, without an error: say why, and make every later cell a no-op.

    For a notebook whose every experiment needs one absent data set: it writes its
    ``not run`` ledger rows, then calls this, and a batch run still ends cleanly.
    Outside IPython it raises ``RuntimeError(reason)``, and so it does in a graded assignment
    (``DPCLUST_GRADED=1``, set by the exported nbgrader notebooks), where a skipped test cell would
    count as passed.

    Parameters
    ----------
    reason : str
        Printed in the notebook (raised outside one).

    Examples
    --------
    In a script (in a notebook, the cells after this one would do nothing):

    >>> skip_rest_of_notebook("the IPUMS extract is not on this machine")
    Traceback (most recent call last):
    ...
    RuntimeError: the IPUMS extract is not on this machine
    """
    try:
        from IPython import get_ipython
    except ImportError:  # the library without the [notebooks] extra
        get_ipython = None
    shell = get_ipython() if get_ipython is not None else None
    if shell is None:
        raise RuntimeError(reason)
    if os.environ.get("DPCLUST_GRADED") == "1":
        # nbgrader counts a test cell that raised nothing as passed: skipped cells would give every submission
        # full marks. A graded assignment stops with an error instead (set by dpclust.assignments' export).
        raise RuntimeError(f"{reason}; a graded assignment runs every cell, so it stops here")
    print(f"the rest of this notebook is skipped: {reason}")
    shell.input_transformers_post.append(lambda lines: [])


def load_dataset(name, variant=None, **kwargs):
    """``datasets.load(name, variant)``, or None after one clear message when the file is absent.

    A notebook calls this for each experiment's data and, on None, adds ``not run``
    rows to its ledger instead of failing.

    Parameters
    ----------
    name, variant, **kwargs
        As in :func:`dpclust.datasets.load`.

    Returns
    -------
    Dataset or None

    Examples
    --------
    >>> load_dataset("pytest_uniform", n_samples=3)
    Dataset('pytest_uniform', variant='uniform', n=3, d=2, numeric)
    >>> import os, tempfile
    >>> from unittest import mock
    >>> offline = {"DPCLUST_DATA_DIR": "", "DPCLUST_NO_DOWNLOAD": "1"}  # no data folder, no download
    >>> with tempfile.TemporaryDirectory() as raw, mock.patch.dict(os.environ, offline):
    ...     car = load_dataset("car", raw_dir=raw)
    not run: the data set 'car' is not on this machine and could not be downloaded (see the README's Data ...
    >>> car is None
    True
    """
    from . import datasets

    try:
        return datasets.load(name, variant, **kwargs) if variant is not None else datasets.load(name, **kwargs)
    except datasets.DataNotFoundError:
        # The message names no local folder: a committed notebook's output must not carry one.
        print(
            f"not run: the data set {name!r} is not on this machine and could not be downloaded "
            "(see the README's Data section, or `python -m dpclust data`)"
        )
        return None

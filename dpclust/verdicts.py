"""Reproduction ledgers: the verdict rules, one primary reading per paper, replicates, sensitivity and coverage.

A paper notebook grades every published artefact of its paper (a figure, a table row, a theorem, a numeric
claim) in one :class:`Ledger`:

* the choices the paper leaves open are declared once, before any result, each with one **primary** reading
  picked from the paper's text or its platform (:meth:`Ledger.primary`), and the other faithful readings
  beside it (:meth:`Ledger.alternative`);
* every claim is graded under the primary readings alone (:meth:`Ledger.add`); its verdict under another
  reading is a **sensitivity** entry beside it (:meth:`Ledger.sensitivity`), shown and never tallied;
* a verdict that depends on random draws is decided over **replicates**: the draws of this run (several when
  the notebook runs more than the paper's number of runs) and those of the stability run, which reruns the
  notebook with other root seeds (:func:`replicate_table`); unanimous replicates give their verdict,
  disagreeing ones give ``"unstable"`` with the count (:func:`combine`);
* the **coverage** table lists every artefact of the paper with the row that grades it, or why none can
  (:meth:`Ledger.cover`).

:func:`read_ledgers` and :func:`verdict_counts` gather the saved ledgers for the overview, the book and the
README (:func:`readme_section`), so that no count is typed by hand.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from . import _paths
from .experiments import save_results, t_interval

__all__ = [
    "DRAW_VERDICTS",
    "UNSTABLE",
    "VERDICTS",
    "ON_RUN_TIMES",
    "combine",
    "verdict_by_gap",
    "verdict_by_share",
    "verdict_by_tests",
    "verdict_by_shares",
    "verdict_by_intervals",
    "family_level",
    "comparison_draws",
    "equivalence_cells",
    "Ledger",
    "VerdictBox",
    "read_ledgers",
    "verdict_counts",
    "notebook_source_hash",
    "replicate_table",
    "load_replicates",
    "rerun_headlines",
    "verdict_table",
    "readme_section",
    "update_readme",
]

DRAW_VERDICTS = ("reproduced", "partly", "not reproduced", "not testable", "not run")
"""What one draw of a claim can show. ``not testable``: a claim that restates another, or that cannot hold or
fail by construction under its primary reading. ``not run``: the data is absent."""

UNSTABLE = "unstable"
"""The verdict of a claim whose replicates disagree (:func:`combine`)."""

VERDICTS = ("reproduced", "partly", "not reproduced", UNSTABLE, "not testable", "not run")
"""Every verdict a ledger row can carry, in the order of the tables."""

ON_RUN_TIMES = "on run times"
"""The column of :func:`verdict_counts` that counts the claims graded on run times."""

REPLICATES = "replicates.csv"
"""The stability run's table beside a notebook's ledger (written by ``stability``, kept by ``reproduce``)."""

FINDINGS = "findings"
"""The table of a ledger's run: the paper, the root seed and the summary the README shows."""

SEPARATOR = "; "
"""Joins the draws of one run (``run_verdicts``), artefacts and claim ids in one cell."""


def _draws(verdict, name="verdict"):
    """One run's draws as a list of draw verdicts (a string is one draw)."""
    draws = [verdict] if isinstance(verdict, str) else list(verdict)
    if not draws:
        raise ValueError(f"{name} must hold at least one draw, got {name}={verdict!r}")
    unknown = [v for v in draws if v not in DRAW_VERDICTS]
    if unknown:
        raise ValueError(f"{name} must hold draws among {DRAW_VERDICTS}, got {unknown[0]!r}")
    return draws


def combine(draws):
    """The verdict of a claim over its replicates, and how many replicates gave each verdict.

    Unanimous draws give their verdict; draws that disagree give ``"unstable"``: a reproduction that holds in
    some draws of the noise and not in others is reported as such, never as its first draw.

    Parameters
    ----------
    draws : str or sequence of str
        One verdict of :data:`DRAW_VERDICTS` per replicate (a string is one replicate).

    Returns
    -------
    (verdict, replicates) : the verdict, and a text such as ``"5 of 5"`` or ``"3 of 5 reproduced, 2 partly"``.

    Examples
    --------
    >>> combine(["reproduced"] * 5)
    ('reproduced', '5 of 5')
    >>> combine(["reproduced", "partly", "reproduced", "reproduced", "partly"])
    ('unstable', '3 of 5 reproduced, 2 partly')
    >>> combine("not run")
    ('not run', '1 of 1')
    >>> combine(["maybe"])
    Traceback (most recent call last):
    ...
    ValueError: draws must hold draws among ('reproduced', 'partly', ...), got 'maybe'
    """
    draws = _draws(draws, "draws")
    counts = {v: draws.count(v) for v in DRAW_VERDICTS if v in draws}
    if len(counts) == 1:
        return draws[0], f"{len(draws)} of {len(draws)}"
    ordered = sorted(counts.items(), key=lambda item: -item[1])  # a stable sort: ties keep DRAW_VERDICTS' order
    (top, n_top), rest = ordered[0], ordered[1:]
    return UNSTABLE, f"{n_top} of {len(draws)} {top}, " + ", ".join(f"{n} {v}" for v, n in rest)


# ---------------------------------------------------------------------------
# Verdict rules: one implementation for every notebook
# ---------------------------------------------------------------------------


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

    Examples
    --------
    >>> verdict, gap = verdict_by_gap([0.51, 0.70], [0.50, 0.66])  # gaps 0.01 and 0.04
    >>> verdict, round(gap, 3)
    ('partly', 0.04)
    >>> verdict_by_gap([0.51, 0.70], [0.50, 0.66], partly_share=1.0)[0], verdict_by_gap([0.51], [0.50])[0]
    ('partly', 'reproduced')
    >>> verdict_by_gap([0.51, 0.80], [0.50, 0.66], partly_share=1.0)[0]
    'not reproduced'
    """
    gaps = np.abs(np.asarray(ours, dtype=float) - np.asarray(published, dtype=float))
    if gaps.size == 0 or np.isnan(gaps).any():
        raise ValueError("ours and published must be non-empty and without NaN")
    verdict = (
        "reproduced"
        if (gaps <= close).all()
        else "partly"
        if (gaps <= near).mean() >= partly_share
        else "not reproduced"
    )
    return verdict, float(gaps.max())


def verdict_by_share(passed):
    """Verdict for a claim checked in several cases (or made of parts): all hold -> ``"reproduced"``,
    some -> ``"partly"``, none -> ``"not reproduced"``; nothing could be checked -> ``"not run"``.

    Parameters
    ----------
    passed : iterable of bool
        Whether the claim holds in each case.

    Returns
    -------
    str

    Examples
    --------
    >>> verdict_by_share([True, True]), verdict_by_share([True, False]), verdict_by_share([False])
    ('reproduced', 'partly', 'not reproduced')
    >>> verdict_by_share(gap < 0.05 for gap in [])
    'not run'
    """
    passed = np.asarray(list(passed), dtype=bool).ravel()  # list(): a generator is a sequence of cases too
    if passed.size == 0:
        return "not run"
    return "reproduced" if passed.all() else "partly" if passed.any() else "not reproduced"


def verdict_by_tests(reproduced, partly, testable=True):
    """The verdict of a claim from its two tests: ``"reproduced"`` if the first holds, else
    ``"partly"`` if the second holds, else ``"not reproduced"``; ``"not testable"`` when ``testable`` is false.

    Parameters
    ----------
    reproduced, partly : bool, the claim's rule for "reproduced" and its weaker rule for "partly"
    testable : bool, default True, False when the data cannot decide the claim either way

    Returns
    -------
    str : the verdict.

    Examples
    --------
    >>> verdict_by_tests(False, True)
    'partly'
    >>> verdict_by_tests(True, True, testable=False)
    'not testable'
    """
    if not testable:
        return "not testable"
    return "reproduced" if reproduced else "partly" if partly else "not reproduced"


def verdict_by_shares(shares, reproduced_at=0.8, partly_at=0.5):
    """Verdict for a claim checked as a share of cases in each of several groups (data sets, readings).

    ``"reproduced"`` when every share is at least ``reproduced_at``, ``"partly"`` when some share is at
    least ``partly_at``, ``"not reproduced"`` otherwise, and ``"not run"`` when there is no group.

    Parameters
    ----------
    shares : iterable of floats in [0, 1], one per group: the share of its cases where the claim holds
    reproduced_at, partly_at : float, the thresholds (0.8 and 0.5: "most of the cases" and "half")

    Returns
    -------
    str : the verdict.

    Examples
    --------
    >>> verdict_by_shares([0.9, 0.8])
    'reproduced'
    >>> verdict_by_shares([0.9, 0.4])
    'partly'
    >>> verdict_by_shares([])
    'not run'
    """
    shares = np.asarray(list(shares), dtype=float).ravel()  # list(): a generator of shares is accepted too
    if np.isnan(shares).any():
        raise ValueError("shares must hold no NaN")
    if shares.size == 0:
        return "not run"
    return verdict_by_tests(shares.min() >= reproduced_at, shares.max() >= partly_at)


def verdict_by_intervals(low, high, share=0.8, value=0.0):
    """Verdict for an effect measured with an interval at each point of a grid (e.g. each ε).

    ``"reproduced"`` when at least ``round(share * n)`` of the n intervals (and at least one) lie
    wholly above ``value`` and none wholly below; ``"partly"`` when more lie above than below;
    ``"not reproduced"`` otherwise.

    Parameters
    ----------
    low, high : array-like of floats, the same length n >= 1, the bounds of the intervals
    share : float in (0, 1], the share of the grid where the effect must be significant
    value : float, default 0.0, the value of no effect

    Returns
    -------
    (verdict, above, below) : the verdict and the numbers of intervals wholly above and wholly below ``value``.

    Examples
    --------
    >>> verdict_by_intervals([0.1, 0.2, -0.1, 0.3], [0.5, 0.6, 0.2, 0.7], share=0.75)
    ('reproduced', 3, 0)
    >>> verdict_by_intervals([0.1, -0.5], [0.5, -0.1])
    ('not reproduced', 1, 1)
    """
    low, high = np.asarray(low, dtype=float).ravel(), np.asarray(high, dtype=float).ravel()
    if low.shape != high.shape or low.size == 0:
        raise ValueError(f"low and high must be non-empty and of one length, got {low.size} and {high.size} values")
    if not 0 < share <= 1:
        raise ValueError(f"share must be in (0, 1], got share={share!r}")
    above, below = int((low > value).sum()), int((high < value).sum())
    return verdict_by_tests(above >= max(1, round(share * low.size)) and below == 0, above > below), above, below


def family_level(n, confidence=0.95):
    """The level of each of ``n`` intervals that must hold together with probability ``confidence`` (Bonferroni).

    A claim graded cell by cell (each ε, each (data set, ε) pair) reads every cell's interval at this level, so that
    a null effect shows an interval on the claimed side in some cell with probability at most 1 − ``confidence``.

    Parameters
    ----------
    n : int >= 1, the number of cells the claim is graded on
    confidence : float in (0, 1), the family-wise level

    Returns
    -------
    float : 1 − (1 − ``confidence``) / ``n``.

    Examples
    --------
    >>> round(family_level(10), 6), round(family_level(44), 6)
    (0.995, 0.998864)
    >>> family_level(1)
    0.95
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be an int >= 1, got n={n!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got confidence={confidence!r}")
    return 1 - (1 - confidence) / int(n)


EQUIVALENCE_CALLS = ("close", "undecided", "apart")
"""What :func:`equivalence_cells` makes of a cell's interval."""


def equivalence_cells(low, high, margin):
    """Each cell of an equivalence claim ("A close to B") from its interval: two one-sided tests.

    A cell is ``"close"`` when its interval lies wholly within the margins, ``"apart"`` when it lies wholly outside
    them, and ``"undecided"`` when it straddles a margin. An interval wholly within [lower, upper] rejects both
    one-sided hypotheses, effect ≤ lower and effect ≥ upper, each at half the interval's error (the two one-sided
    tests of an equivalence): a cell whose interval is too wide to tell is never close, however near its estimate
    lies to the value of no difference. Read the intervals at :func:`family_level` over the claim's cells.

    Parameters
    ----------
    low, high : array-like of floats, the same length n >= 1, the bounds of the cells' intervals
    margin : float > 0, the range [−margin, margin]; or a pair (lower, upper) with lower < upper

    Returns
    -------
    ndarray of str : one of :data:`EQUIVALENCE_CALLS` per cell.

    Examples
    --------
    >>> equivalence_cells([-0.1, -0.4, 0.3, -0.6], [0.1, 0.2, 0.5, 0.6], 0.25).tolist()
    ['close', 'undecided', 'apart', 'undecided']
    >>> equivalence_cells([0.12, 0.02], [0.2, 0.06], (0.10, 0.25)).tolist()
    ['close', 'apart']
    """
    low, high = np.asarray(low, dtype=float).ravel(), np.asarray(high, dtype=float).ravel()
    if low.shape != high.shape or low.size == 0 or np.isnan(low).any() or np.isnan(high).any():
        raise ValueError(f"low and high must be non-empty, of one length and without NaN, got {low.size}, {high.size}")
    lower, upper = (-float(margin), float(margin)) if np.ndim(margin) == 0 else map(float, margin)
    if not lower < upper:
        raise ValueError(f"margin must be > 0 or a pair (lower, upper) with lower < upper, got margin={margin!r}")
    close = (low > lower) & (high < upper)
    apart = (high < lower) | (low > upper)
    return np.where(close, EQUIVALENCE_CALLS[0], np.where(apart, EQUIVALENCE_CALLS[2], EQUIVALENCE_CALLS[1]))


def comparison_draws(diffs, grid, blocks, share=0.8, confidence=0.95):
    """The draws of a comparison claim, "A above B" over a grid (e.g. each ε), from paired differences A − B.

    A referee's order: first the effect, then the replicates. The effect is tested on every run pooled: at each
    grid point the paired t-interval of A − B, at the Bonferroni level 1 − (1 − ``confidence``) / n over the n
    points, so that a null effect shows an interval above 0 somewhere with probability at most 1 − ``confidence``.
    No interval above 0 is no evidence of the claimed effect: every replicate draws ``"not reproduced"``, and a
    null effect can no longer read as ``"unstable"`` by the chance signs of its means. When the pooled test shows
    the effect, each replicate is graded by :func:`verdict_by_intervals` on its own runs (the same level), and the
    replicates may then disagree about a real effect (``"unstable"``).

    Parameters
    ----------
    diffs, grid, blocks : array-like of the same length: A − B of each paired run, its grid point, its replicate
    share : float in (0, 1], the share of the grid where a replicate's interval must lie above 0 for "reproduced"
    confidence : float in (0, 1), the family-wise level over the grid

    Returns
    -------
    (draws, above, below) : one draw per replicate, and the numbers of grid points where the pooled interval lies
    wholly above and wholly below 0.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> grid, blocks = np.repeat(np.arange(5), 20), np.tile(np.repeat(np.arange(2), 10), 5)
    >>> comparison_draws(rng.normal(0, 1, 100), grid, blocks)  # no effect: not reproduced, never unstable
    (['not reproduced', 'not reproduced'], 0, 0)
    >>> comparison_draws(rng.normal(2, 1, 100), grid, blocks)[0]
    ['reproduced', 'reproduced']
    """
    frame = pd.DataFrame({"diff": np.asarray(diffs, dtype=float), "grid": grid, "block": blocks})
    if frame.empty or frame["diff"].isna().any():
        raise ValueError("diffs must be non-empty and hold no NaN")
    level = family_level(frame["grid"].nunique(), confidence)

    def intervals(part):
        return np.array([t_interval(v, level)[1:] for _, v in part.groupby("grid")["diff"]])

    pooled = intervals(frame)
    above, below = int((pooled[:, 0] > 0).sum()), int((pooled[:, 1] < 0).sum())
    n_blocks = frame["block"].nunique()
    if above == 0:
        return ["not reproduced"] * n_blocks, above, below
    draws = [verdict_by_intervals(*intervals(part).T, share=share)[0] for _, part in frame.groupby("block")]
    return draws, above, below


# ---------------------------------------------------------------------------
# The ledger
# ---------------------------------------------------------------------------

LEDGER_COLUMNS = [
    "paper",
    "claim_id",
    "artefact",
    "claim",
    "published",
    "ours",
    "verdict",
    "replicates",
    "run_verdicts",
    "reading",
    "depends_on",
    "evidence",
    "depends_on_timing",
]
READING_COLUMNS = ["choice", "reading", "primary", "support", "added_after_results", "used_for"]
SENSITIVITY_COLUMNS = ["claim_id", "choice", "reading", "verdict", "replicates", "run_verdicts", "ours", "changes"]
COVERAGE_COLUMNS = ["artefact", "claim_id", "verdict", "why_no_row"]
REPLICATE_COLUMNS = ["claim_id", "reading", "seed", "run_verdicts", "notebook_source"]


def _text(value, name):
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name} must be a non-empty string, got {name}={value!r}")
    return value


def _names(value, name):
    """One name or a sequence of names, as a list of non-empty strings."""
    names = [value] if isinstance(value, str) else list(value)
    for item in names:
        _text(item, name)
    return names


def _sensitivity_key(choice, reading):
    return f"{choice}: {reading}"


@dataclass(frozen=True)
class VerdictBox:
    """What a graded figure decided, shown under it: the claim, the primary reading, the verdict, the replicates.

    Examples
    --------
    >>> box = VerdictBox("Fig. 3", "IDP above DP at every ε", "DS1: iris", "unstable", "3 of 5 reproduced, 2 partly")
    >>> print(box._repr_markdown_())
    > **Fig. 3: IDP above DP at every ε.** Verdict: **unstable** (3 of 5 reproduced, 2 partly). Primary reading: ...
    """

    artefact: str
    claim: str
    reading: str
    verdict: str
    replicates: str

    def _repr_markdown_(self):
        # the verdict first: a claim's primary readings can run to several hundred characters
        reading = f" Primary reading: {self.reading.rstrip('.')}." if self.reading else ""
        verdict = f"Verdict: **{self.verdict}** ({self.replicates})."
        return f"> **{self.artefact}: {self.claim.rstrip('.')}.** {verdict}{reading}"

    def __repr__(self):
        return self._repr_markdown_()


@dataclass(repr=False)
class Ledger:
    """A paper notebook's reproduction ledger: one row per published artefact it grades.

    Declare the choices the paper leaves open first (:meth:`primary`, :meth:`alternative`), then grade each
    claim under the primary readings (:meth:`add`, from computed results, never typed in), add what another
    reading changes (:meth:`sensitivity`) and name the artefacts no row can grade (:meth:`cover`).
    :meth:`save` writes ``ledger.csv``, ``readings.csv``, ``sensitivity.csv``, ``coverage.csv`` and
    ``findings.csv`` (the summary).

    Attributes
    ----------
    paper : str
        The paper, named in every row.
    notebook : str or None
        The notebook's stem; needed by :meth:`save`.
    seed : int
        The root seed of this run: the stability run's draws at other seeds are its other replicates.
    replicates : DataFrame or None
        The stability run's draws (:func:`load_replicates`); None or empty: this run's draws alone.
    rows, readings, sensitivities, coverage : list of dict
        The rows of the tables, in the order added.
    summary : str
        The notebook's findings in a few sentences, for the README (:meth:`summarise`).

    Examples
    --------
    >>> import os, tempfile
    >>> ledger = Ledger("Zhang & Cheng 2021", "03_dpqt_kmeans")
    >>> gamma = ledger.primary("tree budget", "γ = 0.3", "Sec. 4.2: 'γ = 0.3'", value=0.3)
    >>> _ = ledger.alternative("tree budget", "γ = 0.5", "Sec. 4.2 gives no other value")
    >>> _ = ledger.add("fig5", "NICV falls as ε grows", "Fig. 5", "ρ = -0.9", ["reproduced", "reproduced"],
    ...                artefact="Fig. 5", uses="tree budget")
    >>> _ = ledger.sensitivity("fig5", "tree budget", "γ = 0.5", "partly", ours="ρ = -0.4")
    >>> _ = ledger.cover("Table 2", why_no_row="its values are not in the text")
    >>> ledger.frame()[["claim_id", "verdict", "replicates", "reading"]].values.tolist()
    [['fig5', 'reproduced', '2 of 2', 'tree budget: γ = 0.3']]
    >>> ledger.sensitivity_frame()[["reading", "verdict", "changes"]].values.tolist()
    [['γ = 0.5', 'partly', 'reproduced -> partly']]
    >>> ledger.box("fig5")
    > **Fig. 5: NICV falls as ε grows.** Verdict: **reproduced** (2 of 2). Primary reading: tree budget: γ = 0.3.
    >>> ledger
    Ledger('Zhang & Cheng 2021': 1 claims, 2 readings, 1 sensitivity entries, 2 artefacts)
    >>> with tempfile.TemporaryDirectory() as out:
    ...     print(ledger.save(out).name, sorted(os.listdir(out)))
    ledger.csv ['coverage.csv', 'findings.csv', 'ledger.csv', 'readings.csv', 'sensitivity.csv', 'tables.json']
    """

    paper: str
    notebook: str | None = None
    seed: int = 0
    replicates: pd.DataFrame | None = None
    rows: list = field(default_factory=list)
    readings: list = field(default_factory=list)
    sensitivities: list = field(default_factory=list)
    coverage: list = field(default_factory=list)
    summary: str = ""

    def __post_init__(self):
        _text(self.paper, "paper")
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)):
            raise TypeError(f"seed must be an int, got seed={self.seed!r}")

    def __repr__(self):
        # Short on purpose: a notebook cell ending in ledger.add(...) shows this, not every row again.
        return (
            f"Ledger({self.paper!r}: {len(self.rows)} claims, {len(self.readings)} readings, "
            f"{len(self.sensitivities)} sensitivity entries, {len(self.coverage)} artefacts)"
        )

    # -- readings -----------------------------------------------------------------------------------------

    def _declared(self, choice, reading=None):
        return [r for r in self.readings if r["choice"] == choice and (reading is None or r["reading"] == reading)]

    def primary_reading(self, choice):
        """The primary reading of a declared choice (a string)."""
        found = [r for r in self._declared(choice) if r["primary"]]
        if not found:
            raise ValueError(f"choice={choice!r} has no primary reading: declare it with Ledger.primary")
        return found[0]["reading"]

    def _declare(self, choice, reading, support, primary, added_after_results):
        _text(choice, "choice"), _text(reading, "reading"), _text(support, "support")
        if not isinstance(added_after_results, (bool, np.bool_)):
            raise TypeError(f"added_after_results must be a bool, got added_after_results={added_after_results!r}")
        if self._declared(choice, reading):
            raise ValueError(f"the reading {reading!r} of {choice!r} is already declared")
        row = {"choice": choice, "reading": reading, "primary": primary, "support": support}
        self.readings.append({**row, "added_after_results": bool(added_after_results), "used_for": ""})

    def primary(self, choice, reading, support, value=None, added_after_results=False):
        """Declare the primary reading of a choice the paper leaves open, before any claim is graded.

        Parameters
        ----------
        choice, reading : str
            The choice (e.g. ``"DS1 stand-in"``) and its primary reading (e.g. ``"Iris, K = 3"``).
        support : str
            Why: the paper's text (or its platform) that picks this reading.
        value : object, optional
            What the experiments use for this reading (returned, so that the code runs what was declared).
        added_after_results : bool, default False
            True for a reading (a grading rule, typically) adopted after results had been seen: the readings
            table says so, beside the earlier reading declared as an alternative.

        Returns
        -------
        ``value`` if given, else ``reading``.
        """
        if self.rows:
            raise ValueError(f"declare the primary reading of {choice!r} before grading any claim (Ledger.add)")
        if any(r["primary"] for r in self._declared(choice)):
            raise ValueError(f"choice={choice!r} already has a primary reading: {self.primary_reading(choice)!r}")
        self._declare(choice, reading, support, True, added_after_results)
        return reading if value is None else value

    def alternative(self, choice, reading, support, added_after_results=False, value=None):
        """Declare another faithful reading of a choice: graded beside the primary one, never tallied.

        ``added_after_results=True`` says that the reading was proposed after results had been seen.
        Returns ``value`` if given, else ``reading``.
        """
        self._declare(choice, reading, support, False, added_after_results)
        return reading if value is None else value

    # -- claims -------------------------------------------------------------------------------------------

    def _other_draws(self, claim_id, reading=""):
        """The stability run's draws of a claim (under a reading) at seeds other than this run's."""
        if self.replicates is None or self.replicates.empty:
            return []
        rep = self.replicates
        mine = rep[(rep["claim_id"] == claim_id) & (rep["reading"] == reading) & (rep["seed"] != self.seed)]
        return [v for cell in mine["run_verdicts"] for v in str(cell).split(SEPARATOR)]

    def _row(self, claim_id):
        found = [r for r in self.rows if r["claim_id"] == claim_id]
        if not found:
            raise ValueError(f"claim_id={claim_id!r} is not in the ledger: add it first")
        return found[0]

    def add(
        self, claim_id, claim, published, ours, verdict, *, artefact, uses=(), depends_on=(), evidence="", timing=False
    ):
        """Grade one claim under the primary readings.

        Parameters
        ----------
        claim_id : str
            Unique in the ledger.
        claim, published, ours : str
            The claim in words, what the paper shows, what we measured.
        verdict : str or sequence of str
            This run's draw (one of :data:`DRAW_VERDICTS`), or several when the run holds several replicates
            of the paper's protocol; the stability run adds the draws at other seeds (:func:`combine`).
        artefact : str or sequence of str
            The published artefacts the row grades (``"Fig. 3"``, ``"Table 2, K = 2 RI row"``); each artefact
            is graded by one row only.
        uses : str or sequence of str
            The declared choices whose primary readings the grading uses (the ``reading`` column names them).
        depends_on : str or sequence of str
            The claims this one rests on.
        evidence : str
            The tables behind the verdict.
        timing : bool
            Graded on run times: counted apart, and ``verify`` does not compare it.

        Returns
        -------
        self
        """
        _text(claim_id, "claim_id")
        if any(r["claim_id"] == claim_id for r in self.rows):
            raise ValueError(f"claim_id={claim_id!r} is already in the ledger")
        draws = _draws(verdict)
        artefacts, uses = _names(artefact, "artefact"), _names(uses, "uses")
        taken = [a for a in artefacts if any(c["artefact"] == a for c in self.coverage)]
        if taken:
            raise ValueError(f"artefact {taken[0]!r} is already graded or covered: one row per artefact")
        reading = SEPARATOR.join(f"{choice}: {self.primary_reading(choice)}" for choice in uses)
        headline, replicates = combine(draws + self._other_draws(claim_id))
        self.rows.append(
            {
                "paper": self.paper,
                "claim_id": claim_id,
                "artefact": SEPARATOR.join(artefacts),
                "claim": claim,
                "published": published,
                "ours": ours,
                "verdict": headline,
                "replicates": replicates,
                "run_verdicts": SEPARATOR.join(draws),
                "reading": reading,
                "depends_on": SEPARATOR.join(_names(depends_on, "depends_on")),
                "evidence": evidence,
                "depends_on_timing": bool(timing),
            }
        )
        self.coverage += [{"artefact": a, "claim_id": claim_id, "why_no_row": ""} for a in artefacts]
        for choice in uses:
            self._mark_use(choice, self.primary_reading(choice), claim_id)
        return self

    def _mark_use(self, choice, reading, claim_id):
        row = self._declared(choice, reading)[0]
        row["used_for"] = SEPARATOR.join([*filter(None, row["used_for"].split(SEPARATOR)), claim_id])

    def sensitivity(self, claim_id, choice, reading, verdict, ours=""):
        """Grade a claim under an alternative reading of one choice: shown beside its verdict, never tallied.

        ``verdict`` is this run's draw(s), as in :meth:`add`; the ``changes`` column says what the reading
        changes against the primary verdict.
        """
        primary = self._row(claim_id)
        if not self._declared(choice, reading) or self._declared(choice, reading)[0]["primary"]:
            raise ValueError(f"{reading!r} is not an alternative reading of {choice!r}: declare it first")
        if any(
            s["claim_id"] == claim_id and s["choice"] == choice and s["reading"] == reading for s in self.sensitivities
        ):
            raise ValueError(f"the sensitivity of {claim_id!r} to {reading!r} is already in the ledger")
        draws = _draws(verdict)
        headline, replicates = combine(draws + self._other_draws(claim_id, _sensitivity_key(choice, reading)))
        changes = "same verdict" if headline == primary["verdict"] else f"{primary['verdict']} -> {headline}"
        self.sensitivities.append(
            {
                "claim_id": claim_id,
                "choice": choice,
                "reading": reading,
                "verdict": headline,
                "replicates": replicates,
                "run_verdicts": SEPARATOR.join(draws),
                "ours": ours,
                "changes": changes,
            }
        )
        self._mark_use(choice, reading, claim_id)
        return self

    def cover(self, artefact, why_no_row):
        """Name a published artefact that no row grades, and why (e.g. "the values are not in the text")."""
        _text(artefact, "artefact"), _text(why_no_row, "why_no_row")
        if any(c["artefact"] == artefact for c in self.coverage):
            raise ValueError(f"artefact {artefact!r} is already graded or covered: one row per artefact")
        self.coverage.append({"artefact": artefact, "claim_id": "", "why_no_row": why_no_row})
        return self

    def summarise(self, text):
        """The notebook's findings in a few sentences, numbers computed (the README shows them)."""
        self.summary = _text(text, "text")
        return self

    def box(self, claim_id):
        """The :class:`VerdictBox` of a graded claim, to show under its figure."""
        row = self._row(claim_id)
        return VerdictBox(row["artefact"], row["claim"], row["reading"], row["verdict"], row["replicates"])

    # -- tables -------------------------------------------------------------------------------------------

    def frame(self):
        return pd.DataFrame(self.rows, columns=LEDGER_COLUMNS)

    def readings_frame(self):
        return pd.DataFrame(self.readings, columns=READING_COLUMNS)

    def sensitivity_frame(self):
        return pd.DataFrame(self.sensitivities, columns=SENSITIVITY_COLUMNS)

    def coverage_frame(self):
        verdict = {r["claim_id"]: r["verdict"] for r in self.rows}
        rows = [{**c, "verdict": verdict.get(c["claim_id"], "")} for c in self.coverage]
        return pd.DataFrame(rows, columns=COVERAGE_COLUMNS)

    def save(self, results_dir=None):
        """Write the ledger's tables (``ledger.csv`` and the others named above); return the ledger's path."""
        if self.notebook is None:
            raise ValueError("Ledger.notebook is needed to save: Ledger(paper, notebook)")
        save_results(self.readings_frame(), self.notebook, "readings", results_dir, key=["choice", "reading"])
        save_results(
            self.sensitivity_frame(), self.notebook, "sensitivity", results_dir, key=["claim_id", "choice", "reading"]
        )
        save_results(self.coverage_frame(), self.notebook, "coverage", results_dir, key="artefact")
        findings = pd.DataFrame({"paper": [self.paper], "seed": [int(self.seed)], "summary": [self.summary]})
        save_results(findings, self.notebook, "findings", results_dir)
        frame = self.frame()
        timed = frame.loc[frame["depends_on_timing"], "claim_id"]
        return save_results(frame, self.notebook, "ledger", results_dir, key="claim_id", timing_rows=list(timed))


# ---------------------------------------------------------------------------
# Gathering the ledgers
# ---------------------------------------------------------------------------


def _results_root(results_root):
    return Path(results_root) if results_root is not None else _paths.results_dir()


def read_ledgers(notebooks, results_root=None, table="ledger"):
    """Every row of the given notebooks' ledgers (or of another of their tables), with a ``notebook`` column.

    Parameters
    ----------
    notebooks : sequence of str
        Notebook stems, e.g. ``["01_ldpk_modes", ...]``; a notebook without the table adds no row.
    results_root : path-like, optional
        The folder holding ``<notebook>/<table>.csv``; default the compendium's ``data/results``
        (the paper-profile ledgers).
    table : str, default ``"ledger"``
        ``"ledger"``, ``"sensitivity"``, ``"coverage"``, ``"readings"`` or ``"findings"`` (its summary).

    Returns
    -------
    DataFrame with the table's columns and ``notebook``.

    Examples
    --------
    >>> import os, tempfile
    >>> ledger = Ledger("Li et al. 2013", "04_idp_kmeans").add("fig3", "F falls", "Fig. 3", "0.12", "partly",
    ...                                                        artefact="Fig. 3")
    >>> with tempfile.TemporaryDirectory() as root:
    ...     _ = ledger.save(os.path.join(root, "04_idp_kmeans"))
    ...     rows = read_ledgers(["04_idp_kmeans", "05_dp_birch"], root)  # 05 has no ledger there
    >>> rows[["notebook", "claim_id", "verdict"]].values.tolist()
    [['04_idp_kmeans', 'fig3', 'partly']]
    """
    columns = {
        "ledger": LEDGER_COLUMNS,
        "sensitivity": SENSITIVITY_COLUMNS,
        "coverage": COVERAGE_COLUMNS,
        "readings": READING_COLUMNS,
        FINDINGS: ["paper", "seed", "summary"],
    }
    if table not in columns:
        raise ValueError(f"table must be one of {tuple(columns)}, got table={table!r}")
    root = _results_root(results_root)
    parts = [
        pd.read_csv(root / stem / f"{table}.csv", keep_default_na=False).assign(notebook=stem)
        for stem in notebooks
        if (root / stem / f"{table}.csv").is_file()
    ]
    if not parts:
        return pd.DataFrame(columns=["notebook", *columns[table]])
    return pd.concat(parts, ignore_index=True)


def verdict_counts(ledgers, notebooks=None):
    """Per notebook: the claims, each verdict's count, and the claims graded on run times, counted apart.

    A claim graded on run times (``depends_on_timing``, e.g. "method A is faster than B") can take
    another verdict on another machine, so it is counted in :data:`ON_RUN_TIMES` and not under its
    verdict: the verdict columns are then the same wherever the notebooks run.

    Parameters
    ----------
    ledgers : DataFrame
        Ledger rows with ``notebook``, ``verdict`` and, optionally, ``depends_on_timing``.
    notebooks : list of str or None, default None
        The rows of the table, in order (None: the notebooks of ``ledgers``).

    Returns
    -------
    DataFrame with columns ``claims``, one per verdict of :data:`VERDICTS`, and :data:`ON_RUN_TIMES`.

    Examples
    --------
    >>> rows = pd.DataFrame({"notebook": ["01", "01", "01"], "verdict": ["reproduced", "unstable", "partly"],
    ...                      "depends_on_timing": [False, False, True]})
    >>> verdict_counts(rows).loc["01"].tolist()
    [3, 1, 0, 0, 1, 0, 0, 1]
    """
    timing = ledgers.get("depends_on_timing", pd.Series(False, index=ledgers.index))
    timing = timing.astype(str).str.lower().isin(["true", "1"])
    counts = ledgers[~timing].groupby(["notebook", "verdict"]).size().unstack(fill_value=0)
    unknown = sorted(set(counts.columns) - set(VERDICTS))
    if unknown:
        raise ValueError(f"ledgers hold verdicts outside {VERDICTS}: {unknown}")
    index = list(notebooks) if notebooks is not None else list(dict.fromkeys(ledgers["notebook"]))
    counts = counts.reindex(index=index, columns=list(VERDICTS), fill_value=0)
    counts[ON_RUN_TIMES] = ledgers[timing].groupby("notebook").size().reindex(index, fill_value=0)
    counts.insert(0, "claims", counts.sum(axis=1))
    return counts


# ---------------------------------------------------------------------------
# Replicates: the stability run
# ---------------------------------------------------------------------------


def notebook_source_hash(path):
    """The sha256 of a notebook's code (its code cells' sources, outputs apart), to tell stale replicates.

    Examples
    --------
    >>> import hashlib, json, tempfile
    >>> cells = [{"cell_type": "code", "source": ["x = 1"], "outputs": [], "metadata": {}}]
    >>> with tempfile.NamedTemporaryFile("w", suffix=".ipynb", delete=False) as f:
    ...     json.dump({"cells": cells}, f)
    >>> notebook_source_hash(f.name) == hashlib.sha256(b"x = 1").hexdigest()  # one code cell: its source
    True
    """
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    code = "\n\x00".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    return hashlib.sha256(code.encode("utf-8")).hexdigest()


def _run_draws(folder):
    """(claim_id, reading, run_verdicts) of one run's ledger and sensitivity tables."""
    ledger = pd.read_csv(Path(folder) / "ledger.csv", keep_default_na=False)
    parts = [ledger[["claim_id", "run_verdicts"]].assign(reading="")]
    path = Path(folder) / "sensitivity.csv"
    if path.is_file():
        sens = pd.read_csv(path, keep_default_na=False)
        keys = [_sensitivity_key(c, r) for c, r in zip(sens["choice"], sens["reading"])]
        parts.append(sens[["claim_id", "run_verdicts"]].assign(reading=keys))
    return pd.concat(parts, ignore_index=True)[["claim_id", "reading", "run_verdicts"]]


def replicate_table(runs, notebook_path):
    """The stability run's table: every draw of every claim (and sensitivity entry) at each root seed.

    Parameters
    ----------
    runs : dict int -> path-like
        Root seed -> the results folder of the notebook's run at that seed (with its ``ledger.csv``).
    notebook_path : path-like
        The notebook that ran: its code's hash is recorded, so that replicates of older code are told apart.

    Returns
    -------
    DataFrame with columns claim_id, reading ("" for the primary reading), seed, run_verdicts, notebook_source;
    save it as the notebook's ``replicates.csv`` beside its ledger.

    Examples
    --------
    >>> import json, os, tempfile
    >>> with tempfile.TemporaryDirectory() as root:
    ...     for seed, draw in enumerate(["reproduced", "partly"]):
    ...         _ = Ledger("Li et al. 2013", "04_idp_kmeans", seed=seed).add(
    ...             "fig3", "F falls", "Fig. 3", "", draw, artefact="Fig. 3").save(os.path.join(root, str(seed)))
    ...     with open(os.path.join(root, "04.ipynb"), "w") as f:
    ...         json.dump({"cells": []}, f)
    ...     table = replicate_table({0: os.path.join(root, "0"), 1: os.path.join(root, "1")}, f.name)
    >>> table[["claim_id", "seed", "run_verdicts"]].values.tolist()
    [['fig3', 0, 'reproduced'], ['fig3', 1, 'partly']]
    """
    source = notebook_source_hash(notebook_path)
    parts = [_run_draws(folder).assign(seed=int(seed)) for seed, folder in sorted(runs.items())]
    return pd.concat(parts, ignore_index=True).assign(notebook_source=source)[REPLICATE_COLUMNS]


def load_replicates(notebook, profile="paper", results_root=None):
    """The committed stability run of a notebook (empty outside the paper profile, or without one).

    Examples
    --------
    >>> load_replicates("04_idp_kmeans", profile="smoke").empty
    True
    """
    path = _results_root(results_root) / notebook / REPLICATES
    if profile != "paper" or not path.is_file():
        return pd.DataFrame(columns=REPLICATE_COLUMNS)
    return pd.read_csv(path, keep_default_na=False, dtype={"reading": str, "run_verdicts": str})


def rerun_headlines(committed_dir, rerun_dir, notebook_path=None):
    """Each committed headline verdict, and the verdict once a rerun at another root seed joins its replicates.

    The committed draws are the committed run's (``ledger.csv``, ``sensitivity.csv``) and the stability
    run's (``replicates.csv``); the rerun adds its own. A headline "survives" the rerun when the verdict over
    all of them is the committed one: a unanimous verdict stays so only if the rerun draws it too.

    Parameters
    ----------
    committed_dir, rerun_dir : path-like
        The results folders of the committed run and of the rerun (at another seed).
    notebook_path : path-like, optional
        The notebook: when given, a stability run of other code (:func:`notebook_source_hash`) is refused.

    Returns
    -------
    DataFrame with columns claim_id, reading, committed, with_rerun, survives.

    Examples
    --------
    >>> import os, tempfile
    >>> def run(folder, seed, draw):
    ...     ledger = Ledger("Li et al. 2013", "04_idp_kmeans", seed=seed)
    ...     _ = ledger.add("fig3", "F falls", "Fig. 3", "", draw, artefact="Fig. 3").save(folder)
    >>> with tempfile.TemporaryDirectory() as root:
    ...     run(os.path.join(root, "committed"), 0, "reproduced")
    ...     run(os.path.join(root, "rerun"), 7, "partly")
    ...     rerun_headlines(os.path.join(root, "committed"), os.path.join(root, "rerun")).values.tolist()
    [['fig3', '', 'reproduced', 'unstable', False]]
    """
    committed_dir, rerun_dir = Path(committed_dir), Path(rerun_dir)
    seeds = [int(read_ledgers([d.name], d.parent, FINDINGS)["seed"].iloc[0]) for d in (committed_dir, rerun_dir)]
    if seeds[0] == seeds[1]:
        raise ValueError(f"the rerun used the committed root seed ({seeds[0]}): it adds no replicate")
    replicates = load_replicates(committed_dir.name, "paper", committed_dir.parent)
    if notebook_path is not None and not replicates.empty:
        if set(replicates["notebook_source"]) != {notebook_source_hash(notebook_path)}:
            raise ValueError(f"{committed_dir.name}'s replicates come from other code: run the stability run again")
    draws = pd.concat(
        [replicates[~replicates["seed"].isin(seeds)][["claim_id", "reading", "run_verdicts"]]]
        + [_run_draws(d) for d in (committed_dir, rerun_dir)],
        ignore_index=True,
    )
    committed = _run_draws(committed_dir)[["claim_id", "reading"]]
    headline = _headlines(committed_dir)
    rows = []
    for claim_id, reading in committed.itertuples(index=False):
        mine = draws[(draws["claim_id"] == claim_id) & (draws["reading"] == reading)]["run_verdicts"]
        with_rerun = combine([v for cell in mine for v in str(cell).split(SEPARATOR)])[0]
        rows.append([claim_id, reading, headline[(claim_id, reading)], with_rerun])
    frame = pd.DataFrame(rows, columns=["claim_id", "reading", "committed", "with_rerun"])
    return frame.assign(survives=frame["committed"] == frame["with_rerun"])


def _headlines(folder):
    """(claim_id, reading) -> the verdict a results folder's ledger and sensitivity tables give."""
    folder = Path(folder)
    ledger = pd.read_csv(folder / "ledger.csv", keep_default_na=False)
    found = {(c, ""): v for c, v in zip(ledger["claim_id"], ledger["verdict"])}
    if (folder / "sensitivity.csv").is_file():
        sens = pd.read_csv(folder / "sensitivity.csv", keep_default_na=False)
        for c, choice, reading, v in sens[["claim_id", "choice", "reading", "verdict"]].itertuples(index=False):
            found[(c, _sensitivity_key(choice, reading))] = v
    return found


# ---------------------------------------------------------------------------
# The README's table, from the ledgers
# ---------------------------------------------------------------------------

README_START = "<!-- verdicts: start (written by `python -m dpclust readme` from the ledgers) -->"
README_END = "<!-- verdicts: end -->"


def verdict_table(ledgers, notebooks, link="notebooks/{stem}.ipynb"):
    """The verdict counts of :func:`verdict_counts` as a Markdown table, one row per paper and a total.

    The README and the book show this one table.

    Parameters
    ----------
    ledgers : DataFrame
        Rows of :func:`read_ledgers`.
    notebooks : sequence of str
        The rows, in order.
    link : str
        The link of a paper's name (``{stem}``: the notebook's stem).

    Returns
    -------
    str

    Examples
    --------
    >>> rows = pd.DataFrame({"notebook": ["01_x", "01_x"], "paper": ["Peng et al. 2021"] * 2,
    ...                      "verdict": ["reproduced", "unstable"], "depends_on_timing": [False, False]})
    >>> print(verdict_table(rows, ["01_x"]))
    | paper | claims | reproduced | partly | not reproduced | unstable | not testable | not run | on run times |
    |---|---:|---:|---:|---:|---:|---:|---:|---:|
    | [Peng et al. 2021](notebooks/01_x.ipynb) | 2 | 1 | 0 | 0 | 1 | 0 | 0 | 0 |
    | **all** | **2** | **1** | **0** | **0** | **1** | **0** | **0** | **0** |
    """
    counts = verdict_counts(ledgers, notebooks)
    papers = ledgers.groupby("notebook")["paper"].first()
    lines = ["| paper | " + " | ".join(counts.columns) + " |", "|---|" + "---:|" * len(counts.columns)]
    for stem, row in counts.iterrows():
        lines.append(f"| [{papers[stem]}]({link.format(stem=stem)}) | " + " | ".join(map(str, row)) + " |")
    lines.append("| **all** | " + " | ".join(f"**{n}**" for n in counts.sum()) + " |")
    return "\n".join(lines)


def readme_section(notebooks, results_root=None):
    """The README's verdict table and each paper's summary, from the saved ledgers (Markdown).

    Examples
    --------
    >>> import os, tempfile
    >>> ledger = Ledger("Li et al. 2013", "04_idp_kmeans").add("fig3", "F falls", "Fig. 3", "0.12", "partly",
    ...                                                        artefact="Fig. 3")
    >>> ledger = ledger.summarise("IDP k-means beats DPk-means in part.")
    >>> with tempfile.TemporaryDirectory() as root:
    ...     _ = ledger.save(os.path.join(root, "04_idp_kmeans"))
    ...     print(readme_section(["04_idp_kmeans"], root))
    | paper | claims | reproduced | partly | not reproduced | unstable | not testable | not run | on run times |
    |---|---:|---:|---:|---:|---:|---:|---:|---:|
    | [Li et al. 2013](notebooks/04_idp_kmeans.ipynb) | 1 | 0 | 1 | 0 | 0 | 0 | 0 | 0 |
    | **all** | **1** | **0** | **1** | **0** | **0** | **0** | **0** | **0** |
    <BLANKLINE>
    - **Li et al. 2013.** IDP k-means beats DPk-means in part.
    """
    ledgers = read_ledgers(notebooks, results_root)
    present = [stem for stem in notebooks if stem in set(ledgers["notebook"])]
    lines = [verdict_table(ledgers, present)]
    summaries = read_ledgers(present, results_root, table=FINDINGS)
    lines += [""] + [f"- **{p.rstrip('.')}.** {s}" for p, s in zip(summaries["paper"], summaries["summary"]) if s]
    return "\n".join(lines)


def update_readme(readme, notebooks, results_root=None):
    """Write :func:`readme_section` between the README's markers; return True if the README changed.

    Examples
    --------
    >>> import os, tempfile
    >>> ledger = Ledger("Li et al. 2013", "04_idp_kmeans").add("fig3", "F falls", "Fig. 3", "", "partly",
    ...                                                        artefact="Fig. 3")
    >>> with tempfile.TemporaryDirectory() as root:
    ...     _ = ledger.save(os.path.join(root, "04_idp_kmeans"))
    ...     readme = os.path.join(root, "README.md")
    ...     with open(readme, "w") as f:
    ...         print("# A compendium", README_START, README_END, sep=os.linesep, file=f)
    ...     print(update_readme(readme, ["04_idp_kmeans"], root), update_readme(readme, ["04_idp_kmeans"], root))
    ...     print(open(readme).read().splitlines()[4])
    True False
    | [Li et al. 2013](notebooks/04_idp_kmeans.ipynb) | 1 | 0 | 1 | 0 | 0 | 0 | 0 | 0 |
    """
    path = Path(readme)
    text = path.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(README_START) + r".*?" + re.escape(README_END), re.S)
    if not pattern.search(text):
        raise ValueError(f"{path.name} has no verdict markers ({README_START!r} ... {README_END!r})")
    new = pattern.sub(lambda _: f"{README_START}\n{readme_section(notebooks, results_root)}\n{README_END}", text)
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text

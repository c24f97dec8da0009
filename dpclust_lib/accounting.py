"""The privacy budget: sequential composition, exact, rounded outward.

:class:`PrivacyLedger` is the ledger every private estimator keeps of its own releases;
:class:`BudgetAccountant` is one that several fits share (an estimator's ``accountant``): each fit is
charged its whole guarantee before it reads any record, and a fit that would take the total past the
budget is refused. The mechanisms that spend the budget are in :mod:`dpclust_lib.mechanisms`.

Sums are exact: every epsilon is a double, whose exact value is a rational, and the ledger adds those
rationals. A total is reported as the smallest double at or above the exact sum (rounded outward), so a
reported spend is never below what was spent, and a spend is refused when the exact total would pass the
exact budget: no floating-point slack lets a total slip past it.

Approximate DP: a spend may carry a delta (0 by default); deltas compose additively, exactly, against the
ledger's ``delta`` budget (0 by default, which refuses every spend with a delta > 0, so a pure-epsilon ledger
stays one). :func:`zcdp_to_dp` and :func:`dp_to_zcdp` convert between rho-zCDP (the discrete Gaussian's
guarantee) and (epsilon, delta)-DP by Canonne, Kamath & Steinke (NeurIPS 2020), Corollary 13, rounded outward.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

from .noise import double_at_least, double_at_most
from .validation import check_epsilon

__all__ = [
    "BudgetExceededError",
    "PrivacyLedger",
    "BudgetAccountant",
    "compose",
    "share_at_most",
    "zcdp_to_dp",
    "dp_to_zcdp",
]


class BudgetExceededError(RuntimeError):
    """A spend would take the total past the ledger's budget."""


def compose(epsilons):
    """Sequential composition: the exact sum of the ``epsilons`` (doubles), rounded up to a double.

    Examples
    --------
    >>> sum([0.1] * 10), compose([0.1] * 10)  # the doubles 0.1 sum to more than 1: the total says so
    (0.9999999999999999, 1.0000000000000002)
    >>> compose([]), compose([0.25, math.inf])
    (0.0, inf)
    """
    values = [float(e) for e in epsilons]
    if any(math.isinf(v) for v in values):
        return math.inf
    return double_at_least(sum((Fraction(v) for v in values), Fraction(0)))


def share_at_most(epsilon, fraction):
    """The largest double at most ``fraction`` x ``epsilon`` (exactly): a share of a budget that never rounds up.

    Shares taken this way sum, exactly, to at most the budget they split, so sequential composition of the
    parts never exceeds it.

    Examples
    --------
    >>> share_at_most(1.0, Fraction(1, 5)) < Fraction(1, 5) < 0.2
    True
    >>> compose([share_at_most(1.0, Fraction(1, 5))] * 5) <= 1.0
    True
    """
    return double_at_most(Fraction(float(epsilon)) * Fraction(fraction))


@dataclass
class PrivacyLedger:
    """Sequential-composition ledger: the total spent is the exact sum of the spends.

    ``spend(eps, what)`` raises :class:`BudgetExceededError` (and records nothing) when the exact total
    would pass ``budget``; ``spent`` is that total rounded up to a double.

    Examples
    --------
    >>> ledger = PrivacyLedger(1.0)
    >>> ledger.spend(0.25, "iteration 1")
    0.25
    >>> ledger.spend(0.5, "iteration 2")
    0.5
    >>> ledger.spent, ledger.remaining
    (0.75, 0.25)
    >>> ledger.spend(0.5, "iteration 3")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpclust_lib.accounting.BudgetExceededError: spending epsilon=0.5 on 'iteration 3' would bring the total to 1.25, ...
    >>> len(ledger.entries)  # the refused spend is not recorded
    2
    """

    budget: float
    entries: list = field(default_factory=list)
    delta: float = 0.0
    deltas: list = field(default_factory=list)

    def __post_init__(self):
        self.budget = check_epsilon(self.budget, name="budget")
        self.delta = _check_delta(self.delta, "delta", allow_zero=True)
        if len(self.deltas) != len(self.entries):  # a ledger built from pure-epsilon entries: delta 0 each
            self.deltas = [0.0] * len(self.entries)

    @property
    def delta_spent(self):
        """The total delta spent (exact sum of the spends' deltas), rounded up to a double."""
        return compose(self.deltas)

    def _exact_spent(self):
        return sum((Fraction(e) for _, e in self.entries), Fraction(0))

    @property
    def spent(self):
        """The total spent, rounded up to a double."""
        return compose(e for _, e in self.entries)

    @property
    def remaining(self):
        """What is left of the budget, rounded down to a double."""
        return share_at_most(1.0, max(Fraction(self.budget) - self._exact_spent(), Fraction(0)))

    def spend(self, epsilon, what, delta=0.0):
        """Record a spend of ``epsilon`` (and ``delta``, default 0) for ``what``; return ``epsilon``.

        An infinite epsilon (a configuration that guarantees nothing) is refused by every budget, and so is a
        delta that would take the exact total of the deltas past the ledger's ``delta``.
        """
        if not isinstance(what, str) or not what:
            raise TypeError(f"what must be a non-empty description string, got {what!r}")
        if isinstance(epsilon, (int, float)) and not isinstance(epsilon, bool) and math.isinf(epsilon) and epsilon > 0:
            raise BudgetExceededError(
                f"{what!r} guarantees no finite epsilon (a leaky option was asked for): no budget covers it"
            )
        eps = check_epsilon(epsilon)
        dlt = _check_delta(delta, "delta", allow_zero=True)
        total_delta = sum((Fraction(d) for d in self.deltas), Fraction(0)) + Fraction(dlt)
        if total_delta > Fraction(self.delta):
            raise BudgetExceededError(
                f"spending delta={dlt:g} on {what!r} would bring the total delta to {float(total_delta):g}, "
                f"past the delta budget of {self.delta:g}"
            )
        total = self._exact_spent() + Fraction(eps)
        if total > Fraction(self.budget):
            raise BudgetExceededError(
                f"spending epsilon={eps:g} on {what!r} would bring the total to {float(total):g}, "
                f"past the budget of {self.budget:g} (already spent {self.spent:g})"
            )
        self.entries.append((what, eps))
        self.deltas.append(dlt)
        return eps

    def to_frame(self):
        """The entries as a DataFrame (what, epsilon, cumulative)."""
        import pandas as pd

        df = pd.DataFrame(self.entries, columns=["what", "epsilon"])
        df["cumulative"] = [compose(df["epsilon"].iloc[: i + 1]) for i in range(len(df))]
        return df

    def __repr__(self):
        extra = f", delta={self.delta:g}, delta_spent={self.delta_spent:g}" if self.delta else ""
        return (
            f"{type(self).__name__}(budget={self.budget:g}, spent={self.spent:g}{extra}, entries={len(self.entries)})"
        )


class BudgetAccountant(PrivacyLedger):
    """A budget that several fits share: pass it as the ``accountant`` of every private estimator.

    Each fit is charged its whole ex-ante guarantee (its ``epsilon``, the total of one fit; infinite for a
    configuration with a leaky option) *before* it reads any record, and a fit that would take the total past
    ``budget`` raises :class:`BudgetExceededError` without touching the data. The fits compose sequentially:
    their epsilons add, and so do the deltas of (epsilon, delta) fits (``LSHCoresetKMeans(delta=...)``), against
    the accountant's ``delta`` budget (0 by default, which refuses them). Advanced composition is not offered: it
    pays off only over many fits. For local estimators the budget is per user, as their epsilon is.

    Examples
    --------
    >>> import numpy as np
    >>> from dpclust_lib import DPKMeans
    >>> accountant = BudgetAccountant(2.0)
    >>> X = np.random.default_rng(0).random((50, 2))
    >>> for seed in (1, 2):
    ...     _ = DPKMeans(2, epsilon=1.0, bounds=(0, 1), random_state=seed, accountant=accountant).fit(X)
    >>> accountant.spent
    2.0
    >>> DPKMeans(2, epsilon=1.0, bounds=(0, 1), accountant=accountant).fit(X)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpclust_lib.accounting.BudgetExceededError: spending epsilon=1 on 'DPKMeans.fit' would bring the total to 3, ...
    """


def _check_delta(delta, name="delta", allow_zero=False):
    """A delta: a real number in [0, 1) (in (0, 1) unless ``allow_zero``), as a float."""
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not math.isfinite(float(delta)):
        raise ValueError(f"{name} must be a finite number in {'[0, 1)' if allow_zero else '(0, 1)'}")
    value = float(delta)
    if not (0.0 <= value < 1.0) or (value == 0.0 and not allow_zero):
        raise ValueError(f"{name} must be in {'[0, 1)' if allow_zero else '(0, 1)'}, got {value!r}")
    return value


# Relative slack added to a computed epsilon (and taken off a computed rho): the formulas below are evaluated in
# double precision, within a few units in the last place; 2^-30 covers that many times over.
_FLOAT_SLACK = 2.0**-30


def _cor13_epsilon(rho, log_inv_delta, alpha):
    """CKS20 Corollary 13 at one order alpha > 1: epsilon = alpha rho + (log(1/delta) + (alpha - 1) log(1 - 1/alpha)
    - log(alpha)) / (alpha - 1). Every alpha > 1 gives a valid epsilon; the smallest is the tightest."""
    return alpha * rho + (log_inv_delta + (alpha - 1.0) * math.log1p(-1.0 / alpha) - math.log(alpha)) / (alpha - 1.0)


def zcdp_to_dp(rho, delta):
    """The epsilon of a rho-zCDP mechanism at ``delta``: (epsilon, delta)-DP, epsilon rounded outward.

    Canonne, Kamath & Steinke (NeurIPS 2020), Corollary 13: rho-zCDP implies (epsilon, delta)-DP with
    epsilon = inf over alpha > 1 of the expression in :func:`_cor13_epsilon`. Any alpha gives a valid epsilon, so
    the minimisation needs no care beyond finding a good alpha (a bounded scalar search on log(alpha - 1)); the
    value found is then raised by a relative 2^-30 against double-precision rounding and rounded up to a double.
    It is never above the simpler rho + 2 sqrt(rho log(1/delta)) (Bun & Steinke 2016, Proposition 1.3).

    Examples
    --------
    >>> eps = zcdp_to_dp(0.5, 1e-6)
    >>> round(eps, 3), eps <= 0.5 + 2 * math.sqrt(0.5 * math.log(1e6))
    (5.222, True)
    """
    from scipy.optimize import minimize_scalar

    rho = check_epsilon(rho, name="rho")
    delta = _check_delta(delta)
    log_inv = -math.log(delta)
    simple = rho + 2.0 * math.sqrt(rho * log_inv)
    # alpha - 1 = e^u: the optimum lies near 1 + sqrt(log(1/delta) / rho), inside e^-20..e^40 for any sane rho
    found = minimize_scalar(
        lambda u: _cor13_epsilon(rho, log_inv, 1.0 + math.exp(u)), bounds=(-20.0, 40.0), method="bounded"
    )
    best = min(simple, _cor13_epsilon(rho, log_inv, 1.0 + math.exp(found.x)))
    return double_at_least(Fraction(best) * (1 + Fraction(_FLOAT_SLACK)))


def dp_to_zcdp(epsilon, delta):
    """The largest rho (to a relative 2^-40, rounded down) whose :func:`zcdp_to_dp` at ``delta`` is at most ``epsilon``.

    A mechanism calibrated to this rho is (epsilon, delta)-DP: the search checks every candidate with
    :func:`zcdp_to_dp`, which is itself rounded outward.

    Examples
    --------
    >>> rho = dp_to_zcdp(1.0, 1e-6)
    >>> zcdp_to_dp(rho, 1e-6) <= 1.0, round(rho, 5)
    (True, 0.02436)
    """
    epsilon = check_epsilon(epsilon)
    delta = _check_delta(delta)
    low, high = 0.0, epsilon  # zcdp_to_dp(rho) >= rho, so rho = epsilon is too much
    for _ in range(200):  # bisection to a relative 2^-40 (or until the doubles meet)
        if high - low <= high * 2.0**-40:
            break
        mid = 0.5 * (low + high)
        if zcdp_to_dp(mid, delta) <= epsilon:
            low = mid
        else:
            high = mid
    if low == 0.0:
        raise ValueError("epsilon and delta leave no positive rho")
    return low

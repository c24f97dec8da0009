"""The privacy budget: sequential composition, exact, rounded outward.

:class:`PrivacyLedger` is the ledger every private estimator keeps of its own releases;
:class:`BudgetAccountant` is one that several fits share (an estimator's ``accountant``): each fit is
charged its whole guarantee before it reads any record, and a fit that would take the total past the
budget is refused. The mechanisms that spend the budget are in :mod:`dpclust_lib.mechanisms`.

Sums are exact: every epsilon is a double, whose exact value is a rational, and the ledger adds those
rationals. A total is reported as the smallest double at or above the exact sum (rounded outward), so a
reported spend is never below what was spent, and a spend is refused when the exact total would pass the
exact budget: no floating-point slack lets a total slip past it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

from .noise import double_at_least, double_at_most
from .validation import check_epsilon

__all__ = ["BudgetExceededError", "PrivacyLedger", "BudgetAccountant", "compose", "share_at_most"]


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

    def __post_init__(self):
        self.budget = check_epsilon(self.budget, name="budget")

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

    def spend(self, epsilon, what):
        """Record a spend of ``epsilon`` for ``what``; return ``epsilon``.

        An infinite epsilon (a configuration that guarantees nothing) is refused by every budget.
        """
        if not isinstance(what, str) or not what:
            raise TypeError(f"what must be a non-empty description string, got {what!r}")
        if isinstance(epsilon, (int, float)) and not isinstance(epsilon, bool) and math.isinf(epsilon) and epsilon > 0:
            raise BudgetExceededError(
                f"{what!r} guarantees no finite epsilon (a leaky option was asked for): no budget covers it"
            )
        eps = check_epsilon(epsilon)
        total = self._exact_spent() + Fraction(eps)
        if total > Fraction(self.budget):
            raise BudgetExceededError(
                f"spending epsilon={eps:g} on {what!r} would bring the total to {float(total):g}, "
                f"past the budget of {self.budget:g} (already spent {self.spent:g})"
            )
        self.entries.append((what, eps))
        return eps

    def to_frame(self):
        """The entries as a DataFrame (what, epsilon, cumulative)."""
        import pandas as pd

        df = pd.DataFrame(self.entries, columns=["what", "epsilon"])
        df["cumulative"] = [compose(df["epsilon"].iloc[: i + 1]) for i in range(len(df))]
        return df

    def __repr__(self):
        return f"{type(self).__name__}(budget={self.budget:g}, spent={self.spent:g}, entries={len(self.entries)})"


class BudgetAccountant(PrivacyLedger):
    """A budget that several fits share: pass it as the ``accountant`` of every private estimator.

    Each fit is charged its whole ex-ante guarantee (its ``epsilon``, the total of one fit; infinite for a
    configuration with a leaky option) *before* it reads any record, and a fit that would take the total past
    ``budget`` raises :class:`BudgetExceededError` without touching the data. The fits compose sequentially
    (pure epsilon-DP, the only kind of guarantee the estimators give, composes by summation; advanced
    composition pays off only over many fits and needs a delta, which no estimator here takes). For local
    estimators the budget is per user, as their epsilon is.

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

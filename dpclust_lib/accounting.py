"""The privacy budget: a sequential-composition ledger that every private estimator keeps.

The mechanisms that spend it are in :mod:`dpclust_lib.mechanisms`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from .validation import check_epsilon

__all__ = ["BudgetExceededError", "PrivacyLedger"]


class BudgetExceededError(RuntimeError):
    """A spend would take the total past the ledger's budget."""


@dataclass
class PrivacyLedger:
    """Sequential-composition ledger: the total spent is the sum of the spends.

    ``spend(eps, what)`` raises :class:`BudgetExceededError` (and records
    nothing) when the total would pass ``budget``. A relative slack of 1e-9
    absorbs floating-point rounding in sums such as T * (eps / T).

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

    _RELATIVE_SLACK = 1e-9

    def __post_init__(self):
        self.budget = check_epsilon(self.budget, name="budget")

    @property
    def spent(self):
        return float(sum(e for _, e in self.entries))

    @property
    def remaining(self):
        return max(self.budget - self.spent, 0.0)

    def spend(self, epsilon, what):
        """Record a spend of ``epsilon`` for ``what``; return ``epsilon``."""
        eps = check_epsilon(epsilon)
        if not isinstance(what, str) or not what:
            raise TypeError(f"what must be a non-empty description string, got {what!r}")
        total = self.spent + eps
        if total > self.budget * (1 + self._RELATIVE_SLACK):
            raise BudgetExceededError(
                f"spending epsilon={eps:g} on {what!r} would bring the total to {total:g}, "
                f"past the budget of {self.budget:g} (already spent {self.spent:g})"
            )
        self.entries.append((what, eps))
        return eps

    def to_frame(self):
        """The entries as a DataFrame (what, epsilon, cumulative)."""
        df = pd.DataFrame(self.entries, columns=["what", "epsilon"])
        df["cumulative"] = df["epsilon"].cumsum()
        return df

    def __repr__(self):
        return f"PrivacyLedger(budget={self.budget:g}, spent={self.spent:g}, entries={len(self.entries)})"

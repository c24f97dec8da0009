"""What every estimator shares: the neighbouring relations and the required public inputs.

A public quantity (the data domain, the domain sizes, the number of records) must be
declared by the caller where a release depends on it. Reading it off the private records
leaks, so it is something a caller asks for by name (``"data"``), never a default; the
estimator then reports ``epsilon_guaranteed_ = inf``.
"""

from __future__ import annotations

import math
import warnings

from ..noise import NOISE_KINDS
from ..validation import FROM_DATA, Custom, PrivacyLeakWarning, check_choice, missing_public_message

CENTRAL = "add/remove one record"
"""Central DP: neighbouring data sets differ by one added or removed record (replace-one costs up to 2 epsilon)."""

LOCAL = "any two records of one user"
"""Local DP: any two inputs of one user give reports whose probabilities differ by at most e^epsilon."""


def is_from_data(value):
    """True when the caller asked for ``value`` to be read off the private records."""
    return isinstance(value, str) and value == FROM_DATA


def require_public(value, name, what):
    """Refuse a missing public quantity, saying what to pass.

    Parameters
    ----------
    value : object
        The parameter as given; ``None`` means not given.
    name : str
        The parameter's name.
    what : str
        What to pass, e.g. ``"bounds=(lower, upper), the public domain of the data"``.
    """
    if value is None:
        raise ValueError(missing_public_message(name, what))
    return value


def resolve_noise(noise, stacklevel=3):
    """(noise, leaky): the kind of Laplace noise an estimator draws, checked.

    ``"exact"`` (the default of every estimator) is exact discrete Laplace noise on a grid, whose
    release is epsilon-DP as accounted. ``"float"`` is the papers' textbook floating-point Laplace;
    its outputs can name the input through their low-order bits (Mironov, CCS 2012), so no finite
    guarantee is known for them: it warns, and the estimator reports ``epsilon_guaranteed_ = inf``.
    """
    check_choice(noise, "noise", set(NOISE_KINDS))
    if noise == "exact":
        return noise, False
    warnings.warn(
        "noise='float' draws textbook floating-point Laplace noise, whose low-order bits can reveal the "
        "input (Mironov, CCS 2012): epsilon_guaranteed_ = inf. noise='exact' (the default) does not leak.",
        PrivacyLeakWarning,
        stacklevel=stacklevel,
    )
    return noise, True


# The parameter values with which a fit reads the records outside its budget (each warns when fitted): a fit so
# configured guarantees nothing, and an accountant refuses it before it starts. Any parameter set to "data" (a
# public quantity read off the records) does too.
LEAKY_SETTINGS = {
    "noise": ("float",),
    "init": ("records", "kmeans-on-data"),
    "split": ("order",),
    "protect_cluster_index": (False,),
}


def declared_leaky(estimator):
    """Whether the configuration reads the records outside its budget, decided from the parameters alone.

    Conservative: a parameter set to ``"data"`` counts even where another parameter makes it unused. The tests
    check the other direction, that every fit whose ``epsilon_guaranteed_`` is inf is declared leaky here.
    """
    if getattr(estimator, "_guarantees_nothing", False):
        return True
    for name, value in estimator.get_params(deep=False).items():
        if is_from_data(value):
            return True
        if isinstance(value, (str, bool)) and value in LEAKY_SETTINGS.get(name, ()):
            return True
    return False


def check_accountant(value, name="accountant"):
    """None, or a :class:`~dpclust_lib.accounting.BudgetAccountant` (any PrivacyLedger) shared by several fits."""
    from ..accounting import PrivacyLedger

    if value is not None and not isinstance(value, PrivacyLedger):
        raise TypeError(f"{name} must be None or a BudgetAccountant, got a {type(value).__name__}")
    return value


def charge_accountant(estimator, epsilon_total, delta=0.0):
    """Charge the estimator's accountant (if any) the fit's whole ex-ante guarantee, before any record is read.

    ``epsilon_total`` (and ``delta``, for an (epsilon, delta) fit) is the fit's total from its public parameters;
    a leaky configuration (:func:`declared_leaky`) is charged inf, which every budget refuses. Raises
    :class:`~dpclust_lib.accounting.BudgetExceededError` and records nothing when the budget would be passed.
    """
    accountant = check_accountant(getattr(estimator, "accountant", None))
    if accountant is not None:
        total = math.inf if declared_leaky(estimator) else float(epsilon_total)
        accountant.spend(total, f"{type(estimator).__name__}.fit", delta=delta)


ACCOUNTANT = Custom(check_accountant)
"""The constraint on every private estimator's ``accountant``."""

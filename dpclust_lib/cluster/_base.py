"""What every estimator shares: the neighbouring relations and the required public inputs.

A public quantity (the data domain, the domain sizes, the number of records) must be
declared by the caller where a release depends on it. Reading it off the private records
leaks, so it is something a caller asks for by name (``"data"``), never a default; the
estimator then reports ``epsilon_guaranteed_ = inf``.
"""

from __future__ import annotations

import warnings

from ..noise import NOISE_KINDS
from ..validation import FROM_DATA, PrivacyLeakWarning, check_choice, missing_public_message

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

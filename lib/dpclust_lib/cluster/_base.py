"""What every estimator shares: the neighbouring relations and the required public inputs.

A public quantity (the data domain, the domain sizes, the number of records) must be
declared by the caller where a release depends on it. Reading it off the private records
leaks, so it is something a caller asks for by name (``"data"``), never a default; the
estimator then reports ``epsilon_guaranteed_ = inf``.
"""

from __future__ import annotations

CENTRAL = "add/remove one record"
"""Central DP: neighbouring data sets differ by one added or removed record (replace-one costs up to 2 epsilon)."""

LOCAL = "any two records of one user"
"""Local DP: any two inputs of one user give reports whose probabilities differ by at most e^epsilon."""

FROM_DATA = "data"
"""The value by which a caller asks for a public quantity to be read off the private records (leaky)."""


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
        raise ValueError(
            f"{name} is required: pass {what}; or {name}={FROM_DATA!r} to read it off the private "
            "records (not private: epsilon_guaranteed_ becomes inf)"
        )
    return value

"""Input checks shared by the whole library.

Every check raises ``ValueError`` or ``TypeError`` whose message names the
parameter and the offending value of a parameter; nothing is clipped, cast or
dropped. A message about the data names the row, the column and the bound it
breaks, never the record's value (error text is an output too).
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np


class PrivacyLeakWarning(UserWarning):
    """Raised when an estimator has to read something private from the data.

    The typical case is a data domain (``bounds``) taken from the data itself:
    the bounds then depend on single records and are not covered by the
    privacy guarantee.
    """


def _short(value, limit=60):
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_epsilon(epsilon, name="epsilon"):
    """Return ``epsilon`` as a float after checking it is a finite number > 0."""
    if isinstance(epsilon, (bool, np.bool_)) or not isinstance(epsilon, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {_short(epsilon)} of type {type(epsilon).__name__}")
    value = float(epsilon)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {name}={_short(epsilon)}")
    return value


def check_positive(value, name):
    """A finite real number > 0 (sensitivities, thresholds, scales)."""
    return check_epsilon(value, name=name)


def check_fraction(value, name, low=0.0, high=1.0):
    """A real number in the open interval (low, high)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {_short(value)} of type {type(value).__name__}")
    v = float(value)
    if not (low < v < high):
        raise ValueError(f"{name} must lie in the open interval ({low:g}, {high:g}), got {name}={_short(value)}")
    return v


def check_int(value, name, minimum=None, maximum=None):
    """An integer (numpy integers accepted, bools and floats refused)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {_short(value)} of type {type(value).__name__}")
    v = int(value)
    if minimum is not None and v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {name}={v}")
    if maximum is not None and v > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {name}={v}")
    return v


def check_n_clusters(n_clusters, n_samples=None, name="n_clusters"):
    """K >= 1 and, when the number of records is known, K <= that number."""
    k = check_int(n_clusters, name, minimum=1)
    if n_samples is not None and k > n_samples:
        raise ValueError(f"{name}={k} is larger than the number of records (n_samples={n_samples})")
    return k


def check_choice(value, name, choices):
    if value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)}, got {name}={_short(value)}")
    return value


def check_random_state(random_state, name="random_state"):
    """Turn ``None``, an int, a SeedSequence or a Generator into a ``np.random.Generator``.

    A Generator is used as given (shared state), so that a caller can thread
    one stream through several calls; an int always gives the same stream.
    """
    if random_state is None or isinstance(random_state, np.random.SeedSequence):
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, (bool, np.bool_)):
        raise TypeError(f"{name} must be None, an int, a SeedSequence or a numpy Generator, got {random_state!r}")
    if isinstance(random_state, numbers.Integral):
        if int(random_state) < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {name}={int(random_state)}")
        return np.random.default_rng(int(random_state))
    if isinstance(random_state, np.random.RandomState):
        raise TypeError(f"{name} is a legacy numpy RandomState; pass an int or np.random.default_rng(...) instead")
    raise TypeError(f"{name} must be None, an int, a SeedSequence or a numpy Generator, got {_short(random_state)}")


def _as_array(X, name, allow_object=False):
    if hasattr(X, "tocsr") or hasattr(X, "todense"):  # scipy.sparse, without importing it
        raise TypeError(f"{name} is a sparse matrix: sparse input is not supported; pass a dense array")
    if hasattr(X, "to_numpy"):  # pandas objects
        X = X.to_numpy()
    try:
        arr = np.asarray(X)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"{name} could not be read as an array: {exc}") from exc
    if arr.dtype == object and not allow_object:
        raise TypeError(f"{name} must hold numbers, got an array of dtype object (mixed or ragged input?)")
    return arr


def _object_to_float(X, name):
    """An object array whose every element is an int or a float, as floats; anything else is refused.

    A container of Python numbers (e.g. a DataFrame of mixed int and float
    columns) holds numbers, so reading them as floats casts nothing; strings,
    bools and other objects are refused, not parsed.
    """
    arr = np.asarray(X, dtype=object)
    for index, value in np.ndenumerate(arr):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, float, np.floating)):
            raise TypeError(
                f"{name} must hold numbers: float() argument must be a string or a real number, not "
                f"{type(value).__name__!r} (at index {tuple(int(i) for i in index)}; strings are not "
                "parsed either)"
            )
    return arr.astype(float)


def check_array(X, name="X", ndim=2, allow_empty=False):
    """A finite numeric array of the given number of dimensions (not copied if possible)."""
    arr = _as_array(X, name, allow_object=True)
    if arr.ndim != ndim:
        hint = (
            ("; Reshape your data with X.reshape(-1, 1) for a single feature or X.reshape(1, -1) for a single record")
            if ndim == 2 and arr.ndim == 1
            else ""
        )
        raise ValueError(f"{name} must be a {ndim}-D array, got shape {arr.shape}{hint}")
    if not allow_empty and ndim == 2 and arr.shape[0] > 0 and arr.shape[1] == 0:
        raise ValueError(f"{name} is empty: 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required.")
    if not allow_empty and arr.size == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape}); at least one value is needed")
    if arr.dtype.kind == "O":
        arr = _object_to_float(arr, name)
    if arr.dtype.kind == "c":
        raise ValueError(f"{name} must be real: Complex data not supported")
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(f"{name} contains NaN or inf (first at index {tuple(int(i) for i in bad)})")
    return arr


def check_domain_sizes(domain_sizes, name="domain_sizes"):
    """A non-empty sequence of integers >= 2 (attribute domain sizes)."""
    sizes = _as_array(domain_sizes, name)
    if sizes.ndim != 1 or sizes.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of integers, got {_short(domain_sizes)}")
    if sizes.dtype.kind not in "iu":
        if sizes.dtype.kind == "f" and np.all(np.isfinite(sizes)) and np.all(sizes == np.round(sizes)):
            raise TypeError(f"{name} must hold integers, got floats {_short(domain_sizes)}")
        raise TypeError(f"{name} must hold integers, got {_short(domain_sizes)}")
    if np.any(sizes < 2):
        j = int(np.argmax(sizes < 2))
        raise ValueError(
            f"{name} must all be >= 2 (a one-value attribute carries nothing), got {name}[{j}]={int(sizes[j])}"
        )
    return tuple(int(s) for s in sizes)


def check_categorical(X, domain_sizes, name="X"):
    """Integer-coded categorical records: shape (n, m), X[:, j] in {0, ..., k_j - 1}."""
    sizes = check_domain_sizes(domain_sizes)
    arr = _as_array(X, name)
    if arr.ndim == 1 and len(sizes) == 1:
        raise ValueError(
            f"{name} must be 2-D (n records x {len(sizes)} attributes), got shape {arr.shape}; use X.reshape(-1, 1)"
        )
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (n records x m attributes), got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape}); at least one record is needed")
    if arr.shape[1] != len(sizes):
        raise ValueError(f"{name} has {arr.shape[1]} attributes but domain_sizes has {len(sizes)}: {sizes}")
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)):
            bad = np.argwhere(~np.isfinite(arr))[0]
            raise ValueError(f"{name} contains NaN or inf (first at index {tuple(int(i) for i in bad)})")
        raise TypeError(f"{name} must hold integer category codes, got dtype {arr.dtype}")
    if arr.dtype.kind not in "iub":
        raise TypeError(f"{name} must hold integer category codes, got dtype {arr.dtype}")
    arr = arr.astype(np.int64, copy=False)
    upper = np.asarray(sizes)
    outside = (arr < 0) | (arr >= upper)
    if outside.any():
        i, j = (int(v) for v in np.argwhere(outside)[0])
        raise ValueError(
            f"{name}[{i}, {j}] is outside the declared domain of attribute {j} "
            f"(codes 0..{sizes[j] - 1}, domain_sizes[{j}]={sizes[j]})"
        )
    return arr


def check_sample_weight(sample_weight, n_samples, name="sample_weight"):
    """Non-negative finite weights, one per record, not all zero; None means all ones."""
    if sample_weight is None:
        return np.ones(n_samples)
    w = check_array(sample_weight, name=name, ndim=1)
    if w.shape[0] != n_samples:
        raise ValueError(f"{name} has {w.shape[0]} entries but there are {n_samples} records")
    if np.any(w < 0):
        i = int(np.argmax(w < 0))
        raise ValueError(f"{name} must be >= 0, got {name}[{i}]={w[i]!r}")
    if not np.any(w > 0):
        raise ValueError(f"{name} is all zero; at least one record must carry weight")
    return w.astype(float, copy=False)


def check_bounds(bounds, n_features, X=None, name="bounds"):
    """Declared data domain as two arrays (lower, upper) of length d.

    ``bounds`` is a pair of scalars or a pair of length-d arrays, or the string
    ``"data"``, which reads the domain off ``X`` (leaky: a
    :class:`PrivacyLeakWarning` says so). ``None`` is refused: the domain is a
    public input the caller must declare. Data outside declared bounds is an
    error, never clipped; the message names the row, the column and the bound,
    never the value.
    """
    if bounds is None:
        raise ValueError(
            f"{name} is required: pass {name}=(lower, upper), the public domain of the data (scalars or "
            f"one value per feature); or {name}='data' to read it off the private records (not private: "
            "epsilon_guaranteed_ becomes inf)"
        )
    if isinstance(bounds, str):
        if bounds != "data":
            raise ValueError(f"{name} must be a pair (lower, upper) or 'data', got {name}={_short(bounds)}")
        if X is None:
            raise ValueError(f"{name}='data' needs the data to read the domain from")
        warnings.warn(
            f"{name}='data': the data domain is read off the private records, which is not covered by the "
            "privacy guarantee (epsilon_guaranteed_ = inf). Pass bounds=(lower, upper) to avoid this.",
            PrivacyLeakWarning,
            stacklevel=3,
        )
        lower, upper = X.min(axis=0).astype(float), X.max(axis=0).astype(float)
        same = upper <= lower
        upper = np.where(same, lower + 1.0, upper)  # a constant column still needs a cell of positive width
        return lower, upper
    if not isinstance(bounds, (tuple, list)) or len(bounds) != 2:
        raise ValueError(f"{name} must be a pair (lower, upper) or 'data', got {_short(bounds)}")
    sides = []
    for side, value in (("lower", bounds[0]), ("upper", bounds[1])):
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} {side} must be a number or a sequence of numbers, got {_short(value)}") from exc
        if arr.ndim == 0:
            arr = np.full(n_features, float(arr))
        if arr.shape != (n_features,):
            raise ValueError(f"{name} must give {n_features} lower and upper values, got {side} of shape {arr.shape}")
        sides.append(arr)
    lower, upper = sides
    if not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))):
        raise ValueError(f"{name} must be finite, got {_short(bounds)}")
    if np.any(upper <= lower):
        j = int(np.argmax(upper <= lower))
        raise ValueError(
            f"{name} upper must exceed lower in every dimension, got lower[{j}]={lower[j]}, upper[{j}]={upper[j]}"
        )
    with np.errstate(over="ignore"):
        width = upper - lower
    if not np.all(np.isfinite(width)):
        j = int(np.argmax(~np.isfinite(width)))
        raise ValueError(
            f"{name} width upper - lower overflows a float in dimension {j} "
            f"(lower[{j}]={lower[j]}, upper[{j}]={upper[j]}); rescale the data"
        )
    if X is not None:
        outside = (X < lower) | (X > upper)
        if outside.any():
            i, j = (int(v) for v in np.argwhere(outside)[0])
            raise ValueError(f"X[{i}, {j}] lies outside the declared {name} [{lower[j]}, {upper[j]}] of dimension {j}")
    return lower, upper

"""Input checks shared by the whole library.

Every check raises ``ValueError`` or ``TypeError`` whose message names the
parameter and the offending value of a parameter; nothing is clipped, cast or
dropped. A message about the data names the row, the column and the bound it
breaks, never the record's value (error text is an output too).
"""

from __future__ import annotations

import numbers
import secrets
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


def check_epsilon(epsilon, name="epsilon", *, show_value=True):
    """Return ``epsilon`` as a float after checking it is a finite number > 0.

    Parameters
    ----------
    epsilon : object
        The value as given.
    name : str, default="epsilon"
        The parameter's name, for the messages.
    show_value : bool, default=True
        Whether a message may show the value. The noise samplers pass False: a sensitivity or a
        scale may be computed from the data.

    Returns
    -------
    float

    Examples
    --------
    >>> check_epsilon(2)
    2.0
    >>> check_epsilon(0.0)
    Traceback (most recent call last):
    ...
    ValueError: epsilon must be a finite number > 0, got epsilon=0.0
    >>> check_epsilon(-3.5, "scale", show_value=False)
    Traceback (most recent call last):
    ...
    ValueError: scale must be a finite number > 0
    """
    if isinstance(epsilon, (bool, np.bool_)) or not isinstance(epsilon, numbers.Real):
        shown = f"{_short(epsilon)} of type " if show_value else "a "
        raise TypeError(f"{name} must be a real number, got {shown}{type(epsilon).__name__}")
    value = float(epsilon)
    if not np.isfinite(value) or value <= 0:
        shown = f", got {name}={_short(epsilon)}" if show_value else ""
        raise ValueError(f"{name} must be a finite number > 0{shown}")
    return value


def check_positive(value, name, *, show_value=True):
    """A finite real number > 0 (sensitivities, thresholds, scales).

    Parameters
    ----------
    value : object
    name : str
        The parameter's name, for the messages.
    show_value : bool, default=True
        Whether a message may show the value (see :func:`check_epsilon`).

    Returns
    -------
    float

    Examples
    --------
    >>> check_positive(0.5, "sensitivity")
    0.5
    """
    return check_epsilon(value, name=name, show_value=show_value)


def check_finite_values(value, name="value"):
    """A number or an array of numbers as a float array, refused unless every entry is finite.

    Strings, bools and objects are refused, not cast. The messages name the parameter and, for a
    NaN or inf, its first index, but never show a value: the value is a query's exact answer, which
    may be a record's.

    Parameters
    ----------
    value : object
    name : str, default="value"
        The parameter's name, for the messages.

    Returns
    -------
    ndarray of float (0-d for a number)

    Examples
    --------
    >>> check_finite_values([1, 2.5])
    array([1. , 2.5])
    >>> check_finite_values([1.0, float("nan")])
    Traceback (most recent call last):
    ...
    ValueError: value must be finite, got NaN or inf (first at index (1,))
    """
    if isinstance(value, (str, bytes, bool, np.bool_)) or value is None:
        raise TypeError(f"{name} must be a number or an array of numbers, got a {type(value).__name__}")
    if isinstance(value, numbers.Real):
        arr = np.asarray(float(value))
    else:
        try:
            raw = np.asarray(value)
        except Exception as exc:  # ragged nested lists
            raise TypeError(f"{name} must be a number or a rectangular array of numbers") from exc
        if raw.dtype.kind not in "iuf":
            raise TypeError(f"{name} must be a number or an array of numbers, got an array of dtype {raw.dtype}")
        arr = raw.astype(float)
    if arr.size and not np.all(np.isfinite(arr)):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(arr.reshape(arr.shape or (1,))))[0])
        raise ValueError(f"{name} must be finite, got NaN or inf (first at index {bad})")
    return arr


def check_fraction(value, name, low=0.0, high=1.0):
    """A real number in the open interval (low, high).

    Parameters
    ----------
    value : object
    name : str
        The parameter's name, for the messages.
    low, high : float, default=0.0, 1.0
        The open interval's ends.

    Returns
    -------
    float

    Examples
    --------
    >>> check_fraction(0.3, "gamma")
    0.3
    >>> check_fraction(1.0, "gamma")
    Traceback (most recent call last):
    ...
    ValueError: gamma must lie in the open interval (0, 1), got gamma=1.0
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {_short(value)} of type {type(value).__name__}")
    v = float(value)
    if not (low < v < high):
        raise ValueError(f"{name} must lie in the open interval ({low:g}, {high:g}), got {name}={_short(value)}")
    return v


def check_int(value, name, minimum=None, maximum=None):
    """An integer (numpy integers accepted, bools and floats refused).

    Parameters
    ----------
    value : object
    name : str
        The parameter's name, for the messages.
    minimum, maximum : int or None, default=None
        Inclusive bounds; None leaves that side open.

    Returns
    -------
    int

    Examples
    --------
    >>> check_int(np.int64(3), "max_iter", minimum=1)
    3
    >>> check_int(2.0, "max_iter")
    Traceback (most recent call last):
    ...
    TypeError: max_iter must be an integer, got 2.0 of type float
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {_short(value)} of type {type(value).__name__}")
    v = int(value)
    if minimum is not None and v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {name}={v}")
    if maximum is not None and v > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {name}={v}")
    return v


MAX_CLUSTERS = 1_000_000
"""The largest K accepted: K centres and their per-cluster noisy sums must fit in memory, whatever
the data (a private estimator cannot bound K by its private number of records)."""

MAX_RELEASES = 1_000_000
"""The most noisy iterations a private estimator splits its budget over (``max_iter``): each gets
epsilon / max_iter, and a million is far past any useful split."""


def check_n_clusters(n_clusters, n_samples=None, name="n_clusters"):
    """1 <= K <= MAX_CLUSTERS and, when the number of records is known, K <= that number.

    Parameters
    ----------
    n_clusters : object
    n_samples : int or None, default=None
        The number of records, when known.
    name : str, default="n_clusters"

    Returns
    -------
    int

    Examples
    --------
    >>> check_n_clusters(3, n_samples=10)
    3
    >>> check_n_clusters(3, n_samples=2)
    Traceback (most recent call last):
    ...
    ValueError: n_clusters=3 is larger than the number of records (n_samples=2)
    """
    k = check_int(n_clusters, name, minimum=1, maximum=MAX_CLUSTERS)
    if n_samples is not None and k > n_samples:
        raise ValueError(f"{name}={k} is larger than the number of records (n_samples={n_samples})")
    return k


def check_choice(value, name, choices):
    """``value`` itself, after checking it is one of ``choices``.

    Parameters
    ----------
    value : object
        The parameter as given.
    name : str
        The parameter's name, for the message.
    choices : set or sequence
        The accepted values.

    Returns
    -------
    object
        ``value``, unchanged.

    Examples
    --------
    >>> check_choice("fixed", "schedule", {"fixed", "halving"})
    'fixed'
    >>> check_choice("linear", "schedule", {"fixed", "halving"})
    Traceback (most recent call last):
    ...
    ValueError: schedule must be one of ['fixed', 'halving'], got schedule='linear'
    """
    try:
        known = value in choices
    except TypeError:  # an unhashable value (a list, a dict, an array) is no choice either
        known = False
    if not known:
        raise ValueError(f"{name} must be one of {sorted(choices)}, got {name}={_short(value)}")
    return value


OS_RANDOM = "os"
"""The ``random_state`` that asks for a cryptographically secure generator keyed by the operating system."""


def os_generator():
    """A Generator on ChaCha20 keyed with 256 bits from the operating system's cryptographic source.

    ``secrets.token_bytes`` reads the operating system's CSPRNG (getrandom on Linux, BCryptGenRandom on
    Windows); ChaCha20 (20 rounds, the stream cipher of RFC 8439, from the ``randomgen`` package) expands that
    key into the stream every draw reads. An observer of the releases who does not know the key cannot predict
    or reproduce the noise, which a seeded generator (numpy's PCG64, predictable from its seed or its outputs)
    does not promise. Nothing of the key is kept beyond the generator's state in this process's memory, and no
    run can be repeated: use it for a real release, a seed for a reproducible notebook.
    """
    try:
        from randomgen import ChaCha
    except ImportError as exc:
        raise ImportError(
            "random_state='os' needs the randomgen package (ChaCha20): pip install 'dpclust_lib[secure]'"
        ) from exc
    return np.random.Generator(ChaCha(key=int.from_bytes(secrets.token_bytes(32), "little"), rounds=20))


def is_os_generator(rng):
    """Whether ``rng`` draws from a ChaCha stream (:func:`os_generator`): then no seeded child may stand in for it."""
    bit_generator = type(rng.bit_generator)
    return bit_generator.__name__ == "ChaCha" and bit_generator.__module__.startswith("randomgen")


def check_random_state(random_state, name="random_state"):
    """Turn ``None``, an int, a SeedSequence, a Generator or ``"os"`` into a ``np.random.Generator``.

    A Generator is used as given (shared state), so that a caller can thread
    one stream through several calls; an int always gives the same stream.
    ``"os"`` gives a cryptographically secure generator keyed by the operating
    system (:func:`os_generator`): the choice for a real release.

    Parameters
    ----------
    random_state : None, int, SeedSequence, numpy Generator or "os"
    name : str, default="random_state"

    Returns
    -------
    numpy.random.Generator

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> check_random_state(rng) is rng
    True
    >>> float(check_random_state(0).random()) == float(np.random.default_rng(0).random())
    True
    """
    if random_state is None or isinstance(random_state, np.random.SeedSequence):
        return np.random.default_rng(random_state)
    if isinstance(random_state, str) and random_state == OS_RANDOM:
        return os_generator()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, (bool, np.bool_)):
        raise TypeError(f"{name} must be None, an int, a SeedSequence, a numpy Generator or 'os', got {random_state!r}")
    if isinstance(random_state, numbers.Integral):
        if int(random_state) < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {name}={int(random_state)}")
        return np.random.default_rng(int(random_state))
    if isinstance(random_state, np.random.RandomState):
        raise TypeError(f"{name} is a legacy numpy RandomState; pass an int or np.random.default_rng(...) instead")
    raise TypeError(
        f"{name} must be None, an int, a SeedSequence, a numpy Generator or 'os', got {_short(random_state)}"
    )


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


def check_array(X, name="X", ndim=2, allow_empty=False, finite=True):
    """A finite numeric array of the given number of dimensions (not copied if possible).

    Parameters
    ----------
    X : array_like
        Numbers (an object array of Python ints and floats is read as floats).
    name : str, default="X"
    ndim : int, default=2
    allow_empty : bool, default=False
    finite : bool, default=True
        Refuse NaN and inf (naming the first index). False leaves them to the caller: a private
        estimator's records get the declared treatment of :func:`clamp_records` instead of a refusal.

    Returns
    -------
    ndarray
        Of a numeric dtype (bool, int or float), not copied when possible.

    Examples
    --------
    >>> check_array([[1, 2], [3, 4]]).shape
    (2, 2)
    >>> check_array([[0.5, float("nan")]])
    Traceback (most recent call last):
    ...
    ValueError: X contains NaN or inf (first at index (0, 1))
    """
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
    if finite and arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(f"{name} contains NaN or inf (first at index {tuple(int(i) for i in bad)})")
    return arr


def check_domain_sizes(domain_sizes, name="domain_sizes"):
    """A non-empty sequence of integers >= 2 (attribute domain sizes).

    Parameters
    ----------
    domain_sizes : sequence of int
    name : str, default="domain_sizes"

    Returns
    -------
    tuple of int

    Examples
    --------
    >>> check_domain_sizes([3, 2])
    (3, 2)
    >>> check_domain_sizes([3, 1])
    Traceback (most recent call last):
    ...
    ValueError: domain_sizes must all be >= 2 (a one-value attribute carries nothing), got domain_sizes[1]=1
    """
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


def check_categorical(X, domain_sizes, name="X", allow_empty=False, outside="raise"):
    """Integer-coded categorical records: shape (n, m), X[:, j] in {0, ..., k_j - 1}.

    Parameters
    ----------
    X : array_like of shape (n, m)
    domain_sizes : sequence of m ints
    name : str, default="X"
    allow_empty : bool, default=False
        Accept n = 0 records (a central private estimator must: see ``DPKModes``).
    outside : {"raise", "clamp"}, default="raise"
        A code outside its attribute's domain: refused, naming its row and column (public inputs:
        centres, reports, records to predict), or clamped into 0..k_j - 1 (a private estimator's records:
        the declared treatment, see :func:`clamp_codes`; no message depends on a record).

    Returns
    -------
    ndarray of shape (n, m), int64

    Examples
    --------
    >>> check_categorical([[0, 1], [2, 0]], (3, 2)).dtype
    dtype('int64')
    >>> check_categorical([[0, 1], [2, 5]], (3, 2))
    Traceback (most recent call last):
    ...
    ValueError: X[1, 1] is outside the declared domain of attribute 1 (codes 0..1, domain_sizes[1]=2)
    >>> check_categorical([[0, 1], [2, 5]], (3, 2), outside="clamp").tolist()
    [[0, 1], [2, 1]]
    """
    sizes = check_domain_sizes(domain_sizes)
    arr = _as_array(X, name)
    if arr.ndim == 1 and len(sizes) == 1:
        raise ValueError(
            f"{name} must be 2-D (n records x {len(sizes)} attributes), got shape {arr.shape}; use X.reshape(-1, 1)"
        )
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (n records x m attributes), got shape {arr.shape}")
    if arr.shape[0] == 0 and not allow_empty:
        raise ValueError(f"{name} is empty (shape {arr.shape}); at least one record is needed")
    if arr.shape[1] != len(sizes):
        raise ValueError(f"{name} has {arr.shape[1]} attributes but domain_sizes has {len(sizes)}: {sizes}")
    if arr.shape[0] == 0 and arr.dtype.kind in "biuf":  # no record: no code to check, whatever the dtype
        return np.zeros(arr.shape, dtype=np.int64)
    if arr.dtype.kind == "f":
        if outside == "raise" and not np.all(np.isfinite(arr)):
            bad = np.argwhere(~np.isfinite(arr))[0]
            raise ValueError(f"{name} contains NaN or inf (first at index {tuple(int(i) for i in bad)})")
        # The dtype is public; the values are not looked at.
        raise TypeError(f"{name} must hold integer category codes, got dtype {arr.dtype}")
    if arr.dtype.kind not in "iub":
        raise TypeError(f"{name} must hold integer category codes, got dtype {arr.dtype}")
    if outside == "clamp":
        return clamp_codes(arr, sizes)
    if outside != "raise":
        raise ValueError(f"outside must be 'raise' or 'clamp', got outside={_short(outside)}")
    arr = arr.astype(np.int64, copy=False)
    upper = np.asarray(sizes)
    outside_domain = (arr < 0) | (arr >= upper)
    if outside_domain.any():
        i, j = (int(v) for v in np.argwhere(outside_domain)[0])
        raise ValueError(
            f"{name}[{i}, {j}] is outside the declared domain of attribute {j} "
            f"(codes 0..{sizes[j] - 1}, domain_sizes[{j}]={sizes[j]})"
        )
    return arr


def clamp_codes(X, domain_sizes):
    """Integer codes clamped into each attribute's declared domain 0..k_j - 1: a private record's declared treatment.

    A record holding a code outside the schema is mapped to the nearest code of the schema (negative codes to 0,
    codes >= k_j to k_j - 1), as OpenDP clamps a value into its declared domain. The map is applied to each
    record alone, so a data set and its neighbour stay neighbours and the estimator's guarantee is unchanged;
    nothing is refused or reported, so nothing observable depends on which record was outside. A caller who
    wants such a record refused asks for it by name: :func:`refuse_outside_domain`.

    Examples
    --------
    >>> clamp_codes(np.array([[-1, 1], [7, 0]]), (3, 2)).tolist()
    [[0, 1], [2, 0]]
    """
    return np.clip(np.asarray(X).astype(np.int64), 0, np.asarray(domain_sizes, dtype=np.int64) - 1)


def clamp_records(X, lower, upper):
    """Numeric records clamped into the declared box [lower, upper], NaN at the box's centre: the declared treatment.

    A coordinate below its lower bound (-inf included) becomes the lower bound, one above its upper bound (+inf
    included) the upper bound, as diffprivlib clips and OpenDP clamps; a NaN coordinate becomes the centre of
    its interval, (lower + upper) / 2. Each record is mapped alone, so the map keeps neighbours neighbours and
    the estimator's guarantee holds for the records as given; nothing is refused or reported, so nothing
    observable depends on which record was outside. A caller who wants such a record refused asks for it by
    name: :func:`refuse_outside`.

    Examples
    --------
    >>> clamp_records(np.array([[-5.0, 0.5], [np.nan, np.inf]]), np.zeros(2), np.ones(2)).tolist()
    [[0.0, 0.5], [0.5, 1.0]]
    """
    X = np.asarray(X, dtype=float)
    inside = (X >= lower) & (X <= upper)  # False for NaN
    if inside.all():
        return X
    return np.where(np.isnan(X), (lower + upper) / 2, np.clip(X, lower, upper))


def refuse_outside(X, bounds, name="X"):
    """Refuse records outside ``bounds`` (or NaN), naming the first one's row and column: a leaky check, by name.

    The estimators clamp such records (:func:`clamp_records`). Whether this raises depends on the private
    records, and its message says which record, so calling it is a release that no epsilon covers: it warns
    with :class:`PrivacyLeakWarning` every time.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     refuse_outside([[0.5, 2.0]], (0, 1))
    Traceback (most recent call last):
    ...
    ValueError: X[0, 1] lies outside the declared bounds [0.0, 1.0] of dimension 1
    """
    warnings.warn(
        "refuse_outside reads the private records and its outcome names one: not covered by any epsilon",
        PrivacyLeakWarning,
        stacklevel=2,
    )
    arr = check_array(X, name=name, finite=False).astype(float)
    lower, upper = _declared_bounds(bounds, arr.shape[1], "bounds")
    outside = ~((arr >= lower) & (arr <= upper))
    if outside.any():
        i, j = (int(v) for v in np.argwhere(outside)[0])
        raise ValueError(f"{name}[{i}, {j}] lies outside the declared bounds [{lower[j]}, {upper[j]}] of dimension {j}")
    return arr


def refuse_outside_domain(X, domain_sizes, name="X"):
    """Refuse codes outside the declared domain, naming the first one's row and column: a leaky check, by name.

    The estimators clamp such codes (:func:`clamp_codes`); like :func:`refuse_outside`, this warns with
    :class:`PrivacyLeakWarning` every time.
    """
    warnings.warn(
        "refuse_outside_domain reads the private records and its outcome names one: not covered by any epsilon",
        PrivacyLeakWarning,
        stacklevel=2,
    )
    return check_categorical(X, domain_sizes, name=name)


def check_sample_weight(sample_weight, n_samples, name="sample_weight"):
    """Non-negative finite weights, one per record, not all zero; None means all ones.

    Parameters
    ----------
    sample_weight : None or array_like of shape (n_samples,)
    n_samples : int
    name : str, default="sample_weight"

    Returns
    -------
    ndarray of shape (n_samples,), float

    Examples
    --------
    >>> check_sample_weight(None, 3).tolist()
    [1.0, 1.0, 1.0]
    >>> check_sample_weight([1, 0, 2], 3).tolist()
    [1.0, 0.0, 2.0]
    """
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
    public input the caller must declare. Records outside declared bounds are
    not looked at here: a private estimator clamps them (:func:`clamp_records`).

    Parameters
    ----------
    bounds : tuple (lower, upper), "data" or None
        The public domain; scalars or length-``n_features`` sequences.
    n_features : int
        d, the number of features.
    X : ndarray of shape (n, d) or None
        The records, read only with ``"data"``.
    name : str, default "bounds"
        The parameter's name, for the messages.

    Returns
    -------
    lower, upper : ndarray of shape (n_features,)

    Examples
    --------
    >>> lower, upper = check_bounds((0, 1), 2)
    >>> lower.tolist(), upper.tolist()
    ([0.0, 0.0], [1.0, 1.0])
    """
    if bounds is None:
        raise ValueError(
            missing_public_message(
                name, f"{name}=(lower, upper), the public domain of the data (scalars or one value per feature)"
            )
        )
    if isinstance(bounds, str):
        if bounds != FROM_DATA:
            raise ValueError(f"{name} must be a pair (lower, upper) or 'data', got {name}={_short(bounds)}")
        return _bounds_from_data(X, name)
    return _declared_bounds(bounds, n_features, name)


def column_min_max(X):
    """Each column's smallest and largest value of a 2-D array with at least one row: (lower, upper), shape (d,).

    Column by column: numpy reduces a tall array (many records, few attributes) along axis 0 several times
    slower than each column alone (some 40x at (100000, 2), 3x at (19020, 10)).

    Examples
    --------
    >>> column_min_max(np.array([[1.0, 5.0], [3.0, 2.0]]))
    (array([1., 2.]), array([3., 5.]))
    """
    X = np.asarray(X)
    lower = np.array([X[:, j].min() for j in range(X.shape[1])], dtype=X.dtype)
    upper = np.array([X[:, j].max() for j in range(X.shape[1])], dtype=X.dtype)
    return lower, upper


def _bounds_from_data(X, name):
    """bounds="data": the records' own range (warns: it is not covered by the privacy guarantee)."""
    if X is None:
        raise ValueError(f"{name}='data' needs the data to read the domain from")
    if X.shape[0] == 0:
        raise ValueError(f"{name}='data' needs at least one record to read the domain from: X is empty")
    warnings.warn(
        f"{name}='data': the data domain is read off the private records, which is not covered by the "
        "privacy guarantee (epsilon_guaranteed_ = inf). Pass bounds=(lower, upper) to avoid this.",
        PrivacyLeakWarning,
        stacklevel=4,  # one frame deeper than before this step was split out: the warning names the same line
    )
    finite = np.isfinite(X)
    if not finite.all():  # the range of the finite coordinates; a column without one gets [0, 1]
        X = np.where(finite, X, np.nan)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns, handled below
            lower, upper = np.nanmin(X, axis=0), np.nanmax(X, axis=0)
        lower, upper = np.where(np.isnan(lower), 0.0, lower), np.where(np.isnan(upper), 1.0, upper)
    else:
        lower, upper = (side.astype(float) for side in column_min_max(X))
    same = upper <= lower
    upper = np.where(same, lower + 1.0, upper)  # a constant column still needs a cell of positive width
    return lower, upper


def _declared_bounds(bounds, n_features, name):
    """A declared pair as two finite float arrays of length d, upper > lower, of finite width."""
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
    return lower, upper


def check_bool(value, name):
    """``value`` as a bool, after checking it is ``True`` or ``False`` (numpy bools accepted, 0 and 1 refused).

    Parameters
    ----------
    value : object
    name : str
        The parameter's name, for the messages.

    Returns
    -------
    bool

    Examples
    --------
    >>> check_bool(True, "projection")
    True
    >>> check_bool(1, "projection")
    Traceback (most recent call last):
    ...
    TypeError: projection must be True or False, got projection=1
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {name}={_short(value)}")
    return bool(value)


def check_non_negative(value, name):
    """A finite real number >= 0, as a float (thresholds that may be 0).

    Parameters
    ----------
    value : object
    name : str
        The parameter's name, for the messages.

    Returns
    -------
    float

    Examples
    --------
    >>> check_non_negative(0, "threshold")
    0.0
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {_short(value)} of type {type(value).__name__}")
    if not np.isfinite(float(value)) or float(value) < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {name}={_short(value)}")
    return float(value)


# ---------------------------------------------------------------------------
# Parameter constraints: each estimator declares, once, what every constructor parameter must be
# ---------------------------------------------------------------------------

FROM_DATA = "data"
"""The value by which a caller asks for a public quantity to be read off the private records (leaky)."""


def missing_public_message(name, what):
    """The message refusing a public input that was not given (one text for every estimator).

    Parameters
    ----------
    name : str
        The parameter's name.
    what : str
        What to pass, e.g. ``"n_public=<the public number of records>"``.

    Returns
    -------
    str

    Examples
    --------
    >>> msg = missing_public_message("n_public", "n_public=<the public number of records>")
    >>> msg.split("; ")[0]
    'n_public is required: pass n_public=<the public number of records>'
    >>> "n_public='data'" in msg
    True
    """
    return (
        f"{name} is required: pass {what}; or {name}={FROM_DATA!r} to read it off the private "
        "records (not private: epsilon_guaranteed_ becomes inf)"
    )


class Constraint:
    """What one constructor parameter must be; :meth:`check` raises the library's message or returns the value.

    Subclasses wrap one ``check_*`` function of this module, so a parameter checked through its
    estimator's table gets the very message a direct call gives. ``check`` returns the value as the
    estimator uses it (``Epsilon`` gives a float, ``Bool`` a bool); it never draws random numbers.
    """

    def check(self, value, name):
        raise NotImplementedError

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if v is not None)
        return f"{type(self).__name__}({args})"


class Epsilon(Constraint):
    """A finite real number > 0, returned as a float (:func:`check_epsilon`)."""

    def check(self, value, name):
        return check_epsilon(value, name=name)


class Fraction(Constraint):
    """A real number in the open interval (low, high) (:func:`check_fraction`)."""

    def __init__(self, low=0.0, high=1.0):
        self.low, self.high = low, high

    def check(self, value, name):
        return check_fraction(value, name, self.low, self.high)


class Int(Constraint):
    """An integer within [minimum, maximum] (:func:`check_int`); ``None`` bounds are open."""

    def __init__(self, minimum=None, maximum=None):
        self.minimum, self.maximum = minimum, maximum

    def check(self, value, name):
        return check_int(value, name, self.minimum, self.maximum)


class NonNegative(Constraint):
    """A finite real number >= 0 (:func:`check_non_negative`)."""

    def check(self, value, name):
        return check_non_negative(value, name)


class Positive(Constraint):
    """A finite real number > 0 (:func:`check_positive`)."""

    def check(self, value, name):
        return check_positive(value, name)


class Custom(Constraint):
    """A check of the estimator's own, ``check(value, name) -> value``, for a parameter no other constraint covers."""

    def __init__(self, check):
        self.custom = check

    def check(self, value, name):
        return self.custom(value, name)


class NClusters(Constraint):
    """K >= 1 (:func:`check_n_clusters`); K <= n_samples needs the data: the estimator checks it in fit."""

    def check(self, value, name):
        return check_n_clusters(value, name=name)


class Choice(Constraint):
    """One of the given values (:func:`check_choice`)."""

    def __init__(self, *choices):
        self.choices = choices

    def check(self, value, name):
        return check_choice(value, name, set(self.choices))


class Bool(Constraint):
    """``True`` or ``False`` (:func:`check_bool`)."""

    def check(self, value, name):
        return check_bool(value, name)


class RandomState(Constraint):
    """None, an int >= 0, a SeedSequence or a Generator (:func:`check_random_state`).

    The value is returned as given: the estimator turns it into its generator at the point of fit
    where it did before, so no draw moves.
    """

    def check(self, value, name):
        if not (isinstance(value, str) and value == OS_RANDOM):  # no key drawn just to check it
            check_random_state(value, name)
        return value


class Optional(Constraint):
    """``None`` (a documented default computed in fit), or what ``inner`` accepts."""

    def __init__(self, inner):
        self.inner = inner

    def check(self, value, name):
        return None if value is None else self.inner.check(value, name)


class ChoiceOrArray(Constraint):
    """A string among ``choices``, or an array (e.g. ``init``); ``numeric`` arrays are checked by :func:`check_array`.

    ``or_array`` words the refusal of an unknown string as "one of [...] or an array". The shape of
    an array depends on the data (n_clusters x n_features): the estimator checks it in fit.
    """

    def __init__(self, *choices, numeric=True, or_array=False):
        self.choices, self.numeric, self.or_array = choices, numeric, or_array

    def check(self, value, name):
        if isinstance(value, str):
            if self.or_array and value not in self.choices:
                raise ValueError(f"{name} must be one of {list(self.choices)} or an array, got {name}={value!r}")
            return check_choice(value, name, set(self.choices))
        return check_array(value, name).astype(float) if self.numeric else value


class DomainSizes(Constraint):
    """A non-empty sequence of integers >= 2 (:func:`check_domain_sizes`), returned as a tuple."""

    def check(self, value, name):
        return check_domain_sizes(value, name=name)


class PublicInput(Constraint):
    """A public quantity: required (``None`` is refused, saying ``what`` to pass), or ``"data"`` (leaky).

    Parameters
    ----------
    what : str
        What to pass, e.g. ``"bounds=(lower, upper), the public domain of the data"``.
    inner : Constraint or None
        The check of a declared value; ``None`` leaves it to the data-dependent step (e.g. bounds,
        whose length is the number of features).
    unless : tuple of str
        Parameters that, when all are not None, make this one unnecessary (``grid_size`` for
        ``n_public`` of EUGKMeans; ``max_height`` and ``threshold`` for DPQTKMeans').

    ``"data"`` passes here: reading the quantity off the records, with its PrivacyLeakWarning, is
    the estimator's data-dependent step.
    """

    def __init__(self, what, inner=None, unless=()):
        self.what, self.inner, self.unless = what, inner, tuple(unless)

    def check(self, value, name, estimator=None):
        if value is None:
            if estimator is not None and self.unless and all(getattr(estimator, p) is not None for p in self.unless):
                return None
            raise ValueError(missing_public_message(name, self.what))
        if isinstance(value, str) and value == FROM_DATA:
            return value
        return value if self.inner is None else self.inner.check(value, name)


def validate_params(estimator, constraints=None):
    """Check every constructor parameter of ``estimator`` against its class's constraint table.

    The one place where estimators check their parameters: ``fit`` calls it first, before reading
    the data. Checks that need the data (K <= n_samples, the shape of an ``init`` array, bounds of
    length n_features, values read with ``"data"``) follow in ``fit``; each table says which.

    Parameters
    ----------
    estimator : object
        An estimator whose class has ``_parameter_constraints``: a dict mapping the name of every
        constructor parameter to a :class:`Constraint`.
    constraints : dict or None
        A table to use instead of the class's (for estimators that build theirs elsewhere).

    Returns
    -------
    dict
        Each parameter's checked value (``epsilon`` as a float, a bool as a bool, ...), in the
        table's order.

    Raises
    ------
    ValueError, TypeError
        The message of the parameter's ``check_*`` function, naming the parameter.

    Examples
    --------
    >>> class Toy:
    ...     _parameter_constraints = {"epsilon": Epsilon(), "max_iter": Int(minimum=1)}
    ...     def __init__(self, epsilon=1, max_iter=5):
    ...         self.epsilon, self.max_iter = epsilon, max_iter
    >>> validate_params(Toy())
    {'epsilon': 1.0, 'max_iter': 5}
    >>> validate_params(Toy(max_iter=0))
    Traceback (most recent call last):
    ...
    ValueError: max_iter must be >= 1, got max_iter=0
    """
    table = type(estimator)._parameter_constraints if constraints is None else constraints
    checked = {}
    for name, constraint in table.items():
        value = getattr(estimator, name)
        if isinstance(constraint, PublicInput):
            checked[name] = constraint.check(value, name, estimator)
        else:
            checked[name] = constraint.check(value, name)
    return checked

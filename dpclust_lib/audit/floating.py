"""Mironov's attack on textbook floating-point Laplace noise, and the check that the default resists it.

Textbook floating-point Laplace, ``value + rng.laplace(0, b)``, is not differentially private: the
set of doubles reachable from f(D) + Lap(b) differs from the set reachable from f(D') + Lap(b), so
some outputs name the input with certainty (I. Mironov, "On significance of the least significant
bits for differential privacy", CCS 2012). :func:`mironov_attack` measures the share of such outputs
exactly, by replaying numpy's own arithmetic for every 53-bit uniform that could have produced an
output. The library's default noise (:mod:`dpclust_lib.noise`, ``noise="exact"``) releases points
of one grid whatever the input, so the attack finds none.
"""

from __future__ import annotations

import math

import numpy as np

from ..noise import check_noise_kind
from ..validation import check_finite_values, check_positive

__all__ = ["reachable_outputs", "mironov_attack"]


_TWO_53 = 2**53


def _numpy_laplace_noise(m, scale):
    """numpy's ``Generator.laplace(0.0, scale)`` for the uniform U = m 2^-53, in the same double arithmetic.

    numpy/random/src/distributions/distributions.c, ``random_laplace``: U = next_double (a multiple of
    2^-53 in [0, 1); U = 0 is redrawn); U >= 0.5 gives ``loc - scale * log(2.0 - U - U)``, else
    ``loc + scale * log(U + U)``. With loc = 0 a fused multiply-add would give the same double.
    Python's math.log calls the same libm ``log`` as numpy's C code.
    """
    u = m * 2.0**-53
    if u >= 0.5:
        return 0.0 - scale * math.log(2.0 - u - u)
    return 0.0 + scale * math.log(u + u)


def _float_reachable(y, x, scale):
    """Is there a 53-bit uniform U with fl(x + laplace_noise(U)) == y exactly?

    The release is non-decreasing in m = U 2^53 (log is monotone and rounding is monotone), so a
    bisection finds the smallest m whose release is >= y; a few neighbours are checked as well, in
    case libm's log is off by an ulp somewhere non-monotonically.
    """
    lo, hi = 1, _TWO_53 - 1
    if x + _numpy_laplace_noise(lo, scale) > y or x + _numpy_laplace_noise(hi, scale) < y:
        return False
    while lo < hi:  # invariant: release(hi) >= y
        mid = (lo + hi) // 2
        if x + _numpy_laplace_noise(mid, scale) >= y:
            hi = mid
        else:
            lo = mid + 1
    window = range(max(1, lo - 2), min(_TWO_53 - 1, lo + 2) + 1)
    return any(x + _numpy_laplace_noise(m, scale) == y for m in window)


def reachable_outputs(outputs, x, scale, noise="float", gamma=None):
    """Which outputs the release of the input ``x`` can produce (with positive probability).

    Parameters
    ----------
    outputs : array_like of float
        Released values (of any input).
    x : float
        The exact answer of the candidate input (a scalar query).
    scale : float
        The Laplace scale of the release (``"float"``), as passed to ``rng.laplace``.
    noise : {"exact", "float"}
        ``"float"``: the release is fl(x + numpy's Laplace(0, scale) draw); an output is reachable iff
        some 53-bit uniform yields it exactly. ``"exact"``: every multiple of ``gamma`` is reachable
        (discrete Laplace has full support on the grid), nothing else.
    gamma : float, optional
        The grid spacing, required for ``"exact"``.

    Returns
    -------
    ndarray of bool, of the shape of ``outputs``.

    Examples
    --------
    >>> from dpclust_lib.noise import laplace_release
    >>> y = laplace_release(0.0, 1.0, 1.0, np.random.default_rng(0), noise="float")[0]
    >>> reachable_outputs([y], 0.0, 1.0).tolist()
    [True]
    """
    return _reachable(outputs, x, scale, noise, gamma, "x")


def _reachable(outputs, x, scale, noise, gamma, x_name):
    check_noise_kind(noise)
    ys = check_finite_values(outputs, "outputs")
    x = check_finite_values(x, x_name)
    if x.ndim:
        raise ValueError(f"{x_name} must be a single number (the attack is run on a scalar query)")
    if noise == "exact":
        if gamma is None:
            raise ValueError("gamma (the grid spacing) is required for noise='exact'")
        gamma = check_positive(gamma, "gamma", show_value=False)
        return ys / gamma == np.rint(ys / gamma)
    scale = check_positive(scale, "scale", show_value=False)
    flags = [_float_reachable(float(y), float(x), scale) for y in ys.ravel()]
    return np.array(flags, dtype=bool).reshape(ys.shape)


def mironov_attack(outputs, x_prime, scale, noise="float", gamma=None):
    """Share of ``outputs`` that the neighbouring input ``x_prime`` can NOT produce (Mironov, CCS 2012).

    For outputs released from an input x, every such output names x with certainty: its likelihood
    ratio is infinite, so the real epsilon of the release is infinite if the share is > 0.

    Parameters
    ----------
    outputs : array_like of float
        Releases of x (``laplace_release(x, ..., noise=noise)``).
    x_prime : float
        The exact answer of the neighbouring input.
    scale : float
        The Laplace scale (``"float"``).
    noise : {"exact", "float"}
        How ``outputs`` were released; see :func:`reachable_outputs`.
    gamma : float, optional
        The grid spacing, required for ``"exact"``.

    Returns
    -------
    float in [0, 1].

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> from dpclust_lib.noise import laplace_release
    >>> y = laplace_release(np.zeros(200), 1.0, 1.0, rng, noise="float")[0]
    >>> mironov_attack(y, 1.0, 1.0) > 0
    True
    >>> y, scale, gamma = laplace_release(np.zeros(200), 1.0, 1.0, rng)
    >>> mironov_attack(y, 1.0, scale, noise="exact", gamma=gamma)
    0.0
    """
    reachable = _reachable(outputs, x_prime, scale, noise, gamma, "x_prime")
    return float(1.0 - reachable.mean()) if reachable.size else 0.0

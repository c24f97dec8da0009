"""Li et al. (2013), notebook 04: SuLQ noisy sums and counts, the budget schedules and IDP k-means
initial centres.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import stats

from dpclust_lib import PrivacyLeakWarning
from dpclust_lib.cluster.idp_kmeans import IDPKMeans
from dpclust_lib.cluster.kmeans import cluster_sums_counts, sum_count_sensitivity
from dpclust_lib.mechanisms import laplace_mechanism, laplace_scale

from ._core import (
    ALPHA,
    answer_key,
    as_float,
    call_student,
    check_function,
    diagnose,
    fail,
    ks_check,
    laplace_cdf,
    pair_of_arrays,
    passed,
    reference_inputs,
    same_shape_close,
)

__all__ = [
    "check_noisy_sums_counts",
    "check_release_scale",
    "check_total_spent",
    "check_idp_initial_centres",
    "check_gaussian_sigma",
]


def _same_columns(noise):
    """True when two columns of ``noise`` hold the same draws (one draw reused across entries)."""
    cols = noise.shape[1]
    return any(np.mean(noise[:, i] == noise[:, j]) > 0.5 for i in range(cols) for j in range(i + 1, cols))


# The typical wrong noise distributions of the (sums, counts) release, as data: (name, distribution as a
# function of (d, epsilon, right scale b), hint). check_noisy_sums_counts names the first one the noise follows.
SUMS_COUNTS_NOISE_MISTAKES = (
    (
        "sensitivity d",
        lambda d, eps, b: stats.laplace(scale=d / eps),
        "Laplace scale d/eps: your sensitivity bounds how much one record moves the sums; the release "
        "holds more than the sums: what else does adding a record change, and by how much?",
    ),
    (
        "sensitivity 1",
        lambda d, eps, b: stats.laplace(scale=1 / eps),
        "Laplace scale 1/eps: 1 is the sensitivity of a count alone; how far, in L1, can one record "
        "in [0, 1]^d move its cluster's sum?",
    ),
    (
        "scale inverted",
        lambda d, eps, b: stats.laplace(scale=eps / (d + 1)),
        "the scale grows as eps shrinks: less budget, more noise; check which way round your ratio is",
    ),
    (
        "Gaussian",
        lambda d, eps, b: stats.norm(scale=b),
        "that looks Gaussian; the mechanism adds Laplace noise (rng.laplace)",
    ),
)


def check_noisy_sums_counts(noisy_sums_counts, epsilon=0.8, n_features=2, n_clusters=3000, seed=0):
    """``noisy_sums_counts(X, labels, n_clusters, epsilon, rng)``: one SuLQ release on [0, 1]^d.

    Must return (noisy sums (K, d), noisy counts (K,)): every entry of the
    exact per-cluster sums and counts plus its own Lap((d + 1) / epsilon).
    Checked on K = ``n_clusters`` clusters of random records in [0, 1]^d:
    (1) a Kolmogorov-Smirnov test of the sums' noise and one of the counts'
    noise against Lap((d + 1) / epsilon), at alpha = 0.0005 each (family-wise
    0.001), naming typical wrong scales (``SUMS_COUNTS_NOISE_MISTAKES``); (2) with
    the noise drawn in one call of shape (K, d + 1) as prescribed, the release
    must equal the library's (:func:`~dpclust_lib.cluster.kmeans.noisy_centres`
    draws it that way) for the same seed, to relative tolerance 1e-9.

    Examples
    --------
    A release without noise is refused:

    >>> import numpy as np
    >>> def exact_only(X, labels, n_clusters, epsilon, rng):
    ...     sums = np.array([X[labels == k].sum(axis=0) for k in range(n_clusters)])
    ...     return sums, np.bincount(labels, minlength=n_clusters).astype(float)
    >>> check_noisy_sums_counts(exact_only)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: ...
    """
    d, K = n_features, n_clusters
    data_rng = np.random.default_rng([seed, 404])
    X = data_rng.random((4 * K, d))
    labels = data_rng.integers(0, K, size=4 * K)
    sums, counts = cluster_sums_counts(X, labels, K, np.zeros(d), np.ones(d))
    name = "noisy_sums_counts"
    out = call_student(noisy_sums_counts, X.copy(), labels.copy(), K, epsilon, np.random.default_rng(seed))
    got_sums, got_counts = pair_of_arrays(out, name, ("noisy_sums", (K, d)), ("noisy_counts", (K,)))
    noise = np.column_stack([got_sums - sums, got_counts - counts])
    _check_release_noise_drawn(noise, d)
    b = laplace_scale(sum_count_sensitivity(d), epsilon)
    _check_release_noise_scale(noise, d, epsilon, b)
    _check_release_layout(np.column_stack([got_sums, got_counts]), np.column_stack([sums, counts]), d, epsilon, seed)
    return passed(
        f"every sum and count carries its own Lap((d + 1)/eps) = Lap({b:g}) (d = {d}, eps = {epsilon}), "
        "and the release equals the library's for the same seed"
    )


def _check_release_noise_drawn(noise, d):
    """Noise on both the sums and the counts, one draw per entry."""
    for part, column, other in (("counts", noise[:, d], "sums"), ("sums", noise[:, :d], "counts")):
        if np.all(np.abs(column) < 1e-12):
            fail(
                f"the {part} came back exact",
                f"the {part} plus Laplace noise",
                f"the exact {part}",
                f"noise on the {other} but not on the {part} is not private: what does one record change in the "
                f"{part}?",
            )
    if _same_columns(noise):
        fail(
            "the same noise value in several entries of a cluster",
            "an independent draw per entry",
            "one draw shared across entries",
            "every sum coordinate and every count gets its own Laplace draw",
        )


def _check_release_noise_scale(noise, d, epsilon, b):
    """Lap(b) on the sums and on the counts (two KS tests at alpha / 2), naming the typical wrong scales."""
    level = ALPHA / 2
    sum_noise, count_noise = noise[:, :d].ravel(), noise[:, d]
    right = all(stats.kstest(x, laplace_cdf(b)).pvalue >= level for x in (sum_noise, count_noise))
    if not right and (
        stats.kstest(sum_noise, laplace_cdf(d / epsilon)).pvalue >= level
        and stats.kstest(count_noise, laplace_cdf(1 / epsilon)).pvalue >= level
    ):
        fail(
            "the sums and the counts each got their own sensitivity at the whole epsilon",
            f"Lap({b:g}) on every entry",
            "Lap(d/eps) on the sums, Lap(1/eps) on the counts",
            "each of the two releases is eps-DP, so together they are 2 eps-DP (sequential composition); what is "
            "the L1 sensitivity of the vector (sums, counts) released at once?",
        )
    mistakes = [(law(d, epsilon, b).cdf, hint) for _, law, hint in SUMS_COUNTS_NOISE_MISTAKES]
    hint = (
        "one Laplace scale for every entry, from the sensitivity of the whole release (Sec. 2) and eps; check the "
        "exact sums and counts too"
    )
    ks_check("the noise of the sums", sum_noise, sum_noise.size, laplace_cdf(b), mistakes, hint, level)
    ks_check("the noise of the counts", count_noise, count_noise.size, laplace_cdf(b), mistakes, hint, level)


def _check_release_layout(got, exact, d, epsilon, seed):
    """The release equals the library's for the same seed (noise drawn in one call of shape (K, d + 1))."""
    # The exercise prescribes the papers' textbook draw (rng.laplace): the library's by name, noise="float".
    rng = np.random.default_rng(seed)
    library = laplace_mechanism(exact, sum_count_sensitivity(d), epsilon, rng, noise="float")
    if same_shape_close(got, library, 1e-9, atol=1e-9):
        return
    hint = (
        "the noise has the right distribution, but not the prescribed layout: draw it in ONE call, "
        "rng.laplace(0.0, b, size=(K, d + 1)); row g holds the noise of cluster g's d sums, then of its count"
    )
    if same_shape_close((got - exact).T.ravel(), (library - exact).ravel(), 1e-9, atol=1e-9):
        hint = "you drew the noise with shape (d + 1, K); draw shape (K, d + 1): one row per cluster"
    fail(
        "the release differs from the library's for the same seed",
        np.round(library[0], 4).tolist(),
        np.round(got[0], 4).tolist(),
        hint + " (cluster 0 shown)",
    )


def _share(schedule, epsilon, n_releases, t, halving_shift=0):
    return epsilon / n_releases if schedule == "fixed" else epsilon / 2.0 ** (t + halving_shift)


_SCALE_CASES = [
    (4, 1.0, 3, 1, "fixed"),
    (10, 0.4, 5, 3, "fixed"),
    (4, 1.0, 3, 1, "halving"),
    (10, 0.4, 5, 5, "halving"),
    (2, 0.05, 4, 2, "halving"),
    (7, 6.0, 10, 10, "fixed"),
]
RELEASE_SCALE_ANSWERS = [15.0, 137.5, 10.0, 880.0, 240.0, 13.333333333333334]  # the library's (tests/test_exercises.py)


def _scale_cases(rng):
    """Six cases (d, epsilon, N, t, schedule) of a graded run: both schedules, t from the first to the last."""
    cases = []
    for i in range(6):
        n = int(rng.integers(1, 11))
        t = n if i == 3 else int(rng.integers(1, n + 1))
        eps = float(np.round(10 ** rng.uniform(-1.3, 0.8), 3))
        cases.append((int(rng.integers(1, 13)), eps, n, t, ("fixed", "halving")[i % 2]))
    return cases


_HALVING_HINT = (
    "off by one release in the halving schedule: how much does release 1 spend, and how much is left for release 2?"
)

# The typical wrong scales of release t, as data: (name, scale as a function of (n_features, epsilon,
# n_releases, t, schedule), hint).
RELEASE_SCALE_MISTAKES = (
    (
        "sensitivity d",
        lambda d, e, N, t, s: d / _share(s, e, N, t),
        "your sensitivity covers the sums; what else in the release does one record change?",
    ),
    (
        "sensitivity 1",
        lambda d, e, N, t, s: 1 / _share(s, e, N, t),
        "1 is the sensitivity of a count alone; what does one record do to its cluster's sum?",
    ),
    (
        "the whole eps per release",
        lambda d, e, N, t, s: (d + 1) / e,
        "each release got the whole eps, but the N releases share it (sequential composition): what is release "
        "t's share under this schedule?",
    ),
    (
        "eps/N multiplied",
        lambda d, e, N, t, s: (d + 1) / (e * N) if s == "fixed" else np.nan,
        "a smaller share of the budget means more noise: divide the sensitivity by the release's share",
    ),
    (
        "inverted",
        lambda d, e, N, t, s: _share(s, e, N, t) / (d + 1),
        "less budget must mean more noise: check which way round your ratio is",
    ),
    ("halving one step early", lambda d, e, N, t, s: (d + 1) / _share(s, e, N, t, -1), _HALVING_HINT),
    ("halving one step late", lambda d, e, N, t, s: (d + 1) / _share(s, e, N, t, +1), _HALVING_HINT),
)


def check_release_scale(release_scale, seed=None, solutions=None):
    """``release_scale(n_features, epsilon, n_releases, t, schedule)``: the Laplace scale of release t.

    Release t (1-based) of N = ``n_releases`` noisy (sum, count) releases on
    [0, 1]^d, under ``schedule`` "fixed" or "halving". Checked on six cases against ``RELEASE_SCALE_ANSWERS``
    (the library's :func:`sum_count_sensitivity` over :func:`budget_shares`; relative tolerance 1e-9; a
    graded run draws six others from ``seed`` and compares with the teacher's solution); the typical
    mistakes named are ``RELEASE_SCALE_MISTAKES``.

    Examples
    --------
    >>> check_release_scale(lambda d, epsilon, n_releases, t, schedule: d / epsilon)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: the Laplace scale of release t: <lambda>(4, 1.0, 3, 1, 'fixed') ...
    """
    cases, reference = answer_key(_SCALE_CASES, RELEASE_SCALE_ANSWERS, _scale_cases, seed, solutions, "release_scale")
    return check_function(
        "the Laplace scale of release t",
        release_scale,
        reference,
        cases,
        mistakes=[(wrong, hint) for _, wrong, hint in RELEASE_SCALE_MISTAKES],
        hint="what is the sensitivity of one release, and what budget does release t get under this schedule?",
    )


_OFF_BY_ONE_RELEASE = "off by one in the halving schedule: how many releases spend, and what does the first one get?"

# The typical wrong totals, as data: (name, total as a function of (epsilon, n_releases, schedule), hint).
TOTAL_SPENT_MISTAKES = (
    (
        "eps",
        lambda e, N, s: e,
        "the halving schedule never spends all of eps: what is still left after N halvings?",
    ),
    (
        "N eps",
        lambda e, N, s: N * e,
        "you charged eps for every release; what does each release of the fixed schedule get?",
    ),
    ("N + 1 halvings", lambda e, N, s: e if s == "fixed" else e * (1 - 2.0 ** -(N + 1)), _OFF_BY_ONE_RELEASE),
    ("N - 1 halvings", lambda e, N, s: e if s == "fixed" else e * (1 - 2.0 ** -(N - 1)), _OFF_BY_ONE_RELEASE),
    (
        "the last release",
        lambda e, N, s: e if s == "fixed" else e / 2.0**N,
        "that is the budget of the LAST release; sequential composition adds them all up",
    ),
)

_TOTAL_CASES = [(1.0, 5, "fixed"), (1.0, 5, "halving"), (0.4, 1, "halving"), (6.0, 10, "halving"), (0.05, 3, "fixed")]
TOTAL_SPENT_ANSWERS = [1.0, 0.96875, 0.2, 5.994140625, 0.05]  # the library's budget_shares, summed


def _total_cases(rng):
    """Five cases (epsilon, N, schedule) of a graded run, N = 1 among them."""
    sizes = [1, *rng.integers(2, 12, size=4).tolist()]
    return [
        (float(np.round(10 ** rng.uniform(-1.3, 0.8), 3)), n, ("halving", "fixed")[i % 2]) for i, n in enumerate(sizes)
    ]


def check_total_spent(total_spent, seed=None, solutions=None):
    """``total_spent(epsilon, n_releases, schedule)``: the epsilon that N releases spend in all.

    Checked on five cases against ``TOTAL_SPENT_ANSWERS``, the sum of the library's :func:`budget_shares`
    (sequential composition; relative tolerance 1e-9; a graded run draws five others from ``seed`` and
    compares with the teacher's solution); the typical mistakes named are ``TOTAL_SPENT_MISTAKES``.

    Examples
    --------
    >>> check_total_spent(lambda epsilon, n, schedule: epsilon if schedule == "fixed" else epsilon * (1 - 0.5**n))
    Correct: ...
    """
    cases, reference = answer_key(_TOTAL_CASES, TOTAL_SPENT_ANSWERS, _total_cases, seed, solutions, "total_spent")
    return check_function(
        "the total epsilon spent",
        total_spent,
        reference,
        cases,
        mistakes=[(wrong, hint) for _, wrong, hint in TOTAL_SPENT_MISTAKES],
        hint="sequential composition: the budgets of the releases add up",
    )


def _idp_data(case, seed):
    n, d, K, _ = case
    rng = np.random.default_rng([seed, 42, n])
    means = rng.uniform(0.2, 0.8, size=(K, d))
    return np.clip(means[rng.integers(0, K, n)] + rng.normal(0.0, 0.07, size=(n, d)), 0.0, 1.0)


def _parts_of(n, K, rng, parts):
    """The part of every record: drawn at random (the listing), or K contiguous blocks of the file, two ways."""
    if parts == "random":
        return rng.integers(0, K, size=n)
    if parts == "blocks":  # block g holds records [g n / K, (g + 1) n / K)
        return (np.arange(n) * K) // n
    return np.repeat(np.arange(K), [len(b) for b in np.array_split(np.arange(n), K)])  # np.array_split's blocks


def _idp_variant(X, K, eps, seed, **deviation):
    """IDP k-means' initial centres with one of the listing's typical deviations (``deviation``, required)."""
    how = {"sensitivity": "d + 1", "denominator": "noisy", "keep": "at least 1", "clip": True, "parts": "random"}
    if not deviation or not set(deviation) <= set(how):
        raise ValueError(f"name one deviation among {sorted(how)}")
    how.update(deviation)
    n, d = X.shape
    rng = np.random.default_rng(seed)
    labels = _parts_of(n, K, rng, how["parts"])
    fallback, noise = rng.uniform(0, 1, size=(K, d)), rng.laplace(0, 1, (K, d + 1))
    scale = {"d + 1": d + 1, "d": d, "1": 1}[how["sensitivity"]] / eps
    s, c = cluster_sums_counts(X, labels, K, np.zeros(d), np.ones(d))
    noisy_s, noisy_c = s + scale * noise[:, :d], c + scale * noise[:, d]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = noisy_s / (noisy_c if how["denominator"] == "noisy" else c)[:, None]
    kept = {"at least 1": noisy_c >= 1, "positive": noisy_c > 0, "all": np.ones(K, dtype=bool)}[how["keep"]]
    out = np.where(kept[:, None], ratio, fallback)
    return np.clip(out, 0.0, 1.0) if how["clip"] else out


_BLOCKS = (
    "misconception: the parts may be K contiguous blocks of the file. The listing draws each record's part at "
    "random: blocks depend on how the file is sorted (a sorted file puts whole clusters into one part), and "
    "adding one record moves up to K - 1 others from one block to the next: what does that do to the sensitivity?"
)

# The typical wrong initial centres: (how the answer deviates from the listing, the hint).
_IDP_INIT_MISTAKES = [
    ({"sensitivity": "d"}, "your noise covers the sums' sensitivity; what else does one record change in a release?"),
    ({"sensitivity": "1"}, "your noise covers a count's sensitivity; what does one record do to its part's sum?"),
    ({"denominator": "true"}, "you divided by the true count; which counts may a released centre depend on?"),
    (
        {"keep": "positive"},
        "you give the fallback centre to parts whose noisy count is below 0; reread the listing's threshold",
    ),
    ({"keep": "all"}, "you kept every part; reread the listing: when does a part take its fallback centre?"),
    ({"clip": False}, "a noisy ratio can leave the domain [0, 1]^d; what does the listing do with such a centre?"),
    ({"parts": "blocks"}, _BLOCKS),
    ({"parts": "array_split"}, _BLOCKS),
]


def _library_release(X, labels, n_clusters, epsilon, rng):
    """Exercise 1's answer as the library gives it (textbook float draws, asked for by name)."""
    X = np.asarray(X, dtype=float)
    d = X.shape[1]
    sums, counts = cluster_sums_counts(X, labels, n_clusters, np.zeros(d), np.ones(d))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        released = laplace_mechanism(
            np.column_stack([sums, counts]), sum_count_sensitivity(d), epsilon, rng, noise="float"
        )
    return released[:, :d], released[:, d]


def _idp_cases(seed):
    """(n, d, K, epsilon) of the three data sets; one with 200 parts of about 5 records (noisy counts below 1)."""
    if seed == 0:
        return [(300, 3, 3, 1.0), (1000, 2, 200, 0.5), (1000, 4, 5, 5.0)]
    rng = np.random.default_rng([seed, 404])
    return [
        (int(rng.integers(200, 500)), int(rng.integers(2, 5)), int(rng.integers(2, 6)), 1.0),
        (1000, int(rng.integers(2, 4)), int(rng.integers(150, 250)), 0.5),
        (int(rng.integers(800, 1200)), int(rng.integers(2, 6)), int(rng.integers(3, 8)), 5.0),
    ]


def check_idp_initial_centres(idp_initial_centres, seed=0):
    """``idp_initial_centres(X, n_clusters, epsilon, rng)``: the initial centres of IDP k-means on [0, 1]^d.

    The prescribed draws (the library's order): the part of every record,
    ``rng.integers(0, K, size=n)``; the fallback centres,
    ``rng.uniform(0, 1, size=(K, d))``; the noise of the (sum, count) release of
    the K parts, one call of shape (K, d + 1). A part whose noisy count is below
    1 takes its fallback centre; the others noisy sum / noisy count, projected
    onto [0, 1]^d. Compared with ``IDPKMeans(..., max_iter=1).initial_centers_``
    for the same seed on three data sets (one with about 200 parts of about 5
    records, whose noisy counts fall below 0 and between 0 and 1), to relative tolerance 1e-9. While
    it runs, the ``noisy_sums_counts`` it calls is the library's release (Exercise 1's right answer), so a
    wrong Exercise 1 does not fail this one.

    Examples
    --------
    The ``noisy_sums_counts`` it calls is the library's while the check runs; centres that ignore the data fail:

    >>> import numpy as np
    >>> def centre_of_the_domain(X, n_clusters, epsilon, rng):
    ...     return np.full((n_clusters, X.shape[1]), 0.5)
    >>> check_idp_initial_centres(centre_of_the_domain)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: the initial centres differ from IDPKMeans' ...
    """
    for case in _idp_cases(seed):
        n, d, K, eps = case
        X = _idp_data(case, seed)
        reference = IDPKMeans(
            K,
            epsilon=eps,
            max_iter=1,
            schedule="fixed",
            random_state=np.random.default_rng(seed),
            bounds=(0.0, 1.0),
            noise="float",  # the exercise prescribes the papers' textbook draws (rng.laplace)
        )
        with warnings.catch_warnings():  # asked for by name: the reference's float noise is not the point here
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            want = reference.fit(X).initial_centers_
        with reference_inputs(idp_initial_centres, noisy_sums_counts=_library_release):
            out = call_student(idp_initial_centres, X.copy(), K, eps, np.random.default_rng(seed))
        got = as_float(out, "idp_initial_centres", want.shape)
        if got.shape != want.shape:
            fail(
                "idp_initial_centres returned the wrong shape",
                f"{want.shape}: one centre per part",
                got.shape,
                "return a (K, d) array",
            )
        if same_shape_close(got, want, 1e-9, atol=1e-12):
            continue
        wrong = [(_idp_variant(X, K, eps, seed, **deviation), h) for deviation, h in _IDP_INIT_MISTAKES]
        hint = diagnose(
            got,
            wrong,
            1e-9,
            "follow the prescribed order of draws (parts, fallback centres, then the noise of the release) and "
            "compare with the listing of Sec. 3",
        )
        fail(
            f"the initial centres differ from IDPKMeans' (n={n}, d={d}, K={K}, eps={eps})",
            np.round(want[0], 4).tolist(),
            np.round(got[0], 4).tolist(),
            hint + " (first centre shown)",
        )
    return passed("your initial centres equal IDPKMeans' for the same seed on every test data set")


def _sigma_with(sensitivity, log_term):
    return lambda d, e, delta: sensitivity(d) * math.sqrt(log_term(delta)) / e


# The typical wrong sigmas, as data: (name, sigma as a function of (n_features, epsilon, delta), hint).
GAUSSIAN_SIGMA_MISTAKES = (
    (
        "the L1 sensitivity",
        _sigma_with(lambda d: d + 1, lambda delta: 2 * math.log(1.25 / delta)),
        "that sensitivity is the one Laplace's mechanism uses; which norm does the Gaussian mechanism's bound use?",
    ),
    (
        "the count left out",
        _sigma_with(lambda d: math.sqrt(d), lambda delta: 2 * math.log(1.25 / delta)),
        "your sensitivity bounds the change of the sums; what else in the released vector does the record change?",
    ),
    (
        "L2 of the sums plus the count",
        _sigma_with(lambda d: math.sqrt(d) + 1, lambda delta: 2 * math.log(1.25 / delta)),
        "norms of the parts of one vector do not add up to its norm: write the whole change as one vector",
    ),
    (
        "ln(1/delta)",
        _sigma_with(lambda d: math.sqrt(d + 1), lambda delta: 2 * math.log(1 / delta)),
        "compare your logarithm with the one of the classic bound (Dwork & Roth, Theorem A.1)",
    ),
    (
        "no factor 2",
        _sigma_with(lambda d: math.sqrt(d + 1), lambda delta: math.log(1.25 / delta)),
        "compare the constant under your square root with the classic bound's (Dwork & Roth, Theorem A.1)",
    ),
)

GAUSSIAN_SIGMA_CASES = [(2, 0.5, 1e-5), (1, 0.8, 1e-6), (4, 0.1, 1e-5), (10, 0.9, 1e-8), (30, 0.25, 1e-3)]
# Their right answers (tests/test_exercises.py finds the L2 sensitivity by enumerating the corners of the domain)
GAUSSIAN_SIGMA_ANSWERS = [
    16.78289773521922,
    9.367047997260958,
    108.33313904934369,
    22.502788153610044,
    84.10619263558407,
]


def _gaussian_cases(rng):
    """Five cases (d, epsilon < 1, delta) of a graded run, d from 1 to 30."""
    d = [1, *rng.integers(2, 31, size=4).tolist()]
    return [(k, float(np.round(rng.uniform(0.05, 0.95), 3)), float(10.0 ** -rng.integers(3, 10))) for k in d]


def check_gaussian_sigma(gaussian_sigma, seed=None, solutions=None):
    """``gaussian_sigma(n_features, epsilon, delta)``: the Gaussian variant of one release (epsilon < 1).

    The noise standard deviation of the classic Gaussian mechanism (Dwork & Roth,
    Thm A.1: sigma = Delta_2 sqrt(2 ln(1.25/delta)) / epsilon) for the sums and counts
    of Exercise 1 on [0, 1]^d, with its L2 sensitivity. Checked on five cases (d from 1
    to 30), relative tolerance 1e-9, naming the typical mistakes of
    ``GAUSSIAN_SIGMA_MISTAKES``; a graded run draws five others from ``seed`` and
    compares with the teacher's ``solutions["gaussian_sigma"]`` (:func:`~._core.answer_key`).

    Examples
    --------
    >>> check_gaussian_sigma(lambda d, epsilon, delta: 1.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpclust.exercises._core.ExerciseError: the Gaussian mechanism's sigma: <lambda>(2, 0.5, 1e-05) is not right ...
    """
    cases, reference = answer_key(
        GAUSSIAN_SIGMA_CASES, GAUSSIAN_SIGMA_ANSWERS, _gaussian_cases, seed, solutions, "gaussian_sigma"
    )
    return check_function(
        "the Gaussian mechanism's sigma",
        gaussian_sigma,
        reference,
        cases,
        rtol=1e-9,
        mistakes=[(f, hint) for _, f, hint in GAUSSIAN_SIGMA_MISTAKES],
        hint="find the largest L2 norm of the change one record makes to the released vector (all sums and "
        "counts), then apply the classic Gaussian mechanism",
    )

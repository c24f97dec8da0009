"""LDPKModes (Peng et al. 2021): contract, accounting, Alg. 2-4 against the library primitives, bad input.

The report mechanism itself (Alg. 1) is tested against its exact output
probabilities in test_privacy.py and the estimator it feeds in test_frequency.py;
here the user-side function is checked to be that mechanism, bit for bit.
"""

import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from dpclust_lib import KModes, LDPKModes, PrivacyLeakWarning, frequency, mechanisms
from dpclust_lib.cluster.kmodes import frequent_value_centres
from dpclust_lib.cluster.ldpk_modes import (
    materialise,
    server_aggregate,
    server_cluster,
    server_synthetic_data,
    user_perturb,
)

SIZES = (3, 2, 3)


def _data(rng, n=600):
    """Three groups over the {3,2,3} domain of D1, with 15% of values replaced at random."""
    base = np.array([[0, 0, 0], [2, 1, 2], [1, 0, 1]])
    X = base[rng.integers(0, 3, n)]
    noise = rng.random(X.shape) < 0.15
    return np.where(noise, rng.integers(0, 2, X.shape) * (np.array(SIZES) - 1), X)


def _fit(X, seed=0, **kw):
    params = dict(n_clusters=3, epsilon=1.0, budget="per_attribute", max_iter=5, domain_sizes=SIZES, random_state=seed)
    params |= kw
    return LDPKModes(**params).fit(X)


# --------------------------------------------------------------------------- contract


def test_hyper_parameters_are_stored_as_given():
    est = LDPKModes(
        n_clusters=4, epsilon=0.5, max_iter=3, projection=False, rounding="none", domain_sizes=[2, 2], random_state=7
    )
    assert (
        est.n_clusters,
        est.epsilon,
        est.max_iter,
        est.projection,
        est.rounding,
        est.domain_sizes,
        est.random_state,
    ) == (4, 0.5, 3, False, "none", [2, 2], 7)
    assert not any(k.endswith("_") for k in vars(est))


def test_fitted_attributes(rng):
    X = _data(rng)
    est = _fit(X)
    assert est.cluster_centers_.shape == (3, 3) and est.cluster_centers_.dtype == np.int64
    assert est.initial_centers_.shape == (3, 3)
    assert est.predict(X).shape == (len(X),)
    assert not hasattr(est, "labels_")  # the server cannot know the users' labels
    assert 1 <= est.n_iter_ <= 5
    assert est.raw_estimate_.shape == SIZES and est.estimate_.shape == SIZES
    assert list(est.synthetic_data_.columns) == ["x0", "x1", "x2", "count"]
    assert est.domain_sizes_ == SIZES


def test_fit_predict_and_unfitted_predict(rng):
    X = _data(rng)
    np.testing.assert_array_equal(
        LDPKModes(3, budget="per_attribute", domain_sizes=SIZES, random_state=1).fit_predict(X),
        _fit(X, seed=1).predict(X),
    )
    with pytest.raises(AttributeError, match="not fitted"):
        LDPKModes(3).predict(X)


def test_dataframe_input_names_the_synthetic_columns(rng):
    X = pd.DataFrame(_data(rng), columns=["cylinders", "model_year", "origin"])
    est = _fit(X)
    assert list(est.synthetic_data_.columns) == ["cylinders", "model_year", "origin", "count"]


def test_same_seed_same_result_bit_for_bit(rng):
    X = _data(rng)
    a, b = _fit(X, seed=11), _fit(X, seed=11)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    np.testing.assert_array_equal(a.raw_estimate_, b.raw_estimate_)
    pd.testing.assert_frame_equal(a.synthetic_data_, b.synthetic_data_)
    c = _fit(X, seed=np.random.default_rng(11))  # a Generator seeded alike gives the same stream
    np.testing.assert_array_equal(a.raw_estimate_, c.raw_estimate_)
    assert not np.array_equal(a.raw_estimate_, _fit(X, seed=12).raw_estimate_)


# --------------------------------------------------------------------------- privacy accounting


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_epsilon_spent_and_the_plain_ldp_level(rng, eps):
    """budget="total" (the default): epsilon is the whole guarantee, the d-privacy unit epsilon / m rounded down;
    budget="per_attribute" (the paper's): epsilon is the unit and m epsilon, rounded up, the guarantee."""
    m = len(SIZES)
    total = _fit(_data(rng), epsilon=eps, budget="total")
    assert Fraction(total.d_epsilon_) * m <= Fraction(eps) and total.d_epsilon_ == pytest.approx(eps / m)
    assert Fraction(total.epsilon_spent_) <= Fraction(total.epsilon_guaranteed_) <= Fraction(eps)
    paper = _fit(_data(rng), epsilon=eps)
    assert paper.d_epsilon_ == eps
    assert Fraction(paper.epsilon_guaranteed_) >= m * Fraction(eps) and paper.epsilon_guaranteed_ == pytest.approx(
        m * eps
    )
    assert paper.epsilon_spent_ == paper.epsilon_guaranteed_ == paper.ldp_epsilon_
    assert paper.neighbouring_ == "any two records of one user"
    assert len(paper.ledger_.entries) == 1 and paper.ledger_.spent == paper.epsilon_spent_


def test_the_ldp_level_is_the_worst_probability_ratio_of_a_report():
    """m * eps is exactly the largest ratio Pr[y|x] / Pr[y|x'] over all inputs and outputs."""
    eps = 0.7
    P = mechanisms.hamming_rr_matrix(SIZES, eps)
    worst = np.log((P[:, None, :] / P[None, :, :]).max())
    est = LDPKModes(3, epsilon=eps, budget="per_attribute", domain_sizes=SIZES, random_state=0).fit(_all_cells())
    assert est.ldp_epsilon_ == pytest.approx(worst)
    assert est.epsilon_guaranteed_ == pytest.approx(worst)


def _all_cells():
    return frequency.joint_records(np.arange(int(np.prod(SIZES))), SIZES)


def test_user_side_is_the_hamming_randomized_response_bit_for_bit(rng):
    X = _data(rng)
    a = user_perturb(X, SIZES, 0.8, np.random.default_rng(5))
    b = mechanisms.hamming_rr_perturb(X, SIZES, 0.8, np.random.default_rng(5))
    np.testing.assert_array_equal(a, b)


def test_domain_taken_from_the_data_warns(rng):
    with pytest.raises(ValueError, match="domain_sizes is required"):
        LDPKModes(3, random_state=0).fit(_data(rng))
    with pytest.warns(PrivacyLeakWarning, match="domain_sizes"):
        est = LDPKModes(3, domain_sizes="data", random_state=0).fit(_data(rng))
    assert est.epsilon_guaranteed_ == float("inf")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _fit(_data(rng))


# --------------------------------------------------------------------------- Alg. 2


def test_aggregate_is_the_inverse_of_the_dense_transition_matrix(rng):
    """Alg. 2 line 11 (c_hat = P^-1 c*) with the dense matrix of Eq. 8, against the Kronecker inverse."""
    X = _data(rng)
    eps = 0.9
    reports = user_perturb(X, SIZES, eps, 3)
    c_star = np.bincount(frequency.joint_index(reports, SIZES), minlength=18).astype(float)
    P = mechanisms.hamming_rr_matrix(SIZES, eps)
    dense = np.linalg.solve(P.T, c_star)
    raw, counts = server_aggregate(reports, SIZES, eps)
    np.testing.assert_allclose(raw.ravel(), dense, rtol=1e-10, atol=1e-8)
    np.testing.assert_array_equal(counts, frequency.clip_and_normalise(raw, len(X), rounding="ceil"))


def test_projection_false_keeps_the_raw_estimate(rng):
    X = _data(rng, n=100)
    raw, counts = server_aggregate(user_perturb(X, SIZES, 0.2, 4), SIZES, 0.2, projection=False)
    np.testing.assert_array_equal(raw, counts)
    assert counts is not raw
    assert counts.sum() == pytest.approx(100) and (counts < 0).any()  # signed at a small epsilon


@pytest.mark.parametrize("rounding", ["ceil", "none", "largest_remainder"])
def test_projection_gives_counts_of_about_n(rng, rounding):
    X = _data(rng, n=300)
    est = _fit(X, epsilon=0.3, rounding=rounding)
    c = est.estimate_
    assert (c >= 0).all()
    positive = int((c > 0).sum())
    if rounding == "ceil":  # the paper's rounding up: between n and n + (number of positive cells)
        assert np.issubdtype(c.dtype, np.integer) and 300 <= c.sum() <= 300 + positive
    else:
        assert c.sum() == pytest.approx(300)
    assert est.synthetic_data_["count"].sum() == pytest.approx(c.sum())


def test_large_epsilon_recovers_the_true_histogram(rng):
    X = _data(rng)
    est = _fit(X, epsilon=25.0, rounding="none")
    truth = frequency.LDPFO(SIZES, 1.0).count(X).counts
    np.testing.assert_allclose(est.raw_estimate_, truth, atol=1e-6)
    rows, counts = np.unique(X, axis=0, return_counts=True)
    np.testing.assert_array_equal(est.synthetic_data_[["x0", "x1", "x2"]].to_numpy(), rows)
    np.testing.assert_allclose(est.synthetic_data_["count"], counts, atol=1e-6)


# --------------------------------------------------------------------------- Alg. 3


def test_synthetic_records_decode_the_joint_index():
    counts = np.zeros(SIZES)
    counts[0, 1, 2], counts[2, 0, 0], counts[1, 1, 1] = 3, 1, 2
    records, weights = server_synthetic_data(counts, SIZES)
    np.testing.assert_array_equal(records, [[0, 1, 2], [1, 1, 1], [2, 0, 0]])  # joint-index order
    np.testing.assert_array_equal(weights, [3, 2, 1])
    np.testing.assert_array_equal(frequency.joint_index(records, SIZES), np.flatnonzero(counts))
    rows = materialise(records, weights)
    assert rows.shape == (6, 3)
    np.testing.assert_array_equal(frequency.LDPFO(SIZES, 1.0).count(rows).counts, counts)


def test_every_cell_round_trips():
    cells = int(np.prod(SIZES))
    records, weights = server_synthetic_data(np.arange(1, cells + 1), SIZES)
    np.testing.assert_array_equal(records, _all_cells())
    np.testing.assert_array_equal(frequency.joint_index(records, SIZES), np.arange(cells))


def test_materialised_rows_give_the_same_kmodes_as_weighted_records(rng):
    est = _fit(_data(rng), epsilon=0.5)
    syn = est.synthetic_data_
    records, weights = syn[["x0", "x1", "x2"]].to_numpy(), syn["count"].to_numpy()
    rows = materialise(records, weights)
    a = KModes(3, init=est.initial_centers_, max_iter=5, domain_sizes=SIZES).fit(rows)
    b = KModes(3, init=est.initial_centers_, max_iter=5, domain_sizes=SIZES).fit(records, sample_weight=weights)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)


# --------------------------------------------------------------------------- Alg. 4 and the whole protocol


@pytest.mark.parametrize("projection", [True, False])
def test_fit_is_the_user_and_server_functions_in_sequence(rng, projection):
    X, eps, seed = _data(rng), 0.6, 21
    est = _fit(X, seed=seed, epsilon=eps, projection=projection)
    g = np.random.default_rng(seed)
    raw, counts = server_aggregate(user_perturb(X, SIZES, eps, g), SIZES, eps, projection)
    records, weights = server_synthetic_data(counts, SIZES)
    state = g.bit_generator.state
    centres, initial, n_iter = server_cluster(records, weights, SIZES, 3, 5, g)
    np.testing.assert_array_equal(est.raw_estimate_, raw)
    np.testing.assert_array_equal(est.cluster_centers_, centres)
    np.testing.assert_array_equal(est.initial_centers_, initial)
    assert est.n_iter_ == n_iter
    if projection:  # non-negative weights: the public Alg. 4 pieces give the same
        g2 = np.random.default_rng(0)
        g2.bit_generator.state = state
        np.testing.assert_array_equal(initial, frequent_value_centres(records, 3, g2, weights, SIZES))
        km = KModes(3, init=initial, max_iter=5, domain_sizes=SIZES).fit(records, sample_weight=weights)
        np.testing.assert_array_equal(centres, km.cluster_centers_)
        assert n_iter == km.n_iter_


def test_signed_weights_equal_their_positive_and_negative_parts(rng):
    """Without projection the value counts are linear in the weights: splitting every record into a
    positive and a negative copy changes nothing."""
    est = _fit(_data(rng, n=200), epsilon=0.2, projection=False)
    syn = est.synthetic_data_
    records, w = syn[["x0", "x1", "x2"]].to_numpy(), syn["count"].to_numpy()
    assert (w < 0).any()
    # Multiples of 2^-20 below 2^20: every sum below is then exact in any order, so a near-tie between two
    # values' counts cannot be broken one way by one order of summation and the other way by the other.
    w = np.round(w * 2.0**20) / 2.0**20
    doubled = np.vstack([records, records])
    w2 = np.concatenate([np.where(w > 0, 2 * w, -w), np.where(w > 0, -w, 2 * w)])
    a, _, _ = server_cluster(records, w, SIZES, 3, 5, 3)
    b, _, _ = server_cluster(doubled, w2, SIZES, 3, 5, 3)
    np.testing.assert_array_equal(a, b)


def test_without_noise_it_is_kmodes_on_the_users_records(rng):
    """At a huge epsilon the synthetic data is the users' data, so the centres are those of k-modes on
    the true records from the same initial centres."""
    X = _data(rng, n=3000)
    est = _fit(X, epsilon=25.0, rounding="none")
    km = KModes(3, init=est.initial_centers_, max_iter=5, domain_sizes=SIZES).fit(X)
    np.testing.assert_array_equal(est.cluster_centers_, km.cluster_centers_)
    np.testing.assert_array_equal(est.predict(X), km.labels_)


def test_small_epsilon_and_few_users_still_give_k_centres(rng):
    """At a tiny epsilon the synthetic data can miss a value of an attribute altogether; the
    frequent values are then ranked over the public domain, so K candidates always exist."""
    X = _data(rng, n=40)
    for seed in range(30):
        for projection in (True, False):
            est = _fit(X, seed=seed, epsilon=0.02, projection=projection)
            assert len({tuple(c) for c in est.initial_centers_}) == 3


# --------------------------------------------------------------------------- bad input

GOOD = np.array([[0, 0, 0], [2, 1, 2], [1, 0, 1], [0, 1, 2]] * 5)


@pytest.mark.parametrize(
    "kwargs, X, exc, needle",
    [
        (dict(n_clusters=0), GOOD, ValueError, "n_clusters"),
        (dict(n_clusters=-2), GOOD, ValueError, "n_clusters"),
        (dict(n_clusters=2.0), GOOD, TypeError, "n_clusters"),
        (dict(n_clusters=21), GOOD, ValueError, "larger than the number of records"),
        (
            dict(n_clusters=3, epsilon=25.0, budget="per_attribute"),
            np.array([[0, 0, 0], [2, 1, 2]] * 5),
            ValueError,
            "larger than the number of distinct synthetic records",
        ),
        (dict(), np.vstack([GOOD, [[0, np.nan, 0]]]), TypeError, "integer category codes"),
        (dict(), GOOD.astype(float), TypeError, "integer category codes"),
        (dict(), GOOD[:, :2], ValueError, "attributes"),
        (dict(), GOOD[:, 0], ValueError, "2-D"),
        (dict(), np.zeros((0, 3), dtype=int), ValueError, "empty"),
        (dict(epsilon=0.0), GOOD, ValueError, "epsilon"),
        (dict(epsilon=-1.0), GOOD, ValueError, "epsilon"),
        (dict(epsilon=float("nan")), GOOD, ValueError, "epsilon"),
        (dict(epsilon=float("inf")), GOOD, ValueError, "epsilon"),
        (dict(epsilon="1"), GOOD, TypeError, "epsilon"),
        (dict(max_iter=0), GOOD, ValueError, "max_iter"),
        (dict(projection="yes"), GOOD, TypeError, "projection"),
        (dict(projection=1), GOOD, TypeError, "projection"),
        (dict(rounding="floor"), GOOD, ValueError, "rounding"),
        (dict(domain_sizes=(3, 1, 3)), GOOD, ValueError, "domain_sizes"),
        (dict(random_state=-1), GOOD, ValueError, "random_state"),
    ],
)
def test_bad_input(kwargs, X, exc, needle):
    params = dict(n_clusters=2, epsilon=1.0, domain_sizes=SIZES, random_state=0) | kwargs
    with pytest.raises(exc, match=needle):
        LDPKModes(**params).fit(X)


@pytest.mark.parametrize(
    "call, exc, needle",
    [
        (lambda: server_synthetic_data(np.ones(17), SIZES), ValueError, "17 cells"),
        (lambda: server_synthetic_data(np.full(18, np.nan), SIZES), ValueError, "NaN"),
        (lambda: materialise(_all_cells()[:2], [1.5, 2.0]), ValueError, "non-negative integers"),
        (lambda: materialise(_all_cells()[:2], [-1.0, 2.0]), ValueError, "non-negative integers"),
        (lambda: server_cluster(_all_cells()[:2], [-1.0, 0.0], SIZES, 1, 5), ValueError, "no positive"),
        (lambda: server_cluster(_all_cells()[:2], [1.0], SIZES, 1, 5), ValueError, "weights has 1 entries"),
        (lambda: server_aggregate(_all_cells(), SIZES, 1.0, projection="clip"), TypeError, "projection"),
    ],
)
def test_bad_input_to_the_server_functions(call, exc, needle):
    with pytest.raises(exc, match=needle):
        call()

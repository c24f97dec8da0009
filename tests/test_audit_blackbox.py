"""The black-box audit: honest estimators stay under their claims, under-noised ones and DPBirch do not.

Every audit here runs at a fixed random_state, so a test's outcome is fixed; the confidence levels
are chosen so that the outcome would also hold for almost any other seed (a change of the noise
sampler changes every draw): 0.999 per honest estimator, so a correct library fails one of the
nine with probability at most about 1%.
"""

import doctest
import math
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from dpclust_lib import DPBirch, DPBirchPublicTree, DPKMeans
from dpclust_lib.audit import blackbox
from dpclust_lib.audit.blackbox import (
    audit_release,
    blackbox_audit,
    blackbox_cases,
    blackbox_table,
    clopper_pearson,
    threshold_audit,
)

HONEST = [c for c in blackbox_cases() if c.estimator != "DPBirch"]
# Fits per side: 0.3-1 ms a fit on these data sets; 1000 a side (600 for the slowest) keeps each audit
# at one to two seconds.
N_FITS = {"DPBirchPublicTree": 600, "LDPKModes": 600, "DPQTKMeans": 600}
# Power: EUGKMeans releases the corner cell's count with all of epsilon, so its audit must see a good part
# of it (0.4-0.7 at these sizes); a statistic or a pipeline that had gone blind would show 0.
POWER = {"EUGKMeans": 0.2}


def _case(name):
    return next(c for c in blackbox_cases() if c.estimator == name)


# ---------------------------------------------------------------------------
# Honest estimators: the bound never exceeds what they guarantee
# ---------------------------------------------------------------------------


def test_cases_cover_every_private_estimator():
    names = {c.estimator for c in blackbox_cases()}
    assert names == {
        "DPKMeans",
        "IDPKMeans",
        "DPKMeansPP",
        "EUGKMeans",
        "DPQTKMeans",
        "DPKModes",
        "DPBirchPublicTree",
        "DPBirch",
        "LDPKModes",
        "SamplingLDPKModes",
    }


@pytest.mark.parametrize("case", blackbox_cases(), ids=lambda c: c.estimator)
def test_case_pairs_follow_the_estimators_neighbouring(case):
    """Central estimators: D' adds one record; local ones: D' replaces one user's record."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DPBirch's NegativeRadiusWarning: not what this test is about
        est = clone(case.template).set_params(random_state=0).fit(case.X)
    if est.neighbouring_ == "add/remove one record":
        assert case.X_prime.shape[0] == case.X.shape[0] + 1
        np.testing.assert_array_equal(case.X_prime[:-1], case.X)
    else:
        assert est.neighbouring_ == "any two records of one user"
        assert case.X_prime.shape == case.X.shape
        assert int(np.sum(np.any(case.X_prime != case.X, axis=1))) == 1


@pytest.mark.parametrize("case", HONEST, ids=lambda c: c.estimator)
def test_lower_bound_never_exceeds_the_guarantee(case):
    n_fits = N_FITS.get(case.estimator, 1000)
    r = blackbox_audit(case.template, case.X, case.X_prime, case.statistic, n_fits=n_fits, confidence=0.999)
    assert math.isfinite(r.epsilon_claimed) and r.epsilon_claimed > 0
    assert r.epsilon_lower_bound <= r.epsilon_claimed, (case.estimator, r)
    assert r.verdict == "consistent"
    assert r.n_d == r.n_d_prime == n_fits - n_fits // 2
    assert r.epsilon_lower_bound >= POWER.get(case.estimator, 0.0)


# ---------------------------------------------------------------------------
# The audit can fail: estimators that claim far less than they spend
# ---------------------------------------------------------------------------


class UnderNoisedDPKMeans(DPKMeans):
    """Fits with its ``epsilon`` (set large below) but claims 0.1: a broken accounting."""

    def fit(self, X, y=None):
        super().fit(X)
        self.epsilon_spent_ = self.epsilon_guaranteed_ = 0.1
        return self


class UnderNoisedDPBirchPublicTree(DPBirchPublicTree):
    def fit(self, X, y=None):
        super().fit(X)
        self.epsilon_spent_ = self.epsilon_guaranteed_ = 0.1
        return self


@pytest.mark.parametrize(
    "name, broken",
    [
        ("DPKMeans", UnderNoisedDPKMeans(1, epsilon=8.0, max_iter=1, bounds=(0.0, 1.0))),
        (
            "DPBirchPublicTree",
            UnderNoisedDPBirchPublicTree(
                1, epsilon=8.0, n_skeleton=50, threshold=0.2, branching_factor=4, bounds=(0, 1)
            ),
        ),
    ],
)
def test_under_noised_variant_is_caught(name, broken):
    case = _case(name)
    r = blackbox_audit(broken, case.X, case.X_prime, case.statistic, n_fits=300, confidence=0.999)
    assert r.epsilon_claimed == 0.1
    assert r.epsilon_lower_bound > 1.0  # ten times the claim, not a borderline call
    assert r.verdict == "violates"


def test_under_claimed_laplace_is_caught():
    """A Laplace mechanism of epsilon 1 that claims 0.5."""
    r = audit_release(_laplace(1.0), 0.0, 1.0, epsilon_claimed=0.5, n_fits=20_000)
    assert r.verdict == "violates"


# ---------------------------------------------------------------------------
# The paper's DPBirch: exact counts give it away
# ---------------------------------------------------------------------------


def test_dpbirch_exact_counts_leak():
    """The total released N is the number of records: every D' run hits, no D run does.

    The bound is then ln(p / (1 - p)) with p = (alpha / 2)^(1 / m), m evaluation runs a side:
    about ln(m / ln(2 / alpha)), 2.54 at m = 100 and alpha = 0.001, far above the 2 epsilon = 1
    that DPBirch's accounting reports at epsilon = 0.5.
    """
    case = _case("DPBirch")
    eps = case.template.epsilon
    assert eps == 0.5
    r = blackbox_audit(case.template, case.X, case.X_prime, case.statistic, n_fits=200, confidence=0.999)
    assert (r.hits_d, r.hits_d_prime, r.favoured) == (0, r.n_d_prime, "D'")
    p = (0.001 / 2) ** (1 / r.n_d_prime)
    assert r.epsilon_lower_bound == pytest.approx(math.log(p / (1 - p)), rel=1e-9)
    assert r.epsilon_lower_bound > 2 * (2 * eps)
    assert r.epsilon_spent == 2 * eps and r.epsilon_claimed == math.inf


# ---------------------------------------------------------------------------
# The statistics machinery against closed forms
# ---------------------------------------------------------------------------


def _laplace(epsilon):
    def release(x, rng, size):
        return x + rng.laplace(0.0, 1.0 / epsilon, size)

    return release


def _attainable(epsilon, n_eval, alpha):
    """The bound at the expected hit counts of the event {value >= 1}: ratio e^epsilon, p = 1/2."""
    p, q = 0.5, 0.5 * math.exp(-epsilon)
    low = clopper_pearson(round(p * n_eval), n_eval, alpha / 2, upper=False)
    high = clopper_pearson(round(q * n_eval), n_eval, alpha / 2, upper=True)
    return math.log(low / high)


def test_laplace_mechanism_bound_is_close_to_epsilon():
    eps, n_fits = 1.0, 20_000
    attainable = _attainable(eps, n_fits // 2, 0.05)  # 0.92: what 10,000 evaluation draws a side can show
    assert 0.85 < attainable < eps
    r = audit_release(_laplace(eps), 0.0, 1.0, epsilon_claimed=eps, n_fits=n_fits, confidence=0.95)
    assert 0.5 * eps < r.epsilon_lower_bound <= eps
    assert r.verdict == "consistent"


def test_clopper_pearson_closed_forms():
    # All hits: the lower bound solves p^n = alpha; no hits: the upper bound solves (1 - q)^n = alpha.
    assert clopper_pearson(20, 20, 0.01, upper=False) == pytest.approx(0.01 ** (1 / 20))
    assert clopper_pearson(0, 20, 0.01, upper=True) == pytest.approx(1 - 0.01 ** (1 / 20))
    assert clopper_pearson(0, 20, 0.01, upper=False) == 0.0
    assert clopper_pearson(20, 20, 0.01, upper=True) == 1.0


def test_identical_distributions_give_zero():
    values = np.arange(100.0)
    assert threshold_audit(values, values).epsilon_lower_bound == 0.0


def test_seeds_are_distinct_recorded_and_replayable():
    case = _case("EUGKMeans")
    a = blackbox_audit(case.template, case.X, case.X_prime, case.statistic, n_fits=10, random_state=3)
    b = blackbox_audit(case.template, case.X, case.X_prime, case.statistic, n_fits=10, random_state=3)
    assert len(set(a.seeds_d + a.seeds_d_prime)) == 20
    assert (a.seeds_d, a.threshold, a.hits_d, a.hits_d_prime) == (b.seeds_d, b.threshold, b.hits_d, b.hits_d_prime)
    c = blackbox_audit(case.template, case.X, case.X_prime, case.statistic, n_fits=10, random_state=4)
    assert not set(a.seeds_d) & set(c.seeds_d)


def test_table_columns_and_verdicts():
    cases = [_case("DPBirch"), _case("EUGKMeans")]
    table = blackbox_table(cases, n_fits=50, confidence=0.95)
    assert list(table["estimator"]) == ["DPBirch", "EUGKMeans"]
    for column in ("epsilon_claimed", "epsilon_lower_bound", "n_fits", "seconds", "verdict", "above_spent"):
        assert column in table
    assert list(table["verdict"]) == ["consistent", "consistent"]  # DPBirch claims no finite epsilon
    assert table["above_spent"].iloc[0]  # but its bound exceeds the 2 epsilon it reports spending


def test_docstring_examples_run():
    result = doctest.testmod(blackbox, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------


def test_bad_n_fits_and_confidence():
    case = _case("EUGKMeans")
    args = (case.template, case.X, case.X_prime, case.statistic)
    for bad in (3, 0, 2.5, True):
        with pytest.raises(ValueError, match="n_fits"):
            blackbox_audit(*args, n_fits=bad)
    for bad in (0.0, 1.0, 1.5, -0.1, "0.9"):
        with pytest.raises(ValueError, match="confidence"):
            blackbox_audit(*args, n_fits=4, confidence=bad)
    with pytest.raises(ValueError, match="random_state"):
        blackbox_audit(*args, n_fits=4, random_state=-1)


def test_non_finite_statistic_is_named_and_no_data_is_echoed():
    X = np.full((5, 2), 0.123456789)
    X_prime = np.vstack([X, [[0.987654321, 0.987654321]]])

    def broken_centre(est):
        return math.nan if est.n_features_in_ == 2 and est.cluster_centers_.size else 0.0

    with pytest.raises(ValueError, match="broken_centre") as info:
        blackbox_audit(DPKMeans(1, epsilon=1.0, max_iter=1, bounds=(0, 1)), X, X_prime, broken_centre, n_fits=4)
    message = str(info.value)
    assert "non-finite" in message
    assert "0.123" not in message and "0.987" not in message
    with pytest.raises(ValueError, match="my_stat"):
        threshold_audit([0.0, 1.0, np.inf, 2.0], [0.0] * 4, statistic="my_stat")


def test_dpbirch_audit_is_not_run_on_a_fitted_template():
    """The template is cloned for each fit: auditing leaves it unfitted."""
    est = DPBirch(1, epsilon=0.5, threshold=0.2, branching_factor=4, bounds=(0, 1))
    case = _case("DPBirch")
    blackbox_audit(est, case.X, case.X_prime, case.statistic, n_fits=4)
    assert not hasattr(est, "tree_")

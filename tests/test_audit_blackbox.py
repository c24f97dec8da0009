"""The black-box audit: honest estimators stay under their claims, under-noised ones and DPBirch do not.

The fast version of the overview's table: every case at 500 fits a side (the table uses 2,000), at
confidence 0.999 per audit, so that a correct library fails one of the ten honest cases with
probability about 1% (the outcomes are fixed by the seeds; the level says how much a change of the
sampler's draws could move them). The same audits catch an under-noised variant of each family,
and the K = n boundary is audited for every private estimator, refusals and warnings included.
"""

import doctest
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from sklearn.base import clone

from dpclust_lib import DPKMeans, cluster
from dpclust_lib.audit import blackbox
from dpclust_lib.audit.blackbox import (
    audit_case,
    audit_release,
    blackbox_audit,
    blackbox_cases,
    blackbox_table,
    boundary_cases,
    clopper_pearson,
    count_bound,
    laplace_loss_threshold,
    perfect_test_bound,
    private_estimators,
    recover_sum_and_count,
    saturation_edge_case,
    threshold_audit,
)

CONFIDENCE = 0.999
N_FITS = 500  # honest cases (about a second each); the under-noised and boundary audits need fewer
N_BOUNDARY = 200
CASES = {c.estimator: c for c in blackbox_cases()}
HONEST = [name for name in CASES if name != "DPBirch"]


# ---------------------------------------------------------------------------
# Every private estimator has a case, and the pairs are the estimators' own neighbours
# ---------------------------------------------------------------------------


def test_every_private_estimator_has_a_case():
    """Discovered, not listed: an estimator exported by dpclust_lib.cluster that takes epsilon needs a case."""
    discovered = private_estimators()
    assert len(discovered) >= 10 and "DPKMeans" in discovered and "KMeans" not in discovered
    missing = sorted(set(discovered) - set(CASES))
    assert not missing, f"no black-box audit case for {missing}: add one to audit.blackbox.blackbox_cases"
    assert len(blackbox_cases()) == len(CASES)  # one case each


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_pairs_follow_the_estimators_neighbouring(name):
    """Central estimators: D' adds one record; local ones: D' replaces one user's record."""
    case = CASES[name]
    data = np.vstack([case.X, case.X_prime]) if case.per_report else case.X
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DPBirch's NegativeRadiusWarning: not what this test is about
        est = clone(case.template).set_params(random_state=0).fit(data)
    if est.neighbouring_ == "add/remove one record":
        assert case.X_prime.shape[0] == case.X.shape[0] + 1
        np.testing.assert_array_equal(case.X_prime[:-1], case.X)
    else:
        assert est.neighbouring_ == "any two records of one user"
        assert case.X_prime.shape == case.X.shape
        assert int(np.sum(np.any(case.X_prime != case.X, axis=1))) == 1


# ---------------------------------------------------------------------------
# Honest estimators: the bound never exceeds what they guarantee, and sees a good part of it
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", HONEST)
def test_lower_bound_never_exceeds_the_guarantee(name):
    r = audit_case(CASES[name], n_fits=N_FITS, confidence=CONFIDENCE)
    assert math.isfinite(r.epsilon_claimed) and r.epsilon_claimed > 0
    assert r.fixed_event and r.n_d == r.n_d_prime == N_FITS and r.refused_d == r.refused_d_prime == 0
    assert r.epsilon_lower_bound <= r.epsilon_claimed, (name, r)
    assert r.verdict == "consistent"
    # Power: a statistic that had gone blind shows 0; these show a good part of what 500 fits can.
    assert r.epsilon_lower_bound >= 0.25 * perfect_test_bound(r.epsilon_claimed, N_FITS, CONFIDENCE)


# ---------------------------------------------------------------------------
# The audit can fail: an under-noised variant of each family
# ---------------------------------------------------------------------------


def _under_noised(template, factor=8.0):
    """The template's class, fitted with ``factor`` times its epsilon but claiming what epsilon guarantees."""

    class UnderNoised(type(template)):
        def fit(self, X, y=None):
            claimed = self.epsilon
            self.epsilon = claimed * factor
            try:
                super().fit(X)
            finally:
                self.epsilon = claimed
            self.epsilon_guaranteed_ /= factor
            return self

    UnderNoised.__name__ = f"UnderNoised{type(template).__name__}"
    return UnderNoised(**template.get_params())


FAMILIES = [
    "DPKMeans",
    "EUGKMeans",
    "DPQTKMeans",
    "DPKModes",
    "DPBirchPublicTree",
    "LDPKModes",
    "SamplingLDPKModes",
    "LSHCoresetKMeans",
    "OneRoundLocalKMeans",
]
# DPKModes' release is an argmax: its event has probability 1/4 at most, so it needs more fits to show much.
# OneRoundLocalKMeans' event is rare under D when under-noised (q / 2 at 8 epsilon): 1,000 reports (cheap) show it.
UNDER_NOISED_FITS = {"DPKModes": 1000, "OneRoundLocalKMeans": 1000}


@pytest.mark.parametrize("name", FAMILIES)
def test_under_noised_variant_is_caught(name):
    case = CASES[name]
    broken = blackbox.BlackBoxCase(**{**vars(case), "template": _under_noised(case.template)})
    r = audit_case(broken, n_fits=UNDER_NOISED_FITS.get(name, 100), confidence=CONFIDENCE)
    assert r.epsilon_claimed == pytest.approx(case.template.epsilon)
    assert r.verdict == "violates", r
    assert r.epsilon_lower_bound > 1.5 * r.epsilon_claimed  # not a borderline call


def test_under_claimed_laplace_is_caught():
    """A Laplace mechanism of epsilon 1 that claims 0.5."""
    r = audit_release(_laplace(1.0), 0.0, 1.0, epsilon_claimed=0.5, n_fits=20_000)
    assert r.verdict == "violates"


def test_a_data_dependent_refusal_is_caught():
    """The issue's leak: refusing K larger than the true number of records. D has K records, D' one fewer."""

    class RefusesBelowK(DPKMeans):
        def fit(self, X, y=None):
            if self.n_clusters > len(X):
                raise ValueError(f"n_clusters={self.n_clusters} is larger than the number of records ({len(X)})")
            return super().fit(X)

    X = np.zeros((2, 1))
    est = RefusesBelowK(2, epsilon=1.0, max_iter=1, bounds=(0.0, 1.0))
    r = blackbox_audit(est, X, X[:1], _centre_sum, n_fits=N_BOUNDARY, confidence=CONFIDENCE)
    assert r.refused_d == 0 and r.refused_d_prime == N_BOUNDARY
    assert r.verdict == "violates" and r.epsilon_lower_bound > 2.0


# ---------------------------------------------------------------------------
# The K = n boundary: nothing observable depends on whether n reaches K
# ---------------------------------------------------------------------------


def _centre_sum(est):
    return float(np.sum(est.cluster_centers_))


def _boundary_pair(case, k):
    """D with K records and its neighbour under the estimator's relation (one fewer; or one replaced)."""
    if case.estimator in ("LDPKModes", "SamplingLDPKModes"):
        D = np.repeat(case.X, k, axis=0)
        return D, np.vstack([D[:-1], case.X_prime])
    if case.estimator == "DPKModes":
        D = case.X[:k]
    else:
        D = np.zeros((k, case.X.shape[1]))
    return D, D[:-1]


BOUNDARY = [(name, k) for name in sorted(CASES) for k in (1, 2) if not (name == "SamplingLDPKModes" and k == 1)]


@pytest.mark.parametrize("name, k", BOUNDARY)
def test_k_equal_to_n_boundary_shows_no_more_than_the_claim(name, k):
    case = CASES[name]
    template = clone(case.template).set_params(n_clusters=k)
    D, D_prime = _boundary_pair(case, k)
    n_fits = 20 if name == "DPBirch" else N_BOUNDARY  # the paper's DPBirch claims nothing: only refusals matter
    r = blackbox_audit(template, D, D_prime, _centre_sum, n_fits=n_fits, confidence=CONFIDENCE, random_state=k)
    claim = r.epsilon_claimed
    assert r.epsilon_lower_bound <= claim, r
    # A refusal and a warning are outputs too: each, as an event, shows no more than the claim either way.
    for a, b in ((r.refused_d, r.refused_d_prime), (r.warned_d, r.warned_d_prime)):
        shown = max(count_bound(a, n_fits, b, n_fits, CONFIDENCE), count_bound(b, n_fits, a, n_fits, CONFIDENCE))
        assert shown <= claim, r
    if claim < math.inf and name not in ("LDPKModes", "SamplingLDPKModes"):
        assert r.refused_d == r.refused_d_prime == 0  # a central estimator refuses neither side: n is private


# ---------------------------------------------------------------------------
# The paper's DPBirch: exact counts give it away
# ---------------------------------------------------------------------------


def test_dpbirch_exact_counts_leak():
    """The total released N is the number of records: every D' fit hits, no D fit does.

    The bound is then ln(p / (1 - p)) with p = (alpha / 2)^(1 / m), m fits a side: about
    ln(m / ln(2 / alpha)), 2.5 at m = 100 and alpha = 0.001, far above the 2 epsilon = 1 that
    DPBirch's accounting reports at epsilon = 0.5.
    """
    case = CASES["DPBirch"]
    eps = case.template.epsilon
    r = audit_case(case, n_fits=100, confidence=CONFIDENCE)
    assert (r.hits_d, r.hits_d_prime, r.favoured) == (0, 100, "D'")
    p = (0.001 / 2) ** (1 / 100)
    assert r.epsilon_lower_bound == pytest.approx(math.log(p / (1 - p)), rel=1e-9)
    assert r.epsilon_lower_bound > 2 * (2 * eps)
    assert r.epsilon_spent == 2 * eps and r.epsilon_claimed == math.inf


def test_table_columns_claims_and_verdicts():
    table = blackbox_table([CASES["DPBirch"], CASES["EUGKMeans"]], n_fits=30)
    assert list(table["estimator"]) == ["DPBirch", "EUGKMeans"]
    for column in ("claim", "epsilon_lower_bound", "perfect_test_expected", "ratio", "n_fits", "cpu_seconds"):
        assert column in table
    assert table["claim"].tolist() == [1.0, 1.0]  # DPBirch: its nominal 2 epsilon; it guarantees nothing
    assert table["epsilon_guaranteed"].iloc[0] == math.inf
    assert list(table["verdict"]) == ["violates", "consistent"]
    np.testing.assert_allclose(table["ratio"], table["epsilon_lower_bound"] / table["claim"])
    # audited side by side in two worker processes, the cases give the same table (their CPU times apart)
    parallel = blackbox_table([CASES["DPBirch"], CASES["EUGKMeans"]], n_fits=30, n_jobs=2)
    assert parallel.drop(columns="cpu_seconds").equals(table.drop(columns="cpu_seconds"))


# ---------------------------------------------------------------------------
# The machinery against closed forms
# ---------------------------------------------------------------------------


def _laplace(epsilon):
    def release(x, rng, size):
        return x + rng.laplace(0.0, 1.0 / epsilon, size)

    return release


def test_perfect_test_bound_is_the_best_extreme_event():
    """Against a brute force over the hit counts of events whose probabilities the claim allows exactly."""
    eps, n, alpha = 1.0, 400, 0.05
    best = 0.0
    for hits in range(1, n + 1):
        p = hits / n
        if p > 1 / (1 + math.exp(-eps)):
            break
        low = clopper_pearson(hits, n, alpha / 2, upper=False)
        high = clopper_pearson(hits * math.exp(-eps), n, alpha / 2, upper=True)
        best = max(best, math.log(low / high))
    assert perfect_test_bound(eps, n) == pytest.approx(best, abs=2e-3)
    assert perfect_test_bound(eps, 2000) < eps and perfect_test_bound(eps, 2000) > perfect_test_bound(eps, 200)


def test_laplace_mechanism_reaches_its_ceiling_with_a_fixed_event():
    """One Laplace count: the event {y >= 1} has p = 1/2 and ratio e^eps, the best a count allows."""
    eps, n = 1.0, 20_000
    threshold = laplace_loss_threshold([eps], n)
    assert 0.9 * eps < threshold < eps  # about the half-line beyond the neighbour's count (ratio e^eps)

    def loss(x, rng, size):
        y = x + rng.laplace(0.0, 1.0 / eps, size)
        return (np.abs(y) - np.abs(y - 1.0)) * eps

    r = audit_release(loss, 0.0, 1.0, epsilon_claimed=eps, n_fits=n, threshold=threshold)
    ceiling = math.log(clopper_pearson(n / 2, n, 0.025, False) / clopper_pearson(n / 2 / math.e, n, 0.025, True))
    assert r.verdict == "consistent" and r.epsilon_lower_bound == pytest.approx(ceiling, abs=0.05)


def test_recovery_of_grid_sums_and_counts_is_exact():
    """Random grid integers a, b behind S / N: the released double gives a / b back exactly, and S and N
    themselves when a and b have no common factor (otherwise the multiple nearest the expected count)."""
    rng = np.random.default_rng(0)
    gamma = 2.0**-19
    for _ in range(2000):
        b = int(rng.integers(71 * 2**19, 130 * 2**19))  # counts near the expected 100.5, as in an audit
        a = int(rng.integers(1, 2**19 * 20))
        S, N = a * gamma, b * gamma
        found = recover_sum_and_count(S / N, gamma, 100.5, 264.0)
        assert found is not None and Fraction(found[0]) / Fraction(found[1]) == Fraction(a, b)
        if math.gcd(a, b) == 1:
            assert found == (S, N)
    assert recover_sum_and_count(0.0, gamma, 100.5, 264.0) is None  # clipped to the domain
    assert recover_sum_and_count(math.pi / 10, gamma, 100.5, 264.0) is None  # no such ratio


def test_clopper_pearson_closed_forms():
    # All hits: the lower bound solves p^n = alpha; no hits: the upper bound solves (1 - q)^n = alpha.
    assert clopper_pearson(20, 20, 0.01, upper=False) == pytest.approx(0.01 ** (1 / 20))
    assert clopper_pearson(0, 20, 0.01, upper=True) == pytest.approx(1 - 0.01 ** (1 / 20))
    assert clopper_pearson(0, 20, 0.01, upper=False) == 0.0
    assert clopper_pearson(20, 20, 0.01, upper=True) == 1.0


def test_identical_distributions_give_zero():
    values = np.arange(100.0)
    assert threshold_audit(values, values).epsilon_lower_bound == 0.0
    assert threshold_audit(values, values, threshold=50.0).epsilon_lower_bound == 0.0


def test_seeds_are_distinct_recorded_and_replayable():
    case = CASES["EUGKMeans"]
    a = audit_case(case, n_fits=10, random_state=3)
    b = audit_case(case, n_fits=10, random_state=3)
    assert len(set(a.seeds_d + a.seeds_d_prime)) == 20
    assert (a.seeds_d, a.threshold, a.hits_d, a.hits_d_prime) == (b.seeds_d, b.threshold, b.hits_d, b.hits_d_prime)
    c = audit_case(case, n_fits=10, random_state=4)
    assert not set(a.seeds_d) & set(c.seeds_d)


def test_docstring_examples_run():
    result = doctest.testmod(blackbox, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------


def test_bad_n_fits_confidence_and_threshold():
    case = CASES["EUGKMeans"]
    args = (case.template, case.X, case.X_prime, blackbox.count_loss(100))
    for bad in (3, 0, 2.5, True):
        with pytest.raises(ValueError, match="n_fits"):
            blackbox_audit(*args, n_fits=bad)
    for bad in (0.0, 1.0, 1.5, -0.1, "0.9"):
        with pytest.raises(ValueError, match="confidence"):
            blackbox_audit(*args, n_fits=4, confidence=bad)
    with pytest.raises(ValueError, match="random_state"):
        blackbox_audit(*args, n_fits=4, random_state=-1)
    for bad in (math.nan, math.inf, "1", True):
        with pytest.raises(ValueError, match="threshold"):
            blackbox_audit(*args, n_fits=4, threshold=bad)
    with pytest.raises(ValueError, match="ratios"):
        laplace_loss_threshold([0.0], 100)
    with pytest.raises(ValueError, match="epsilon"):
        perfect_test_bound(math.inf, 100)


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
        threshold_audit([0.0, 1.0, np.nan, 2.0], [0.0] * 4, statistic="my_stat")
    with pytest.raises(ValueError, match="my_stat"):
        threshold_audit([0.0, 1.0, -np.inf, 2.0], [0.0] * 4, statistic="my_stat")
    assert threshold_audit([0.0, 1.0, np.inf, 2.0], [0.0] * 4).n_fits == 4  # +inf: a refused fit, an outcome


def test_dpbirch_audit_is_not_run_on_a_fitted_template():
    """The template is cloned for each fit: auditing leaves it unfitted."""
    est = cluster.DPBirch(1, epsilon=0.5, threshold=0.2, branching_factor=4, bounds=(0, 1))
    case = CASES["DPBirch"]
    blackbox_audit(est, case.X, case.X_prime, case.statistic, n_fits=4)
    assert not hasattr(est, "tree_")


# --------------------------------------------------------------------------- the boundaries


@pytest.mark.parametrize("case", boundary_cases(), ids=lambda c: f"{c.estimator}: {c.setting.split(':')[0]}")
def test_the_boundaries_are_within_the_claim(case):
    """A record far outside the bounds or the schema, and K = n: no fit refuses, and the black-box bound on epsilon
    stays at most the claim (DPBirch claims nothing)."""
    r = audit_case(case, n_fits=200)
    assert r.refused_d == r.refused_d_prime == 0
    assert r.epsilon_lower_bound <= r.epsilon_claimed


@pytest.mark.slow
def test_the_saturation_edge_is_within_the_claim():
    """2^22 - 1 against 2^22 records in one cell of EUGKMeans' 1000 x 1000 grid at epsilon = 1: the release that
    refused the second showed a bound of about 2.3 at this many fits; the saturating one stays below its claim."""
    r = audit_case(saturation_edge_case(), confidence=CONFIDENCE)
    assert r.refused_d == r.refused_d_prime == 0 and r.n_d == 40
    assert r.epsilon_claimed == 1.0 and r.epsilon_lower_bound <= 1.0

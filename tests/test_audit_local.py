"""The exact local-DP audit: closed forms, sampler checks and empirical lower bounds.

Error rate: the statistical tests of this module run at a family-wise alpha of
1e-3 (Bonferroni inside ``local_audit_table``; the single tests below use
ALPHA each, and there are fewer than 20 of them), with fixed seeds, so a
correct library fails here with probability well under 2%, and the fixed seeds
make every run the same. The tests that must *detect* a broken sampler use
effects far larger than the test's resolution.
"""

import math

import numpy as np
import pytest

from dpclust_lib import frequency, mechanisms
from dpclust_lib.audit import local

ALPHA = 1e-3 / 20
MECHS = local.local_mechanisms()
IDS = [f"{m.name} {m.setting}" for m in MECHS]


@pytest.fixture(scope="module")
def table():
    return local.local_audit_table(alpha=1e-3, random_state=0)


def test_table_has_every_mechanism_and_every_verdict_is_tight(table):
    assert list(table.columns) == [
        "mechanism",
        "setting",
        "claimed_epsilon",
        "exact_epsilon",
        "empirical_lower_bound",
        "chi2_dof",
        "chi2_p_value",
        "verdict",
    ]
    assert {"GRR", "SUE", "OUE", "Hamming RR", "LDPFO"} <= set(table["mechanism"])
    assert (table["verdict"] == "tight").all(), table.to_string()
    assert (table["empirical_lower_bound"] <= table["claimed_epsilon"]).all()
    # The lower bound is not vacuous at these sample sizes: up to eps = 2 it reaches most of the claim.
    moderate = table[table["claimed_epsilon"] <= 2]
    assert (moderate["empirical_lower_bound"] > 0.75 * moderate["claimed_epsilon"]).all(), table.to_string()
    assert (moderate["chi2_dof"] > 0).all()


@pytest.mark.parametrize("mech", MECHS, ids=IDS)
def test_exact_worst_case_ratio_equals_the_claim(mech):
    assert math.isclose(local.exact_epsilon(mech), mech.claimed_epsilon, rel_tol=1e-9)


@pytest.mark.parametrize("mech", [m for m in MECHS if m.distance is not None], ids=lambda m: m.name)
def test_per_unit_distance_ratio_equals_epsilon(mech):
    """d-privacy of the Hamming RR: ln P[x,y] - ln P[x',y] <= eps d(x, x'), attained."""
    assert math.isclose(local.exact_distance_epsilon(mech), mech.per_distance_epsilon, rel_tol=1e-9)


@pytest.mark.parametrize("k, eps", [(2, 0.1), (3, 1.0), (7, 5.0), (3, 27.0)])
def test_grr_closed_form_by_hand(k, eps):
    """The definition's closed form against the textbook p = e^eps / (e^eps + k - 1), by hand."""
    P = np.exp(local.grr_log_p(k, eps))
    e = math.exp(eps)
    assert np.allclose(np.diag(P), e / (e + k - 1), rtol=1e-12)
    assert np.allclose(P[~np.eye(k, dtype=bool)], 1 / (e + k - 1), rtol=1e-12)
    assert math.isclose(local.exact_epsilon(local.LocalMechanism("GRR", "", eps, np.log(P), None)), eps, rel_tol=1e-9)


def test_library_matrices_agree_with_the_definitions():
    """The library's own matrices (built differently) against the audit's closed forms."""
    assert np.allclose(mechanisms.grr_matrix(5, 2.0), np.exp(local.grr_log_p(5, 2.0)), rtol=1e-12)
    P, _ = local.hamming_log_p((3, 2, 3), 0.5)
    assert np.allclose(mechanisms.hamming_rr_matrix((3, 2, 3), 0.5), np.exp(P), rtol=1e-12)
    # OUE, k = 2: output index b0 + 2 b1; input 0 -> bit 0 kept with p = 1/2, bit 1 set with q.
    q = 1 / (math.e + 1)
    expected = np.array([0.5 * (1 - q), 0.5 * (1 - q), 0.5 * q, 0.5 * q])
    assert np.allclose(np.exp(local.oue_log_p(2, 1.0))[0], expected, rtol=1e-12)


@pytest.mark.parametrize("mech", MECHS, ids=IDS)
def test_library_sampler_follows_the_closed_form(mech):
    _, _, p = local.chi2_sampler_test(mech, n_per_input=2000, random_state=1)
    assert p > ALPHA


def _broken_samplers():
    grr = next(m for m in MECHS if m.name == "GRR" and "k=5" in m.setting)
    oue = next(m for m in MECHS if m.name == "OUE" and "k=3" in m.setting)
    ham = next(m for m in MECHS if m.name == "LDPFO")
    sizes = (3, 2, 3)
    recs = np.array(list(np.ndindex(*sizes)))
    radix = np.array([6, 3, 1])
    return [
        ("GRR at 1.5 eps", grr, lambda x, n, rng: mechanisms.grr_perturb(np.full(n, x), 5, 3.0, rng)),
        # "other" drawn from all k values (can repeat x): keeps the truth too often.
        (
            "GRR other from all k",
            grr,
            lambda x, n, rng: np.where(
                rng.random(n) < mechanisms.grr_probabilities(5, 2.0)[0], x, rng.integers(0, 5, n)
            ),
        ),
        (
            "SUE probabilities for OUE",
            oue,
            lambda x, n, rng: (
                mechanisms.ue_perturb(mechanisms.unary_encode(np.full(n, x), 3), *mechanisms.sue_pq(1.0), rng).astype(
                    np.int64
                )
                @ [1, 2, 4]
            ),
        ),
        (
            "LDPFO at eps / m",
            ham,
            lambda x, n, rng: mechanisms.hamming_rr_perturb(np.tile(recs[x], (n, 1)), sizes, 0.5 / 3, rng) @ radix,
        ),
    ]


@pytest.mark.parametrize("name, mech, sampler", _broken_samplers(), ids=lambda v: v if isinstance(v, str) else "")
def test_chi2_test_catches_a_broken_sampler(name, mech, sampler):
    _, _, p = local.chi2_sampler_test(mech, n_per_input=2000, random_state=1, sampler=sampler)
    assert p < ALPHA, name


@pytest.mark.parametrize("mech", MECHS, ids=IDS)
def test_empirical_lower_bound_does_not_exceed_the_claim(mech):
    lower = local.empirical_epsilon_lower_bound(mech, n_samples=20000, alpha=ALPHA, random_state=2)
    assert 0 < lower <= mech.claimed_epsilon


def test_empirical_lower_bound_exposes_a_leaky_sampler():
    """A GRR sampler at twice the claimed epsilon: the bound from samples alone passes the claim."""
    grr = next(m for m in MECHS if m.name == "GRR" and "k=2" in m.setting)
    leaky = lambda x, n, rng: mechanisms.grr_perturb(np.full(n, x), 2, 2.0, rng)  # noqa: E731
    assert local.empirical_epsilon_lower_bound(grr, 20000, ALPHA, 2, sampler=leaky) > grr.claimed_epsilon


def test_table_fails_a_mechanism_that_claims_too_little():
    """The same closed form with a claim below its true ratio gets a FAIL verdict."""
    grr = next(m for m in MECHS if m.name == "GRR" and "k=2" in m.setting)
    under = local.LocalMechanism("GRR", "claimed 0.8", 0.8, grr.log_p, grr.sample)
    row = local.local_audit_table(mechanisms=[under]).iloc[0]
    assert row["verdict"].startswith("FAIL") and "exact ratio above the claim" in row["verdict"]
    assert row["exact_epsilon"] == pytest.approx(1.0)


@pytest.mark.parametrize("eps", [10.0, 25.0, 27.7])
def test_exact_ratio_at_large_epsilon_is_finite_and_tight(eps):
    """Near the numerical cap the library's probabilities still give exactly e^eps."""
    p, q = mechanisms.grr_probabilities(3, eps)
    assert math.isclose(math.log(p) - math.log(q), eps, rel_tol=1e-12)
    _, q_oue = mechanisms.oue_pq(eps)
    assert math.isclose(mechanisms.ue_epsilon(0.5, q_oue), eps, rel_tol=1e-9)
    assert math.isclose(frequency.LDPFO((2, 3), eps).ldp_epsilon, 2 * eps)
    assert math.isclose(
        local.exact_epsilon(local.LocalMechanism("OUE", "", eps, local.oue_log_p(3, eps), None)), eps, rel_tol=1e-9
    )


def test_public_names_are_exported_by_the_audit_package():
    import dpclust_lib.audit as audit

    assert audit.local_audit_table is local.local_audit_table
    assert audit.exact_epsilon is local.exact_epsilon


def test_small_cells_are_pooled_until_the_pool_expects_five():
    exp, obs = local._merge_small_cells(np.array([100.0, 1.0, 2.0, 3.0, 50.0]), np.array([98, 2, 1, 4, 51]))
    assert sorted(exp.tolist()) == [6.0, 50.0, 100.0] and sorted(obs.tolist()) == [7, 51, 98]
    exp, obs = local._merge_small_cells(np.array([10.0, 20.0]), np.array([9, 21]))
    assert exp.tolist() == [10.0, 20.0]

"""Audits of the privacy accounting: is what a release really loses at most what it claims?

``local``     exact audits of the local (LDP) mechanisms: worst-case output-probability
              ratios from closed forms, a chi-squared check of each sampler against them, and
              empirical lower bounds on epsilon from samples (Clopper-Pearson)
``coupling``  the coupling audit of the central (Laplace) estimators: run on D and on a
              neighbour D' with every Laplace release forced equal, then compare the outputs
              and add up the shift each release needed
``blackbox``  the output-only audit: many fits on a worst-case pair of neighbours with the budget on
              one release, an event on a statistic built from the mechanism's structure (fixed in
              advance, or chosen on half of the runs), a Clopper-Pearson lower bound on epsilon beside
              the bound a perfect test reaches at that number of fits
``floating``  Mironov's attack on textbook floating-point Laplace (the share of outputs that name
              their input), and the check that the default noise resists it
"""

from . import blackbox, coupling, floating, local
from .blackbox import BlackBoxResult, audit_case, blackbox_audit, blackbox_table, perfect_test_bound
from .coupling import CouplingResult, audit_neighbours, audit_table, coupled_loss
from .floating import mironov_attack, reachable_outputs
from .local import (
    LocalMechanism,
    chi2_sampler_test,
    empirical_epsilon_lower_bound,
    exact_distance_epsilon,
    exact_epsilon,
    local_audit_table,
    local_mechanisms,
)

__all__ = [
    "blackbox",
    "coupling",
    "floating",
    "local",
    "BlackBoxResult",
    "audit_case",
    "blackbox_audit",
    "blackbox_table",
    "perfect_test_bound",
    "mironov_attack",
    "reachable_outputs",
    "CouplingResult",
    "audit_neighbours",
    "audit_table",
    "coupled_loss",
    "LocalMechanism",
    "chi2_sampler_test",
    "empirical_epsilon_lower_bound",
    "exact_distance_epsilon",
    "exact_epsilon",
    "local_audit_table",
    "local_mechanisms",
]

"""Audits of the privacy accounting: is what a release really loses at most what it claims?

``local``     exact audits of the local (LDP) mechanisms: worst-case output-probability
              ratios from closed forms, a chi-squared check of each sampler against them, and
              empirical lower bounds on epsilon from samples (Clopper-Pearson)
``coupling``  the coupling audit of the central (Laplace) estimators: run on D and on a
              neighbour D' with every Laplace release forced equal, then compare the outputs
              and add up the shift each release needed
"""

from . import coupling, local
from .coupling import CouplingResult, audit_neighbours, audit_table, coupled_loss
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
    "coupling",
    "local",
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

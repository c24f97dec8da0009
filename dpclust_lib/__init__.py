"""dpclust_lib: the algorithms of five papers on differentially private clustering.

Modules, in import order (each imports only from those above it):

``validation``   parameter checks shared by every estimator (clear errors that name the parameter)
``noise``        exact discrete Laplace noise on a grid (the default) and Mironov's floating-point attack
``mechanisms``   the Laplace mechanism, GRR, unary encoding, Hamming-distance RR
``accounting``   the privacy budget ledger
``frequency``    local frequency oracles (GRR, OUE, LDPFO) with a user / server split
``metrics``      NICV, the papers' F-measures, AC, E, RI, ARI, RCP
``cluster``      the estimators, one module per paper's algorithm and per shared baseline,
                 exported here too
``audit``        audits of the privacy accounting (imported on demand)

The compendium's tooling (data, experiments, figures, batch runs, teaching) is the separate
package ``dpclust``, which depends on this one and never the other way.
"""

from . import accounting, cluster, frequency, mechanisms, metrics, noise
from .accounting import BudgetExceededError, PrivacyLedger
from .cluster import *  # noqa: F401,F403
from .frequency import GRR, LDPFO, OUE, UnaryEncoding
from .validation import PrivacyLeakWarning

__version__ = "0.2.0"

__all__ = [
    "accounting",
    "cluster",
    "frequency",
    "mechanisms",
    "metrics",
    "noise",
    "PrivacyLeakWarning",
    "GRR",
    "OUE",
    "LDPFO",
    "UnaryEncoding",
    "BudgetExceededError",
    "PrivacyLedger",
] + cluster.__all__

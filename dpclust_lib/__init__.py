"""dpclust_lib: the shared library of the dpclust executable papers on DP clustering.

Modules, in import order (each imports only from those above it):

``privacy``      Laplace mechanism, GRR, unary encoding, Hamming-distance RR, budget ledger
``frequency``    local frequency oracles (GRR, OUE, LDPFO) with a user / server split
``cluster``      the estimators (KModes, DPKModes, LDPKModes, ..., DPBirch), exported here too
``metrics``      NICV, the papers' F-measures, AC, E, RI, ARI, RCP
``datasets``     the data registry and each paper's preprocessing
``experiments``  sweeps, profiles, result tables, reproduction ledgers
``plotting``     metric-vs-epsilon figures (imported on demand)
``reproduce``    papermill batch runs (imported on demand; ``dpclust`` or ``python -m dpclust_lib``)
``environment``  the locked against the installed versions (imported on demand)
``exercises``    the notebooks' exercise checkers, one module per notebook (imported on demand)
"""

from . import cluster, datasets, experiments, frequency, metrics, privacy
from ._validation import PrivacyLeakWarning
from .cluster import *  # noqa: F401,F403
from .frequency import GRR, LDPFO, OUE, UnaryEncoding
from .privacy import BudgetExceededError, PrivacyLedger

__version__ = "0.1.0"

__all__ = [
    "cluster",
    "datasets",
    "experiments",
    "frequency",
    "metrics",
    "privacy",
    "PrivacyLeakWarning",
    "GRR",
    "OUE",
    "LDPFO",
    "UnaryEncoding",
    "BudgetExceededError",
    "PrivacyLedger",
] + cluster.__all__

"""dpclust_lib: the algorithms of five papers on differentially private clustering.

Modules, in import order (each imports only from those above it):

``validation``   parameter checks shared by every estimator (clear errors that name the parameter)
``noise``        exact discrete Laplace noise on a grid (the default) and Mironov's floating-point attack
``mechanisms``   the Laplace mechanism, GRR, unary encoding, Hamming-distance RR
``accounting``   the privacy budget: exact sequential composition, an accountant shared across fits
``frequency``    local frequency oracles (GRR, OUE, LDPFO) with a user / server split
``metrics``      NICV, the papers' F-measures, AC, E, RI, ARI, RCP
``cluster``      the estimators, one module per paper's algorithm and per shared baseline,
                 exported here too
``audit``        audits of the privacy accounting (imported on demand)

Each module, and each name exported here, is imported on first use: ``import dpclust_lib`` alone loads none
of them.

The compendium's tooling (data, experiments, figures, batch runs, teaching) is the separate
package ``dpclust``, which depends on this one and never the other way.
"""

import importlib

__version__ = "0.2.0"

# The modules and names are loaded on first use (PEP 562), so that ``import dpclust_lib.validation`` or
# ``dpclust_lib.mechanisms`` does not pay for scikit-learn and scipy.stats, which only the estimators need: every
# kernel and process that touches one module would otherwise import all of them (about 2 s).
_EXPORTED_MODULES = ["accounting", "cluster", "frequency", "mechanisms", "metrics", "noise"]  # in __all__
_MODULES = (*_EXPORTED_MODULES, "validation", "audit")
_NAMES = {
    "PrivacyLeakWarning": "validation",
    "BudgetExceededError": "accounting",
    "PrivacyLedger": "accounting",
    "BudgetAccountant": "accounting",
    "GRR": "frequency",
    "OUE": "frequency",
    "LDPFO": "frequency",
    "UnaryEncoding": "frequency",
}


def __getattr__(name):
    if name in _MODULES:
        return importlib.import_module(f".{name}", __name__)
    if name in _NAMES:
        return getattr(importlib.import_module(f".{_NAMES[name]}", __name__), name)
    cluster = importlib.import_module(".cluster", __name__)
    if name == "__all__":  # the modules, the names above and every estimator the cluster package exports
        return [*_EXPORTED_MODULES, *_NAMES, *cluster.__all__]
    if name in cluster.__all__:
        return getattr(cluster, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *_MODULES, *__getattr__("__all__")})

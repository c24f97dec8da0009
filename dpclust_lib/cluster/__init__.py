"""scikit-learn style clustering estimators: one module per paper's algorithm, one per shared baseline.

Every module is listed once, in :data:`MODULES`, with what it holds; the package exports the names of
each module's ``__all__`` (``from dpclust_lib.cluster import DPKMeans``). A module left out of the list
fails the tests.
"""

import importlib

MODULES = {
    "kmodes": "KModes (no privacy) and DPKModes (DP-modes-Lloyd, Nguyen 2018): a shared baseline",
    "ldpk_modes": "LDPKModes: LDPK-modes (Peng, Chen & Xun 2021)",
    "sampling_kmodes": "SamplingLDPKModes: LDP k-modes with attribute sampling (Zhang, Yuan, Mao & Zhu 2022)",
    "kmeans": "KMeans (no privacy) and DPKMeans (SuLQ DPk-means, Blum et al. 2005): a shared baseline",
    "idp_kmeans": "IDPKMeans: IDP k-means (Li, Hao, Wen & Xie 2013)",
    "dpkmeans_pp": "DPKMeansPP (DPk-means++): a shared baseline",
    "eug_kmeans": "EUGKMeans (EUGk-means, Su et al. 2016): a shared baseline",
    "dpqt_kmeans": "DPQTKMeans: DPQTk-means (Zhang & Cheng 2021)",
    "birch": "Birch (BIRCH, Zhang, Ramakrishnan & Livny 1996) and its CF tree: a shared baseline",
    "dp_birch": "DPBirch, DPBirchPublicTree: DPBIRCH (Wang, Zhang, Dong & Li)",
    "lsh_coreset": "LSHCoresetKMeans: the LSH private coreset of Google's DP library (Chang & Kamath 2021)",
    "one_round_local": "OneRoundLocalKMeans: one-round local k-means on a grid's heavy cells (after Chang et al. 2021)",
}

__all__ = []
for _name in MODULES:
    _module = importlib.import_module(f".{_name}", __name__)
    globals()[_name] = _module
    globals().update({name: getattr(_module, name) for name in _module.__all__})
    __all__ += _module.__all__

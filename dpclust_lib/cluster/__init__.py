"""scikit-learn style clustering estimators: one module per paper's algorithm, one per shared baseline.

The papers' algorithms:

``ldpk_modes``       LDPKModes -- LDPK-modes (Peng, Chen & Xun 2021)
``sampling_kmodes``  SamplingLDPKModes -- LDP k-modes with attribute sampling (Zhang, Yuan, Mao & Zhu 2022)
``dpqt_kmeans``      DPQTKMeans -- DPQTk-means (Zhang & Cheng 2021)
``idp_kmeans``       IDPKMeans -- IDP k-means (Li, Hao, Wen & Xie 2013)
``dp_birch``         DPBirch, DPBirchPublicTree -- DPBIRCH (Wang, Zhang, Dong & Li)

The shared baselines:

``kmeans``           KMeans (no privacy) and DPKMeans (SuLQ DPk-means, Blum et al. 2005)
``dpkmeans_pp``      DPKMeansPP (DPk-means++)
``eug_kmeans``       EUGKMeans (EUGk-means, Su et al. 2016)
``kmodes``           KModes (no privacy) and DPKModes (DP-modes-Lloyd, Nguyen 2018)
``birch``            Birch (BIRCH, Zhang, Ramakrishnan & Livny 1996) and its CF tree
"""

from . import (
    birch,
    dp_birch,
    dpkmeans_pp,
    dpqt_kmeans,
    eug_kmeans,
    idp_kmeans,
    kmeans,
    kmodes,
    ldpk_modes,
    sampling_kmodes,
)
from .birch import *  # noqa: F401,F403
from .dp_birch import *  # noqa: F401,F403
from .dpkmeans_pp import *  # noqa: F401,F403
from .dpqt_kmeans import *  # noqa: F401,F403
from .eug_kmeans import *  # noqa: F401,F403
from .idp_kmeans import *  # noqa: F401,F403
from .kmeans import *  # noqa: F401,F403
from .kmodes import *  # noqa: F401,F403
from .ldpk_modes import *  # noqa: F401,F403
from .sampling_kmodes import *  # noqa: F401,F403

__all__ = (
    kmodes.__all__
    + ldpk_modes.__all__
    + sampling_kmodes.__all__
    + kmeans.__all__
    + idp_kmeans.__all__
    + dpkmeans_pp.__all__
    + eug_kmeans.__all__
    + dpqt_kmeans.__all__
    + birch.__all__
    + dp_birch.__all__
)

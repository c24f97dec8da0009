"""scikit-learn style clustering estimators, one module per paper family.

``kmodes``           KModes (weighted), DPKModes (DP-modes-Lloyd)
``ldpk_modes``       LDPKModes (Peng et al. 2021)
``sampling_kmodes``  SamplingLDPKModes (Zhang et al. 2022)
``kmeans``           DP k-means family: DPKMeans, IDPKMeans, DPKMeansPP, EUGKMeans
``dpqt``             DPQTKMeans (Zhang & Cheng 2021)
``birch``            Birch, DPBirch (Wang et al.)
"""

from . import birch, dpqt, kmeans, kmodes, ldpk_modes, sampling_kmodes
from .birch import *  # noqa: F401,F403
from .dpqt import *  # noqa: F401,F403
from .kmeans import *  # noqa: F401,F403
from .kmodes import *  # noqa: F401,F403
from .ldpk_modes import *  # noqa: F401,F403
from .sampling_kmodes import *  # noqa: F401,F403

__all__ = kmodes.__all__ + ldpk_modes.__all__ + sampling_kmodes.__all__ + kmeans.__all__ + dpqt.__all__ + birch.__all__

"""The DP k-means family: DPKMeans, IDPKMeans, DPKMeansPP, EUGKMeans."""

__all__ = []

"""DPQTKMeans: DP quadtree histogram + k-means (Zhang & Cheng 2021)."""

__all__ = []

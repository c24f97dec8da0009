"""SamplingLDPKModes: LDP k-modes with attribute sampling (Zhang et al. 2022)."""

__all__ = []

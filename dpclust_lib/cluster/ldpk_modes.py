"""LDPKModes: k-modes under local d-privacy (Peng et al. 2021)."""

__all__ = []

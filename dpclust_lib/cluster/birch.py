"""Birch and DPBirch (Wang et al.)."""

__all__ = []

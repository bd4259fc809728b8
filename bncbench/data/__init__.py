"""Datasets: the typed table model, embedded sources and the registry."""

from bncbench.data.dataset import BIG_THRESHOLD, Dataset, from_codes

__all__ = ["BIG_THRESHOLD", "Dataset", "from_codes"]

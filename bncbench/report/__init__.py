"""The reporting stage: W-D-L tables with sign tests, geometric-mean and scatter
plots, convergence analysis, Friedman / Nemenyi, per-dataset tables, an index.

Entry points: :func:`bncbench.report.build.make_report` and
``python -m bncbench report RESULTS_DIR`` (:func:`bncbench.report.cli.main`).
See ``docs/reporting.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bncbench.report.stats import friedman, nemenyi_cd, sign_test, wdl, wdl_table  # noqa: F401

if TYPE_CHECKING:
    from bncbench.report.build import Report


def make_report(*args: Any, **kwargs: Any) -> Report:
    """:func:`bncbench.report.build.make_report`, imported when first called.

    Parameters
    ----------
    *args, **kwargs
        Passed on unchanged.

    Returns
    -------
    Report
        What the report builder wrote.

    Raises
    ------
    BNCBenchError
        As :func:`bncbench.report.build.make_report`.
    """
    from bncbench.report.build import make_report as _mk

    return _mk(*args, **kwargs)

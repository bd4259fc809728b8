"""The reporting stage: W-D-L tables with sign tests, geometric-mean and scatter
plots, convergence analysis, Friedman / Nemenyi, per-dataset tables, an index.

Entry points: :func:`bncbench.report.build.make_report` and
``python -m bncbench report RESULTS_DIR`` (:func:`bncbench.report.cli.main`).
See ``docs/reporting.md``.
"""

from bncbench.report.stats import friedman, nemenyi_cd, sign_test, wdl, wdl_table  # noqa: F401


def make_report(*args, **kwargs):
    from bncbench.report.build import make_report as _mk

    return _mk(*args, **kwargs)

"""``python -m bncbench report RESULTS_DIR [RESULTS_DIR ...] [options]``."""

from __future__ import annotations

import argparse

from bncbench.errors import BNCBenchError

EPILOG = """\
examples:
  python -m bncbench report results/zaidi2017
  python -m bncbench report results/quickstart --out reports/qs --reference NB --pairs TAN:NB KDB-1:NB
  python -m bncbench report results/zaidi2017 --pairs "NB^w:NB" "NB^w:NB^d" --metrics zero_one rmse train_time
  python -m bncbench report results/zaidi_dbl --supplement docs/reproductions/zaidi_dbl_completed/summary.csv
  python -m bncbench report results/pernkopf_mnist results/pernkopf_mnist_impute --out reports/mnist

Several results directories are read as one store, in the order given: a later store's record of a
task (same dataset, round, fold and model parameters) replaces an earlier one's; stores that split a
dataset differently (seed, folds, cv or holdout) or give one label to two models are refused.

Options given here override the `report:` section of the experiment's config
(results/<name>/hydra/run/.hydra/config.yaml, the first store's); see docs/reporting.md.
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit code 2, via BNCBenchError
        raise BNCBenchError(f"report: {message}")


def parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m bncbench report``.

    Returns
    -------
    argparse.ArgumentParser
        A parser whose usage errors raise :class:`~bncbench.errors.BNCBenchError` (``report: <message>``)
        instead of exiting.
    """
    p = _Parser(prog="python -m bncbench report", description="Tables and figures from an experiment's results.",
                epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results_dir", nargs="+", help="results/<name> of a run; several: stores of one experiment read "
                                                   "as one, a later store's record of a task replacing an earlier one's")
    p.add_argument("--out", help="output directory (default: reports/<name>, the first store's experiment)")
    p.add_argument("--config", help="config file with a report: section (default: the first store's Hydra config)")
    p.add_argument("--supplement", metavar="SUMMARY_CSV",
                   help="another run's summary.csv (a committed report's): its per-dataset means stand for the "
                        "(dataset, model) pairs the records lack or hold with fewer folds, models the records "
                        "lack included (by the parameters its params column names)")
    p.add_argument("--pairs", nargs="+", metavar="A:B", help="W-D-L pairs, e.g. 'NB^w:NB' (A's wins are counted)")
    p.add_argument("--reference", help="reference model (default: the first generative model)")
    p.add_argument("--metrics", nargs="+", help="W-D-L / geometric-mean metrics (zero_one rmse bias variance train_time ...)")
    p.add_argument("--models", nargs="+", help="report only these models")
    p.add_argument("--convergence-datasets", nargs="+", metavar="DATASET", help="datasets of the NLL curves")
    p.add_argument("--at", type=int, help="iteration of the convergence-histogram rule (default 5)")
    p.add_argument("--aggregate", choices=["median", "mean", "first"], help="how folds are aggregated in the histograms")
    p.add_argument("--friedman-metrics", nargs="+", help="metrics of the Friedman tests (default: zero_one rmse)")
    p.add_argument("--friedman-models", nargs="+", help="models of the Friedman tests (default: all)")
    p.add_argument("--big-threshold", type=int, metavar="ROWS",
                   help="Big datasets have more rows than this (default: 10,000, Zaidi et al. 2017)")
    p.add_argument("--subsets", nargs="+", metavar="SUBSET", help="dataset subsets: All Little Big (default: All Big)")
    p.add_argument("--no-figures", action="store_true", help="tables only")
    p.add_argument("--strict", action="store_true",
                   help="refuse a results directory with an unreadable record (default: name it and leave it out)")
    p.add_argument("-j", "--jobs", type=int, help="processes drawing figures (default: min(4, CPUs))")
    return p


def main(argv: list[str]) -> int:
    """``python -m bncbench report ARGS``: build the report of a results directory (or of several, read as one).

    Parameters
    ----------
    argv : list of str
        The arguments after ``report`` (see :func:`parser`); given options override the
        experiment's ``report:`` section.

    Returns
    -------
    int
        0 once the report is written.

    Raises
    ------
    BNCBenchError
        On a usage error, or any error of :func:`bncbench.report.build.make_report`.
    SystemExit
        For ``-h``/``--help`` (argparse prints the help and exits with 0).
    """
    args = parser().parse_args(list(argv))
    from bncbench.report.build import make_report

    overrides = {
        "config": args.config,
        "supplement": args.supplement,
        "pairs": args.pairs,
        "reference": args.reference,
        "metrics": args.metrics,
        "models": args.models,
        "convergence_datasets": args.convergence_datasets,
        "at": args.at,
        "aggregate": args.aggregate,
        "friedman_metrics": args.friedman_metrics,
        "friedman_models": args.friedman_models,
        "figures": False if args.no_figures else None,
        "big_threshold": args.big_threshold,
        "subsets": args.subsets,
        "n_jobs": args.jobs,
        "strict": args.strict,
    }
    make_report(args.results_dir, args.out, overrides=overrides)
    return 0

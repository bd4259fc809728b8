"""One fold of zaidi_dbl's models on a Big dataset, capped: set-up and per-iteration cost (issue 37).

    BNCBENCH_DATA_DIR=/work/shared/datasets/uci nice -n 5 python benchmarks/bench_big_fold.py \\
        --datasets connect-4 census-income --models DBL1 LR1 DBL2 LR2 DBL3 LR3 DBL2-one --maxiter 10 \\
        --timeout 900 --json big_fold.json

Each model is the one of ``conf/experiment/zaidi_dbl.yaml`` with that label, exactly as the
experiment runs it (DBLⁿ and LRⁿ: the authors' per-row penalty ``reg=rows, lam=0.01``), on the
training half of round ``--round``, fold ``--fold`` of the experiment's 5x2 CV, MDL-discretized on
that half as the runner does. Each (dataset, model) runs in a fresh single-threaded process
(numba, OpenMP, BLAS: 1 thread) after a warm-up fit on 200 rows (numba compiled).

``--maxiter K`` stops an optimized fit after K L-BFGS iterations; what is measured is then

* ``set-up`` = the fit's wall time minus the optimizer's (counts, estimates, the layout),
* ``CPU s / evaluation`` = the optimizer's time per evaluation of objective and gradient (a whole
  fit takes about 1.07 evaluations per iteration, ``EVALS_PER_ITER``; its first iterations more),
* the peak resident memory of the child (``ru_maxrss``) and its CPU time.

A fold's cost is then ``set-up + iterations x 1.07 x CPU s / evaluation`` for a number of iterations this script does
not know (a capped fit does not say where the uncapped one stops): ``--iters`` lists the counts to
extrapolate to (the Little datasets' median and maximum in the store, a whole connect-4 fit...). A
model without an optimizer (AnJE, AnDE, RF) is fitted whole. ``--timeout`` stops a child after that
many seconds (reported as stopped, with its peak memory). Prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _fold import PATH_LINE, THREADS  # this script's directory is on sys.path

CHILD = PATH_LINE + r"""
import json, sys, time
import numpy as np
from _fold import fold_inputs, warm_up
a = json.loads(sys.argv[1])
t_load = time.perf_counter()
fold = fold_inputs(a["experiment"], a["dataset"], a["label"], round=a["round"], fold=a["fold"],
                   maxiter=a["maxiter"])
load_s = time.perf_counter() - t_load
optimized = "optimizer" in fold.params
train = fold.train
if fold.params.get("model", "bnc") == "bnc":
    warm_up(fold, np.random.default_rng(0).permutation(train)[:200])  # numba compiled
clf = fold.estimator
t0, c0 = time.perf_counter(), time.process_time()
clf.fit(*fold.training)
fit_s, fit_cpu = time.perf_counter() - t0, time.process_time() - c0
out = {"n_train": int(len(train)), "load_s": load_s, "fit_s": fit_s, "fit_cpu": fit_cpu}
if optimized:
    tr = clf.trace_
    out.update(n_iter=int(clf.n_iter_), n_fev=int(tr[-1]["n_fev"]), opt_s=float(tr[-1]["time"]),
               nll=float(tr[-1]["nll"]), obj=float(tr[-1].get("obj", tr[-1]["nll"])),
               n_parameters=int(clf.scorer_.n_parameters))
json.dump(out, open(sys.argv[2], "w"))
"""


def run(args, dataset: str, label: str, tmp: Path) -> dict:
    """One (dataset, model) in a fresh process; its report, peak memory and CPU (or ``stopped``)."""
    out = tmp / f"{dataset}.{label}.json"
    a = {"experiment": args.experiment, "dataset": dataset, "label": label, "maxiter": args.maxiter,
         "round": args.round, "fold": args.fold}
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", CHILD, json.dumps(a), str(out)], env={**os.environ, **THREADS})
    base = {"dataset": dataset, "model": label}
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if args.timeout and time.perf_counter() - t0 > args.timeout:
            proc.kill()
            _, _, ru = os.wait4(proc.pid, 0)
            return {**base, "stopped": time.perf_counter() - t0, "peak_mib": ru.ru_maxrss / 1024,
                    "process_cpu": ru.ru_utime + ru.ru_stime}
        time.sleep(0.5)
    if os.waitstatus_to_exitcode(status):
        return {**base, "failed": os.waitstatus_to_exitcode(status), "peak_mib": ru.ru_maxrss / 1024}
    res = json.loads(out.read_text())
    res.update(base, process_s=time.perf_counter() - t0, peak_mib=ru.ru_maxrss / 1024,
               process_cpu=ru.ru_utime + ru.ru_stime)
    return res


EVALS_PER_ITER = 1.07
"""Evaluations per L-BFGS iteration in whole fits (DBL² with the authors' penalty and L-BFGS-B settings:
connect-4 2,254 / 2,114, adult 3,160 / 2,962); the first iterations of a fit take more."""


def costs(r: dict) -> tuple[float, float, float, float]:
    """Set-up and per-evaluation seconds of a capped fit: wall, and CPU (the fit's CPU split as its wall)."""
    share = r["opt_s"] / r["fit_s"] if r["fit_s"] > 0 else 0.0
    n = max(r["n_fev"], 1)
    return (r["fit_s"] - r["opt_s"], r["opt_s"] / n, r["fit_cpu"] * (1 - share), r["fit_cpu"] * share / n)


def table(rows: list[dict], iters: list[int], maxiter: int | None, evals_per_iter: float = EVALS_PER_ITER) -> str:
    """The markdown table: measured cost and the fold's CPU hours at each of ``iters`` iterations."""
    head = ("| dataset | model | training rows | parameters | iterations / evaluations | fit s | fit CPU s "
            "| set-up CPU s | CPU s / evaluation | peak RSS MiB | "
            + " | ".join(f"fold at {k} iter (CPU h)" for k in iters) + " |")
    lines = [head, "|---|---|---:|---:|---|---:|---:|---:|---:|---:|" + "---:|" * len(iters)]
    for r in rows:
        if "stopped" in r or "failed" in r:
            what = f"stopped after {r['stopped']:.0f} s" if "stopped" in r else f"failed ({r['failed']})"
            lines.append(f"| {r['dataset']} | {r['model']} | {what} | | | | | | | {r['peak_mib']:.0f} |"
                         + " |" * len(iters))
            continue
        if "n_iter" in r:
            _, _, setup, per = costs(r)
            ext = " | ".join(f"{(setup + k * evals_per_iter * per) / 3600:.3g}" for k in iters)
            lines.append(f"| {r['dataset']} | {r['model']} | {r['n_train']:,} | {r['n_parameters']:,} | "
                         f"{r['n_iter']} / {r['n_fev']} | {r['fit_s']:.1f} | {r['fit_cpu']:.1f} | {setup:.1f} | "
                         f"{per:.3g} | {r['peak_mib']:.0f} | {ext} |")
        else:
            whole = " | ".join(f"{r['fit_cpu'] / 3600:.3g}" for _ in iters)
            lines.append(f"| {r['dataset']} | {r['model']} | {r['n_train']:,} | | whole fit | {r['fit_s']:.1f} | "
                         f"{r['fit_cpu']:.1f} | | | {r['peak_mib']:.0f} | {whole} |")
    cap = (f" (each optimized fit stopped after {maxiter} iterations)" if maxiter is not None
           else " (each optimized fit stopped after the iterations shown)")
    return "\n".join(lines) + (f"\n\nfit s: wall seconds of a single-threaded child{cap}; the CPU split between "
                               "set-up and evaluations is the fit's CPU time split as its wall time; the "
                               f"extrapolations are set-up + iterations x {evals_per_iter} x CPU s / evaluation (one "
                               "fold; data loading and prediction not included).")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["connect-4", "census-income"])
    ap.add_argument("--models", nargs="+", default=["DBL1", "LR1", "DBL2", "LR2", "DBL3", "LR3", "DBL2-one"])
    ap.add_argument("--experiment", default="zaidi_dbl", help="an experiment of conf/experiment/ (default zaidi_dbl)")
    ap.add_argument("--maxiter", type=int, default=10, help="iterations per optimized fit (default 10)")
    ap.add_argument("--iters", type=int, nargs="+", default=[100, 1000, 3000],
                    help="iteration counts to extrapolate a fold's cost to")
    ap.add_argument("--round", type=int, default=0)
    ap.add_argument("--fold", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=None)
    ap.add_argument("--json")
    ap.add_argument("--from-json", help="print the table of an earlier run's --json file and exit")
    args = ap.parse_args(argv)
    if args.from_json:
        print(table(json.loads(Path(args.from_json).read_text()), args.iters, None))
        return 0
    from bncbench.errors import BNCBenchError
    from bncbench.harness.app import plan

    try:
        labels = [m.label for m in plan([f"+experiment={args.experiment}", f"dataset.names=[{args.datasets[0]}]"]).models]
    except BNCBenchError as exc:
        print(f"bench_big_fold: {exc}", file=sys.stderr)
        return 2
    unknown = [m for m in args.models if m not in labels]
    if unknown:
        print(f"bench_big_fold: no model labelled {unknown[0]!r} in {args.experiment} (labels: {', '.join(labels)})",
              file=sys.stderr)
        return 2
    rows = []
    with tempfile.TemporaryDirectory() as td:
        for dataset in args.datasets:
            for label in args.models:
                rows.append(run(args, dataset, label, Path(td)))
                print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
                if args.json:
                    Path(args.json).write_text(json.dumps(rows, indent=1))
    print(table(rows, args.iters, args.maxiter))
    return 0


if __name__ == "__main__":
    sys.exit(main())

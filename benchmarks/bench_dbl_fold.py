"""One cross-validation fold of zaidi_dbl's DBLⁿ with the authors' per-row penalty against the former L2 (issue 37).

    BNCBENCH_DATA_DIR=/work/shared/datasets/uci python benchmarks/bench_dbl_fold.py \\
        --dataset connect-4 --n 3 --regs rows l2 --maxiter 40

The model is ``conf/experiment/zaidi_dbl.yaml``'s DBLⁿ (``structure=anje, param=weighted,
init=generative, optimizer=lbfgs, lam=0.01``) with ``reg`` = each of ``--regs``: ``rows`` (the
authors' per-row penalty, the experiment's setting now) and ``l2`` (``lam/2 ||w||^2``, its setting
until November 2026). The training data are exactly the task's: round ``--round``, fold
``--fold`` of the experiment's 5x2 CV (seed 0), MDL-discretized on the training half as the runner
does. Each variant runs in a fresh single-threaded process (numba, OpenMP, BLAS: 1 thread): a
warm-up fit on 64 rows (numba compiled), then the timed fit: wall and CPU seconds, iterations,
evaluations, the final penalized objective and training NLL; then the test half's 0-1 loss. The
peak resident memory is the child's ``ru_maxrss``.

``--maxiter K`` stops the fit after K iterations (the experiment's stopping rule otherwise): on a
shared machine a whole DBL³ fold may not fit in the time at hand, and the cost per iteration is
then what is measured. ``--timeout`` stops a child after that many seconds (reported as stopped).
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
from bncbench.data import specs
from bncbench.harness.model_specs import ModelSpec
from bncbench.harness.runner import Task, task_inputs
from _fold import capped, warm_up
a = json.loads(sys.argv[1])
params = {"structure": "anje", "n": a["n"], "param": "weighted", "init": "generative", "optimizer": "lbfgs",
          "reg": a["reg"], "lam": a["lam"]}
task = Task(specs.resolve([a["dataset"]])[0], ModelSpec(f"DBL{a['n']}", params), a["round"], a["fold"])
fold = task_inputs(capped(task, a["maxiter"]))
train, test, y = fold.train, fold.test, fold.y
warm_up(fold, np.random.default_rng(0).permutation(train)[:200])  # numba compiled
clf = fold.estimator
t0, c0 = time.perf_counter(), time.process_time()
clf.fit(*fold.training)
fit_s, fit_cpu = time.perf_counter() - t0, time.process_time() - c0
tr = clf.trace_
err = float((clf.predict(fold.testing[0]) != y[test]).mean())
json.dump({"n_train": int(len(train)), "fit_s": fit_s, "fit_cpu": fit_cpu, "n_iter": int(clf.n_iter_),
           "n_fev": int(tr[-1]["n_fev"]), "opt_s": float(tr[-1]["time"]), "nll": float(tr[-1]["nll"]),
           "obj": float(tr[-1].get("obj", tr[-1]["nll"])), "zero_one": err,
           "n_parameters": int(clf.scorer_.n_parameters)}, open(sys.argv[2], "w"))
"""


def run(args, reg: str, tmp: Path) -> dict:
    """One variant in a fresh process; its report, wall time and peak memory (or ``stopped``)."""
    out = tmp / f"{reg}.json"
    a = {"dataset": args.dataset, "n": args.n, "reg": reg, "lam": args.lam, "maxiter": args.maxiter,
         "round": args.round, "fold": args.fold}
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", CHILD, json.dumps(a), str(out)], env={**os.environ, **THREADS})
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if args.timeout and time.perf_counter() - t0 > args.timeout:
            proc.kill()
            _, _, ru = os.wait4(proc.pid, 0)
            return {"reg": reg, "stopped": time.perf_counter() - t0, "peak_mib": ru.ru_maxrss / 1024}
        time.sleep(0.5)
    if os.waitstatus_to_exitcode(status):
        return {"reg": reg, "failed": os.waitstatus_to_exitcode(status)}
    res = json.loads(out.read_text())
    res.update(reg=reg, process_s=time.perf_counter() - t0, peak_mib=ru.ru_maxrss / 1024,
               process_cpu=ru.ru_utime + ru.ru_stime)
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="connect-4")
    ap.add_argument("--n", type=int, default=3)
    ap.add_argument("--regs", nargs="+", default=["rows", "l2"])
    ap.add_argument("--lam", type=float, default=0.01)
    ap.add_argument("--maxiter", type=int, default=None,
                    help="stop after this many iterations (default: the experiment's rule)")
    ap.add_argument("--round", type=int, default=0)
    ap.add_argument("--fold", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=None)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as td:
        for reg in args.regs:
            rows.append(run(args, reg, Path(td)))
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    print(f"DBL{args.n} on {args.dataset}, round {args.round} fold {args.fold}"
          + (f", at most {args.maxiter} iterations" if args.maxiter is not None else "") + "\n")
    print("| reg | training rows | parameters | iterations / evaluations | fit s (wall) | fit CPU s "
          "| fit CPU s per iteration (set-up included) | objective | training NLL | test 0-1 | peak RSS MiB |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        if "stopped" in r or "failed" in r:
            what = f"stopped after {r['stopped']:.0f} s" if "stopped" in r else f"failed ({r['failed']})"
            print(f"| {r['reg']} | {what} | | | | | | | | | {r.get('peak_mib', float('nan')):.0f} |")
            continue
        print(f"| {r['reg']} | {r['n_train']} | {r['n_parameters']} | {r['n_iter']} / {r['n_fev']} | {r['fit_s']:.1f} | "
              f"{r['fit_cpu']:.1f} | {r['fit_cpu'] / max(r['n_iter'], 1):.2f} | {r['obj']:.8g} | {r['nll']:.8g} | "
              f"{r['zero_one']:.4f} | {r['peak_mib']:.0f} |")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

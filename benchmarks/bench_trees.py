"""The same capped fit of an experiment's model under two source trees, paired: a change's cost, and its bits.

    BNCBENCH_DATA_DIR=/work/shared/datasets/uci python benchmarks/bench_trees.py \\
        --before /tmp/before --after . --dataset syncon --model DBL3 --maxiter 20 --repeats 5

``--before`` and ``--after`` are checkouts of bncbench (e.g. ``git archive <commit> | tar -x -C /tmp/before``),
each from commit 398ed04 on (``bncbench.harness.app.experiment_task``). Every fit runs in a fresh
single-threaded process (numba, OpenMP, BLAS: 1 thread) with that tree first on ``PYTHONPATH``: the
model of ``--experiment`` with that label on round 0, fold 0, exactly as the runner fits it
(``benchmarks/_fold.py``), stopped after ``--maxiter`` iterations, after a warm-up fit on 64 rows (numba
compiled; a tree's first process also fills its numba cache, so run once before measuring, or discard
the first pair). The two trees alternate in order over ``--repeats`` pairs, so the machine's load hits
both. The peer is the ``--before`` tree in the same run; the result is the median over the pairs of
the fit's CPU seconds (user + system) after / before. A checksum of the fitted parameters says whether
the two trees took the same path bit for bit.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from _fold import PATH_LINE, THREADS  # this script's directory is on sys.path

CHILD = PATH_LINE + r"""
import hashlib, json, resource, sys
from bncbench.harness import allocator
from _fold import fold_inputs, warm_up
a = json.loads(sys.argv[1])
allocator.keep_freed_memory()  # as the runner does
fold = fold_inputs(a["experiment"], a["dataset"], a["model"], maxiter=a["maxiter"])
warm_up(fold, fold.train[:64])
r0 = resource.getrusage(resource.RUSAGE_SELF)
est = fold.estimator.fit(*fold.training)
r1 = resource.getrusage(resource.RUSAGE_SELF)
x = getattr(est.scorer_, "x", None)
print(json.dumps({"cpu": r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime, "n_iter": int(getattr(est, "n_iter_", 0)),
                  "sha": hashlib.sha256((x if x is not None else est.predict_proba(fold.testing[0])).tobytes()).hexdigest()}))
"""


def _fit(tree: Path, a: dict) -> dict:
    env = {**os.environ, **THREADS, "PYTHONPATH": str(tree.resolve())}
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(a)], env=env, cwd="/", capture_output=True,
                         text=True)
    if out.returncode:
        raise SystemExit(f"bench_trees: the fit under {tree} failed: {out.stderr.strip().splitlines()[-1:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--after", type=Path, required=True)
    ap.add_argument("--experiment", default="zaidi_dbl")
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--model", required=True, help="a model label of the experiment")
    ap.add_argument("--maxiter", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    for tree in (args.before, args.after):
        if not (tree / "bncbench" / "__init__.py").is_file():
            print(f"bench_trees: {tree} is not a bncbench checkout", file=sys.stderr)
            return 2
    a = {"experiment": args.experiment, "dataset": args.dataset, "model": args.model, "maxiter": args.maxiter}
    runs = {"before": [], "after": []}
    for r in range(args.repeats):
        for side in (("before", "after") if r % 2 == 0 else ("after", "before")):
            runs[side].append(_fit(getattr(args, side), a))
        print(f"pair {r}: before {runs['before'][-1]['cpu']:.2f} CPU s, after {runs['after'][-1]['cpu']:.2f}",
              file=sys.stderr, flush=True)
    ratios = [b["cpu"] / a_["cpu"] for a_, b in zip(runs["before"], runs["after"])]
    same = all(x["sha"] == runs["before"][0]["sha"] for side in runs.values() for x in side)
    print("| case | iterations | CPU s before (median) | CPU s after (median) | after / before (median, range) | same bits |")
    print("|---|---:|---:|---:|---|---|")
    print(f"| {args.dataset} {args.model} | {runs['before'][0]['n_iter']} | "
          f"{statistics.median(x['cpu'] for x in runs['before']):.2f} | "
          f"{statistics.median(x['cpu'] for x in runs['after']):.2f} | "
          f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f}) | {'yes' if same else 'NO'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

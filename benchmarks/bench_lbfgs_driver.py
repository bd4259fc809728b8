"""L-BFGS's two drivers, paired: the compact inverse (the default) against scipy's ``setulb``.

    BNCBENCH_DATA_DIR=/work/shared/datasets/uci python benchmarks/bench_lbfgs_driver.py --repeats 3

Each case is one capped fit of a ``zaidi_dbl`` model exactly as the experiment runs it (the authors'
per-row penalty, ``lam=0.01``; DBLⁿ from AnJE's weights, LRⁿ from 0; 10 correction pairs, ``stop=ebnc``)
on the training half of round 0, fold 0, MDL-discretized on it as the runner does, stopped after
``maxiter`` iterations. Every fit runs in a fresh single-threaded child process (numba compiled by a
warm-up fit on 64 rows; the runner's allocator setting), once with each driver (``optimizer_options.driver``),
the two orders alternating over ``--repeats`` pairs. The child reports the fit's CPU seconds (user + system),
the optimizer's own seconds (the trace's last time), its iterations and evaluations, and the objective at
every iteration.

The peer is ``setulb`` in the same run; the ratio of the optimizer's seconds is the result (the fit's
other work, the same for both, is in the CPU column). The objectives of the two are compared iteration by
iteration: equal to rounding is what the compact driver promises (``tests/test_lbfgs_compact.py``).
Prints a markdown table (medians over the repeats); ``--json`` writes every run.

``--against DIR`` makes the peer the compact driver of another checkout of the package (a clone at the
commit before a change of the driver, say: its child runs in ``DIR`` and imports the package there, each
child reporting which it imported), so that the ratio is that of the change, measured the same way::

    git clone -q . /tmp/before && git -C /tmp/before checkout -q HEAD~1
    python benchmarks/bench_lbfgs_driver.py --against /tmp/before --cases "musk1 LR3"
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

from _fold import PATH_LINE, THREADS  # this script's directory is on sys.path

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
"""This checkout (the package the compact side imports)."""

CASES = {  # label: (dataset, model of conf/experiment/zaidi_dbl.yaml, maxiter)
    "satellite DBL3": ("satellite", "DBL3", 10),
    "syncon DBL3": ("syncon", "DBL3", 20),
    "spambase LR3": ("spambase", "LR3", 60),
    "connect-4 DBL3": ("connect-4", "DBL3", 5),
    "musk1 LR3": ("musk1", "LR3", 40),
}

CHILD = PATH_LINE + r"""
import json, os, resource, sys, time
import bncbench
from bncbench.harness import allocator
from _fold import fold_inputs, warm_up
a = json.loads(sys.argv[1])
allocator.keep_freed_memory()
fold = fold_inputs("zaidi_dbl", a["dataset"], a["label"], maxiter=a["maxiter"])
est = fold.estimator
est.set_params(optimizer_options={**est.get_params()["optimizer_options"], "driver": a["driver"]})
warm_up(fold, fold.train[:64])
r0 = resource.getrusage(resource.RUSAGE_SELF)
est.fit(*fold.training)
r1 = resource.getrusage(resource.RUSAGE_SELF)
tr = est.trace_
print(json.dumps({"cpu": r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime, "opt_s": tr[-1]["time"],
                  "n_iter": int(est.n_iter_), "n_fev": int(tr[-1]["n_fev"]), "n_parameters":
                  int(est.scorer_.n_parameters), "obj": [r.get("obj", r["nll"]) for r in tr],
                  "package": os.path.dirname(os.path.dirname(os.path.abspath(bncbench.__file__)))}))
"""


def _run(case: tuple, driver: str, tree: str | None = None) -> dict:
    """One child: ``bncbench`` imported from ``tree`` (its working directory, first on ``sys.path`` under ``-c``;
    default this checkout)."""
    dataset, label, maxiter = case
    tree = os.path.abspath(tree or REPO)
    env = {**os.environ, **THREADS, "PYTHONPATH": tree}
    arg = json.dumps({"dataset": dataset, "label": label, "maxiter": maxiter, "driver": driver})
    out = subprocess.run([sys.executable, "-c", CHILD, arg], env=env, cwd=tree, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"bench_lbfgs_driver: the {driver} child of {case} failed: "
                         f"{(out.stderr.strip().splitlines() or ['?'])[-1]}")
    got = json.loads(out.stdout.strip().splitlines()[-1])
    if os.path.realpath(got["package"]) != os.path.realpath(tree):
        raise SystemExit(f"bench_lbfgs_driver: a child meant to run the package under {tree} imported the one under "
                         f"{got['package']}")
    return got


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--against", metavar="DIR", help="the peer: the compact driver of the package checked out at DIR "
                    "(default: setulb of this one)")
    ap.add_argument("--json", help="write every run to this file")
    a = ap.parse_args(argv)
    if a.against and not os.path.isdir(os.path.join(a.against, "bncbench")):
        raise SystemExit(f"bench_lbfgs_driver: no bncbench package under {a.against}")
    peer, sides = ("before", {"compact": ("compact", None), "before": ("compact", a.against)}) if a.against else \
        ("setulb", {"compact": ("compact", None), "setulb": ("setulb", None)})
    runs = []
    rows = [f"| case | parameters | iterations (evaluations) compact / {peer} | optimizer s compact | optimizer s "
            f"{peer} | ratio (median; range) | fit CPU s compact / {peer} | largest relative difference of the "
            "objective along the path |",
            "|---|---:|---|---:|---:|---|---|---:|"]
    for name in a.cases:
        pairs = []
        for r in range(a.repeats):
            order = ("compact", peer) if r % 2 == 0 else (peer, "compact")
            got = {s: _run(CASES[name], *sides[s]) for s in order}
            pairs.append(got)
            runs.append({"case": name, "repeat": r, **got})
            print(f"{name} #{r}: compact {got['compact']['opt_s']:.2f} s, {peer} {got[peer]['opt_s']:.2f} s",
                  file=sys.stderr, flush=True)
        ratios = [p["compact"]["opt_s"] / p[peer]["opt_s"] for p in pairs]
        c, s = pairs[0]["compact"], pairs[0][peer]
        k = min(len(c["obj"]), len(s["obj"]))
        diff = max(abs(x - y) / abs(y) for x, y in zip(c["obj"][:k], s["obj"][:k]))

        def med(d, key):
            return statistics.median(p[d][key] for p in pairs)

        rows.append(f"| {name} | {c['n_parameters']:,} | {c['n_iter']} ({c['n_fev']}) / {s['n_iter']} ({s['n_fev']}) "
                    f"| {med('compact', 'opt_s'):.2f} | {med(peer, 'opt_s'):.2f} "
                    f"| **{statistics.median(ratios):.3f}** "
                    f"({min(ratios):.3f}-{max(ratios):.3f}) | {med('compact', 'cpu'):.2f} / {med(peer, 'cpu'):.2f} "
                    f"| {diff:.1e} |")
    print("\n".join(rows))
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(runs, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

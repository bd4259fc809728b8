"""The runner's allocator setting (``bncbench.harness.allocator``) against glibc's default, paired.

    BNCBENCH_DATA_DIR=/work/shared/datasets/uci python benchmarks/bench_malloc.py --repeats 3

Each case is one capped fit of a ``zaidi_dbl`` model exactly as the experiment runs it (``reg=rows,
lam=0.01``; DBLⁿ from AnJE's weights, LRⁿ from 0), on the training half of round 0, fold 0,
MDL-discretized on it as the runner does, stopped after ``maxiter`` L-BFGS iterations. Every fit
runs in a fresh single-threaded child process (after a warm-up fit on 64 rows: numba compiled),
once with the setting (the runner's default: ``keep_freed_memory()`` before the fit) and once
without it (``BNCBENCH_MALLOC_KEEP=0``), the two orders alternating over ``--repeats`` pairs. The
child reports the fit's user and system CPU seconds, its minor page faults and its wall time, and
a checksum of the fitted parameters: the two settings must give the same bits.

The peer is glibc's default allocator in the same run; the ratio of CPU seconds (user + system)
is the result. Prints a markdown table (medians over the repeats); ``--json`` writes every run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

from _fold import PATH_LINE, THREADS  # this script's directory is on sys.path

CASES = {  # label: (dataset, model of conf/experiment/zaidi_dbl.yaml, maxiter)
    "syncon DBL3": ("syncon", "DBL3", 20),
    "letter LR3": ("letter", "LR3", 10),
    "optdigits DBL3": ("optdigits", "DBL3", 5),
    "connect-4 DBL3": ("connect-4", "DBL3", 5),
}

CHILD = PATH_LINE + r"""
import hashlib, json, resource, sys, time
from bncbench.harness import allocator
from _fold import fold_inputs, warm_up
a = json.loads(sys.argv[1])
applied = allocator.keep_freed_memory()
fold = fold_inputs("zaidi_dbl", a["dataset"], a["label"], maxiter=a["maxiter"])
warm_up(fold, fold.train[:64])
est = fold.estimator
r0 = resource.getrusage(resource.RUSAGE_SELF)
t = time.perf_counter()
est.fit(*fold.training)
wall = time.perf_counter() - t
r1 = resource.getrusage(resource.RUSAGE_SELF)
proba = est.predict_proba(fold.testing[0])
print(json.dumps({"applied": applied, "user": r1.ru_utime - r0.ru_utime, "sys": r1.ru_stime - r0.ru_stime,
                  "faults": r1.ru_minflt - r0.ru_minflt, "wall": wall, "n_iter": int(est.n_iter_),
                  "maxrss_mib": r1.ru_maxrss / 1024, "proba_sha": hashlib.sha256(proba.tobytes()).hexdigest()}))
"""


def _run(case: tuple, keep: bool) -> dict:
    dataset, label, maxiter = case
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    env.update(THREADS)
    env["BNCBENCH_MALLOC_KEEP"] = "1" if keep else "0"
    arg = json.dumps({"dataset": dataset, "label": label, "maxiter": maxiter})
    out = subprocess.run([sys.executable, "-c", CHILD, arg], env=env, capture_output=True, text=True, check=True)
    rec = json.loads(out.stdout.strip().splitlines()[-1])
    if rec["applied"] is not keep:
        raise SystemExit(f"bench_malloc: the setting was {'not ' if keep else ''}applied in a child that asked "
                         f"{'for' if keep else 'against'} it (glibc only)")
    return rec


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", help="write every run to this file")
    a = ap.parse_args(argv)
    runs = []
    rows = ["| case | iterations | CPU s kept (user + sys) | CPU s default | ratio | sys s kept / default | "
            "page faults kept / default | peak RSS MiB kept / default | same probabilities |",
            "|---|---:|---:|---:|---:|---|---|---|---|"]
    for name in a.cases:
        pairs = []
        for r in range(a.repeats):
            order = (True, False) if r % 2 == 0 else (False, True)
            got = {keep: _run(CASES[name], keep) for keep in order}
            pairs.append(got)
            runs.append({"case": name, "repeat": r, "kept": got[True], "default": got[False]})
            print(f"{name} #{r}: kept {got[True]['user'] + got[True]['sys']:.2f} CPU s, "
                  f"default {got[False]['user'] + got[False]['sys']:.2f}", file=sys.stderr, flush=True)

        def med(keep, f):
            return statistics.median(f(p[keep]) for p in pairs)

        cpu = {k: med(k, lambda r: r["user"] + r["sys"]) for k in (True, False)}
        ratio = statistics.median((p[True]["user"] + p[True]["sys"]) / (p[False]["user"] + p[False]["sys"])
                                  for p in pairs)
        same = all(p[True]["proba_sha"] == p[False]["proba_sha"] for p in pairs)
        rows.append(f"| {name} | {pairs[0][True]['n_iter']} | {cpu[True]:.2f} | {cpu[False]:.2f} | {ratio:.3f} | "
                    f"{med(True, lambda r: r['sys']):.2f} / {med(False, lambda r: r['sys']):.2f} | "
                    f"{med(True, lambda r: r['faults']):,.0f} / {med(False, lambda r: r['faults']):,.0f} | "
                    f"{med(True, lambda r: r['maxrss_mib']):,.0f} / {med(False, lambda r: r['maxrss_mib']):,.0f} | "
                    f"{'yes' if same else 'NO'} |")
    print("\n".join(rows))
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(runs, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

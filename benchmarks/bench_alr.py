"""DBL² and LR² side by side with the authors' Java code (github nayyarzaidi/ALR), same penalty, start, stop (issue 37).

    ALR_BUILD=/work/alr-build BNCBENCH_DATA_DIR=/work/shared/datasets/uci \\
        python benchmarks/bench_alr.py --datasets adult connect-4 --models DBL2 LR2

The authors' implementation is built by ``../shared/anchors/alr/build.sh`` (not part of this
repository); ``ALR_BUILD`` (or ``--alr-build``) points at its build directory (the one holding
``env.sh``). Without it the Java side is skipped with a message and only ours runs.

Models (A2JE, ``structure=anje n=2``): DBL² = ``param=weighted`` (their ``-P wCCBN``), LR² =
``param=discriminative`` (``-P dCCBN``); both with the authors' per-row L2 penalty at lam = 0.01
(``reg=rows lam=0.01``; their ``-R -L 0.01``) and started at 0 (``init=zeros``; their default
``-W 0``).

Data: the whole dataset, MDL-discretized once by ``bncbench.model.preprocess.Discretizer`` (fitted on
all rows); the codes are written to an ARFF file with every attribute nominal ``{0..card-1}``, so
both sides train on identical codes (no missing value left; their ``-D`` is not used).

Stopping rule: their L-BFGS-B (5 corrections, factr 1e7, pgtol off, 10,000 iterations at most);
ours ``optimizer=lbfgs`` with ``history=5, ftol=1e7*eps, gtol=0, maxiter=10000``. Their objective
carries an offset ``-N ln nc`` (zero at the start), which makes the same relative test
``(f_k - f_k+1) / max(|f_k|, |f_k+1|, 1) <= factr eps`` looser on their side, so the two runs stop at
different points. The comparison is at **equal objective**: their final penalized objective with
the offset removed (``NLL + R``), and the first iteration at which ours is within 1e-6 relative of
it (or below). (The brief asked for equal training NLL; with the penalty on, the training NLL of a
run started at 0 falls *below* its final value after a few dozen iterations and climbs back as the
penalty takes hold, so "first reaching their NLL" would pick an unconverged iterate; the penalized
objective is what both sides minimize and it decreases at every iteration.) If our run stops
before that, it is rerun with ``ftol=0`` and a larger iteration cap (``--reach-maxiter``, at most 2x
the larger of the two runs' iterations + 100).

Times, single-threaded on both sides (``NUMBA_NUM_THREADS``, ``OMP_NUM_THREADS``,
``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS`` = 1; Java without ``-M``, with
``-XX:+UseSerialGC -XX:ActiveProcessorCount=1``):

* theirs: ``fit`` = the driver's ``train_ms`` (``buildClassifier``: counts, estimates, L-BFGS-B);
  ``set-up`` = the ``train_ms`` of the same run with ``-C 0`` (no optimization); ``process`` = the
  JVM's wall time, start to exit (it also computes the training probabilities and writes files);
* ours: ``fit`` = ``BNClassifier.fit`` on the codes, after a warm-up fit on 500 random rows in the same
  process (numba compiled); ``to theirs`` = set-up (fit minus the optimizer's trace time) plus the
  trace time at the first iteration that reaches their objective; ``process`` = the whole Python child
  (interpreter, imports, loading the codes, warm-up, fit).

``--maxiter K`` caps both sides at K iterations (their ``-C K``): when a whole fit takes too long, the
comparison is then at their objective after K iterations.

Wall and CPU times: on a shared machine the wall times are inflated by the other processes, so the
main ratio is by CPU time of the optimization (theirs: the JVM's CPU time minus a ``-C 0`` run's,
which loads, counts and predicts the same; ours: the fit's CPU time minus a ``maxiter=0`` fit's,
times the fraction of the optimizer's time spent before reaching their objective). ``--repeats``
alternates the sides and reports medians.
``--java-timeout`` stops a Java run after that many seconds; it is then reported as stopped, with
its elapsed time as a lower bound. Prints a markdown table; ``--json`` writes every measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _fold import THREADS  # this script's directory is on sys.path

MODELS = {"DBL2": ("weighted", "wCCBN"), "LR2": ("discriminative", "dCCBN")}
LAM = 0.01
EPS = float(np.finfo(float).eps)
FACTR = 1e7
RTOL = 1e-6
RECORDED = {  # the authors' whole adult fits (docs/benchmarks.md, "DBL² and LR² against the authors' Java code")
    ("adult", "DBL2"): {"objective": 11167.3213, "n_iter": 3277, "optimizer_cpu": 209.9},
    ("adult", "LR2"): {"objective": 11701.6228, "n_iter": 3600, "optimizer_cpu": 195.7},
}
"""Their final penalized objective (offset removed), iterations and optimizer CPU seconds (``--recorded``)."""

OURS = r"""
import json, sys, time
t_start = time.perf_counter()
import numpy as np
from bncbench import BNClassifier
d = np.load(sys.argv[1])
X, y, cards = d["X"], d["y"], d["cards"].tolist()
opts = json.loads(sys.argv[3])
lam = opts.pop("lam")
w = np.random.default_rng(0).permutation(len(y))[:500]
BNClassifier(structure="anje", n=2, discretize=False, cardinalities=cards, param=sys.argv[2], init="zeros",
             reg="rows", lam=lam, optimizer="lbfgs",
             optimizer_options={"history": 5, "maxiter": 3}).fit(X[w], y[w])   # warm-up: numba compiled
def make(o):
    return BNClassifier(structure="anje", n=2, discretize=False, cardinalities=cards, param=sys.argv[2], init="zeros",
                        reg="rows", lam=lam, optimizer="lbfgs", optimizer_options=o)
c0 = time.process_time()
make({**opts, "maxiter": 0}).fit(X, y)     # the set-up alone (counts, layout, rows): its CPU time
setup_cpu = time.process_time() - c0
clf = make(opts)
t0, c0 = time.perf_counter(), time.process_time()
clf.fit(X, y)
fit_s, fit_cpu = time.perf_counter() - t0, time.process_time() - c0
P = clf.predict_proba(X)
nll = float(-np.log(P[np.arange(len(y)), y]).sum())
tr = clf.trace_
json.dump({"fit_s": fit_s, "fit_cpu": fit_cpu, "setup_cpu": setup_cpu, "n_iter": int(clf.n_iter_),
           "n_fev": int(tr[-1]["n_fev"]), "nll": nll,
           "obj": float(tr[-1].get("obj", tr[-1]["nll"])), "opt_s": float(tr[-1]["time"]),
           "trace_nll": [float(t["nll"]) for t in tr], "trace_obj": [float(t.get("obj", t["nll"])) for t in tr],
           "trace_time": [float(t["time"]) for t in tr],
           "process_s_inside": time.perf_counter() - t_start}, open(sys.argv[4], "w"))
"""


# ---------------------------------------------------------------- data
def prepare(name: str, tmp: Path) -> dict:
    """Codes of the whole dataset (MDL on all rows), saved as ``.npz`` (ours) and ``.arff`` (theirs)."""
    from bncbench.data.uci import load_uci
    from bncbench.model.preprocess import Discretizer

    ds = load_uci(name)
    y = np.unique(np.asarray(ds.y), return_inverse=True)[1].astype(np.int64)
    disc = Discretizer().fit(ds.X, y)
    X = np.asarray(disc.transform(ds.X), dtype=np.int64)
    cards = np.asarray(disc.cardinalities_, dtype=np.int64)
    if (X < 0).any():  # an unknown code: read as the first value (their reading of '?'), identical on both sides
        X[X < 0] = 0
    nc = int(y.max()) + 1
    npz, arff = tmp / f"{name}.npz", tmp / f"{name}.arff"
    np.savez(npz, X=X, y=y, cards=cards)
    with open(arff, "w") as fh:
        fh.write(f"@relation {name}\n")
        for j, c in enumerate(cards):
            fh.write(f"@attribute a{j} {{{','.join(map(str, range(int(c))))}}}\n")
        fh.write(f"@attribute class {{{','.join(map(str, range(nc)))}}}\n@data\n")
        np.savetxt(fh, np.column_stack([X, y]), fmt="%d", delimiter=",")
    n_par = sum(int(cards[i] * cards[j]) for i in range(len(cards)) for j in range(i)) * nc + nc
    return {"name": name, "npz": npz, "arff": arff, "N": len(y), "n_attr": len(cards), "nc": nc, "n_params": n_par}


# ---------------------------------------------------------------- theirs
def java_cmd(build: Path) -> list[str]:
    """The JVM command line of ``env.sh`` (``ALR_JAVA``), single-threaded."""
    text = (build / "env.sh").read_text()
    m = re.search(r'export ALR_JAVA="([^"]+)"', text)
    if not m:
        raise SystemExit(f"no ALR_JAVA in {build / 'env.sh'}")
    cmd = m.group(1).split()
    return [cmd[0], "-XX:+UseSerialGC", "-XX:ActiveProcessorCount=1", *cmd[1:]]


def run_java(build: Path, data: dict, tag: str, tmp: Path, *, cmax: int | None = None, timeout: float = 3600) -> dict:
    """One ALRDriver fit on the whole file; its summary row plus the process's wall time."""
    summary, log = tmp / f"j_{data['name']}_{tag}_{cmax}.csv", tmp / f"j_{data['name']}_{tag}_{cmax}.log"
    summary.unlink(missing_ok=True)
    opts = ["-S", "A2JE", "-P", tag, "-R", "-L", str(LAM), "-I", "Flat", "-O", "QN"]
    opts += ["-C", str(cmax)] if cmax is not None else []
    cmd = [*java_cmd(build), "ALRDriver", "-t", str(data["arff"]), "-s", str(summary), "-l", str(log), "--", *opts]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, **THREADS})
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() - t0 > timeout:
            proc.kill()
            _, _, ru = os.wait4(proc.pid, 0)
            return {"stopped": True, "process_s": time.perf_counter() - t0, "process_cpu": ru.ru_utime + ru.ru_stime}
        time.sleep(0.2)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"ALRDriver failed ({proc.returncode}): {' '.join(cmd)}")
    import csv

    with open(summary) as fh:
        row = list(csv.DictReader(fh))[-1]
    out = {"stopped": False, "process_s": wall, "process_cpu": ru.ru_utime + ru.ru_stime,
           "fit_s": float(row["train_ms"]) / 1000, "nll": float(row["nll_train"]),
           "objective": float(row["objective"]) if row["objective"] else float("nan"),
           "n_iter": int(row["iterations"] or 0), "n_fev": int(row["fevals"] or 0), "state": row["state"]}
    m = re.search(r"fx_QN = \[([^\]]*)\]", log.read_text())
    if m:
        out["trace_obj"] = [float(v) for v in m.group(1).split(",") if v.strip()]
    return out


# ---------------------------------------------------------------- ours
def run_ours(data: dict, param: str, tmp: Path, opts: dict) -> dict:
    """One fit of ours in a fresh single-threaded Python process; the child's report plus its wall time."""
    out = tmp / f"o_{data['name']}_{param}.json"
    t0 = time.perf_counter()
    # run from tmp: ``python -c`` puts its working directory first on sys.path, where a checkout's ``bncbench``
    # would shadow the one PYTHONPATH names (comparing two checkouts)
    proc = subprocess.Popen([sys.executable, "-c", OURS, str(data["npz"]), param, json.dumps({"lam": LAM, **opts}),
                             str(out)], env={**os.environ, **THREADS}, cwd=tmp)
    _, status, ru = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"our fit of {data['name']} {param} failed")
    res = json.loads(out.read_text())
    res["process_s"], res["process_cpu"] = time.perf_counter() - t0, ru.ru_utime + ru.ru_stime
    return res


def reach(ours: dict, target: float) -> tuple[int | None, float | None]:
    """First iteration of our trace with penalized objective within ``RTOL`` of ``target`` (or below), and its time."""
    obj = np.asarray(ours["trace_obj"])
    hit = np.flatnonzero(obj <= target + RTOL * abs(target))
    if not hit.size:
        return None, None
    i = int(hit[0])
    setup = ours["fit_s"] - ours["opt_s"]
    return i, setup + ours["trace_time"][i]


def cpu_to(ours: dict, i: int) -> float:
    """Our optimizer's CPU seconds up to iteration ``i``: the fit's CPU minus the set-up's, times the
    fraction of the optimizer's wall time spent before iteration ``i`` (an estimate: the CPU share is
    taken as constant during the fit)."""
    opt_cpu = ours["fit_cpu"] - ours["setup_cpu"]
    return opt_cpu * ours["trace_time"][i] / ours["trace_time"][-1] if ours["trace_time"][-1] > 0 else opt_cpu


def to_their_objective(row: dict, target: float, their_iter: int, their_cpu: float, rerun, reach_maxiter: int) -> None:
    """Where our run first reaches their final objective ``target``: ``reach_iter``, ``reach_s``, ``reach_cpu``
    and their optimizer CPU ``java_opt_cpu`` into ``row``. If ours stopped above it, it is rerun
    (``rerun(options)``) with ``ftol=0`` and a cap of 2x the larger iteration count + 100 (at most
    ``reach_maxiter``)."""
    it, t = reach(row["ours"], target)
    if it is None:  # ours stopped above their objective: go on further with a tighter test
        cap = min(reach_maxiter, 2 * max(their_iter, row["ours"]["n_iter"]) + 100)
        row["ours_reach"] = rerun({"ftol": 0.0, "maxiter": cap})
        it, t = reach(row["ours_reach"], target)
    row["reach_iter"], row["reach_s"] = it, t
    if it is not None:
        row["reach_cpu"] = cpu_to(row.get("ours_reach", row["ours"]), it)
        row["java_opt_cpu"] = their_cpu


# ---------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["adult", "connect-4"])
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    ap.add_argument("--alr-build", default=os.environ.get("ALR_BUILD"), help="the ALR build dir (default $ALR_BUILD)")
    ap.add_argument("--java-timeout", type=float, default=1800.0, help="seconds before a Java fit is stopped")
    ap.add_argument("--reach-maxiter", type=int, default=20000,
                    help="our largest iteration cap when rerun to reach their objective "
                         "(the rerun stops at 2 x the larger iteration count + 100)")
    ap.add_argument("--maxiter", type=int, default=None,
                    help="cap both sides at this many iterations (their -C, our maxiter): a truncated run, compared "
                         "at their objective after that many iterations")
    ap.add_argument("--recorded", action="store_true",
                    help="without the Java side: compare ours with the authors' whole fits as recorded in "
                         "docs/benchmarks.md (RECORDED: adult's DBL2 and LR2), their final objective and optimizer "
                         "CPU time (not measured in this run: a ratio against another run)")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--json", help="write every measurement to this file")
    args = ap.parse_args(argv)

    build = Path(args.alr_build) if args.alr_build else None
    if build is None or not (build / "env.sh").exists():
        print(f"[bench_alr] the authors' ALR is not built (ALR_BUILD={args.alr_build!r} has no env.sh): "
              "skipping the Java side; build it with ../shared/anchors/alr/build.sh and set ALR_BUILD", file=sys.stderr)
        build = None
    stop = {"history": 5, "ftol": FACTR * EPS, "gtol": 0.0, "maxiter": args.maxiter or 10000}
    results = []
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        for name in args.datasets:
            data = prepare(name, tmp)
            print(f"[bench_alr] {name}: N={data['N']}, {data['n_attr']} attributes, {data['nc']} classes, "
                  f"A2JE {data['n_params']} parameters", file=sys.stderr)
            setup = {}
            for model in args.models:
                param, tag = MODELS[model]
                for rep in range(args.repeats):
                    row = {"dataset": name, "model": model, "repeat": rep, "N": data["N"], "n_params": data["n_params"]}
                    sides = ["java", "ours"] if rep % 2 == 0 else ["ours", "java"]
                    for side in sides:
                        if side == "java" and build is not None:
                            if tag not in setup:
                                setup[tag] = run_java(build, data, tag, tmp, cmax=0, timeout=args.java_timeout)
                            row["java"] = run_java(build, data, tag, tmp, cmax=args.maxiter, timeout=args.java_timeout)
                            row["java_setup"] = setup[tag]
                            print(f"[bench_alr] {name} {model} java: {_short(row['java'])}", file=sys.stderr)
                        elif side == "ours":
                            row["ours"] = run_ours(data, param, tmp, stop)
                            print(f"[bench_alr] {name} {model} ours: {_short(row['ours'])}", file=sys.stderr)
                    j = row.get("java")
                    if j and not j["stopped"]:
                        j["N_ln_nc"] = data["N"] * np.log(data["nc"])
                        their_cpu = j["process_cpu"] - row["java_setup"].get("process_cpu", np.nan)
                        # their offset removed from the target
                        to_their_objective(row, j["objective"] + j["N_ln_nc"], j["n_iter"], their_cpu,
                                           lambda o: run_ours(data, param, tmp, {**stop, **o}), args.reach_maxiter)
                    elif j is None and args.recorded and (name, model) in RECORDED:
                        rec = row["recorded"] = RECORDED[(name, model)]
                        to_their_objective(row, rec["objective"], rec["n_iter"], rec["optimizer_cpu"],
                                           lambda o: run_ours(data, param, tmp, {**stop, **o}), args.reach_maxiter)
                    results.append(row)
                    print(_line(row), file=sys.stderr)
    print(table(results))
    if args.json:
        for r in results:
            for side in ("ours", "ours_reach", "java"):
                if side in r:
                    r[side] = {k: v for k, v in r[side].items() if not k.startswith("trace_")}
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


def _short(r: dict) -> str:
    if r.get("stopped"):
        return f"stopped after {r['process_s']:.0f} s ({r['process_cpu']:.0f} CPU s)"
    return (f"{r['n_iter']} it / {r['n_fev']} ev, NLL {r['nll']:.10g}, fit {r['fit_s']:.2f} s, "
            f"process {r['process_s']:.2f} s, {r['process_cpu']:.2f} CPU s")


def _line(r: dict) -> str:
    return json.dumps({k: v for k, v in r.items() if k in ("dataset", "model", "reach_iter", "reach_s", "reach_cpu",
                                                           "java_opt_cpu", "recorded")})


def _med(xs) -> float:
    xs = [x for x in xs if x is not None and np.isfinite(x)]
    return float(np.median(xs)) if xs else float("nan")


def table(rows: list[dict]) -> str:
    """The markdown table: per (dataset, model), theirs and ours (medians over repeats).

    Optimizer CPU: theirs = the JVM's CPU time minus that of the same run with ``-C 0``; ours = the
    fit's CPU time minus that of a ``maxiter=0`` fit. The ratios: ours at their final objective over
    theirs, by optimizer CPU and by fit wall time (their ``train_ms``).
    """
    out = ["| dataset | model | side | iterations / evaluations | training NLL | penalized objective | fit s (wall) "
           "| optimizer CPU s | process s (wall) | at their objective: iteration, optimizer CPU s, fit s | "
           "ours / theirs: optimizer CPU, fit wall |",
           "|---|---|---|---|---|---|---:|---:|---:|---|---|"]
    keys = list(dict.fromkeys((r["dataset"], r["model"]) for r in rows))
    for ds, model in keys:
        rs = [r for r in rows if (r["dataset"], r["model"]) == (ds, model)]
        j = [r["java"] for r in rs if "java" in r]
        done = [x for x in j if not x["stopped"]]
        if j and not done:
            out.append(f"| {ds} | {model} | authors | stopped | – | – | – | > {min(x['process_cpu'] for x in j):.0f} "
                       f"| > {min(x['process_s'] for x in j):.0f} | – | – |")
        elif done:
            x = done[0]
            out.append(f"| {ds} | {model} | authors | {x['n_iter']} / {x['n_fev']} | {x['nll']:.10g} | "
                       f"{x['objective'] + x.get('N_ln_nc', np.nan):.10g} | {_med([y['fit_s'] for y in done]):.2f} | "
                       f"{_med([r.get('java_opt_cpu') for r in rs]):.2f} | {_med([y['process_s'] for y in done]):.2f} "
                       f"| – | – |")
        rec = next((r["recorded"] for r in rs if "recorded" in r), None)
        if rec is not None and not j:
            out.append(f"| {ds} | {model} | authors (recorded) | {rec['n_iter']} / – | – | {rec['objective']:.10g} | – "
                       f"| {rec['optimizer_cpu']:.2f} | – | – | – |")
        o = [r["ours"] for r in rs]
        x = o[0]
        reach = "–"
        ratio = "–"
        if any(r.get("reach_iter") is not None for r in rs):
            rc, rw = _med([r.get("reach_cpu") for r in rs]), _med([r.get("reach_s") for r in rs])
            reach = f"{rs[0]['reach_iter']}, {rc:.2f}, {rw:.2f}"
            ratio = f"{rc / _med([r.get('java_opt_cpu') for r in rs]):.3f}, " + (
                f"{rw / _med([y['fit_s'] for y in done]):.3f}" if done else "–")
        out.append(f"| {ds} | {model} | bncbench | {x['n_iter']} / {x['n_fev']} | {x['nll']:.10g} | {x['obj']:.10g} | "
                   f"{_med([y['fit_s'] for y in o]):.2f} | {_med([y['fit_cpu'] - y['setup_cpu'] for y in o]):.2f} | "
                   f"{_med([y['process_s'] for y in o]):.2f} | {reach} | {ratio} |")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())

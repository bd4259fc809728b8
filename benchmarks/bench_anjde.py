"""AnDE and AnJE (issue #14, the generative half): speed against Weka's AODE, and peak memory.

1. ``aode``: A1DE fit + predict, ``BNClassifier(structure="ande", n=1, min_count=1, m=1)`` vs Weka
   3.6's ``weka.classifiers.bayes.AODE -F 1 -M -W 1`` (the same model: equal probabilities, checked)
   on the same codes of adult and connect-4: MDL-discretized on a random half (seed 0, the missing
   values of adult a value of their own), fitted on that half, predicting the other half. Weka's
   side is timed twice: the whole Java process (JVM start, ARFF parsing, fit, predict; our ARFF
   writing excluded) and the classifier's own ``buildClassifier`` + ``distributionForInstance``
   loop, measured inside the JVM (``bncbench.peers.weka``). Target: ours <= 0.2x Weka's time.
2. ``memory``: A2DE and A3JE (and A1DE, A2JE) fit + predict on connect-4 and adult, each in a fresh
   process: wall time, and the peak resident memory above the process's resident size after
   loading the codes and compiling the kernels (Linux: the high-water mark is reset through
   ``/proc/self/clear_refs`` before the fit; elsewhere the plain ``ru_maxrss`` difference).
   Target: A2DE on connect-4 fit + predict < 30 s.

Everything runs single-threaded (BLAS / OpenMP / numba pinned to one thread; the JVM with the
serial collector). Ours and Weka alternate in every repeat; the table shows medians and the
ratio of medians of the same run.

Usage::

    python benchmarks/bench_anjde.py                      # both parts, 5 repeats (about 3 minutes)
    python benchmarks/bench_anjde.py --only aode --repeats 9
    python benchmarks/bench_anjde.py --only memory

Needs ``BNCBENCH_DATA_DIR`` (adult, connect-4) and, for the ``aode`` part, Weka (``apt-get install
weka`` or ``WEKA_JAR``) with ``java``/``javac``.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from _memory import peak_since_reset, reset_peak, rss_now  # noqa: E402

DATASETS = ("adult", "connect-4")
MEMORY_MODELS = (("ande", 1), ("ande", 2), ("anje", 2), ("anje", 3))
WEKA_OPTIONS = ["-F", 1, "-M", "-W", 1]
JAVA_OPTIONS = ["-XX:+UseSerialGC"]


def load(name):
    """Codes of ``name`` discretized on a random half; (train codes, train y, test codes, cards, n_classes)."""
    from bncbench.data.uci import load_uci
    from bncbench.model.preprocess import Discretizer

    ds = load_uci(name)
    y = np.asarray(ds.y, dtype=np.int64)
    train = np.random.default_rng(0).random(len(y)) < 0.5
    disc = Discretizer(reserve_missing=ds.X.isna().any(axis=0).to_numpy()).fit(ds.X[train], y[train])
    codes = disc.transform(ds.X)
    return codes[train], y[train], codes[~train], disc.cardinalities_, int(ds.n_classes)


def fit_predict(structure, n, Xtr, ytr, Xte, cards):
    from bncbench import BNClassifier

    clf = BNClassifier(structure=structure, n=n, cardinalities=cards, m=1.0)
    t0 = time.perf_counter()
    clf.fit(Xtr, ytr)
    t1 = time.perf_counter()
    proba = clf.predict_proba(Xte)
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, proba, clf


def bench_aode(repeats, log):
    from bncbench.peers.weka import run_weka, weka_jar

    rows = []
    if weka_jar() is None:
        log("aode: Weka is not available (apt-get install weka, or WEKA_JAR): skipped")
        return rows
    for name in DATASETS:
        Xtr, ytr, Xte, cards, Y = load(name)
        fit_predict("ande", 1, Xtr[:500], ytr[:500], Xte[:50], cards)  # compile
        ours, proc, own = [], [], []
        for rep in range(repeats):
            w = run_weka("weka.classifiers.bayes.AODE", WEKA_OPTIONS, Xtr, ytr, Xte, cards, Y,
                         java_options=JAVA_OPTIONS)
            f, p, proba, _ = fit_predict("ande", 1, Xtr, ytr, Xte, cards)
            ours.append(f + p)
            proc.append(w.process)
            own.append(w.build + w.predict)
            diff = float(np.abs(proba - w.proba).max())
            log(f"aode {name} rep {rep}: ours {f:.3f} + {p:.3f} s; Weka process {w.process:.3f} s, "
                f"build {w.build:.3f} + predict {w.predict:.3f} s; max |P_ours - P_weka| = {diff:.1e}")
        rows.append((name, Xtr.shape, len(Xte), statistics.median(ours), statistics.median(proc),
                     statistics.median(own), diff))
    return rows


def child(name, structure, n, path):
    """One fit + predict in this fresh process; prints its times and peak memory as JSON."""
    data = np.load(path)
    Xtr, ytr, Xte, cards = data["Xtr"], data["ytr"], data["Xte"], data["cards"]
    fit_predict(structure, n, Xtr[:300], ytr[:300], Xte[:30], cards)  # compile on a few rows
    base = rss_now()
    reset = reset_peak(strict=False)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    f, p, _, clf = fit_predict(structure, n, Xtr, ytr, Xte, cards)
    peak = peak_since_reset() if reset else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    tables = clf.scorer_.tables
    kept = tables.rows.nbytes() + sum(getattr(tables, a).nbytes for a in ("child_counts",) if hasattr(tables, a))
    print(json.dumps({"fit": f, "predict": p, "base": base, "peak": peak, "before": before, "reset": reset,
                      "rows": tables.rows.n_rows, "subsets": tables.rows.n_subsets, "kept": kept,
                      "n_parameters": int(clf.n_parameters_)}))


def bench_memory(log):
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in DATASETS:
            Xtr, ytr, Xte, cards, _ = load(name)
            path = Path(tmp) / f"{name}.npz"
            np.savez(path, Xtr=Xtr, ytr=ytr, Xte=Xte, cards=cards)
            for structure, n in MEMORY_MODELS:
                res = subprocess.run([sys.executable, __file__, "--child", name, structure, str(n), str(path)],
                                     capture_output=True, text=True)
                if res.returncode != 0:
                    log(f"memory {name} {structure} n={n}: failed: {res.stderr.strip().splitlines()[-1:]}")
                    continue
                r = json.loads(res.stdout.strip().splitlines()[-1])
                label = f"A{n}{'DE' if structure == 'ande' else 'JE'}"
                peak = (r["peak"] - r["base"]) / 2**20
                log(f"memory {name} {label}: fit {r['fit']:.2f} s, predict {r['predict']:.2f} s, peak +{peak:.0f} MiB "
                    f"over {r['base'] / 2**20:.0f} MiB ({'VmHWM reset' if r['reset'] else 'ru_maxrss'}), "
                    f"{r['subsets']:,} subsets, {r['rows']:,} seen rows")
                rows.append((name, label, r["fit"], r["predict"], peak, r["base"] / 2**20, r["subsets"], r["rows"],
                             r["kept"] / 2**20))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="aode,memory", help="comma-separated parts: aode, memory")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        name, structure, n, path = args.child
        return child(name, structure, int(n), path)
    only = set(args.only.split(","))

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    log(f"{platform.platform()}, Python {platform.python_version()}, load average {os.getloadavg()}")
    if "aode" in only:
        rows = bench_aode(args.repeats, log)
        print("\n| dataset | train × attributes, test | ours fit+predict s | Weka process s | ratio | "
              "Weka build+predict (in JVM) s | ratio | max abs diff of P |")
        print("|---|---|---:|---:|---:|---:|---:|---:|")
        for name, shape, n_test, ours, proc, own, diff in rows:
            print(f"| {name} | {shape[0]:,} × {shape[1]}, {n_test:,} | {ours:.3f} | {proc:.3f} | "
                  f"{ours / proc:.2f}× | {own:.3f} | {ours / own:.2f}× | {diff:.1e} |")
    if "memory" in only:
        rows = bench_memory(log)
        print("\n| dataset | model | fit s | predict s | peak memory above base, MiB | base MiB | subsets | "
              "seen rows | counts kept, MiB |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
        for name, label, f, p, peak, base, S, R, kept in rows:
            print(f"| {name} | {label} | {f:.2f} | {p:.2f} | {peak:.0f} | {base:.0f} | {S:,} | {R:,} | {kept:.1f} |")
    log(f"load average at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()

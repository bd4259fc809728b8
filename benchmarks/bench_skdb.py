"""SkDB-5, KDB-5 and KDB-1 fit + predict against the authors' C++ learner ("Gigal"), in the same run; ``import bncbench``.

What is timed: ``BNClassifier(structure=..., k=..., m=1.0, backoff=...)`` fit on the training half
and ``predict_proba`` on the test half of connect-4 and adult, coded and split exactly as
``anchors/gigal/prep.py`` does (:mod:`bncbench.peers.gigal`), single-threaded from integer arrays in
memory, after a warm-up call (numba compiles on first use); medians of ``--repeats`` runs, fit and
predict timed separately, wall and CPU (process time).

The peer: with ``$BNCBENCH_GIGAL_SOURCE`` naming a source checkout or git directory of github
``anamf/SKDB``, Gigal is built from it (:func:`bncbench.peers.gigal.build`: ``g++``, once per sources,
kept under ``$BNCBENCH_CACHE_DIR/gigal``), fed the same codes as its text files, and run
(``-lkdb -k<k>``, ``-lkdb-Selective -selectiveK -k5``) alternately with ours, ``--repeats`` times. Its
fit and predict are the CPU time of ``train()`` and of its test loop measured inside it (its build is
instrumented to microseconds; both include reading its text files, which it streams); the ratio is our
CPU time of fit + predict over that. Without the variable the peer is skipped, with the reason, and the
ratio is taken against the times recorded in ``anchors/gigal/README.md`` (another machine's quiet run).

Also checked: with ``--backoff any_class`` (the default here) our test 0-1 loss equals Gigal's in the
same run, and our probabilities equal the anchors' (``anchors/gigal/probs/``) where they are present.

Also timed: ``python -c "import bncbench"`` and ``python -c "from bncbench import BNClassifier"`` (whole
processes, medians of ``--repeats``).

Usage::

    BNCBENCH_DATA_DIR=../shared/datasets/uci BNCBENCH_GIGAL_SOURCE=path/to/SKDB python benchmarks/bench_skdb.py
        [--repeats 5] [--backoff any_class|per_class] [--only skdb5,kdb5,kdb1] [--datasets connect-4,adult]
        [--profile]

``--profile`` prints where SkDB's fit spends its time (cProfile, top functions) instead of the table.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from bncbench import settings
from bncbench.peers import gigal

# Gigal's times (s) recorded in anchors/gigal/README.md (fit + predict, and fit where given): the fallback
# when the peer cannot be run here
GIGAL_RECORDED = {
    ("connect-4", "kdb1"): (0.168, None), ("connect-4", "kdb5"): (0.228, None),
    ("connect-4", "skdb5"): (0.507, 0.405),
    ("adult", "kdb1"): (0.056, None), ("adult", "kdb5"): (0.109, None), ("adult", "skdb5"): (0.204, 0.183),
}
MODELS = {"kdb1": dict(structure="kdb", k=1), "kdb5": dict(structure="kdb", k=5), "skdb5": dict(structure="skdb", k=5)}


def ours_once(split, kw, backoff):
    """One fit + predict of ours: (fit wall, predict wall, CPU of both, classifier, probabilities)."""
    from bncbench import BNClassifier

    c0 = time.process_time()
    t0 = time.perf_counter()
    clf = BNClassifier(**kw, m=1.0, backoff=backoff, cardinalities=split.cards).fit(split.X_train, split.y_train)
    t1 = time.perf_counter()
    p = clf.predict_proba(split.X_test)
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, time.process_time() - c0, clf, p


def import_time(stmt, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", stmt], check=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def peer_binary():
    """Gigal built from ``$BNCBENCH_GIGAL_SOURCE``, or None with the reason printed."""
    if settings.gigal_source() is None:
        print(f"Gigal: skipped: {settings.GIGAL_SOURCE} is not set (a checkout or git directory of github "
              "anamf/SKDB); ratios are against anchors/gigal/README.md's recorded times", flush=True)
        return None
    t0 = time.perf_counter()
    binary = gigal.build()
    print(f"Gigal: {binary} (built or found in {time.perf_counter() - t0:.1f} s)", flush=True)
    return binary


def profile(datasets, backoff):
    import cProfile
    import pstats

    from bncbench import BNClassifier

    for name, s in datasets.items():
        BNClassifier(structure="skdb", k=5, backoff=backoff, cardinalities=s.cards).fit(s.X_train, s.y_train)
        prof = cProfile.Profile()
        prof.enable()
        BNClassifier(structure="skdb", k=5, backoff=backoff, cardinalities=s.cards).fit(s.X_train, s.y_train)
        prof.disable()
        print(f"== {name}: SkDB-5 fit, backoff={backoff}")
        pstats.Stats(prof).sort_stats("tottime").print_stats(18)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--backoff", default="any_class", choices=["any_class", "per_class"])
    ap.add_argument("--only", default="skdb5,kdb5,kdb1")
    ap.add_argument("--datasets", default="connect-4,adult")
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args(argv)
    src = settings.data_dir()
    if not src:
        sys.exit(f"set {settings.DATA_DIR} to the shared UCI data")
    datasets = {name: gigal.SPLITS[name](src) for name in args.datasets.split(",")}
    if args.profile:
        profile(datasets, args.backoff)
        return
    binary = peer_binary()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, split in datasets.items():
            files = gigal.write_files(split, tmp, name) if binary is not None else None
            for model in args.only.split(","):
                kw = MODELS[model]
                ours_once(split, kw, args.backoff)  # warm-up
                ours, theirs = [], []
                for _ in range(args.repeats):  # alternate: both sides see the same load
                    if files is not None:
                        theirs.append(gigal.run(binary, files, kw["structure"], kw["k"]))
                    ours.append(ours_once(split, kw, args.backoff))
                fit, pred, cpu = (statistics.median(r[i] for r in ours) for i in range(3))
                clf, p = ours[-1][3:]
                err = float(np.mean(p.argmax(1) != split.y_test))
                info = clf.learned_structure_.info
                sel = f" n*={len(info['selected'])} k*={info['k_star']}" if "k_star" in info else ""
                ref = gigal.anchor_probs(name, model)
                agree = f" max|p - anchor p| = {np.abs(p - np.loadtxt(ref)).max():.1e}" if ref.is_file() else ""
                line = (f"{name} {model}: ours fit {fit:.3f} s, predict {pred:.3f} s (CPU {cpu:.3f} s), "
                        f"0-1 {err:.6f}{sel}{agree}")
                if theirs:
                    g = {f: statistics.median(getattr(r, f) for r in theirs)
                         for f in ("fit", "predict", "process_wall", "process_cpu")}
                    line += (f"; Gigal fit {g['fit']:.3f} + predict {g['predict']:.3f} s CPU (process "
                             f"{g['process_cpu']:.3f} s CPU, {g['process_wall']:.3f} s wall), 0-1 "
                             f"{theirs[-1].zero_one:.6f}")
                    peer = (g["fit"] + g["predict"], g["fit"], "same run")
                    err_peer = theirs[-1].zero_one
                else:
                    total, gfit = GIGAL_RECORDED[(name, model)]
                    peer, err_peer = (total, gfit, "recorded"), None
                print(line, flush=True)
                rows.append((name, model, peer, fit + pred, fit, cpu, err, err_peer))
    for stmt in ("import bncbench", "from bncbench import BNClassifier"):
        print(f"`python -c '{stmt}'`: {import_time(stmt, args.repeats):.3f} s (whole process, median of "
              f"{args.repeats})")
    print(f"\n| dataset | model | Gigal fit + predict s (CPU) | bncbench fit + predict s, wall ({args.backoff}) "
          f"| bncbench CPU s | ratio (CPU) | test 0-1 Gigal / bncbench |")
    print("|---|---|---|---|---|---|---|")
    for name, model, (g_total, g_fit, how), ours, ours_fit, cpu, err, err_peer in rows:
        gf = f" (fit {g_fit:.3f})" if g_fit else ""
        e = f"{err_peer:.6f} / {err:.6f}" if err_peer is not None else f"– / {err:.6f}"
        print(f"| {name} | {model} | {g_total:.3f}{gf}, {how} | {ours:.3f} (fit {ours_fit:.3f}) | {cpu:.3f} "
              f"| {cpu / g_total:.2f} | {e} |")


if __name__ == "__main__":
    main()

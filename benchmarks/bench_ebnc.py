"""The EBNC compatibility mode's fit time against the authors' EBNC code's recorded times (issue 41).

What is timed: ``BNClassifier`` in the compatibility mode (``structure=nb|tan_ebnc|kdb_ebnc``,
``estimator=ebnc``, ``param=generative|discriminative|weighted|ebnc_e``, ``init=ebnc``, the optimizer
options of ``conf/optimizer/lbfgs_ebnc.yaml``, ``missing="first_value"``) fitted on the full data of
vote and tic-tac-toe, from integer codes in memory (vote's '?' read as the first declared value, as
their code reads it), single-threaded, after a warm-up fit (numba compiles on first use); medians of
``--repeats`` fits, wall and process CPU time.

The peer: EBNC's times are **not measured here**: they are the ``train_ms`` column of
``anchors/ebnc/train_full.csv`` (their ``wdBayes`` run with ``-V`` on this kind of machine, one run
each, Java; the MAP rows, 150-175 ms for a few hundred rows, show that a fixed cost - JVM warm-up
or ARFF parsing - is inside every number). The ratio is ours over that record, so it carries the
noise of two machines' loads. The anchors hold vote and tic-tac-toe only (no connect-4 timing).

Also printed: our iteration and evaluation counts beside theirs (the same path where
``tests/test_ebnc_compat.py`` finds it).

``--java`` times their code **in the same run** instead (issue 41's benchmark; build:
``benchmarks/ebnc_driver/build.sh``): ``EBNC_JAVA`` is the ``java ... -cp ...`` command of a build of github
``nayyarzaidi/EBNC`` (``1dc655b``, compiled against Weka 3.9 with the native L-BFGS-B of
``anchors/alr/build.sh``) plus a driver class ``EBNCTime`` that fits ``EBNC.wdBayes`` once to warm the JVM up
and then ``--repeats`` times, printing the median wall time and the fitting thread's CPU time. Both sides read
the same data: vote and tic-tac-toe from their ARFF files, connect-4 written to ARFF from bncbench's loader
(declared value order). Their fits run single-threaded (``-M`` off); ours with ``NUMBA_NUM_THREADS=1``.

Usage::

    BNCBENCH_DATA_DIR=../shared/datasets/uci python benchmarks/bench_ebnc.py [--repeats 5]
    EBNC_JAVA="java -cp ..." python benchmarks/bench_ebnc.py --java --datasets connect-4 --repeats 3
    EBNC_JAVA="java -cp ..." python benchmarks/bench_ebnc.py --java --datasets connect-4 --structures TAN KDB1 --params MAP
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd

from bncbench.harness.app import compose_config
from bncbench.harness.model_specs import config_model

ANCHORS = Path(os.environ.get("BNCBENCH_ANCHORS_DIR", Path(__file__).resolve().parents[2] / "shared" / "anchors"))
STRUCTURES = {"NB": ("-S NB", dict(structure="nb")), "TAN": ("-S TAN", dict(structure="tan_ebnc")),
              "KDB1": ("-S KDB -K 1", dict(structure="kdb_ebnc", k=1))}
_EBNC = compose_config(["optimizer=lbfgs_ebnc", "param=discriminative"])
EBNC_OPTIONS = config_model(_EBNC).params["optimizer_options"]
"""``conf/optimizer/lbfgs_ebnc.yaml``'s options, as an experiment composes them (the schema's defaults included)."""
PARAMS = {"MAP": dict(), "dCCBN": dict(param="discriminative"), "wCCBN": dict(param="weighted"),
          "eCCBN": dict(param="ebnc_e")}


def codes_of(name):
    """The dataset as integer codes in declared value order; a missing value stays -1 (read by the model)."""
    from bncbench.data.uci import load_uci

    ds = load_uci(name, os.environ.get("BNCBENCH_DATA_DIR"))
    X = np.column_stack([ds.X[c].cat.codes.to_numpy() for c in ds.X.columns]).astype(np.int64)
    return X, np.asarray(ds.y), [len(ds.X[c].cat.categories) for c in ds.X.columns]



def make(structure, tag, cards):
    from bncbench import BNClassifier

    kw = dict(**STRUCTURES[structure][1], estimator="ebnc", **PARAMS[tag], missing="first_value",
              discretize=False, cardinalities=cards)
    if tag != "MAP":
        kw.update(init="ebnc", optimizer_options=EBNC_OPTIONS)
    return BNClassifier(**kw)


def arff_of(name, directory):
    """The dataset as an ARFF file (its ARFF in the data directory, or written from bncbench's loader)."""
    src = Path(os.environ["BNCBENCH_DATA_DIR"]) / f"{name}.arff"
    if src.exists():
        return src
    from bncbench.data.uci import load_uci

    ds = load_uci(name, os.environ.get("BNCBENCH_DATA_DIR"))
    out = Path(directory) / f"{name}.arff"
    lines = [f"@relation {name}"]
    cols = list(ds.X.columns)
    for j, c in enumerate(cols):
        lines.append(f"@attribute a{j} {{{','.join(f'v{k}' for k in range(len(ds.X[c].cat.categories)))}}}")
    lines.append(f"@attribute class {{{','.join(f'c{k}' for k in range(ds.n_classes))}}}")
    lines.append("@data")
    X = np.column_stack([ds.X[c].cat.codes.to_numpy() for c in cols])
    body = np.char.add("v", X.astype(str))
    rows = [",".join(r) + f",c{y}" for r, y in zip(body.tolist(), np.asarray(ds.y).tolist())]
    out.write_text("\n".join(lines + rows) + "\n")
    return out


def java_time(arff, structure, tag, repeats):
    """Their fit's median wall and CPU ms, measured now (``EBNC_JAVA``'s ``EBNCTime`` driver)."""
    import shlex
    import subprocess

    opts = STRUCTURES[structure][0].split() + ["-P", tag]
    cmd = shlex.split(os.environ["EBNC_JAVA"]) + ["EBNCTime", str(arff), str(repeats), "--", *opts]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    vals = dict(kv.split("=") for kv in out.split())
    return float(vals["wall_ms"]), float(vals["cpu_ms"])


def time_fit(structure, tag, cards, X, y, repeats):
    """Our fit of ``structure`` with ``tag``'s parameters, after an untimed warm-up: the last model and the
    median wall and CPU seconds over ``repeats`` fits."""
    make(structure, tag, cards).fit(X, y)  # warm-up
    wall, cpu = [], []
    for _ in range(repeats):
        clf = make(structure, tag, cards)
        t0, c0 = time.perf_counter(), time.process_time()
        clf.fit(X, y)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return clf, statistics.median(wall), statistics.median(cpu)


def print_table(df, cols):
    """``df``'s ``cols`` as a Markdown table, numbers to 3 significant digits (``–`` for none)."""
    print("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
    for r in df[cols].itertuples(index=False):
        print("| " + " | ".join(v if isinstance(v, str) else ("–" if v is None or v != v else f"{v:.3g}")
                                for v in r) + " |")


def main_java(args):
    import tempfile

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.datasets:
            X, y, cards = codes_of(name)
            arff = arff_of(name, tmp)
            for s in args.structures:
                for tag in args.params:
                    clf, w, c = time_fit(s, tag, cards, X, y, args.repeats)
                    jw, jc = java_time(arff, s, tag, args.repeats)
                    c = 1e3 * c
                    rows.append(dict(dataset=name, model=f"{s} {tag}", ebnc_cpu_ms=jc, ours_cpu_ms=c,
                                     ebnc_wall_ms=jw, ours_wall_ms=1e3 * w, ratio_cpu=c / jc,
                                     iters=getattr(clf.scorer_, "n_iter", None)))
                    print(rows[-1], flush=True)
    df = pd.DataFrame(rows)
    print_table(df, ["dataset", "model", "ebnc_cpu_ms", "ours_cpu_ms", "ratio_cpu", "ebnc_wall_ms", "ours_wall_ms",
                     "iters"])
    print("geometric mean of ours / EBNC (CPU, same run):", float(np.exp(np.log(df.ratio_cpu).mean())))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--java", action="store_true", help="time their code in the same run (EBNC_JAVA)")
    ap.add_argument("--datasets", nargs="+", default=["vote", "tic-tac-toe"])
    ap.add_argument("--structures", nargs="+", choices=list(STRUCTURES), default=list(STRUCTURES))
    ap.add_argument("--params", nargs="+", choices=list(PARAMS), default=list(PARAMS))
    args = ap.parse_args(argv)
    if args.java:
        return main_java(args)
    runs = pd.read_csv(ANCHORS / "ebnc" / "train_full.csv")
    rows = []
    for name in ("vote", "tic-tac-toe"):
        X, y, cards = codes_of(name)
        for s in args.structures:
            for tag in args.params:
                clf, w, c = time_fit(s, tag, cards, X, y, args.repeats)
                theirs = runs[(runs.name == name) & (runs.options == f"{STRUCTURES[s][0]} -P {tag} -V")].iloc[0]
                rows.append(dict(dataset=name, model=f"{s} {tag}", ebnc_ms=theirs.train_ms, ours_wall_ms=1e3 * w,
                                 ours_cpu_ms=1e3 * c, ratio_cpu=1e3 * c / theirs.train_ms,
                                 iters=getattr(clf.scorer_, "n_iter", None), their_iters=theirs.iterations,
                                 fevals=getattr(clf.scorer_, "n_fev", None), their_fevals=theirs.fevals))
                print(rows[-1], flush=True)
    df = pd.DataFrame(rows)
    print_table(df, ["dataset", "model", "ebnc_ms", "ours_cpu_ms", "ours_wall_ms", "ratio_cpu", "iters", "their_iters",
                     "fevals", "their_fevals"])
    print("geometric mean of ours (CPU) / EBNC recorded:", float(np.exp(np.log(df.ratio_cpu).mean())))


if __name__ == "__main__":
    main()

"""Time and peak memory of one cross-validation fold per model of an experiment on one dataset.

    BNCBENCH_DATA_DIR=/work/shared/datasets/uci python benchmarks/bench_fold_cost.py \
        --experiment zaidi2017 --dataset covertype --results-dir /work/results

Issue 13 asks for "the time and peak memory of the zaidi2017 models on covertype per fold". Each
model's task (round ``--round``, fold ``--fold``, exactly the task the experiment runs) is evaluated
in a fresh Python process, ``--jobs`` at a time; the parent reads the child's peak resident set
size from ``wait4``'s resource usage. The record is written to the experiment's results store
like the runner does (same task key), so a later ``python -m bncbench run +experiment=...`` reuses
it instead of recomputing. A task whose record already exists is not rerun (its times are read
from the record; its memory is not known and printed as "-"). One extra process that only loads,
splits and discretizes the data gives the baseline memory ("data only") that every model's peak
includes.

Times are the record's: ``train`` is fit, ``test`` is predict_proba on the other half; ``wall`` is
the whole child process (interpreter start, imports, data load, fit, predict, writing the record).
``--timeout`` stops a model's process after that many seconds and reports it as stopped (nothing
is written for it).
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = """
import pickle, sys
from bncbench.harness.runner import run_task, task_inputs
task, store = pickle.load(open(sys.argv[1], "rb"))
if store is None:  # data only (and the model built, not fitted)
    task_inputs(task)
    sys.exit(0)
rec = run_task(task, store, progress_every=60.0)  # long fits log their progress to stderr
sys.exit(0 if rec.status == "ok" else 3)
"""


def _spawn(task, store, tmp: Path, tag: str):
    path = tmp / f"{tag}.pkl"
    with open(path, "wb") as fh:
        pickle.dump((task, store), fh)
    return subprocess.Popen([sys.executable, "-c", CHILD, str(path)])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--experiment", default="zaidi2017")
    ap.add_argument("--dataset", default="covertype")
    ap.add_argument("--results-dir", default="results", help="the experiment's results_dir (records go there)")
    ap.add_argument("--round", type=int, default=0)
    ap.add_argument("--fold", type=int, default=0)
    ap.add_argument("--models", nargs="*", default=None, help="model labels (default: all of the experiment)")
    ap.add_argument("--jobs", type=int, default=2, help="processes at a time")
    ap.add_argument("--timeout", type=float, default=None, help="seconds per model before it is stopped")
    args = ap.parse_args(argv)

    import pandas as pd

    from bncbench.harness.app import plan
    from bncbench.errors import BNCBenchError
    from bncbench.harness.runner import Task, stored_state
    from bncbench.harness.store import ResultStore, load_results

    try:
        p = plan([f"+experiment={args.experiment}", f"dataset.names=[{args.dataset}]",
                  f"results_dir={Path(args.results_dir).resolve()}"])
    except BNCBenchError as exc:
        print(f"bench_fold_cost: {exc}", file=sys.stderr)
        return 2
    models = [m for m in p.models if args.models is None or m.label in args.models]
    if not models:
        print(f"bench_fold_cost: none of {args.models} is a model of {args.experiment}", file=sys.stderr)
        return 2
    store = ResultStore(p.root)
    tasks = [Task(p.datasets[0], m, args.round, args.fold, p.protocol, p.data_dir) for m in models]
    rows: dict[str, dict] = {}
    todo = []
    for t in tasks:
        if stored_state(store, t)[2]:
            rows[t.model.label] = {"reused": True}
        else:
            todo.append(t)
    with tempfile.TemporaryDirectory(prefix="bncbench-fold-cost-") as tmp:
        tmp = Path(tmp)
        proc = _spawn(tasks[0], None, tmp, "data")
        _, status, ru = os.wait4(proc.pid, 0)
        base = ru.ru_maxrss / 1024
        print(f"data only: peak {base:.0f} MiB", file=sys.stderr, flush=True)
        running: dict[int, tuple] = {}
        queue = list(todo)
        while queue or running:
            while queue and len(running) < max(1, args.jobs):
                t = queue.pop(0)
                pr = _spawn(t, str(p.root), tmp, f"m{len(queue)}")
                running[pr.pid] = (t, pr, time.monotonic())
            pid, status, ru = os.wait4(-1, os.WNOHANG)
            if pid == 0:
                time.sleep(0.2)
                if args.timeout is not None:
                    for t, pr, t0 in list(running.values()):
                        if time.monotonic() - t0 > args.timeout:
                            # reaped here: a second kill() would reap it through poll() and the
                            # next wait4(-1) would find no child
                            pr.kill()
                            pr.wait()
                            running.pop(pr.pid)
                            rows[t.model.label] = {"stopped": time.monotonic() - t0}
                            print(f"{t.model.label}: stopped after {args.timeout:.0f} s", file=sys.stderr, flush=True)
                continue
            if pid not in running:
                continue
            t, pr, t0 = running.pop(pid)
            pr.returncode = os.waitstatus_to_exitcode(status)
            rows.setdefault(t.model.label, {}).update(wall=time.monotonic() - t0, peak=ru.ru_maxrss / 1024,
                                                    code=pr.returncode)
            print(f"{t.model.label}: {rows[t.model.label]}", file=sys.stderr, flush=True)
    res = load_results(p.root)
    if res.empty:  # nothing finished (every model stopped)
        res = pd.DataFrame(columns=["dataset", "round", "fold", "model", "status", "n_train"])
    res = res[(res["dataset"] == args.dataset) & (res["round"] == args.round) & (res["fold"] == args.fold)]
    res = res.set_index("model")
    print(f"\n{args.experiment} on {args.dataset}, round {args.round} fold {args.fold}: "
          f"{int(res['n_train'].iloc[0]) if len(res) else '?'} training rows; data only {base:.0f} MiB\n")
    print("| model | train (s) | test (s) | iterations | peak RSS (MiB) | process wall (s) |")
    print("|---|---:|---:|---:|---:|---:|")
    for m in models:
        r = rows.get(m.label, {})
        if "stopped" in r:
            print(f"| {m.label} | stopped after {r['stopped']:.0f} s | | | | |")
            continue
        if m.label not in res.index or res.loc[m.label, "status"] != "ok":
            print(f"| {m.label} | failed | | | {r.get('peak', float('nan')):.0f} | |")
            continue
        x = res.loc[m.label]
        it = x.get("n_iter")
        it = "" if it is None or it != it else f"{int(it)}"
        peak = "-" if "peak" not in r else f"{r['peak']:.0f}"
        wall = "-" if "wall" not in r else f"{r['wall']:.0f}"
        print(f"| {m.label} | {x['train_time']:.1f} | {x['test_time']:.2f} | {it} | {peak} | {wall} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

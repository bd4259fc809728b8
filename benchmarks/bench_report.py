"""The report stage's time on the zaidi_dbl rerun: this checkout against another one, paired and interleaved.

    git archive <rev> | tar -x -C /tmp/before        # the tree to compare with (no git state touched)
    python benchmarks/bench_report.py --before /tmp/before --pairs 3

Each run is ``python -m bncbench report`` in a fresh process on the committed store (``store2/``, 109 records)
supplemented by the rerun's ``summary.csv`` (783 more means: 62 datasets x 13 models) with the experiment's config,
``--no-figures`` (the tables, their LaTeX and Markdown, the Friedman tests); the two trees take turns, and every
pair's outputs must be the same files byte for byte. Prints each run's wall and CPU seconds (the child's) and the
medians' ratio (this checkout / before).
"""

from __future__ import annotations

import argparse
import filecmp
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RERUN = REPO / "docs" / "reproductions" / "zaidi_dbl_rerun"
ARGS = [str(RERUN / "store2"), "--supplement", str(RERUN / "reg_rows" / "summary.csv"),
        "--config", str(REPO / "conf" / "experiment" / "zaidi_dbl.yaml"), "--no-figures"]


def run(tree: Path, out: Path) -> tuple[float, float]:
    """One report by the package in ``tree``: wall and CPU seconds of its process."""
    env = {**os.environ, "PYTHONPATH": str(tree), "MPLBACKEND": "Agg"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    # -P: the cwd (the repository, whose paths the report shows relative to it) is not put before PYTHONPATH
    subprocess.run([sys.executable, "-P", "-m", "bncbench", "report", *ARGS, "--out", str(out)], check=True, env=env,
                   cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


SOURCE = re.compile(r"Source: .*?(?=\[summary\.csv\]|<a href=\"summary\.csv\">)")
"""The overview's Source sentence: its paths are shown from the package's repository, which differs by tree."""


def same_files(a: Path, b: Path) -> bool:
    """The two report directories hold the same files with the same bytes (the index's Source sentence aside)."""
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or cmp.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    for name in mismatch:
        if not name.startswith("index.") or SOURCE.sub("", (a / name).read_text()) != SOURCE.sub(
                "", (b / name).read_text()):
            return False
    return not errors and all(same_files(a / d, b / d) for d in cmp.common_dirs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, required=True, help="a tree of the package to compare with")
    ap.add_argument("--pairs", type=int, default=3)
    args = ap.parse_args(argv)
    if not (args.before / "bncbench" / "__init__.py").is_file():
        print(f"error: no bncbench package under {args.before}", file=sys.stderr)
        return 2
    times = {"before": [], "this": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.pairs):
            order = [("before", args.before), ("this", REPO)]
            for name, tree in order if i % 2 == 0 else order[::-1]:
                times[name].append(run(tree, Path(tmp) / f"{name}{i}"))
                print(f"pair {i} {name}: wall {times[name][-1][0]:.1f} s, CPU {times[name][-1][1]:.1f} s", flush=True)
            if not same_files(Path(tmp) / f"before{i}", Path(tmp) / f"this{i}"):
                print(f"error: pair {i}: the two reports differ", file=sys.stderr)
                return 1
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in times.items()}
    print(f"median before: wall {med['before'][0]:.1f} s, CPU {med['before'][1]:.1f} s; this: wall "
          f"{med['this'][0]:.1f} s, CPU {med['this'][1]:.1f} s; ratio (this / before): wall "
          f"{med['this'][0] / med['before'][0]:.3f}, CPU {med['this'][1] / med['before'][1]:.3f}; the reports the same")
    return 0


if __name__ == "__main__":
    sys.exit(main())

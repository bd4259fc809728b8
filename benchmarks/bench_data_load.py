"""Load every registered dataset from a cold parse cache, then from a warm one.

    BNCBENCH_DATA_DIR=/work/shared/datasets/uci python benchmarks/bench_data_load.py

Targets (issue 3): < 60 s cold, < 5 s warm. The cache lives in a fresh temporary
directory (BNCBENCH_CACHE_DIR is overridden for the run), so the user's cache is
neither used nor touched. Each timing includes the sha256 verification of the file.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=None, help="default: $BNCBENCH_DATA_DIR")
    ap.add_argument("--verbose", "-v", action="store_true", help="per-dataset timings")
    args = ap.parse_args(argv)

    from bncbench.data import uci

    ddir = uci.resolve_data_dir(args.data_dir)
    names = [n for n, e in uci.load_registry().items() if (ddir / e["file"]).is_file()]
    if not names:
        print(f"no registered dataset present in {ddir}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="bncbench-bench-cache-") as cache:
        os.environ["BNCBENCH_CACHE_DIR"] = cache
        totals = {}
        for phase in ("cold", "warm"):
            t0 = time.perf_counter()
            slow = []
            for n in names:
                t = time.perf_counter()
                uci.load_uci(n, ddir)
                dt = time.perf_counter() - t
                slow.append((dt, n))
            totals[phase] = time.perf_counter() - t0
            if args.verbose:
                for dt, n in sorted(slow, reverse=True)[:10]:
                    print(f"  {phase} {n:<16} {dt:7.3f} s")
    print(f"datasets: {len(names)} in {ddir}")
    print(f"cold cache: {totals['cold']:7.2f} s  (target < 60 s)")
    print(f"warm cache: {totals['warm']:7.2f} s  (target < 5 s)")
    return 0 if totals["cold"] < 60 and totals["warm"] < 5 else 1


if __name__ == "__main__":
    sys.exit(main())

"""One evaluation of AnJE's objective with more than two classes: CPU time of ``Problem.fg`` (the softmax kernels).

    BNCBENCH_DATA_DIR=/work/shared/datasets/uci python benchmarks/bench_softmax_eval.py --datasets optdigits letter

DBL^n's problem (``param=weighted``; ``--param discriminative`` for LR^n) with the authors' penalty
(``reg=rows lam=0.01``) on the first half of each dataset's rows (the size of a 2-fold CV training fold), MDL on
all rows, codes out of range read as the first value (``bench_alr.prepare``). ``--evals`` evaluations of the
objective and gradient at random points (normal, sd 0.3, seed 1), the evaluation cache cleared before each, CPU
time (``process_time``) in this single-threaded process (numba and BLAS: 1 thread, set before importing them).
Prints the median per evaluation, the kernel the design uses and the objective at the first point. To compare
two checkouts, run it alternately with ``PYTHONPATH`` pointing at each; ``--save`` writes the first point's
objective and gradient (``.npy``) for a check between them (``np.array_equal`` where the sums keep their order).
"""

from __future__ import annotations

import os

for _k in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_k, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_alr import prepare  # noqa: E402
from bench_alr_eval import problem_of, time_evaluations  # noqa: E402


def kernel_of(pb) -> str:
    """Which kernel the problem's training term runs (``combined`` tables or the ``per-subset`` one)."""
    design = getattr(pb.cll.data, "design", None)
    if design is None or not hasattr(design, "combined"):
        return "row table"
    return "combined" if design.combined(pb.cll.data.C.shape[1]) is not None else "per-subset"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["optdigits", "letter", "pendigits", "satellite", "thyroid"])
    ap.add_argument("--n", type=int, default=3, help="AnJE's n (default 3)")
    ap.add_argument("--param", default="weighted", choices=("weighted", "discriminative"))
    ap.add_argument("--evals", type=int, default=5)
    ap.add_argument("--save", help="directory for each problem's f and gradient at the first point (.npy)")
    ap.add_argument("--combine-subsets", choices=("true", "false"), help="the engine option combine_subsets "
                    "(default: the engine's)")
    args = ap.parse_args(argv)
    import bncbench

    print(f"bncbench from {Path(bncbench.__file__).parent}")
    print("| dataset | n | classes | parameters | kernel | ms CPU per evaluation (median) | min "
          "| f at the first point |")
    print("|---|---:|---:|---:|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as td:
        for name in args.datasets:
            data = prepare(name, Path(td))
            combine = None if args.combine_subsets is None else args.combine_subsets == "true"
            pb = problem_of(data["npz"], args.param, combine, n=args.n, rows=data["N"] // 2)
            save = Path(args.save) / f"fg_{name}_{args.n}_{args.param}.npy" if args.save else None
            f0, ts = time_evaluations(pb, args.evals, save)
            print(f"| {name} | {args.n} | {data['nc']} | {pb.pmap.n_params:,} | {kernel_of(pb)} | "
                  f"{1000 * float(np.median(ts)):.1f} | {1000 * min(ts):.1f} | {f0!r} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""DBL² from AnJE's weights against DBL² from 0 on every Little dataset, on the objective ``stop=ebnc`` watches
(``zaidi_dbl.md``, §6.3).

    BNCBENCH_DATA_DIR=/work/shared/datasets/uci NUMBA_NUM_THREADS=1 \\
        python docs/reproductions/zaidi_dbl_start.py --fit      # the fits (about 15 CPU minutes), then the summary
    python docs/reproductions/zaidi_dbl_start.py                # the summary, from the committed fits only

Started at AnJE's weights (footnote 3's start: the class row's weights 1, every pair's AnJE's exponent 1/(a-1)), DBL²
with the authors' penalty reaches a low training NLL sooner than started at 0, but ``stop=ebnc`` ends it later on
most datasets (``reach.csv``: round 0, fold 0). ``objective_reach.csv`` measured the penalized objective, which the
stopping rule watches, on Fig. 15's ten datasets only, at ``curves.csv``'s kept iterations. ``--fit`` fits round 0,
fold 0 of DBL² from both starts (:data:`STARTS`) on every Little dataset of ``convergence.csv``, exactly as
``zaidi_dbl_figures.py --fit`` does (so the same iterations as ``reach.csv``), and keeps every iteration's objective.
It writes, into ``zaidi_dbl_rerun/figures/`` (going on from it when run again):

``start_objective.csv``
    one row per fit: ``start`` (``anje`` or ``zero``), ``n_iter`` (where ``stop=ebnc`` ended it), the training NLL
    and the penalized objective at the start and the end, the penalty at the start, and ``obj_e4``, ``obj_e6`` (the
    first iteration whose objective is within 1e-4, 1e-6 of ``nll_uniform`` above the fit's final objective,
    ``nll_uniform`` being LR²'s N ln K from ``reach.csv``) and ``reach_e3`` (the same for the NLL at 1e-3, as
    ``reach.csv`` measures it).
``start_objective_summary.csv``
    per measure: on how many datasets the start at AnJE's weights needs fewer / as many / more iterations than the
    start at 0, the two-tailed sign test and the geometric mean of the ratios.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from zaidi_dbl_figures import LEVELS, OBJ_LEVELS, OUT, _tasks, path, reach, signs  # noqa: E402

STARTS = {"anje": "generative", "zero": "zeros"}
"""start -> the initialization of the experiment's ``DBL2`` (its own, AnJE's weights; or 0, as ``DBL2-zero``)."""
# (zaidi_dbl_figures puts benchmarks/ on sys.path, for _fold)
OBJ = {k: OBJ_LEVELS[k] for k in ("obj_e4", "obj_e6")}
NLL = {"reach_e3": LEVELS["reach_e3"]}
COLUMNS = ["dataset", "start", "n_iter", "nll_start", "nll_final", "obj_start", "obj_final", "pen_start",
           "nll_uniform", *OBJ, *NLL, "source"]
MEASURES = ["n_iter", *OBJ, *NLL]


def _refit(dataset: str, start: str) -> list[dict]:
    """Round 0, fold 0 of the experiment's ``DBL2`` from ``start`` (:data:`STARTS`), its trace."""
    from _fold import fold_inputs

    fold = fold_inputs("zaidi_dbl", dataset, "DBL2")
    est = fold.estimator
    est.set_params(init=STARTS[start])
    est.fit(*fold.training)
    return list(est.trace_)


def row(dataset: str, start: str, trace: list[dict], uniform: float, source: str) -> dict:
    """A fit's row of ``start_objective.csv`` from its trace (``nll`` and ``obj`` per iteration)."""
    t = path(trace)
    nll, obj = t["nll"].to_numpy(), t["obj"].to_numpy()
    return {"dataset": dataset, "start": start, "n_iter": len(nll) - 1, "nll_start": nll[0],
            "nll_final": nll[-1], "obj_start": obj[0], "obj_final": obj[-1], "pen_start": obj[0] - nll[0],
            "nll_uniform": uniform, **reach(obj, uniform, OBJ), **reach(nll, uniform, NLL), "source": source}


def fit(out: Path) -> None:
    """Both fits of every dataset into ``start_objective.csv`` (cheapest datasets first); goes on from it."""
    from bncbench.atomic import atomic_write_bytes
    from bncbench.harness.provenance import environment

    file = out / "start_objective.csv"
    have = pd.read_csv(file) if file.is_file() else pd.DataFrame(columns=COLUMNS)
    done = set(zip(have["dataset"], have["start"]))
    uniform = pd.read_csv(out / "reach.csv").query("model == 'LR2'").set_index("dataset")["nll_uniform"]
    commit = environment().get("commit")
    for dataset in dict.fromkeys(d for d, n in _tasks() if n == 2):
        rows = [row(dataset, s, _refit(dataset, s), float(uniform[dataset]), f"refit {commit}")
                for s in STARTS if (dataset, s) not in done]
        if not rows:
            continue
        for r in rows:
            print(f"{dataset} / DBL2 from {r['start']}: {r['n_iter']} iterations", file=sys.stderr, flush=True)
        have = pd.concat([have, pd.DataFrame(rows, columns=COLUMNS)], ignore_index=True)
        atomic_write_bytes(file, have.to_csv(index=False, float_format="%.10g").encode())


def summary(r: pd.DataFrame) -> pd.DataFrame:
    """Per measure: the start at AnJE's weights fewer / as many / more iterations than the start at 0."""
    a = r[r["start"] == "anje"].set_index("dataset")
    z = r[r["start"] == "zero"].set_index("dataset")
    both = a.index.intersection(z.index)
    return pd.DataFrame([{"measure": col, **signs(a.loc[both, col].to_numpy(float), z.loc[both, col].to_numpy(float),
                                                  ("median_anje", "median_zero"))} for col in MEASURES])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fit", action="store_true", help="the fits first (start_objective.csv; needs the data)")
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args(argv)
    if a.fit:
        fit(a.out)
    from bncbench.atomic import atomic_write_bytes

    s = summary(pd.read_csv(a.out / "start_objective.csv"))
    atomic_write_bytes(a.out / "start_objective_summary.csv", s.to_csv(index=False, float_format="%.6g").encode())
    print(s.to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())

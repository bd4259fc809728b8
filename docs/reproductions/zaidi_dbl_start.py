"""DBLⁿ from AnJE's weights against the same from 0 on the Little datasets, on the objective ``stop=ebnc`` watches
(``zaidi_dbl.md``, §6.3).

    BNCBENCH_DATA_DIR=/work/shared/datasets/uci NUMBA_NUM_THREADS=1 \\
        python docs/reproductions/zaidi_dbl_start.py --fit      # the fits (under an hour of CPU), then the summary
    python docs/reproductions/zaidi_dbl_start.py                # the summary, from the committed fits only

Started at AnJE's weights (footnote 3's start: the class row's weights 1, every pair's AnJE's exponent 1/(a-1)), DBL²
with the authors' penalty reaches a low training NLL sooner than started at 0, but ``stop=ebnc`` ends it later on
most datasets (``reach.csv``: round 0, fold 0). ``objective_reach.csv`` measured the penalized objective, which the
stopping rule watches, on Fig. 15's ten datasets only, at ``curves.csv``'s kept iterations. ``--fit`` fits round 0,
fold 0 of DBL² from both starts (:data:`STARTS`) on every Little dataset of ``convergence.csv``, exactly as
``zaidi_dbl_figures.py --fit`` does (so the same iterations as ``reach.csv``), and keeps every iteration's objective.
Then, to see whether the penalty is what slows the start at AnJE's weights, both starts again without it (``lam=0``)
on the datasets where that problem is far from separable (:data:`LOOSE`: DBL²'s penalized fit ends at a training
NLL above 5 % of N ln K; a nearly separable one has no finite optimum without the penalty). Then all of it again for
DBL¹ (its AnJE is naive Bayes; from AnJE's weights it needs more iterations than LR¹, from 0 fewer), and for DBL³ on
the :data:`LOOSE` datasets only, where ``DBL3-zero`` was fitted (its cheap folds) (:data:`MODELS`). It writes, into
``zaidi_dbl_rerun/figures/`` (going on from them when run again):

``start_objective.csv``
    one row per fit: ``model`` (the experiment's, :data:`MODELS`), ``start`` (``anje`` or ``zero``), ``n_iter`` (where
    ``stop=ebnc`` ended it), the training NLL and the penalized objective at the start and the end, the penalty at the
    start, and ``obj_e4``, ``obj_e6`` (the first iteration whose objective is within 1e-4, 1e-6 of ``nll_uniform``
    above the fit's final objective, ``nll_uniform`` being LRⁿ's N ln K from ``reach.csv``) and ``reach_e3`` (the same
    for the NLL at 1e-3, as ``reach.csv`` measures it).
``start_objective_lam0.csv``
    the same without the penalty (the objective is then the NLL).
``start_objective_summary.csv``
    per model, set of fits (``fits``: with the penalty on every dataset, with it on the :data:`LOOSE` ones, without it
    on those; for DBL3, refitted on the :data:`LOOSE` ones only, ``penalty, reach.csv``: its fits and its control from
    0 in ``reach.csv`` on every dataset, iterations and ``reach_e3`` only) and measure: on how many datasets the start
    at AnJE's weights needs fewer / as many / more iterations than the start at 0, the two-tailed sign test and the
    geometric mean of the ratios.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from zaidi_dbl_figures import LEVELS, OBJ_LEVELS, OUT, _tasks, fold0_trace, path, reach, signs  # noqa: E402

STARTS = {"anje": "generative", "zero": "zeros"}
"""start -> the initialization of the experiment's ``DBL2`` (its own, AnJE's weights; or 0, as ``DBL2-zero``)."""
MODELS = {"DBL2": "all", "DBL1": "all", "DBL3": "loose"}
"""The experiment's models fitted from both starts, in this order, with the penalty on every dataset (``all``) or on the
:data:`LOOSE` ones only (``loose``); without it on the :data:`LOOSE` ones."""
# (zaidi_dbl_figures puts benchmarks/ on sys.path, for _fold)
OBJ = {k: OBJ_LEVELS[k] for k in ("obj_e4", "obj_e6")}
NLL = {"reach_e3": LEVELS["reach_e3"]}
COLUMNS = ["dataset", "model", "start", "n_iter", "nll_start", "nll_final", "obj_start", "obj_final", "pen_start",
           "nll_uniform", *OBJ, *NLL, "source"]
MEASURES = ["n_iter", *OBJ, *NLL]
LOOSE = 0.05
"""The datasets fitted without the penalty too: those whose DBLⁿ (``reach.csv``: penalized, from AnJE's weights) ends
at a training NLL above this fraction of N ln K."""
FILES = {"penalty": "start_objective.csv", "none": "start_objective_lam0.csv"}
"""The fits with the authors' penalty (every dataset) and without it (:data:`LOOSE`)."""


def loose(reach_csv: pd.DataFrame, model: str = "DBL2") -> list[str]:
    """The :data:`LOOSE` datasets of ``reach.csv`` for ``model`` (among those with its control from 0), in its order."""
    r = reach_csv[reach_csv["model"] == model]
    r = r[r["dataset"].isin(reach_csv.loc[reach_csv["model"] == f"{model}-zero", "dataset"])]
    return r.loc[r["nll_final"] > LOOSE * r["nll_uniform"], "dataset"].tolist()


def _refit(dataset: str, model: str, start: str, penalty: bool = True) -> list[dict]:
    """Round 0, fold 0 of the experiment's ``model`` from ``start`` (:data:`STARTS`; without the penalty: ``lam=0``),
    its trace."""
    return fold0_trace(dataset, model, init=STARTS[start], **({} if penalty else {"lam": 0.0}))


def row(dataset: str, model: str, start: str, trace: list[dict], uniform: float, source: str) -> dict:
    """A fit's row of ``start_objective.csv`` from its trace (``nll`` and ``obj`` per iteration)."""
    t = path(trace)
    nll, obj = t["nll"].to_numpy(), t["obj"].to_numpy()
    return {"dataset": dataset, "model": model, "start": start, "n_iter": len(nll) - 1, "nll_start": nll[0],
            "nll_final": nll[-1], "obj_start": obj[0], "obj_final": obj[-1], "pen_start": obj[0] - nll[0],
            "nll_uniform": uniform, **reach(obj, uniform, OBJ), **reach(nll, uniform, NLL), "source": source}


def fit(out: Path) -> None:
    """For each of :data:`MODELS`: both starts of every dataset (or of the :data:`LOOSE` ones) with the penalty, then of
    the :data:`LOOSE` ones without it, into :data:`FILES` (cheapest datasets first); goes on from them."""
    from bncbench.atomic import atomic_write_bytes
    from bncbench.harness.provenance import environment

    reach_csv = pd.read_csv(out / "reach.csv")
    commit = environment().get("commit")
    for model, scope in MODELS.items():
        n = int(model[-1])
        uniform = reach_csv[reach_csv["model"] == f"LR{n}"].set_index("dataset")["nll_uniform"]
        order = list(dict.fromkeys(d for d, k in _tasks() if k == n))
        chosen = [d for d in order if d in set(loose(reach_csv, model))]
        for penalty, datasets in (("penalty", order if scope == "all" else chosen), ("none", chosen)):
            file = out / FILES[penalty]
            have = pd.read_csv(file) if file.is_file() else pd.DataFrame(columns=COLUMNS)
            done = set(zip(have["dataset"], have["model"], have["start"]))
            for dataset in datasets:
                rows = [row(dataset, model, s, _refit(dataset, model, s, penalty == "penalty"),
                            float(uniform[dataset]), f"refit {commit}")
                        for s in STARTS if (dataset, model, s) not in done]
                if not rows:
                    continue
                for r in rows:
                    print(f"{dataset} / {model} from {r['start']} ({penalty}): {r['n_iter']} iterations",
                          file=sys.stderr, flush=True)
                have = pd.concat([have, pd.DataFrame(rows, columns=COLUMNS)], ignore_index=True)
                atomic_write_bytes(file, have.to_csv(index=False, float_format="%.10g").encode())


def summary(r: pd.DataFrame) -> pd.DataFrame:
    """Per measure (of :data:`MEASURES` that ``r`` has): the start at AnJE's weights fewer / as many / more iterations
    than the start at 0."""
    a = r[r["start"] == "anje"].set_index("dataset")
    z = r[r["start"] == "zero"].set_index("dataset")
    both = a.index.intersection(z.index)
    return pd.DataFrame([{"measure": col, **signs(a.loc[both, col].to_numpy(float), z.loc[both, col].to_numpy(float),
                                                  ("median_anje", "median_zero"))} for col in MEASURES if col in r])


def summaries(out: Path) -> pd.DataFrame:
    """Per model, :func:`summary` of the fits with the penalty (all datasets, then the :data:`LOOSE` ones) and without
    it."""
    fits = {k: pd.read_csv(out / f) for k, f in FILES.items()}
    reach_csv = pd.read_csv(out / "reach.csv")
    parts = []
    for model, scope in MODELS.items():
        chosen = set(loose(reach_csv, model))
        with_penalty, without = (fits[k][fits[k]["model"] == model] for k in ("penalty", "none"))
        sets = {"penalty, all": with_penalty} if scope == "all" else {}
        sets |= {"penalty, loose": with_penalty[with_penalty["dataset"].isin(chosen)], "none, loose": without}
        for k, r in sets.items():
            if len(r):
                parts.append(summary(r).assign(fits=k, model=model))
    for model in [m for m, scope in MODELS.items() if scope != "all"]:  # on every dataset: reach.csv's fits, controls
        r = reach_csv[reach_csv["model"].isin([model, f"{model}-zero"])]
        r = r.assign(start=r["model"].map({model: "anje", f"{model}-zero": "zero"}))
        parts.append(summary(r[["dataset", "start", "n_iter", *NLL]]).assign(fits="penalty, reach.csv", model=model))
    out_ = pd.concat(parts, ignore_index=True)
    return out_[["fits", "model", *out_.columns.drop(["fits", "model"])]]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fit", action="store_true", help="the fits first (start_objective*.csv; needs the data)")
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args(argv)
    if a.fit:
        fit(a.out)
    from bncbench.atomic import atomic_write_bytes

    s = summaries(a.out)
    atomic_write_bytes(a.out / "start_objective_summary.csv", s.to_csv(index=False, float_format="%.6g").encode())
    print(s.to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())

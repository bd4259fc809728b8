"""The deep-broad paper's convergence figures (Figs. 11, 13, 15, 16, 17) for ``zaidi_dbl.md``'s rerun, and how fast
each fit's training NLL falls (§6.3's "steeper path").

    python docs/reproductions/zaidi_dbl_figures.py                    # draw, from committed CSVs only
    BNCBENCH_DATA_DIR=/work/shared/datasets/uci NUMBA_NUM_THREADS=1 \\
        python docs/reproductions/zaidi_dbl_figures.py --fit           # first the fits (about 2 CPU hours)

Figs. 11 and 13 (one point per Little dataset: DBLⁿ's mean iterations and training time against LRⁿ's) are drawn
from ``reg_rows/convergence.csv`` (``zaidi_dbl_rerun_tables.py``). Figs. 15-17 (training NLL against iteration)
need each fit's path. ``--fit`` takes round 0, fold 0 of DBLⁿ and LRⁿ (n = 1, 2, 3) on every Little dataset of
``convergence.csv`` from the committed store (``store2/``) where it holds that task, and otherwise fits it exactly as
the experiment does (``benchmarks/_fold.py``: the runner's task, data, discretization and model, at this commit);
then, as controls, DBL¹ and DBL² started at weights 0 (:data:`ZERO1`, :data:`ZERO`) on the same datasets, and DBL³
started at 0 (:data:`ZERO3`) on those where its fold is cheap (:data:`ZERO3_SECONDS`). It writes, into
``zaidi_dbl_rerun/figures/`` (and goes on from them when run again):

``reach.csv``
    one row per fit: its iterations (``n_iter``, where ``stop=ebnc`` ended it), its training NLL before the first
    iteration and at the end, ``nll_uniform`` (N ln K, the NLL of uniform class probabilities: LRⁿ's start) and
    ``reach_e2``, ``reach_e3``, ``reach_e4``: the first iteration whose NLL is within 1e-2, 1e-3, 1e-4 of
    ``nll_uniform`` above the fit's final NLL (a scale shared by the pair); ``source`` is ``store2`` or
    ``refit <commit>``.
``reach_summary.csv``
    per pair (DBLⁿ, LRⁿ; and the controls against LR¹, LR², LR³): on how many datasets DBLⁿ reaches each level in
    fewer / as many / more iterations than LRⁿ, the two-tailed sign test of fewer against more and the geometric
    mean of the ratios; and the same for ``n_iter``.
``objective_reach.csv`` (drawn with the figures, from ``curves.csv``)
    for Fig. 15's fits: the first iteration kept in ``curves.csv`` whose penalized objective (what ``stop=ebnc``
    watches) is within 1e-3 ... 1e-6 of ``nll_uniform`` above the fit's final objective.
``curves.csv``
    the figures' datasets' paths: training NLL and objective at about 300 iterations spread evenly on the
    figures' log axis (every iteration up to 100, the last one always).
``fig11_iterations``, ``fig13_training_time``, ``fig15_dbl2_lr2``, ``fig16_dbl3_lr3``, ``fig17_n123``
    each figure as ``.png`` (for the page) and ``.pdf`` (vector, for a paper), without dates, so the same data
    gives the same bytes.

The paper does not name its sample datasets (Figs. 15-16) and draws Fig. 17 on Localization, which we do not
have; ours are :data:`FIG15`, :data:`FIG16` and :data:`FIG17`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(1, str(HERE.parents[1] / "benchmarks"))

OUT = HERE / "zaidi_dbl_rerun" / "figures"
ROWS = HERE / "zaidi_dbl_rerun" / "reg_rows"
STORE = HERE / "zaidi_dbl_rerun" / "store2"
FIG15 = ["vote", "tic-tac-toe", "kr-vs-kp", "sick", "spambase", "satellite", "magic", "letter", "adult", "connect-4"]
"""Fig. 15's datasets (DBL² and LR²): from a few hundred to 34,000 training rows."""
FIG16 = ["vote", "tic-tac-toe", "kr-vs-kp", "sick", "magic", "spambase", "satellite", "musk1"]
"""Fig. 16's (DBL³ and LR³)."""
FIG17 = "magic"
"""Fig. 17's dataset (n = 1, 2, 3): 19,020 rows, its DBL³ and LR³ fitted in minutes."""
POINTS = 300
LEVELS = {"reach_e2": 1e-2, "reach_e3": 1e-3, "reach_e4": 1e-4}
OBJ_LEVELS = {"obj_e3": 1e-3, "obj_e4": 1e-4, "obj_e5": 1e-5, "obj_e6": 1e-6}
ZERO = "DBL2-zero"
"""The control: DBL2 started at weights 0 (uniform class probabilities, LR2's start; the authors' code's default)
instead of AnJE's, so that a faster fall is the parameterization's, not the start's."""
ZERO1 = "DBL1-zero"
"""The same for DBL1."""
ZERO3 = "DBL3-zero"
"""The same for DBL3, on the datasets whose DBL3 fold takes at most :data:`ZERO3_SECONDS`."""
ZERO3_SECONDS = 300.0
"""DBL3's mean training seconds a fold (``convergence.csv``) up to which :data:`ZERO3` is fitted (about 25 CPU
minutes in all; which datasets it leaves out is :func:`_zero3`'s to say, and ``zaidi_dbl.md``'s)."""
CONTROLS = {ZERO1: "DBL1", ZERO: "DBL2", ZERO3: "DBL3"}
"""A control's model of the experiment, fitted from 0 instead."""
ZEROS = {int(m[-1]): c for c, m in CONTROLS.items()}
"""n: the control of DBLⁿ."""
PAIRS = [("DBL1", "LR1"), ("DBL2", "LR2"), ("DBL3", "LR3"), (ZERO, "LR2"), (ZERO3, "LR3"), (ZERO1, "LR1")]
REACH = ["dataset", "model", "n_iter", "nll_start", "nll_final", "nll_uniform", *LEVELS, "source"]


def thin(n_iter: int, points: int = POINTS) -> np.ndarray:
    """The iterations kept of a path of ``n_iter`` iterations: every one up to 100, then about ``points`` in all
    spread evenly on a log axis of ``iteration + 1``, and always the last."""
    grid = np.unique(np.round(np.geomspace(1, n_iter + 1, points)).astype(int) - 1)
    return np.union1d(np.union1d(np.arange(min(n_iter, 100) + 1), grid), [n_iter])


def path(trace: list[dict]) -> pd.DataFrame:
    """A trace as a frame indexed by every iteration 0..last (``nll``, ``obj``), an iteration not logged keeping
    the last value logged."""
    t = pd.DataFrame(trace).drop_duplicates("iter", keep="last").set_index("iter").sort_index()
    if "obj" not in t:
        t["obj"] = t["nll"]
    return t[["nll", "obj"]].reindex(range(int(t.index[-1]) + 1)).ffill()


def reach(values: np.ndarray, uniform: float, levels: dict = LEVELS) -> dict:
    """Per level: the first position whose value is within ``level * uniform`` of the last value (``reach_*``: the
    first iteration whose NLL is within each of :data:`LEVELS` of ``uniform`` above the final NLL)."""
    return {k: int(np.argmax(values - values[-1] <= e * uniform)) for k, e in levels.items()}


def _stored() -> pd.DataFrame:
    from bncbench.harness.store import load_stores

    r = load_stores([STORE], with_trace=True)
    return r[(r["status"] == "ok") & (r["round"] == 0) & (r["fold"] == 0)].set_index(["dataset", "model"])


def fold0_trace(dataset: str, label: str, **params) -> list[dict]:
    """The trace of round 0, fold 0 of the experiment's model ``label`` fitted as the experiment fits it, with
    ``params`` (estimator parameters: ``init``, ``lam``) set on it first."""
    from _fold import fold_inputs

    fold = fold_inputs("zaidi_dbl", dataset, label)
    est = fold.estimator
    if params:
        est.set_params(**params)
    est.fit(*fold.training)
    return list(est.trace_)


def _refit(dataset: str, label: str) -> list[dict]:
    """Round 0, fold 0 of ``label`` (or of a control, :data:`CONTROLS`: its model started at 0)."""
    if label in CONTROLS:
        return fold0_trace(dataset, CONTROLS[label], init="zeros")
    return fold0_trace(dataset, label)


def _little_convergence() -> pd.DataFrame:
    """``convergence.csv``'s rows of the Little datasets (``summary.csv``'s ``big`` is false): the Big ones (DBL¹ and
    LR¹ on the Big three) are neither figures' points nor one-fold refits here."""
    conv = pd.read_csv(ROWS / "convergence.csv")
    s = pd.read_csv(ROWS / "summary.csv")
    return conv[conv["dataset"].isin(set(s.loc[~s["big"].astype(bool), "dataset"]))].reset_index(drop=True)


def _tasks() -> list[tuple[str, int]]:
    """(dataset, n) of every Little pair in ``convergence.csv``, cheapest first (the summary's training times)."""
    conv = _little_convergence()
    cost = conv.assign(t=conv["train_time_w"] + conv["train_time_other"], n=conv["w_model"].str[-1].astype(int))
    return [(d, int(n)) for d, n in cost.sort_values(["t", "dataset", "n"])[["dataset", "n"]].to_numpy()]


def _zero3() -> set[str]:
    """The datasets :data:`ZERO3` is fitted on (DBL3 at most :data:`ZERO3_SECONDS` a fold)."""
    conv = pd.read_csv(ROWS / "convergence.csv")
    return set(conv.loc[(conv["w_model"] == "DBL3") & (conv["train_time_w"] <= ZERO3_SECONDS), "dataset"])


def fit(out: Path) -> None:
    """Every pair's fits into ``reach.csv`` and, for the figures' datasets, ``curves.csv``; goes on from them."""
    from bncbench.atomic import atomic_write_bytes
    from bncbench.harness.provenance import environment

    files = {"reach": out / "reach.csv", "curves": out / "curves.csv"}
    have = {k: pd.read_csv(f) if f.is_file() else pd.DataFrame() for k, f in files.items()}
    done = set(map(tuple, have["reach"][["dataset", "model"]].to_numpy())) if len(have["reach"]) else set()
    stored, commit = _stored(), environment().get("commit")
    drawn = {(d, 2) for d in FIG15} | {(d, 3) for d in FIG16} | {(FIG17, n) for n in (1, 2, 3)}
    tasks = _tasks()
    tasks += sorted(drawn - set(tasks))  # a drawn pair not (yet) in the tables
    cheap3 = _zero3()
    controls = [(d, -2) for d, n in tasks if n == 2] + [(d, -3) for d, n in tasks if n == 3 and d in cheap3]
    controls += [(d, -1) for d, n in tasks if n == 1]
    for dataset, n in tasks + controls:  # then the controls (n < 0): DBL2, DBL3 where cheap, DBL1, from 0
        labels = [ZEROS[-n]] if n < 0 else [f"DBL{n}", f"LR{n}"]
        if all((dataset, m) in done for m in labels):
            continue
        got = {}
        for m in labels:
            if (dataset, m) in stored.index:
                got[m] = (path(stored.loc[(dataset, m), "trace"]), "store2")
            else:
                got[m] = (path(_refit(dataset, m)), f"refit {commit}")
        if n > 0:
            uniform = float(got[f"LR{n}"][0]["nll"].iloc[0])  # LRⁿ starts at 0: uniform class probabilities
        else:
            uniform = float(have["reach"].set_index(["dataset", "model"]).loc[(dataset, "LR2"), "nll_uniform"])
        rows, curves = [], []
        for m, (t, source) in got.items():
            nll = t["nll"].to_numpy()
            rows.append({"dataset": dataset, "model": m, "n_iter": len(nll) - 1, "nll_start": nll[0],
                         "nll_final": nll[-1], "nll_uniform": uniform, **reach(nll, uniform), "source": source})
            if (dataset, 2 if n == -2 else n) in drawn:  # (DBL3 from 0: not drawn)
                keep = thin(len(nll) - 1)
                curves.append(t.loc[keep].reset_index().assign(dataset=dataset, model=m)[
                    ["dataset", "model", "iter", "nll", "obj"]])
            print(f"{dataset} / {m}: {rows[-1]}", file=sys.stderr, flush=True)
        have["reach"] = pd.concat([have["reach"], pd.DataFrame(rows, columns=REACH)], ignore_index=True)
        if curves:
            have["curves"] = pd.concat([have["curves"], *curves], ignore_index=True)
        for k, f in files.items():
            atomic_write_bytes(f, have[k].to_csv(index=False, float_format="%.10g").encode())
        done |= {(dataset, m) for m in labels}


def signs(x: np.ndarray, y: np.ndarray, medians: tuple[str, str]) -> dict:
    """Paired counts over datasets: how often ``x`` is below / equal to / above ``y``, the two-tailed sign test of
    below against above, the geometric mean of ``x / y`` and the two medians (named ``medians``)."""
    from bncbench.report.convergence import geomean_ratio
    from bncbench.report.stats import sign_test

    fewer, more = int((x < y).sum()), int((x > y).sum())
    return {"n_datasets": len(x), "fewer": fewer, "equal": int((x == y).sum()), "more": more,
            "p": sign_test(fewer, more), "ratio_geomean": geomean_ratio(x, y),
            medians[0]: float(np.median(x)), medians[1]: float(np.median(y))}


def reach_summary(r: pd.DataFrame) -> pd.DataFrame:
    """Per pair and measure: DBLⁿ fewer / as many / more iterations than LRⁿ over the datasets, sign test, ratio."""
    rows = []
    for w, o in PAIRS:
        a = r[r["model"] == w].set_index("dataset")
        b = r[r["model"] == o].set_index("dataset")
        both = a.index.intersection(b.index)
        if not len(both):
            continue
        for col in ["n_iter", *LEVELS]:
            x, y = a.loc[both, col].to_numpy(float), b.loc[both, col].to_numpy(float)
            rows.append({"pair": f"{w} vs {o}", "measure": col, **signs(x, y, ("median_dbl", "median_lr"))})
    return pd.DataFrame(rows)


def objective_reach(c: pd.DataFrame, r: pd.DataFrame, datasets: list[str], models: list[str]) -> pd.DataFrame:
    """Per (dataset, model) of the thinned curves: the first kept iteration whose penalized objective is within
    each of :data:`OBJ_LEVELS` of the pair's ``nll_uniform`` (``reach.csv``, LR2's) above its final objective."""
    uniform = r[r["model"] == "LR2"].set_index("dataset")["nll_uniform"]
    rows = []
    for d in datasets:
        for m in models:
            s = c[(c["dataset"] == d) & (c["model"] == m)].sort_values("iter")
            if not len(s):
                continue
            it, obj = s["iter"].to_numpy(), s["obj"].to_numpy()
            rows.append({"dataset": d, "model": m, "n_iter": int(it[-1]), "obj_final": obj[-1],
                         **{k: int(it[i]) for k, i in reach(obj, uniform[d], OBJ_LEVELS).items()}})
    return pd.DataFrame(rows)


def _panels(c: pd.DataFrame, datasets: list[str], models: list[str]) -> dict:
    """``{dataset: {model: nll by iteration}}`` from the thinned curves (linear between the kept points)."""
    out = {}
    for d in datasets:
        got = {}
        for m in models:
            s = c[(c["dataset"] == d) & (c["model"] == m)]
            if len(s):
                got[m] = np.interp(np.arange(int(s["iter"].max()) + 1), s["iter"], s["nll"])
        if got:
            out[d] = got
    return out


def draw(out: Path) -> list[Path]:
    """Every figure, ``reach_summary.csv`` and ``objective_reach.csv`` into ``out`` from the committed CSVs;
    returns the files written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bncbench.atomic import atomic_write_bytes
    from bncbench.report.figures import convergence_figure, pair_scatter_figure

    conv = _little_convergence()
    little = {"Little": sorted(set(conv["dataset"]))}
    pairs = [("DBL2", "LR2"), ("DBL3", "LR3")]
    figs = {"fig11_iterations": pair_scatter_figure(conv, pairs, "n_iter", little,
                                                    title="Fig. 11: iterations, Little datasets"),
            "fig13_training_time": pair_scatter_figure(conv, pairs, "train_time", little,
                                                       title="Fig. 13: training time, Little datasets")}
    c = pd.read_csv(out / "curves.csv")
    figs["fig15_dbl2_lr2"] = convergence_figure(_panels(c, FIG15, ["DBL2", "LR2", ZERO]),
                                                title="Fig. 15: DBL² (from AnJE's weights and from 0) and LR², "
                                                      "round 0 fold 0")
    figs["fig16_dbl3_lr3"] = convergence_figure(_panels(c, FIG16, ["DBL3", "LR3"]),
                                                title="Fig. 16: DBL³ and LR³, round 0 fold 0")
    n = _panels(c, [FIG17], ["DBL1", "LR1", "DBL2", "LR2", "DBL3", "LR3"]).get(FIG17, {})
    figs["fig17_n123"] = convergence_figure({f"{FIG17}, n = {k}": {m: n[m] for m in (f"DBL{k}", f"LR{k}") if m in n}
                                             for k in (1, 2, 3)}, title=f"Fig. 17: n = 1, 2, 3 on {FIG17}")
    written = []
    for name, fig in figs.items():  # the PNG for the page, the PDF (vector) for a paper; neither dated
        written.append(out / f"{name}.png")
        fig.savefig(written[-1], dpi=110, metadata={"Software": None})
        written.append(out / f"{name}.pdf")
        fig.savefig(written[-1], metadata={"CreationDate": None})
        plt.close(fig)
    r = pd.read_csv(out / "reach.csv")
    written.append(out / "reach_summary.csv")
    atomic_write_bytes(written[-1], reach_summary(r).to_csv(index=False, float_format="%.6g").encode())
    written.append(out / "objective_reach.csv")
    atomic_write_bytes(written[-1], objective_reach(c, r, FIG15, ["DBL2", ZERO, "LR2"]).to_csv(
        index=False, float_format="%.10g").encode())
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fit", action="store_true", help="the fits first (reach.csv, curves.csv; needs the data)")
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    if a.fit:
        fit(a.out)
    for path_ in draw(a.out):
        print(path_)
    return 0


if __name__ == "__main__":
    sys.exit(main())

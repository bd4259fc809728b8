"""Where the cut points come from: the deep-broad paper's AnJE on ``covertype-grouped``, with MDL fitted on other rows.

    python docs/reproductions/zaidi_dbl_cut_points.py          # under an hour; needs the UCI data

Our A2JE and A3JE on ``covertype-grouped`` are 0.005 and 0.012 above the paper's 0-1 loss (Table 5) while A1JE,
A1DE and A2DE agree, though our AnJE computes the authors' estimates (``tests/test_alr_anchors.py``). Every fold of
``zaidi_dbl`` fits MDL (Fayyad & Irani) on its training rows, as the authors' ALR harness does with ``-D``; this
refits the generative models of Table 5 on the same folds with the cut points taken from other rows
(:data:`VARIANTS`):

``fold``
    the training fold (the experiment's own, as ``bncbench.harness.runner.task_inputs`` builds it; its losses are
    the Big store's records, ``store_big_nov29/folds.csv``);
``whole``
    all rows of the dataset, as a data set discretized once before cross-validation would have them;
``fold_twice``
    the training fold with every row twice: MDL's acceptance test then takes about as many cuts as on the whole
    data, from training rows only (so a difference from ``fold`` that ``fold_twice`` shares is the number of cuts,
    not the test rows seen);
``test``
    the test fold only: the test rows seen, about as many cuts as ``fold``.

census-income, where our models already agree with the paper, is the control (``fold`` and ``whole``), and DBL¹
(about 90 CPU s a fold on ``covertype-grouped``) is refitted with ``fold`` and ``whole`` only (:data:`RUNS`).
Writes into ``zaidi_dbl_rerun/cut_points/``: ``losses.csv`` (dataset, variant, model, round, fold, 0-1 loss,
RMSE), ``cuts.csv`` (dataset, variant, round, fold, attribute, number of cut points) and ``summary.csv`` (mean 0-1
loss and RMSE per dataset, variant and model over the 10 folds, beside the paper's Tables 5 and 6).
``--models DBL1`` runs only the runs of those models and replaces their rows in the existing CSVs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import zaidi_dbl_paper as paper  # noqa: E402  (the paper's Tables 5 and 6)

OUT = HERE / "zaidi_dbl_rerun" / "cut_points"
MODELS = ["A1JE", "A2JE", "A3JE", "A1DE", "A2DE"]
RUNS = [("covertype-grouped", MODELS, ["fold", "whole", "fold_twice", "test"]),
        ("census-income", MODELS, ["fold", "whole"]),
        ("covertype-grouped", ["DBL1"], ["fold", "whole"])]
"""(dataset, models, variants) of each run."""
FOLDS = [(r, f) for r in range(5) for f in range(2)]


def _rows(variant: str, train: np.ndarray, test: np.ndarray, n: int) -> np.ndarray:
    return {"fold": train, "whole": np.arange(n), "fold_twice": np.r_[train, train], "test": test}[variant]


def run(dataset: str, models: list[str], variants: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(losses, cuts)`` of ``dataset``: every fold of :data:`FOLDS`, model and variant."""
    from bncbench.harness.app import experiment_task
    from bncbench.harness.model_specs import make_estimator
    from bncbench.harness.runner import task_inputs
    from bncbench.metrics import rmse, zero_one_loss
    from bncbench.model.classifier import model_cardinalities
    from bncbench.model.preprocess import Discretizer

    losses, cuts = [], []
    for rnd, fold in FOLDS:
        first = task_inputs(experiment_task("zaidi_dbl", dataset, MODELS[0], round=rnd, fold=fold))  # AnJE: codes
        ds, train, test = first.dataset, first.train, first.test
        codes, cards = {}, {}
        for v in variants:
            rows = _rows(v, train, test, len(ds.y))
            disc = Discretizer(reserve_missing=ds.missing_mask).fit(ds.X.iloc[rows], ds.y[rows])
            codes[v], cards[v] = disc.transform(ds.X), disc.cardinalities_
            cuts += [{"dataset": dataset, "variant": v, "round": rnd, "fold": fold, "attribute": name,
                      "cuts": len(c)} for name, c in zip(ds.X.columns, disc.cuts_) if c is not None]
        if not np.array_equal(codes["fold"], first.X):
            raise RuntimeError(f"{dataset} r{rnd}f{fold}: the training fold's cut points are not the runner's")
        for label in models:
            task = experiment_task("zaidi_dbl", dataset, label, round=rnd, fold=fold)
            inputs = task_inputs(task)
            for v in variants:
                clf = make_estimator(inputs.params, model_cardinalities(task.model.params, cards[v], ds.missing_mask))
                clf.fit(codes[v][train], ds.y[train])
                fitted = clf.predict_proba(codes[v][test])
                proba = np.zeros((test.size, ds.n_classes))  # as the runner scores: absent classes' columns 0
                proba[:, clf.classes_] = fitted
                losses.append({"dataset": dataset, "variant": v, "model": label, "round": rnd, "fold": fold,
                               "zero_one": zero_one_loss(ds.y[test], clf.classes_[np.argmax(fitted, axis=1)]),
                               "rmse": rmse(ds.y[test], proba)})
            print(f"{dataset} r{rnd}f{fold} {label}: " + " ".join(
                f"{r['variant']} {r['zero_one']:.4f}" for r in losses[-len(variants):]), flush=True)
    return pd.DataFrame(losses), pd.DataFrame(cuts)


def cut_counts(cuts: pd.DataFrame, dataset: str) -> pd.Series:
    """``dataset``'s cut points over its numeric attributes, the mean over the folds, per variant (``cuts.csv``)."""
    c = cuts[cuts["dataset"] == dataset]
    return c.groupby(["variant", "round", "fold"])["cuts"].sum().groupby("variant").mean()


def summary(losses: pd.DataFrame) -> pd.DataFrame:
    """Mean 0-1 loss and RMSE per (dataset, variant, model) over the folds, with the paper's Tables 5 and 6."""
    s = losses.groupby(["dataset", "variant", "model"], sort=False)[["zero_one", "rmse"]].mean().reset_index()
    s["folds"] = losses.groupby(["dataset", "variant", "model"], sort=False).size().to_numpy()
    for metric in ("zero_one", "rmse"):
        s[f"paper_{metric}"] = [paper.PAPER_BIG[d][metric][paper.MODELS_56.index(m)]
                                for d, m in zip(s["dataset"], s["model"])]
    return s


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT, help="where the CSVs go")
    ap.add_argument("--models", nargs="+", help="only the runs of these models; their rows replace the CSVs' own")
    args = ap.parse_args(argv)
    from bncbench.atomic import atomic_write_bytes

    runs = [(d, m, v) for d, m, v in RUNS if args.models is None or set(m) & set(args.models)]
    parts = [run(d, [x for x in m if args.models is None or x in args.models], v) for d, m, v in runs]
    losses = pd.concat([p[0] for p in parts], ignore_index=True)
    cuts = pd.concat([p[1] for p in parts], ignore_index=True).drop_duplicates()
    if args.models is not None and (args.out / "losses.csv").is_file():
        old = pd.read_csv(args.out / "losses.csv")
        keys = ["dataset", "variant", "model"]
        kept = ~old.set_index(keys).index.isin(losses.set_index(keys).index)
        losses = pd.concat([old[kept], losses], ignore_index=True)
        cuts = pd.concat([pd.read_csv(args.out / "cuts.csv"), cuts], ignore_index=True).drop_duplicates()
    args.out.mkdir(parents=True, exist_ok=True)
    means = summary(losses)
    for name, frame in (("losses.csv", losses), ("cuts.csv", cuts), ("summary.csv", means)):
        atomic_write_bytes(args.out / name, frame.to_csv(index=False).encode())
    print(means.to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())

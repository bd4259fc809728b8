"""Write the golden records of ``tests/test_golden.py`` (run from the repository root).

    BNCBENCH_DATA_DIR=../shared/datasets/uci python tests/golden/make_golden.py

Each golden case is one experiment model (its label, parameters and task key as
the experiment config composes them) on one dataset, round 0, both folds: the
class probabilities in float64, the predicted labels, the metrics and the
optimizer's counters. The files committed under ``tests/golden/`` were written
by this script at commit cb5d75e, before the plug-in rebuild; the test checks
that the rebuilt code composes the same models and reproduces every number.

It uses only the public pieces of the pipeline (the dataset registry, the CV
split, the discretizer and ``BNClassifier``) so that it runs on both versions.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent

CASES = [
    # (experiment, datasets, needs the UCI data)
    ("quickstart", ["sklearn-iris", "sklearn-wine", "synth-kdb2"], False),
    ("zaidi2017_nb", ["labor", "contact-lenses", "breast-w"], True),
    ("petitjean2018", ["labor", "contact-lenses"], True),
]
PETITJEAN_MODELS = ("KDB-2 HDP", "SkDB-5 m-est", "TAN m-est")


def experiment_models(name: str) -> list:
    """``[(label, params)]`` of an experiment as ``python -m bncbench run`` composes them."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from bncbench.harness.app import prepare
    from bncbench.paths import conf_dir

    try:  # the typed config schemas of the plug-in architecture
        from bncbench.harness.run_config import store_schemas
    except ImportError:  # the code before it (cb5d75e)
        store_schemas = None
    if store_schemas is not None:
        store_schemas()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
        cfg = compose(config_name="config", overrides=[f"+experiment={name}", "dataset.names=[synth-nb]",
                                                        "data_dir=null"])
        plan = prepare(cfg)
    GlobalHydra.instance().clear()
    return [(m.label, dict(m.params)) for m in plan.models]


def fold_data(dataset: str, round_: int, fold: int, data_dir):
    """Training and test codes of one CV fold, as the runner prepares them."""
    from bncbench.data import specs
    from bncbench.model.preprocess import Discretizer
    from bncbench.harness.protocol import cv_folds

    spec = specs.resolve([dataset])[0]
    ds = specs.load(spec, data_dir)
    assign = cv_folds(ds.y, seed=0, dataset=ds.name, round_=round_, folds=2)
    test, train = np.flatnonzero(assign == fold), np.flatnonzero(assign != fold)
    disc = Discretizer(reserve_missing=ds.missing_mask).fit(ds.X.iloc[train], ds.y[train])
    return spec, ds, train, test, disc.transform(ds.X), disc.cardinalities_


def main() -> int:
    from bncbench.harness.model_specs import make_estimator
    from bncbench.metrics import rmse, zero_one_loss

    data_dir = os.environ.get("BNCBENCH_DATA_DIR")
    if not data_dir:
        print("set BNCBENCH_DATA_DIR to the shared UCI data", file=sys.stderr)
        return 2
    index = []
    arrays = {}
    for experiment, datasets, _ in CASES:
        models = experiment_models(experiment)
        if experiment == "petitjean2018":
            models = [(lab, p) for lab, p in models if lab in PETITJEAN_MODELS]
        for dataset in datasets:
            for fold in (0, 1):
                spec, ds, train, test, codes, cards = fold_data(dataset, 0, fold, data_dir)
                for label, params in models:
                    clf = make_estimator(params, cards).fit(codes[train], ds.y[train])
                    p = clf.predict_proba(codes[test])
                    proba = np.zeros((test.size, ds.n_classes))
                    proba[:, clf.classes_] = p
                    y_pred = clf.classes_[np.argmax(p, axis=1)]
                    case = f"{experiment}/{dataset}/{label}/f{fold}"
                    arrays[case + "/proba"] = proba
                    arrays[case + "/y_pred"] = y_pred
                    index.append({
                        "case": case, "experiment": experiment, "dataset": dataset, "label": label,
                        "params": params, "round": 0, "fold": fold,
                        "zero_one": zero_one_loss(ds.y[test], y_pred), "rmse": rmse(ds.y[test], proba),
                        "n_parameters": int(clf.n_parameters_),
                        **{a.rstrip("_"): getattr(clf, a) for a in ("n_iter_", "n_fev_", "train_cll_")
                           if hasattr(clf, a)},
                    })
                    print(case, file=sys.stderr)
    (HERE / "golden.json").write_text(json.dumps(index, indent=1, sort_keys=True) + "\n")
    np.savez_compressed(HERE / "golden.npz", **arrays)
    return 0


if __name__ == "__main__":
    sys.exit(main())

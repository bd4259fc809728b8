"""Print, as JSON, what every experiment of conf/experiment/ builds: its models and task keys.

For each experiment: the name, the protocol, the dataset names, every model's label and
parameters, and one digest of the task keys of all its (dataset, model, round, fold) tasks.
Nothing is loaded or run (the keys need the dataset registry, not the data). Run it before and
after a change of conf/ and compare the two outputs: equal output, the same models and the same
task keys (the check of issue #35's "each default has one home").

    python scripts/experiment_models.py > before.json
    ... change conf/ ...
    python scripts/experiment_models.py > after.json && cmp before.json after.json
"""

from __future__ import annotations

import hashlib
import json
import sys

from omegaconf import OmegaConf


def snapshot() -> dict:
    from bncbench.harness import app
    from bncbench.data import specs
    from bncbench.harness.model_specs import expand_models
    from bncbench.paths import conf_dir
    from bncbench.harness.runner import Protocol, Task

    out = {}
    for path in sorted((conf_dir() / "experiment").glob("*.yaml")):
        with app._hydra():
            cfg = app._compose([f"+experiment={path.stem}"])
            models = expand_models(cfg, app.option_composer([]))
        cv = cfg.cv
        mode = str(getattr(cv.mode, "value", cv.mode))
        protocol = Protocol(int(cfg.seed), 1, 1, mode) if mode == "holdout" else \
            Protocol(int(cfg.seed), int(cv.rounds), int(cv.folds), mode)
        datasets = specs.resolve(OmegaConf.to_container(cfg.dataset.names, resolve=True))
        keys = hashlib.sha256()
        for d in datasets:
            for m in models:
                for r in range(protocol.rounds):
                    for f in range(protocol.folds):
                        keys.update(Task(d, m, r, f, protocol).key.encode())
        out[path.stem] = {
            "name": str(cfg.name),
            "protocol": [protocol.seed, protocol.rounds, protocol.folds, protocol.mode],
            "datasets": [d["name"] for d in datasets],
            "models": [[m.label, m.params] for m in models],
            "task_keys": keys.hexdigest(),
        }
    return out


if __name__ == "__main__":
    json.dump(snapshot(), sys.stdout, indent=1, sort_keys=True, default=str)
    print()

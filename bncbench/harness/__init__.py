"""The experiment harness: the ``run`` command, its typed config, the protocol, the runner and the store.

``app`` (the Hydra application) composes and validates a run once; ``model_specs`` turns config
options into a model's parameters and label; ``protocol`` is the evaluation protocol (5x2-fold CV
or a holdout, its metrics); ``runner`` plans typed tasks and evaluates them through the executor
it is handed; ``store`` writes one record per task atomically; ``provenance`` stamps records;
``missing_features`` and ``missing_protocol`` score with features removed at test time.
"""

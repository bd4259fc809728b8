"""The typed root of ``python -m bncbench run``'s config (Hydra schema ``schema/run``).

``conf/config.yaml`` extends :class:`RunConfig`, so every top-level key has a type: a value
that cannot be converted (``retry_failed=maybe``, ``seed=abc``) or a key the schema does not
have (``reprot:`` in an experiment file) fails when Hydra composes the config, before anything
runs. The model groups (``structure``, ``param``, ...), ``executor`` and ``dataset`` are typed
by their own schemas (``schema/<group>/<name>``, from the registries); here they are only
slots. What the values mean is in ``conf/config.yaml``'s comments and
``docs/configuration.md``; what a type cannot say is checked by :func:`bncbench.harness.app.prepare`
before any task: keys added with ``+`` that no schema declares (:func:`check_known_keys`), the
protocol's values (``seed >= 0``: :meth:`bncbench.harness.protocol.Protocol.from_config`), a usable ``name``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, List, Optional

from bncbench.engine.checkpoint import EVERY
from bncbench.errors import BNCBenchError, did_you_mean
from bncbench.harness.protocol import CVConfig, Protocol
from bncbench.harness.runner import MAX_CRASHES, STOP_GRACE


@dataclass
class RunConfig:
    """Top-level keys of the run config.

    Attributes
    ----------
    structure, param, estimator, init, optimizer, objective : Any
        The model's components (config groups typed by their registries).
    executor : Any
        Where tasks run (config group ``executor``).
    dataset : Any
        The datasets (config group ``dataset``: ``names`` and a description).
    name : str, default="default"
        The experiment's name: results go to ``results_dir/name``.
    seed : int, default=:attr:`bncbench.harness.protocol.Protocol.seed`
        Every random split derives from (seed, dataset, round); at least 0.
    n_jobs : int, default=1
        Workers of the joblib executor.
    cv : CVConfig
        The protocol (fields and defaults: :class:`bncbench.harness.protocol.Protocol`).
    models : Any, default=None
        An experiment's model grid (``docs/configuration.md``); None: the single model of the
        composed groups.
    only : list of str, optional
        Run just the models of the grid with these labels.
    data_dir, results_dir : str
        Where registered datasets are read and results written.
    retry_failed : bool, default=True
        Rerun the tasks whose stored record has failed.
    progress : bool, optional
        A progress bar (true), one log line a minute (false with no terminal), or a bar on a
        terminal only (None).
    checkpoint_every : float, optional, default=:data:`bncbench.engine.checkpoint.EVERY`
        Seconds between the saves of a long L-BFGS fit's state, from which a killed task's rerun
        goes on (:mod:`bncbench.engine.checkpoint`; a fresh fit's first save after a minute if that is
        sooner); 0: every iteration; None: no checkpoints.
    max_crashes : int, optional, default=:data:`bncbench.harness.runner.MAX_CRASHES`
        A task whose process died this many times in a row without progress (a segfault, an
        out-of-memory kill) is recorded failed without being run (:func:`bncbench.harness.runner.run_task`);
        at least 1; None: no limit.
    stop_grace : float, default=:data:`bncbench.harness.runner.STOP_GRACE`
        Seconds a run stopped by Ctrl-C or SIGTERM waits at most for the fits of its worker processes to save
        before it closes them (a second signal stops it at once); at least 0.
    correction : bool, default=False
        Webb's unbiased correction of the Kohavi–Wolpert bias in the printed summary.
    dry_run : bool, default=False
        Validate and list the pending tasks per dataset and model; run and write nothing.
    report : Any, default=None
        The experiment's report settings (``docs/reporting.md``), read by ``bncbench report``.
    """

    structure: Any = None
    param: Any = None
    estimator: Any = None
    init: Any = None
    optimizer: Any = None
    objective: Any = None
    executor: Any = None
    dataset: Any = None
    name: str = "default"
    seed: int = Protocol.seed
    n_jobs: int = 1
    cv: CVConfig = field(default_factory=CVConfig)
    models: Any = None
    only: Optional[List[str]] = None
    data_dir: Optional[str] = None
    results_dir: str = "results"
    retry_failed: bool = True
    progress: Optional[bool] = None
    checkpoint_every: Optional[float] = EVERY
    max_crashes: Optional[int] = MAX_CRASHES
    stop_grace: float = STOP_GRACE
    correction: bool = False
    dry_run: bool = False
    report: Any = None


GLOBAL_GROUPS = ("experiment",)
"""Config groups selected on the command line that leave no key of their own in the run config
(an experiment's file is ``@package _global_``); named in the suggestions for a misspelled key."""
DATASET_KEYS = ("names",)
"""The keys of the ``dataset`` node (``conf/dataset/*.yaml``)."""


def check_known_keys(cfg) -> None:
    """Refuse, in one line naming the closest valid key, a key of the run config no schema declares.

    Hydra adds a key given with ``+`` (``+strucure=tan``, ``+experimnet=quickstart``,
    ``+executor.foo=1``) even to a typed config: without this check it would be ignored and the
    default run. Checked here: the top level (:class:`RunConfig`'s fields and ``hydra``), the
    ``dataset`` node (:data:`DATASET_KEYS`) and the ``executor`` node (its component's schema). The
    model groups' nodes are checked by :func:`bncbench.harness.model_specs.model_spec`, ``cv`` by
    :meth:`bncbench.harness.protocol.Protocol.from_config`.

    Parameters
    ----------
    cfg : omegaconf.DictConfig or mapping
        A composed run config.

    Raises
    ------
    BNCBenchError
        At the first unknown key.
    """
    top = [f.name for f in dataclasses.fields(RunConfig)]
    for key in cfg:
        if key not in top and key != "hydra":
            close = did_you_mean(key, [*top, *GLOBAL_GROUPS])
            group = next((g for g in GLOBAL_GROUPS if close == did_you_mean(g, [g])), None)
            raise BNCBenchError(f"unknown key {key!r}{close}; " + (f"+{group}=NAME selects an {group}" if group else
                                                                   f"the run config's keys: {', '.join(top)}"))
    dataset = cfg.get("dataset")
    if dataset is not None and hasattr(dataset, "keys"):
        for key in dataset:
            if key not in DATASET_KEYS:
                keys = ["dataset." + k for k in DATASET_KEYS]
                raise BNCBenchError(f"unknown key 'dataset.{key}'{did_you_mean('dataset.' + str(key), keys)}; the "
                                    f"dataset node's keys: {', '.join(keys)}")
    executor = cfg.get("executor")
    if executor is not None and hasattr(executor, "keys") and executor.get("name") is not None:
        from bncbench.components import EXECUTORS
        from bncbench.validate import check_keys  # make_executor's wording

        check_keys(EXECUTORS[str(executor.get("name"))], [str(k) for k in executor if k not in ("name", "label")])


_stored: dict = {}


def store_schemas() -> None:
    """Register the typed config of every component as ``schema/<group>/<name>`` in Hydra's ConfigStore.

    The options of ``conf/<group>/`` extend them (``defaults: [/schema/<group>/<name>@_here_]``),
    so a config value of the wrong type or an unknown key fails when the config is composed.
    The root of the run config is typed the same way (``schema/run``,
    :class:`bncbench.harness.run_config.RunConfig`, with the protocol's ``cv`` node).
    """
    import inspect

    from hydra.core.config_store import ConfigStore

    from bncbench.components import ALL

    cs = ConfigStore.instance()
    replace = {"replace": True} if "replace" in inspect.signature(cs.store).parameters else {}
    if _stored.get(("schema", "run")) is not RunConfig:
        cs.store(group="schema", name="run", node=RunConfig, **replace)
        _stored["schema", "run"] = RunConfig
    for reg in ALL:
        for comp in reg:
            if _stored.get((reg.kind, comp.name)) is not comp:
                cs.store(group=f"schema/{reg.kind}", name=comp.name, node=reg.schema(comp.name), **replace)
                _stored[reg.kind, comp.name] = comp

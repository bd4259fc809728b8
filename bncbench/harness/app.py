"""`python -m bncbench run`: the Hydra application.

Every override is checked before any work starts (config composition against
the components' typed schemas, dataset and model names, hyperparameter ranges,
protocol values), so bad input gives one clear line and exit code 2, and no
file is written under ``results/``. The models of an experiment are composed
by Hydra itself: every option a ``models:`` item names is composed from
``conf/<group>/<option>.yaml`` (and the extra config directories of
``hydra.searchpath``).
"""

from __future__ import annotations

import contextlib
import functools
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from omegaconf import DictConfig, OmegaConf

from bncbench.errors import BNCBenchError
from bncbench.harness.runner import STOP_GRACE
from bncbench.paths import conf_dir

if TYPE_CHECKING:
    from bncbench.executors import Executor
    from bncbench.harness.model_specs import ModelSpec
    from bncbench.harness.protocol import Protocol
    from bncbench.harness.runner import Task


@dataclass
class Plan:
    """What ``execute`` runs: validated, typed, nothing written yet.

    Attributes
    ----------
    name : str
        The experiment's name (``cfg.name``): the directory under the results root.
    root : pathlib.Path
        Absolute results directory of the experiment, ``<results_dir>/<name>``.
    datasets : list of dict
        Resolved dataset specs (:func:`bncbench.data.specs.resolve`), each checked to be loadable.
    models : list of ModelSpec
        The experiment's models (:func:`bncbench.harness.model_specs.expand_models`), each checked to build.
    protocol : bncbench.harness.protocol.Protocol
        Seed, rounds and folds of the cross-validation (or the holdout mode).
    data_dir : str or None
        Absolute data directory from the config's ``data_dir``, or None (the default location).
    executor : Executor or None, default=None
        Where the tasks run (:func:`bncbench.executors.make_executor`); :func:`prepare` always sets it.
    checkpoint_every : float or None, default=None
        Seconds between the saves of a long fit's state (``cfg.checkpoint_every``;
        :func:`bncbench.harness.runner.run_task`); ``None``: no checkpoints.
    max_crashes : int or None, default=None
        Deaths of a task's process in a row without progress after which it is recorded failed
        unrun (``cfg.max_crashes``, :func:`bncbench.harness.runner.run_task`); ``None``: no limit.
    stop_grace : float, default=:data:`bncbench.harness.runner.STOP_GRACE`
        Seconds a stopped run waits at most for its workers' fits to save (``cfg.stop_grace``).
    """

    name: str
    root: Path
    datasets: list[dict]
    models: list[ModelSpec]
    protocol: Protocol
    data_dir: str | None
    executor: Executor | None = None
    checkpoint_every: float | None = None
    max_crashes: int | None = None
    stop_grace: float = STOP_GRACE


def _searchpath(cfg: DictConfig) -> list:
    """The run's ``hydra.searchpath`` (extra config directories)."""
    hyd = cfg.get("hydra") if isinstance(cfg, DictConfig) else None
    if hyd is not None:
        return list(hyd.get("searchpath") or [])
    from hydra.core.hydra_config import HydraConfig

    return list(HydraConfig.get().searchpath) if HydraConfig.initialized() else []


def option_composer(searchpath: list) -> Callable[[str, str], Any]:
    """``compose(group, option)``: Hydra's composition of one config group option (cached).

    Call the returned function while Hydra is initialized (inside a Hydra run or the context
    :func:`compose_config` uses), as :func:`prepare` does.

    Parameters
    ----------
    searchpath : list
        Extra config directories (``hydra.searchpath``) to compose with; empty for none.

    Returns
    -------
    callable
        ``compose_option(group, option)``: the ``group`` node of the config composed with the
        override ``group=option``, cached per ``(group, option)``; its ``prefetch(pairs)`` composes
        many options in one composition (:func:`bncbench.harness.model_specs.expand_models` calls it). It raises
        :class:`~bncbench.errors.BNCBenchError` (``bad model option group=option: ...``) when
        Hydra cannot compose that option.
    """
    from hydra import compose

    extra = [f"hydra.searchpath=[{','.join(repr(str(p)) for p in searchpath)}]"] if searchpath else []
    cache: dict = {}

    def compose_option(group: str, option: str):
        if (group, option) not in cache:
            try:
                cfg = compose(config_name="config", overrides=[f"{group}={option}", *extra])
            except Exception as exc:
                raise BNCBenchError(f"bad model option {group}={option}: {_message(exc)}") from None
            cache[group, option] = cfg[group]
        return cache[group, option]

    def prefetch(pairs) -> None:
        """Compose every ``(group, option)`` of ``pairs`` in one composition (each at a key of its own
        under an empty root), into the cache; if that fails, each is composed alone when asked for,
        and the one at fault named."""
        from hydra.core.config_store import ConfigStore

        todo = list(dict.fromkeys((g, str(o)) for g, o in pairs if (g, str(o)) not in cache))
        if len(todo) < 2:
            return
        ConfigStore.instance().store(name=_OPTIONS_ROOT, node={})
        try:
            cfg = compose(config_name=_OPTIONS_ROOT,
                          overrides=[*(f"+{g}@o{i}={o}" for i, (g, o) in enumerate(todo)), *extra])
        except Exception:  # noqa: BLE001 - compose_option names the bad option
            return
        for i, pair in enumerate(todo):
            cache[pair] = cfg[f"o{i}"]

    compose_option.prefetch = prefetch
    return compose_option


_OPTIONS_ROOT = "bncbench_model_options"
"""An empty root config (in Hydra's ConfigStore) under which :func:`option_composer` composes all the
model options of an experiment at once."""


@contextlib.contextmanager
def _hydra():
    """Hydra initialized on the project's config directory (typed schemas stored), outside a Hydra run."""
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from bncbench.harness.run_config import store_schemas

    store_schemas()
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
            yield
    finally:
        GlobalHydra.instance().clear()


def _compose(overrides) -> DictConfig:
    from hydra import compose

    try:
        return compose(config_name="config", overrides=list(overrides), return_hydra_config=True)
    except Exception as exc:
        from bncbench.validate import config_value_error  # a hyperparameter's type: the registry's line

        raise BNCBenchError(f"bad configuration: {_unknown_key(exc, overrides) or config_value_error(exc) or _message(exc)}") from None


def _unknown_key(exc: BaseException, overrides) -> str | None:
    """Hydra's "Could not override 'a.b'" as one line naming the closest key of node ``a`` (None: another error).

    Hydra's own message suggests appending the key with ``+``, which would add it unread: the
    valid keys are read from the config composed without that override instead.
    """
    import re

    from hydra import compose

    from bncbench.errors import did_you_mean

    found = re.match(r"Could not override '([^']+)'", str(exc))
    if not found:
        return None
    path = found.group(1)
    parent, _, key = path.rpartition(".")
    rest = [o for o in overrides if o.split("=", 1)[0].lstrip("+~") != path]
    try:
        node = compose(config_name="config", overrides=rest)
        node = OmegaConf.select(node, parent) if parent else node
        keys = [str(k) for k in node.keys()] if hasattr(node, "keys") else []
    except Exception:  # noqa: BLE001 - the suggestion is a courtesy
        keys = []
    if not parent:
        from bncbench.harness.run_config import GLOBAL_GROUPS

        keys = [*keys, *GLOBAL_GROUPS]
    if parent:
        keys = [f"{parent}.{k}" for k in keys if k not in ("name", "label")]
    where = f"'{parent}'" if parent else "the run config"
    return (f"Could not override {path!r}: {where} has no key {key!r}{did_you_mean(path, keys)}; its keys: "
            f"{', '.join(keys) or 'none'}")


def compose_config(overrides: Sequence[str] = ()) -> DictConfig:
    """The run config of ``python -m bncbench run OVERRIDES`` as Hydra composes it (no Hydra run).

    Hydra is initialized on :func:`bncbench.paths.conf_dir` (with every component's typed schema
    stored) for the call only; nothing is validated beyond what composition checks.

    Parameters
    ----------
    overrides : sequence of str, default=()
        Hydra overrides, e.g. ``["structure=tan", "cv.rounds=2"]``.

    Returns
    -------
    omegaconf.DictConfig
        The composed config, its ``hydra`` node included.

    Raises
    ------
    BNCBenchError
        If Hydra cannot compose the config (unknown option or key, value of the wrong type, ...),
        or a plug-in module cannot be imported.
    """
    with _hydra():
        return _compose(overrides)


def plan(overrides: Sequence[str] = ()) -> Plan:
    """The validated plan of ``python -m bncbench run OVERRIDES`` (models composed, nothing run).

    Parameters
    ----------
    overrides : sequence of str, default=()
        Hydra overrides, as on the command line (no sweeps).

    Returns
    -------
    Plan
        What :func:`execute` would run.

    Raises
    ------
    BNCBenchError
        If the config cannot be composed or fails validation (see :func:`prepare`).
    """
    with _hydra():
        return prepare(_compose(overrides))


def experiment_task(experiment: str, dataset: str, label: str, *, round: int = 0, fold: int = 0,
                    overrides: Sequence[str] = ()) -> Task:
    """One task of an experiment, planned as ``python -m bncbench run +experiment=EXPERIMENT`` plans it.

    With :func:`bncbench.harness.runner.task_inputs` it gives the very model and rows of that
    task's fit: the way into one fold for a benchmark, a test or a debugging session.

    Parameters
    ----------
    experiment : str
        The experiment (``conf/experiment/<experiment>.yaml``).
    dataset : str
        A dataset name (``dataset.names=[DATASET]``).
    label : str
        The label of one of the experiment's models.
    round, fold : int, default=0
        Which fold of the protocol (0-based).
    overrides : sequence of str, default=()
        Further Hydra overrides, as on the command line.

    Returns
    -------
    Task
        With the plan's protocol and data directory; its key is the one the experiment's run uses.

    Raises
    ------
    BNCBenchError
        If the config fails validation (:func:`plan`), ``label`` is not one of its models, or
        ``round`` or ``fold`` is outside the protocol.
    """
    from bncbench.harness.runner import Task

    p = plan([f"+experiment={experiment}", f"dataset.names=[{dataset}]", *overrides])
    (model,) = select_models(p.models, [label])
    rounds, folds = p.protocol.rounds, p.protocol.folds  # 1 and 1 in holdout mode
    if not (0 <= round < rounds and 0 <= fold < folds):
        raise BNCBenchError(f"round {round}, fold {fold}: the protocol has {rounds} round(s) of {folds} fold(s)")
    return Task(p.datasets[0], model, round, fold, p.protocol, p.data_dir)


def prepare(cfg: DictConfig) -> Plan:
    """Validate a composed config and turn it into a run plan (no side effects).

    Nothing is written; the datasets are loaded once to check that they can be used
    (:func:`bncbench.data.specs.check_available`), and every model is built once (not fitted)
    to check its components. Relative ``results_dir`` and ``data_dir`` are taken relative to the
    directory the command was started in.

    Parameters
    ----------
    cfg : omegaconf.DictConfig
        A composed run config (:func:`compose_config`, or the config of a Hydra run).

    Returns
    -------
    Plan
        The validated plan.

    Raises
    ------
    BNCBenchError
        If ``name``, ``cv.rounds``, ``cv.folds`` or ``seed`` is missing or not usable (the name
        must be non-empty, without ``/`` and not start with ``.``; at least 1 round and 2 folds),
        ``checkpoint_every`` or ``stop_grace`` is negative, ``max_crashes`` is not an integer >= 1 or null,
        a dataset is unknown or unavailable or cannot be evaluated by the protocol (too few rows,
        a continuous class: :func:`bncbench.harness.protocol.check_dataset_fits`), a model option, key
        or label is bad, a model's
        components reject their hyperparameters, or the executor or its options are invalid.
    """
    from bncbench.data import specs
    from bncbench.executors import make_executor
    from bncbench.harness.model_specs import expand_models
    from bncbench.harness.protocol import Protocol, check_dataset_fits
    from bncbench.harness.runner import check_max_crashes, check_stop_grace

    from hydra.utils import to_absolute_path

    from bncbench.harness.run_config import check_known_keys

    check_known_keys(cfg)
    try:
        name = str(cfg.name)
        protocol = Protocol.from_config(cfg)
        every = cfg.get("checkpoint_every")
        every = None if every is None else float(every)
        max_crashes = cfg.get("max_crashes")
        grace = cfg.get("stop_grace", STOP_GRACE)
        data_dir = cfg.get("data_dir")
        dataset_names = OmegaConf.to_container(cfg.dataset.names, resolve=True) if cfg.get("dataset") else None
    except BNCBenchError:
        raise
    except Exception as exc:  # missing keys, bad interpolations, non-integers
        raise BNCBenchError(f"bad configuration: {exc}".splitlines()[0]) from None
    if not name or "/" in name or name.startswith("."):
        raise BNCBenchError(f"bad experiment name {name!r}")
    if every is not None and not every >= 0:
        raise BNCBenchError(f"checkpoint_every must be >= 0 seconds (0: every iteration) or null, got {every}")
    max_crashes = check_max_crashes(max_crashes)
    grace = check_stop_grace(grace)
    mode = protocol.mode
    datasets = specs.resolve(dataset_names)
    if data_dir is not None:
        data_dir = to_absolute_path(str(data_dir))
    specs.check_available(datasets, data_dir,  # too few rows, a continuous class: one line, before any task
                             functools.partial(check_dataset_fits, folds=None if mode == "holdout" else protocol.folds))
    if mode == "holdout":  # every dataset needs a given train/test split: one line before any task
        from bncbench.data.given_split import holdout_indices

        for d in datasets:
            holdout_indices(specs.load(d, data_dir))
    models = select_models(expand_models(cfg, option_composer(_searchpath(cfg))), cfg.get("only"))
    for m in models:
        _check_model(m)
    from bncbench.harness.dataset_values import check_dataset_values

    check_dataset_values(models, datasets, data_dir)  # e.g. structure=planted on a dataset without one: one line
    ex = OmegaConf.to_container(cfg.executor, resolve=True) if cfg.get("executor") else {"name": "joblib"}
    executor = make_executor(ex.pop("name"), **{k: v for k, v in ex.items() if k != "label"})
    # relative paths are relative to where the command was started (also with hydra.job.chdir=true)
    return Plan(name, Path(to_absolute_path(str(cfg.results_dir))) / name, datasets, models, protocol, data_dir,
                executor, every, max_crashes, grace)


def select_models(models: list, only) -> list:
    """The models of the grid whose labels ``only`` names, in the grid's order (all if ``only`` is None).

    For running an experiment in stages (the cheap models of a huge dataset first) with the
    same task keys as the whole grid.

    Parameters
    ----------
    models : list of ModelSpec
        The experiment's models.
    only : sequence of str or None
        Labels (the ``only=[A1JE,RF]`` override).

    Returns
    -------
    list of ModelSpec

    Raises
    ------
    BNCBenchError
        If ``only`` is empty or names a label the grid does not have.
    """
    if only is None:
        return models
    wanted = [str(x) for x in (OmegaConf.to_container(only) if OmegaConf.is_config(only) else
                               ([only] if isinstance(only, str) else only))]
    labels = [m.label for m in models]
    unknown = [w for w in wanted if w not in labels]
    if unknown or not wanted:
        raise BNCBenchError(f"only: unknown model label(s) {unknown}; the experiment's labels: {labels}" if unknown
                            else "only: an empty list selects no model")
    return [m for m in models if m.label in wanted]


def _check_model(spec) -> None:
    from bncbench.harness.model_specs import check_model  # the one validation pass, as the library's routes run it

    check_model(spec.params, spec.label)


def execute(cfg: DictConfig, plan: Plan | None = None) -> int:
    """Run a composed config's experiment and print its summary: the task body of ``bncbench run``.

    Validates ``cfg`` (:func:`prepare`), runs the tasks not yet stored under the experiment's
    results directory (:func:`bncbench.harness.runner.run_experiment`; ``retry_failed`` defaults to true),
    rewrites ``summary.csv`` there from every stored record, and prints the summary of this
    run's tasks, in the order of the plan's datasets and models, and the task counts on stdout.

    Parameters
    ----------
    cfg : omegaconf.DictConfig
        The composed run config; ``progress``, ``retry_failed`` and ``correction`` are read
        besides what :func:`prepare` reads.
    plan : Plan, optional
        ``cfg``'s plan, already validated (:func:`precheck`); None: :func:`prepare` it here.

    Returns
    -------
    int
        1 if any task failed, else 0.

    Raises
    ------
    BNCBenchError
        If the config fails validation (see :func:`prepare`).
    """
    from bncbench.harness.runner import run_experiment
    from bncbench.atomic import atomic_write_bytes
    from bncbench.harness.store import load_results
    from bncbench.report.summary import format_table, summarize

    plan = plan if plan is not None else prepare(cfg)
    progress = cfg.get("progress")
    _announce(plan)
    if cfg.get("dry_run"):
        print(dry_run(plan, retry_failed=bool(cfg.get("retry_failed", True))))
        return 0
    counts = run_experiment(
        plan.datasets,
        plan.models,
        results_root=plan.root,
        protocol=plan.protocol,
        data_dir=plan.data_dir,
        executor=plan.executor,
        progress=progress,
        retry_failed=bool(cfg.get("retry_failed", True)),
        checkpoint_every=plan.checkpoint_every,
        max_crashes=plan.max_crashes,
        stop_grace=plan.stop_grace,
    )
    correction = bool(cfg.get("correction", False))
    # summary.csv covers every record of the experiment directory (sweep jobs share it);
    # the printed table this run's tasks only. The records are read once for both.
    records = load_results(plan.root)
    atomic_write_bytes(plan.root / "summary.csv", summarize(records, correction=correction).to_csv(index=False).encode())
    names = [d["name"] for d in plan.datasets]
    labels = [m.label for m in plan.models]
    mine = summarize(records, correction=correction, keys=counts["keys"])
    mine["_d"] = mine["dataset"].map(names.index)
    mine["_m"] = mine["model"].map(labels.index)
    print(format_table(mine.sort_values(["_d", "_m"]).drop(columns=["_d", "_m"])))
    print(
        f"tasks: {counts['total']} total, {counts['skipped']} already done, "
        f"{counts['ok']} ran ok, {counts['failed']} failed; summary: {plan.root / 'summary.csv'}"
    )
    return 1 if counts["failed"] else 0


def _announce(plan: Plan) -> None:
    """One line on stderr: the experiment's size and where its results go."""
    p = plan.protocol
    how = "the given train/test split (holdout)" if p.mode == "holdout" else f"{p.rounds}x{p.folds}-fold CV"
    print(f"bncbench: {plan.name}: {len(plan.datasets)} dataset(s) x {len(plan.models)} model(s) x {how} "
          f"-> {plan.root}", file=sys.stderr)


def dry_run(plan: Plan, *, retry_failed: bool = True) -> str:
    """What ``bncbench run`` would do with ``plan``: its pending tasks per dataset and model.

    Reads the store and writes nothing (records under a legacy key are counted where they are,
    not moved).

    Parameters
    ----------
    plan : Plan
        A validated plan (:func:`prepare`).
    retry_failed : bool, default=True
        A stored failure is pending.

    Returns
    -------
    str
        A table of the (dataset, model) pairs with pending tasks (``pending``, of them
        ``failed before``, ``checkpointed``: with a fit checkpoint to go on from, and ``died``: with
        the running marker of a process that died in the task, or of one running it now; and the
        pair's ``tasks``), in the plan's order, then one line of counts, which names the tasks a
        run would record failed unrun (their process died ``plan.max_crashes`` times in a row,
        :func:`bncbench.harness.runner.run_task`) and the first one's marker.

    Raises
    ------
    BNCBenchError
        As :func:`bncbench.harness.runner.pending_tasks` (a label clash, a record of another configuration).
    """
    import pandas as pd

    from bncbench.engine import checkpoint
    from bncbench.harness.runner import crash_count, pending_tasks
    from bncbench.harness.store import ResultStore, read_marker

    tasks, pending = pending_tasks(plan.datasets, plan.models, results_root=plan.root, protocol=plan.protocol,
                                   data_dir=plan.data_dir, retry_failed=retry_failed, move=False)
    store = ResultStore(plan.root)
    rows: dict[tuple[str, str], list[int]] = {}
    for t in tasks:
        rows.setdefault((t.dataset["name"], t.model.label), [0, 0, 0, 0, 0])[4] += 1
    crashed = []
    for t in pending:
        where = t.where
        row = rows[where[:2]]
        row[0] += 1
        row[1] += store.record_path(*where).exists()
        row[2] += bool(checkpoint.files(store.fit_prefix(*where)))
        marker = read_marker(store.running_path(*where))
        row[3] += marker is not None
        if marker is not None and plan.max_crashes is not None and \
                crash_count(marker, checkpoint.saved_iterations(store.fit_prefix(*where))) >= plan.max_crashes:
            crashed.append(store.running_path(*where))
    table = pd.DataFrame([(d, m, *r) for (d, m), r in rows.items() if r[0]],
                         columns=["dataset", "model", "pending", "failed before", "checkpointed", "died", "tasks"])
    head = "nothing is pending" if table.empty else table.to_string(index=False)
    tail = (f"; {len(crashed)} of them died max_crashes={plan.max_crashes} times in a row and would be recorded "
            f"failed unrun (remove their .running marker to try again, first {crashed[0]})" if crashed else "")
    return (f"{head}\ntasks: {len(tasks)} total, {len(tasks) - len(pending)} already done, {len(pending)} pending "
            f"(dry run: nothing ran){tail}")


# ---------------------------------------------------------------------- CLI glue
def _expand_sweeps(overrides: list[str], cfg: DictConfig | None = None) -> list[list[str]]:
    """The jobs of a multirun, as Hydra's basic sweeper makes them (call with Hydra initialized).

    Hydra's own parser and :meth:`BasicSweeper.split_arguments` expand the sweeps: choices
    (``structure=nb,tan``), globs over a group's options (``structure=glob(kdb*)``) and ranges
    (``structure.k=range(1,4)``), crossed in the order given, after the ``hydra.sweeper.params`` of
    ``cfg``; an interval sweep is Hydra's one-line error (the basic sweeper does not sample).
    """
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.override_parser.overrides_parser import OverridesParser

    params = OmegaConf.select(cfg, "hydra.sweeper.params", default=None) if cfg is not None else None
    args = [f"{k}={v}" for k, v in (params or {}).items()] + list(overrides)
    parser = OverridesParser.create(config_loader=GlobalHydra.instance().config_loader())
    batches = BasicSweeper.split_arguments(parser.parse_overrides(args), None)
    return [list(job) for batch in batches for job in batch] or [[]]


def _compose_sweep(overrides: list[str]) -> DictConfig:
    """The multirun's own config (its ``hydra.sweeper.params``): composed without the sweep overrides."""
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create(config_loader=GlobalHydra.instance().config_loader())
    return _compose([o.input_line for o in parser.parse_overrides(list(overrides)) if not o.is_sweep_override()])


def precheck(overrides: list[str], multirun: bool) -> list[tuple[list[str], DictConfig, Plan]]:
    """Compose and validate every job of the run (each sweep combination) before Hydra starts any.

    Parameters
    ----------
    overrides : list of str
        The command line's Hydra overrides.
    multirun : bool
        Whether the run is a multirun (``-m``): sweeps are expanded into their combinations and
        the launcher is checked too; otherwise ``overrides`` is one job.

    Returns
    -------
    list of (list of str, omegaconf.DictConfig, Plan)
        Each job's overrides, composed config and validated plan.

    Raises
    ------
    BNCBenchError
        If a combination cannot be composed or fails :func:`prepare`, or the SLURM launcher is
        chosen on a machine without ``sbatch``.
    hydra.errors.HydraException
        If Hydra cannot parse or expand an override of a multirun (an interval sweep: the basic
        sweeper does not sample).
    """
    with _hydra():
        return _precheck(overrides, multirun)


def _precheck(overrides: list[str], multirun: bool) -> list[tuple[list[str], DictConfig, Plan]]:
    """:func:`precheck` with Hydra initialized (:func:`_hydra`)."""
    jobs = []
    combos = _expand_sweeps(overrides, _compose_sweep(overrides)) if multirun else [overrides]
    for combo in combos:
        cfg = _compose(combo if multirun else [*combo, "hydra.mode=RUN"])  # as hydra.main composes a run
        if multirun:
            _check_launcher(cfg)
        jobs.append((combo, cfg, prepare(cfg)))
    return jobs


_PLANS: dict[tuple[str, ...], Plan] = {}
"""The plans :func:`run_cli` validated, by their job's overrides: a job Hydra runs in this process
takes its plan from here instead of validating its config again (one in another process prepares
its own)."""


@contextlib.contextmanager
def _one_line_errors():
    """A job's errors as one line on stderr: a ``BNCBenchError`` exits 2, an ``OSError`` (a full disk, a
    read-only directory) exits :data:`~bncbench.errors.SYSTEM_ERROR_EXIT`, not Hydra's traceback."""
    try:
        yield
    except BNCBenchError as exc:
        print(f"bncbench: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    except OSError as exc:
        from bncbench.errors import SYSTEM_ERROR_EXIT, system_error

        print(f"bncbench: error: {system_error(exc)}", file=sys.stderr)
        raise SystemExit(SYSTEM_ERROR_EXIT) from None


def _run_job(cfg: DictConfig, plan: Plan) -> int:
    """Run one job as Hydra's ``run`` mode does, with the config composed and the plan validated once.

    Call with Hydra initialized (:func:`_hydra`). Hydra's :func:`~hydra.core.utils.run_job` makes
    the job's output directory (``hydra.run.dir``, with its ``.hydra/config.yaml`` for provenance),
    configures the job's logging and runs :func:`execute` on ``plan``.
    """
    from hydra._internal.callbacks import Callbacks
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.utils import run_job
    from hydra.types import HydraContext, RunMode

    codes: list[int] = []

    def task(job_cfg: DictConfig) -> None:
        with _one_line_errors():
            codes.append(execute(job_cfg, plan))

    if cfg.hydra.mode is None:
        cfg.hydra.mode = RunMode.RUN
    callbacks = Callbacks(cfg)
    callbacks.on_run_start(config=cfg, config_name="config")
    ret = run_job(hydra_context=HydraContext(config_loader=GlobalHydra.instance().config_loader(),
                                             callbacks=callbacks),
                  task_function=task, config=cfg, job_dir_key="hydra.run.dir", job_subdir_key=None,
                  configure_logging=True)
    callbacks.on_run_end(config=cfg, config_name="config", job_return=ret)
    _ = ret.return_value  # a failed job raises its exception here
    return max(codes, default=0)


def _message(exc: BaseException) -> str:
    """An exception and its causes on one line (Hydra wraps the reason, e.g. a type error, in its cause)."""
    parts = []
    while exc is not None and len(parts) < 4:
        text = " ".join(str(exc).split())
        if text and text not in parts:
            parts.append(text)
        exc = exc.__cause__
    return ": ".join(parts)


def check_results_dir(root: Path) -> None:
    """Refuse, in one line, an experiment directory that cannot be created or written; create nothing.

    Parameters
    ----------
    root : pathlib.Path
        The experiment's results directory (:attr:`Plan.root`).

    Raises
    ------
    BNCBenchError
        If ``root`` or one of its ancestors is a file, or the nearest existing ancestor is on a
        read-only file system or not writable by this user.
    """
    import os

    at = Path(root)
    while not at.exists() and at.parent != at:
        at = at.parent
    if not at.is_dir():
        raise BNCBenchError(f"results_dir: {at} is a file, not a directory (the results would go to {root})")
    read_only = bool(os.statvfs(at).f_flag & os.ST_RDONLY)
    if read_only or not os.access(at, os.W_OK | os.X_OK):
        why = "is on a read-only file system" if read_only else "is not writable"
        raise BNCBenchError(f"results_dir: {at} {why} (the results would go to {root}); choose another results_dir")


def _check_launcher(cfg: DictConfig) -> None:
    """A launcher that needs a command this machine lacks fails here, in one line, before any job starts."""
    import shutil

    target = str(OmegaConf.select(cfg, "hydra.launcher._target_", default="") or "")
    if target.endswith("SlurmLauncher") and shutil.which("sbatch") is None:
        raise BNCBenchError("hydra/launcher=submitit_slurm submits the sweep's jobs with sbatch, which is not on "
                            "this machine's PATH: run it on a SLURM login node (hydra/launcher=submitit_local "
                            "runs the same jobs as local processes)")


def run_cli(args: list[str]) -> int:
    """``python -m bncbench run ARGS``: check every job, then hand the run to Hydra.

    Unless a flag only asks for information (``--help``, ``--hydra-help``, ``--info``, ``--cfg``,
    ``-c``, ``--resolve``), every job is composed and validated once, first (:func:`precheck`), so a
    bad input stops the run before anything is written. A single run without flags is then run
    from that composed config and plan, as Hydra's run mode would (:func:`_run_job`: the same
    output directory and provenance files); otherwise ``@hydra.main`` runs :func:`execute` for
    each job, with ``sys.argv`` set to ``["bncbench run", *args]`` for the call, and a job in this
    process takes the plan validated for its overrides.

    Parameters
    ----------
    args : list of str
        Hydra overrides and flags (``-m``/``--multirun``, ``--cfg job``, ...).

    Returns
    -------
    int
        1 if a task of a job failed, else 0; for a multirun, also when a job's store lacks a
        successful record of one of its tasks (:func:`incomplete`: jobs a launcher ran in other
        processes, submitit's, count too).

    Raises
    ------
    BNCBenchError
        If the config directory does not exist, a job's results directory cannot be written
        (:func:`check_results_dir`), or a job fails the checks (Hydra's own errors
        included, as one line).
    SystemExit
        With code 2 when a job fails with a ``BNCBenchError`` inside the Hydra run, 74 with an
        ``OSError`` (a full disk: :func:`bncbench.errors.system_error`; the message is printed
        first); Hydra itself exits for its information flags and on its own errors.
    """
    import hydra

    from bncbench.harness.run_config import store_schemas

    if not conf_dir().is_dir():
        raise BNCBenchError(f"config directory not found: {conf_dir()} (set BNCBENCH_CONF_DIR)")
    store_schemas()  # imports every built-in component and plug-in, before any config is composed
    flags = [a for a in args if a.startswith("-")]
    overrides = [a for a in args if not a.startswith("-")]
    info_only = any(f in ("--help", "-h", "--hydra-help", "--info", "--cfg", "-c", "--resolve") or
                    f.startswith(("--cfg", "--info")) for f in flags)
    multirun = "-m" in flags or "--multirun" in flags
    jobs: list = []
    if not info_only:
        try:
            from hydra.errors import HydraException
        except ImportError:  # pragma: no cover
            HydraException = Exception
        with _hydra():
            try:
                jobs = _precheck(overrides, multirun)
            except HydraException as exc:
                raise BNCBenchError(" ".join(str(exc).split())) from None
            for _, cfg, job in jobs:  # before Hydra makes its output directory under it (a dry run only reads)
                if not cfg.get("dry_run"):
                    check_results_dir(job.root)
            if all(cfg.get("dry_run") for _, cfg, _ in jobs):  # answered here: Hydra would make its output directory
                for combo, cfg, plan in jobs:
                    _announce(plan)
                    print(("# " + " ".join(combo) + "\n" if multirun else "")
                          + dry_run(plan, retry_failed=bool(cfg.get("retry_failed", True))))
                return 0
            if not flags:  # one job: run the config composed and validated above (no second composition)
                return _run_job(jobs[0][1], jobs[0][2])
        _PLANS.clear()
        _PLANS.update({tuple(combo): plan for combo, _, plan in jobs})

    codes: list[int] = []  # Hydra drops the task's return value: collect it here

    @hydra.main(config_path=str(conf_dir()), config_name="config", version_base="1.3")
    def _main(cfg: DictConfig) -> None:
        from hydra.core.hydra_config import HydraConfig

        with _one_line_errors():
            store_schemas()  # a launcher's job process composes model options too
            codes.append(execute(cfg, _PLANS.get(tuple(HydraConfig.get().overrides.task))))

    old = sys.argv
    sys.argv = ["bncbench run", *args]
    try:
        _main()
    finally:
        sys.argv = old
    # 1 when any task failed; the jobs of a launcher's other processes (submitit) report through their stores
    return max([*codes, *(incomplete(plan) for _, _, plan in jobs if multirun)], default=0)


def incomplete(plan: Plan) -> int:
    """1 if the store lacks a successful record of one of ``plan``'s tasks, else 0: whether a job failed,
    whatever process (a launcher's) ran it.

    Parameters
    ----------
    plan : Plan
        A job's validated plan.

    Returns
    -------
    int
        1 when a task of the plan is failed, missing or unreadable (or the store holds another
        configuration under its labels), 0 when every one has its record.
    """
    from bncbench.harness.runner import pending_tasks

    try:
        _, pending = pending_tasks(plan.datasets, plan.models, results_root=plan.root, protocol=plan.protocol,
                                   data_dir=plan.data_dir, retry_failed=True, move=False)
    except BNCBenchError:
        return 1
    return int(bool(pending))

"""Each default has one home: the registries (issue #35, item 2).

A plain option ``conf/<group>/<name>.yaml`` (the file named after the component it extends)
states no value of its own, so ``group=name`` on the command line builds the model of
``BNClassifier(group="name")``; a preset under another name (``kdb5``, ``skdb5``, ``a2je``,
``mestimate``, ``lbfgs_paper``) states only what it changes, and builds the model of
``BNClassifier`` with those values. The optimizers too: each declares its own defaults in its
registration (``lbfgs``: ``stop="ebnc"``, ``history=10``; ``sgd``: 20 epochs, ...), the engine runs
with them (:func:`bncbench.engine.optim.declared_defaults`), and an optimizer option's typed schema
carries them (``declared_defaults(name, engine=False)``), so a composed option still lists them in
the model's ``optimizer_options`` (the stored records' task keys are unchanged;
``scripts/experiment_models.py`` prints the same before and after). The defaults that lived in the
engine's code (``maxls``, ``patience``, ``blas_threads``, Nash's tolerances, ...) are declared there
too, as ``engine_default``: the engine reads them from the registry, and a composed option carries them
only where a config states them, as before. An optimizer preset states no value equal to its
optimizer's declared default (but an engine default: ``patience: 10`` is in stored task keys).
"""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from conftest import REPO

from bncbench import BNClassifier
from bncbench.harness.app import compose_config
from bncbench.components import EXECUTORS, MODEL_KINDS, OPTIMIZERS, PARAMETERIZATIONS
from bncbench.engine.optim import declared_defaults
from bncbench.harness.model_specs import GROUPS, config_model

OPTIMIZED = next(c.name for c in PARAMETERIZATIONS if c.info.get("optimized"))
"""A parameterization under which init, optimizer and objective are active."""
GROUP_KINDS = {reg.kind: reg for reg in (*MODEL_KINDS, EXECUTORS)}


def _options():
    return [(g, p.stem) for g in GROUP_KINDS for p in sorted((REPO / "conf" / g).glob("*.yaml"))]


def _read(group: str, option: str) -> tuple[str, dict]:
    """The component an option extends (its schema in ``defaults``) and the values it states."""
    doc = yaml.safe_load((REPO / "conf" / group / f"{option}.yaml").read_text()) or {}
    schemas = [d for d in doc.pop("defaults", []) if isinstance(d, str) and d.startswith(f"/schema/{group}/")]
    assert len(schemas) == 1, f"conf/{group}/{option}.yaml extends no schema/{group}/<name>"
    return schemas[0].split("/")[3].split("@")[0], doc


OPTIONS = _options()


def test_every_registered_component_has_its_plain_option():
    for group, reg in GROUP_KINDS.items():
        plain = {o for g, o in OPTIONS if g == group and _read(g, o)[0] == o}
        assert set(reg.builtins()) <= plain, f"conf/{group}/ lacks a plain option for {set(reg.builtins()) - plain}"


@pytest.mark.parametrize("group,option", OPTIONS, ids=[f"{g}={o}" for g, o in OPTIONS])
def test_a_plain_option_states_nothing_and_a_preset_only_what_it_changes(group, option):
    comp, stated = _read(group, option)
    reg = GROUP_KINDS[group]
    declared = {h.name: h for h in reg[comp].hyperparameters if not h.from_group}
    values = {k: v for k, v in stated.items() if k != "label"}
    assert set(values) <= set(declared), f"{group}={option} states keys its component lacks"
    wiring = {k for k, v in values.items() if isinstance(v, str) and v.startswith("${")}  # the run's own keys
    if group == "optimizer":  # a value equal to the optimizer's own declared default is a restatement
        carried = declared_defaults(comp, engine=False)
        same = sorted(k for k, v in values.items() if k in carried and v == carried[k])
        assert not same, f"{group}={option} restates {comp}'s declared defaults {same}"
    if option == comp:
        assert set(values) == wiring, f"the plain option {group}={option} restates {sorted(set(values) - wiring)}"
        assert "label" not in stated
    else:  # a preset states what makes it one (kdb1 pins k = 1, whatever the registry's default)
        assert stated, f"preset {group}={option} states nothing: it is the plain option {group}={comp}"


@pytest.mark.parametrize("group,option", [(g, o) for g, o in OPTIONS if g in GROUPS],
                         ids=[f"{g}={o}" for g, o in OPTIONS if g in GROUPS])
def test_command_line_option_builds_the_model_of_bnclassifier(group, option):
    """``group=option`` on the command line composes to ``BNClassifier(group=component, **stated)``."""
    comp, stated = _read(group, option)
    overrides = [f"{group}={option}"]
    kwargs = {group: comp}
    if group in ("init", "optimizer", "objective"):  # active under an optimized parameterization only
        overrides.append(f"param={OPTIMIZED}")
        kwargs["param"] = OPTIMIZED
    values = {k: v for k, v in stated.items() if k != "label"}
    if group == "optimizer":  # the schema carries the optimizer's declared defaults into the model's options
        kwargs["optimizer_options"] = {**declared_defaults(comp, engine=False), **values} or None
    else:
        kwargs.update(values)
        if PARAMETERIZATIONS[kwargs.get("param", "generative")].info.get("optimized"):
            # the run's default optimizer option, with its optimizer's declared defaults (see the module doc)
            default = next(d["optimizer"] for d in yaml.safe_load((REPO / "conf" / "config.yaml").read_text())
                           ["defaults"] if isinstance(d, dict) and "optimizer" in d)
            opt_comp, opt_stated = _read("optimizer", default)
            kwargs["optimizer_options"] = {**declared_defaults(opt_comp, engine=False),
                                           **{k: v for k, v in opt_stated.items() if k != "label"}} or None
    cfg = compose_config(overrides)
    spec = config_model(cfg)
    assert BNClassifier(**spec.params).get_params() == BNClassifier(**kwargs).get_params()
    if option == comp and group in ("structure", "estimator"):
        # and the label is the registry's, interpolated with the registry's defaults
        defaults = {h.name: h.default for h in GROUP_KINDS[group][comp].hyperparameters}
        label = GROUP_KINDS[group][comp].label
        for k, v in defaults.items():
            label = label.replace("${." + k + "}", str(v))
        assert str(cfg[group].label) == label


def _codes(seed=0, n=120, a=4):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(n, a))
    y = (X[:, 0] + X[:, 1] + rng.integers(0, 2, size=n) > 2).astype(int)
    return X, y


@pytest.mark.parametrize("option", [o for g, o in OPTIONS if g == "optimizer" and _read(g, o)[0] == o])
def test_optimizer_declared_defaults_are_what_the_engine_runs(option):
    """A plain optimizer option composes to its optimizer's declared defaults, and those are what the engine
    does without them: the model of the command line and of ``BNClassifier(optimizer=...)`` fit the same, bit
    for bit."""
    comp, stated = _read("optimizer", option)
    assert not {k for k in stated if k != "label"}
    composed = compose_config([f"optimizer={option}", f"param={OPTIMIZED}"])
    spec = config_model(composed)
    assert spec.params.get("optimizer_options") == (declared_defaults(comp, engine=False) or None)
    X, y = _codes()
    base = dict(structure="nb", param="weighted", init="zeros", optimizer=comp, discretize=False)
    p0 = BNClassifier(**base).fit(X, y).predict_proba(X)
    p1 = BNClassifier(**base, optimizer_options=declared_defaults(comp) or None).fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(p0, p1)


def test_optimizers_declare_their_own_defaults():
    """The defaults the optimizer options stated before have their home in the registrations (task keys of
    the stored records carry them: ``scripts/experiment_models.py`` is unchanged), and so have those that lived
    in the engine's code, which no composed option carries."""
    assert declared_defaults("lbfgs", engine=False) == {"stop": "ebnc", "history": 10}
    assert declared_defaults("cg", engine=False) == {"stop": "ebnc"}
    assert declared_defaults("cgb", engine=False) == {"stop": "ebnc", "xtol": 0.0002}
    assert declared_defaults("bfgs", engine=False) == {"stop": "ebnc", "max_params": 10000}
    assert declared_defaults("bfgs_nash", engine=False) == {"max_params": 10000}
    assert declared_defaults("cg_nash", engine=False) == {}
    assert declared_defaults("sgd", engine=False) == {"maxiter": 20, "method": "adagrad", "lr": 0.1, "batch_size": 256,
                                                      "seed": 0}
    common = {"blas_threads": 1, "backend": "numba", "compress": True, "two_class": True, "materialize": False,
              "combine_subsets": True, "patience": 10, "validation_seed": 0, "validation_start": "all"}
    nash = {"maxiter": 100, "reltol": np.sqrt(np.finfo(float).eps), "abstol": -np.inf}
    assert declared_defaults("lbfgs") == {**declared_defaults("lbfgs", engine=False), **common, "maxls": 40,
                                          "driver": "compact"}
    assert declared_defaults("sgd") == {**declared_defaults("sgd", engine=False), **common, "eps": 1e-8}
    assert declared_defaults("cg_nash") == {**common, **nash, "cg_type": 2, "parabola": "r"}
    assert declared_defaults("bfgs_nash") == {**declared_defaults("bfgs_nash", engine=False), **common, **nash}
    for name in ("cg", "cgb", "bfgs"):
        assert declared_defaults(name) == {**declared_defaults(name, engine=False), **common}
    for name in OPTIMIZERS.names():  # an engine default is in no composed option, so in no task key
        composed = compose_config([f"optimizer={name}", f"param={OPTIMIZED}"])
        options = config_model(composed).params.get("optimizer_options") or {}
        assert options == declared_defaults(name, engine=False)


@pytest.mark.parametrize("optimizer,key,value,extra", [
    ("lbfgs", "maxls", 1, {}), ("sgd", "eps", 1.0, {}), ("cg_nash", "reltol", 1e-2, {}), ("cg_nash", "cg_type", 1, {}),
    ("cg", "patience", 1, {"validation_fraction": 0.3}), ("lbfgs", "validation_seed", 3, {"validation_fraction": 0.3}),
])
def test_the_engine_reads_its_defaults_from_the_registry(monkeypatch, optimizer, key, value, extra):
    """With the registry's default of an engine option changed, a fit without the option is the fit with the
    option set to the new default, and no longer the fit of the old one: the engine keeps no value of its own."""
    import dataclasses

    X, y = _codes(n=300, a=6)
    base = dict(structure="tan", param="extended", init="zeros", optimizer=optimizer, discretize=False)

    def fit(options):
        return BNClassifier(**base, optimizer_options=options or None).fit(X, y).predict_proba(X)

    old = fit(extra)
    np.testing.assert_array_equal(fit({**extra, key: declared_defaults(optimizer)[key]}), old)
    comp = OPTIMIZERS[optimizer]
    hps = tuple(dataclasses.replace(h, default=value) if h.name == key else h for h in comp.hyperparameters)
    monkeypatch.setitem(OPTIMIZERS._items, optimizer, dataclasses.replace(comp, hyperparameters=hps))
    assert declared_defaults(optimizer)[key] == value
    new = fit(extra)
    np.testing.assert_array_equal(new, fit({**extra, key: value}))
    assert np.abs(new - old).max() > 1e-6


def test_the_protocol_has_one_home():
    """``seed`` and ``cv.*`` of the run config are :class:`bncbench.harness.protocol.Protocol`'s fields and defaults."""
    import dataclasses

    from bncbench.errors import BNCBenchError
    from bncbench.harness.protocol import CVConfig, Protocol
    from bncbench.harness.run_config import RunConfig

    cv = {f.name: f.default for f in dataclasses.fields(CVConfig)}
    assert {k: getattr(v, "value", v) for k, v in cv.items()} == {k: getattr(Protocol(), k) for k in cv}
    assert RunConfig().seed == Protocol().seed
    assert Protocol.from_config(compose_config([])) == Protocol()
    assert Protocol.from_config(compose_config(["seed=3", "cv.rounds=2", "cv.folds=3"])) == Protocol(3, 2, 3)
    assert Protocol.from_config(compose_config(["cv.mode=holdout", "cv.rounds=7"])) == Protocol(0, 1, 1, "holdout")
    for bad, message in [(dict(seed=-1), "seed must be >= 0"), (dict(rounds=0), "cv.rounds must be >= 1"),
                         (dict(folds=1), "cv.folds must be >= 2"), (dict(mode="loo"), "unknown protocol mode")]:
        with pytest.raises(BNCBenchError, match=message):
            Protocol.of(**bad)
    with pytest.raises(BNCBenchError, match=r"unknown key\(s\) cv.round \(did you mean 'cv.rounds'\?\); the "
                                            "protocol's keys: cv.mode, cv.rounds, cv.folds"):
        Protocol.from_config({"cv": {"round": 2}})


def test_engine_options_have_one_home():
    """``backend``, ``compress``, ``two_class``, ``materialize`` and ``combine_subsets`` are declared once
    (:data:`bncbench.engine.loss.ENGINE_OPTIONS`): every optimizer registers them with those defaults, the fit
    resolves an unset (None) one to them, and the loss's and the data's signatures default to them."""
    import inspect

    from bncbench.engine.loss import CLL, ENGINE, Data
    from bncbench.engine.optim import engine_options

    assert ENGINE == {"backend": "numba", "compress": True, "two_class": True, "materialize": False,
                      "combine_subsets": True}
    for name in OPTIMIZERS.names():
        assert {k: declared_defaults(name)[k] for k in ENGINE} == ENGINE, name
    assert engine_options() == ENGINE
    assert engine_options({"backend": None, "two_class": False, "lr": 1}) == {**ENGINE, "two_class": False}
    init = inspect.signature(CLL.__init__).parameters
    assert (init["backend"].default, init["two_class"].default) == (ENGINE["backend"], ENGINE["two_class"])
    for build in (Data.from_rows, Data.from_design):
        assert inspect.signature(build).parameters["compress"].default is ENGINE["compress"]
    from bncbench.engine.subset_design import SubsetDesign

    assert inspect.signature(SubsetDesign).parameters["combine"].default is ENGINE["combine_subsets"]

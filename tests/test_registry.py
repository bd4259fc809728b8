"""The registries are the single source of names and hyperparameters: estimator, configs and docs read them."""

import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bncbench import BNClassifier
from bncbench.harness.app import compose_config
from bncbench.components import ALL, FLAT_KINDS, MODEL_KINDS, STRUCTURES, describe
from bncbench.errors import BNCBenchError
from bncbench.harness.model_specs import model_spec
from bncbench.registry import Hyperparameter, Registry, integer

REPO = Path(__file__).resolve().parents[1]


def test_docs_list_every_component_and_hyperparameter():
    text = (REPO / "docs" / "configuration.md").read_text()
    m = re.search(r"<!-- registry:begin[^>]*-->\n(.*)<!-- registry:end -->", text, re.S)
    assert m, "docs/configuration.md lost its registry markers"
    assert m.group(1) == describe(builtins_only=True), \
        "docs/configuration.md is stale: paste `python -m bncbench components` (built-ins) in"


@pytest.mark.parametrize("first", ["bncbench.structures.tan", "bncbench.estimators.mestimate", "bncbench.executors.slurm"])
def test_the_order_of_names_does_not_depend_on_which_module_is_imported_first(first):
    """A built-in's registration loads the other built-in modules before it is added: the order of
    names (docs, messages) follows the registry's module list all the same."""
    code = (f"import {first}\nfrom bncbench.components import ALL\n"
            "print(repr([(r.kind, r.names()) for r in ALL]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert eval(out) == [(r.kind, r.builtins()) for r in ALL]


def test_estimator_keywords_and_constraints_come_from_the_registries():
    declared = {"structure", "param", "estimator", "random_state", "discretize", "cardinalities", "missing"}
    for reg in FLAT_KINDS:  # plug-ins of other test modules included: they are keywords too
        for comp in reg:
            declared |= {h.name for h in comp.hyperparameters}
    sig = inspect.signature(BNClassifier)
    assert set(sig.parameters) == declared == set(BNClassifier().get_params())
    assert set(BNClassifier._parameter_constraints) == declared
    assert all(p.kind is p.KEYWORD_ONLY for p in sig.parameters.values())
    with pytest.raises(BNCBenchError, match=r"among \['ande', 'anje', 'custom', 'hill_climb', 'kdb', 'nb', 'planted', 'skdb', 'tan'"):
        BNClassifier(structure="forest").fit([[0], [1]], [0, 1])


@pytest.mark.parametrize("reg", MODEL_KINDS, ids=lambda r: r.kind)
def test_every_config_option_is_a_registered_component(reg):
    """Each conf/<group>/<option>.yaml composes to a registered component, with only its declared keys."""
    options = sorted(p.stem for p in (REPO / "conf" / reg.kind).glob("*.yaml"))
    assert options
    named = set()
    for opt in options:
        node = compose_config([f"{reg.kind}={opt}"])[reg.kind]
        comp = reg[node.name]
        named.add(comp.name)
        declared = {h.name for h in comp.hyperparameters if not h.from_group} | {"name", "label"}
        assert set(node) <= declared, (opt, set(node) - declared)
    assert named == set(reg.builtins()), "a built-in component without a config option, or the reverse"


def test_labels_are_declared_in_config():
    parts = {g: compose_config(["structure=kdb1", "param=discriminative", "init=generative"])[g]
             for g in ("structure", "param", "estimator", "init", "optimizer", "objective")}
    assert model_spec(parts).label == "KDB-1^d (I)"
    parts["estimator"] = compose_config(["estimator=hdp"]).estimator
    parts["param"] = compose_config(["param=generative"]).param
    spec = model_spec(parts)
    assert spec.label == "KDB-1 HDP"
    assert spec.params == {"structure": "kdb", "k": 1, "param": "generative", "estimator": "hdp",
                           "hdp_iterations": 5000, "tying": "level"}


def test_one_name_one_meaning():
    reg = Registry("thing")
    reg._loaded = True  # no built-ins to import
    reg.register("a", hyperparameters=[Hyperparameter("k", 1, [integer(0)], "k", int)])(object())
    with pytest.raises(BNCBenchError, match="already registered"):
        reg.register("a")(object())
    with pytest.raises(BNCBenchError, match="unlike"):
        reg.register("b", hyperparameters=[Hyperparameter("k", 2, [integer(0)], "k", int)])(object())
    with pytest.raises(BNCBenchError, match="unknown thing 'c'; choose one of a"):
        reg["c"]
    assert [c.name for c in reg] == ["a"]


def test_every_registry_has_documented_components():
    for reg in ALL:
        for comp in reg:
            assert comp.doc, f"{reg.kind} {comp.name} has no one-line doc"
            for h in comp.hyperparameters:
                assert h.doc and h.constraints, (reg.kind, comp.name, h.name)
    assert STRUCTURES["kdb"].label == "KDB-${.k}"


def test_prose_names_exactly_the_descriptive_fields_that_stay_out_of_task_keys():
    from bncbench.data.catalog import DESCRIPTIVE_FIELDS

    header = (REPO / "datasets" / "registry.yaml").read_text()
    m = re.search(r"except the descriptive fields (.*?)\n# \(bncbench\.data\.catalog\.DESCRIPTIVE_FIELDS\)",
                  header, re.S)
    assert m, "datasets/registry.yaml's header no longer names the descriptive fields"
    assert set(re.findall(r"\w+", m.group(1).replace("#", ""))) - {"and"} == DESCRIPTIVE_FIELDS
    protocol = " ".join((REPO / "docs" / "protocol.md").read_text().split())
    m = re.search(r"descriptive fields \(([^:]*): `bncbench\.data\.catalog\.DESCRIPTIVE_FIELDS`\)", protocol)
    assert m, "docs/protocol.md no longer names the descriptive fields"
    assert set(re.findall(r"\w+", m.group(1))) == DESCRIPTIVE_FIELDS


def test_a_new_module_in_a_builtin_package_is_found_without_editing_a_list(tmp_path, monkeypatch):
    pkg = tmp_path / "demo_parts"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from bncbench.registry import Registry\nREG = Registry('demo', builtins=('demo_parts',))\n")
    for mod, names in (("beta", ["b1", "b2"]), ("alpha", ["a1"]), ("_private", ["hidden"])):
        body = "from demo_parts import REG\n" + "".join(f"REG.register({n!r})(object())\n" for n in names)
        (pkg / f"{mod}.py").write_text(body)
    monkeypatch.syspath_prepend(str(tmp_path))
    import demo_parts

    # the modules in name order, each one's components in registration order; _private is not a built-in module
    assert demo_parts.REG.names() == ["a1", "b1", "b2"] == demo_parts.REG.builtins()

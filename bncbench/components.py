"""The registries, one per component kind, and plug-in discovery.

=============== ================= ============================================
registry        config group      what a component is
=============== ================= ============================================
STRUCTURES      ``structure``     structure learner: data -> :class:`~bncbench.structures.LearnedStructure`
ESTIMATORS      ``estimator``     generative estimate: structure + data -> scorer
PARAMETERIZATIONS ``param``       how parameters are set (generative, or optimized by the engine)
INITS           ``init``          starting point of optimized parameters
OBJECTIVES      ``objective``     what optimized parameters minimize
OPTIMIZERS      ``optimizer``     how they minimize it
BASELINES       ``model``         non-BNC estimators run under the same protocol
EXECUTORS       ``executor``      where the runner's tasks run
=============== ================= ============================================

Built-in components register themselves in the modules (or every module of the
packages) listed below, which are imported the first time a registry is read: a new
built-in structure is a new module in ``bncbench/structures/``, nothing else to edit. Third-party components are
modules that register themselves the same way; they are imported from the
``bncbench.plugins`` entry-point group of installed packages and from the
comma-separated module names in the environment variable
``BNCBENCH_PLUGINS`` (see ``docs/extending.md``).
"""

from __future__ import annotations

import importlib

from bncbench import settings
from bncbench.errors import BNCBenchError
from bncbench.registry import Registry

STRUCTURES = Registry("structure", builtins=("bncbench.structures",), doc="structure learners")
ESTIMATORS = Registry("estimator", builtins=("bncbench.estimators",), doc="generative parameter estimates")
PARAMETERIZATIONS = Registry("param", builtins=("bncbench.engine.parameterizations", "bncbench.engine.ebnc"),
                             doc="parameterizations")
INITS = Registry("init", builtins=("bncbench.engine.inits", "bncbench.engine.ebnc_start"),
                 doc="initializations of optimized parameters")
OBJECTIVES = Registry("objective", builtins=("bncbench.engine.loss", "bncbench.engine.margin"),
                      doc="objectives of optimized parameters")
OPTIMIZERS = Registry("optimizer", builtins=("bncbench.engine.optim",), doc="optimizers", own_defaults=True)
BASELINES = Registry("model", builtins=("bncbench.baselines",), doc="baseline classifiers")
EXECUTORS = Registry("executor", builtins=("bncbench.executors",), doc="task executors")

MODEL_KINDS = (STRUCTURES, PARAMETERIZATIONS, ESTIMATORS, INITS, OPTIMIZERS, OBJECTIVES)
"""The kinds a Bayesian network classifier is assembled from, in label order."""
FLAT_KINDS = (STRUCTURES, PARAMETERIZATIONS, ESTIMATORS, INITS, OBJECTIVES)
"""The kinds whose hyperparameters are keywords of :class:`bncbench.BNClassifier` of their own; an
optimizer's options travel together as its ``optimizer_options``."""
ALL = (*MODEL_KINDS, BASELINES, EXECUTORS)
PLUGIN_ENV = settings.PLUGINS
ENTRY_POINT_GROUP = "bncbench.plugins"

_plugins_loaded = False


def load_plugins() -> None:
    """Import the plug-in modules (entry points and ``$BNCBENCH_PLUGINS``) once per process."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    from importlib.metadata import entry_points

    names = settings.plugins()
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        names.append(ep.value)
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as exc:
            raise BNCBenchError(f"cannot import plug-in module {name!r} ({PLUGIN_ENV} or entry point "
                                f"{ENTRY_POINT_GROUP}): {type(exc).__name__}: {exc}") from None


def load_all() -> None:
    """Import every built-in component and every plug-in."""
    for reg in ALL:
        reg.names()


def describe(builtins_only: bool = False) -> str:
    """Every registered component and its hyperparameters, as Markdown (``python -m bncbench components``).

    ``docs/configuration.md`` holds the table of the built-in components between its ``registry``
    markers; a test keeps it current.

    Parameters
    ----------
    builtins_only : bool, default=False
        List only the components that ship with bncbench (plug-ins left out), as the docs do.

    Returns
    -------
    str
        One ``### `kind`: doc`` heading and one table (name, label, hyperparameters with default
        and constraints, one-line doc) per registry of :data:`ALL`, each followed by a blank line.

    Raises
    ------
    BNCBenchError
        If a plug-in module cannot be imported.
    """
    load_all()
    lines = []
    for reg in ALL:
        lines += [f"### `{reg.kind}`: {reg.doc}", "", "| name | label | hyperparameters | what |", "|---|---|---|---|"]
        for comp in reg:
            if builtins_only and comp.name not in reg.builtins():
                continue
            hps = "; ".join(
                f"`{h.name}` = `{h.default!r}` ({_constraint_text(h, builtins_only)})" + (" via the " + h.from_group + " group"
                                                                          if h.from_group else "")
                for h in comp.hyperparameters) or "–"
            label = f"`{comp.label}`" if comp.label.strip() else "–"
            lines.append(f"| `{comp.name}` | {label} | {hps} | {comp.doc} |")
        lines.append("")
    return "\n".join(lines)


def _constraint_text(h, builtins_only: bool = False) -> str:
    """The constraints of ``h`` in words; with ``builtins_only``, a registry's options name its built-ins only."""
    from sklearn.utils._param_validation import make_constraint

    from bncbench.registry import _LazyOptions

    def text(c):
        if builtins_only and isinstance(c, _LazyOptions):
            return f"a str among {c.registry.builtins()}"
        return str(make_constraint(c))

    return " or ".join(text(c) for c in h.constraints).replace("|", "/")

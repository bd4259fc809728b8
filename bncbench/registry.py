"""Component registries: the single source of every component's name and hyperparameters.

A *component* is one interchangeable part of an experiment: a structure
learner, a generative estimator, a parameterization, an initialization, an
objective, an optimizer, a baseline, an executor. Each kind has one
:class:`Registry` (see :mod:`bncbench.components`); a component registers
itself there with its name, its label in the papers' notation and the
:class:`Hyperparameter` declarations it reads::

    from bncbench.components import STRUCTURES
    from bncbench.registry import Hyperparameter, integer

    @STRUCTURES.register("kdb", label="KDB-${.k}", hyperparameters=[
        Hyperparameter("k", 1, [integer(0)], "attribute parents per attribute")])
    def learn_kdb(data, *, k): ...

Everything that needs a name or a valid range reads it from there: the
scikit-learn ``_parameter_constraints`` of :class:`bncbench.BNClassifier`,
the typed Hydra config schemas (``schema/<group>/<name>`` in the
ConfigStore), the validation of experiment configs, error messages and the
docs' tables (``docs/configuration.md`` is checked against the registries by
the tests).
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import sys
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import Any, Callable, Iterable, Optional

import numpy as np
from sklearn.utils._param_validation import Interval, InvalidParameterError, StrOptions, _Constraint

from bncbench.errors import BNCBenchError

__all__ = ["Component", "Hyperparameter", "ParameterError", "Registry", "finite", "integer", "options", "union"]


class ParameterError(BNCBenchError, InvalidParameterError):
    """A hyperparameter outside its declared range.

    One clear line on the command line (a :class:`~bncbench.errors.BNCBenchError`, exit code 2),
    and the ``InvalidParameterError`` scikit-learn's estimator checks expect.
    :class:`bncbench.BNClassifier` raises it with scikit-learn's message when a hyperparameter
    fails its constraints.
    """


class _Finite(Interval):
    """A finite real number ``>= low`` (scikit-learn's ``Interval`` admits infinity)."""

    def __init__(self, low: float):
        super().__init__(Real, low, None, closed="left")

    def __contains__(self, val) -> bool:
        return bool(np.isfinite(val)) and super().__contains__(val)

    def __str__(self) -> str:
        return f"a finite float >= {self.left}"


def finite(low: float = 0.0) -> Interval:
    """Constraint: a finite real number ``>= low``.

    Parameters
    ----------
    low : float, default=0.0
        The smallest admitted value (included).

    Returns
    -------
    sklearn.utils._param_validation.Interval
        A closed-left ``Interval`` over reals that also rejects infinity and NaN; its text is
        ``"a finite float >= low"``.
    """
    return _Finite(low)


def integer(low: int, high: int | None = None) -> Interval:
    """Constraint: an integer in ``[low, high]`` (no upper bound when ``high`` is None).

    Parameters
    ----------
    low : int
        The smallest admitted value (included).
    high : int, optional
        The largest admitted value (included); None for no upper bound.

    Returns
    -------
    sklearn.utils._param_validation.Interval
        An ``Interval(Integral, low, high)``, closed at both ends (left only when ``high`` is None).
    """
    return Interval(Integral, low, high, closed="both" if high is not None else "left")


class _LazyOptions(StrOptions):
    """``StrOptions`` over a registry's names, read when the constraint is checked (plug-ins included)."""

    def __init__(self, registry: "Registry"):
        self.registry = registry
        _Constraint.__init__(self)
        self.deprecated = set()
        self.type = str

    @property
    def options(self):  # noqa: D401 - read by StrOptions
        return set(self.registry.names())

    def is_satisfied_by(self, val) -> bool:
        """``StrOptions``' test (a str among :attr:`options`), asked of the registry itself (its names are its keys)
        without building the ordered list of its names."""
        return isinstance(val, str) and val in self.registry

    def __str__(self) -> str:
        return f"a str among {self.registry.names()}"


LIVE_CONSTRAINTS = (_LazyOptions,)
"""Constraints whose answer for a value can change (a registry's names): :mod:`bncbench.validate` re-tests them."""


class _OrderedOptions(StrOptions):
    """``StrOptions`` that names its options in the order given (stable docs and messages)."""

    def __init__(self, names):
        super().__init__(set(names))
        self.order = list(names)

    def __str__(self) -> str:
        return f"a str among {self.order}"


def options(registry_or_names: Registry | Iterable[str]) -> StrOptions:
    """Constraint: one of a registry's names (or of a fixed tuple of names).

    Parameters
    ----------
    registry_or_names : Registry or iterable of str
        A registry, whose names are read each time the constraint is checked (plug-ins registered
        later included), or fixed names.

    Returns
    -------
    sklearn.utils._param_validation.StrOptions
        The constraint; its text names the options in registration order, or in the order given.
    """
    if isinstance(registry_or_names, Registry):
        return _LazyOptions(registry_or_names)
    return _OrderedOptions(tuple(registry_or_names))


@dataclass(frozen=True)
class Hyperparameter:
    """One hyperparameter a component reads.

    Parameters
    ----------
    name : str
        Keyword of :class:`bncbench.BNClassifier` and field of the component's config.
    default : object
        Value when neither the config nor the caller sets it.
    constraints : list
        scikit-learn parameter constraints (``Interval``, ``StrOptions``, types, ``None``).
    doc : str
        One line for the docs and ``--help``.
    type : type, default=Any
        Field type of the typed config schema (``int``, ``float``, ``str``; ``Any`` for unions).
    omit_default : bool, default=False
        Leave the hyperparameter out of a model's parameters (and so out of its task key)
        while it has its default: for hyperparameters added after records existed, so that
        a stored sweep still resumes.
    engine_default : bool, default=False
        The default is applied by the component when it runs, not written into configs: the typed
        schema's field is unset (None), so a composed option, a model's parameters and its task key
        carry the value only where a config or a caller states it. For defaults that lived in the
        engine's code while records were stored without them (an optimizer's ``maxls``, ``patience``,
        ...): declared here, their one home, and the stored task keys unchanged.
    from_group : str, optional
        The value is set by another config group rather than by a field of this
        component's config: its chosen option's name (``init``, ``optimizer``,
        ``objective``) or, for ``optimizer_options``, the option's fields.
    from_dataset : str, optional
        The value is a fact of the dataset, not of the model: when an experiment runs the model,
        it is the dataset's ``meta[from_dataset]`` (:func:`bncbench.harness.dataset_values.dataset_values`;
        e.g. the network a synthetic dataset was sampled from), left at its default when the dataset
        has no such fact. No config field, not part of the model's parameters; from Python it is an
        ordinary keyword.
    """

    name: str
    default: Any
    constraints: list
    doc: str
    type: Any = Any
    omit_default: bool = False
    engine_default: bool = False
    from_group: Optional[str] = None
    from_dataset: Optional[str] = None


@dataclass(frozen=True)
class Component:
    """A registered component: its implementation, hyperparameters, label and capabilities.

    ``info`` holds kind-specific facts the consumers read: an estimator's
    ``counts=True`` (it exposes count tables the optimized parameterizations
    build on), a parameterization's ``optimized``, or ``uses``: names of other
    components' hyperparameters it reads too (SkDB's search uses the m-estimate's
    ``m``); they are passed to it but stay the other component's in configs and
    model parameters.

    Attributes
    ----------
    kind : str
        The registry's kind (``"structure"``, ``"optimizer"``, ...).
    name : str
        The name it is registered under (letters, digits, ``-`` and ``_``).
    obj : object
        The implementation: a function or class; what a call receives depends on the kind.
    hyperparameters : tuple of Hyperparameter
        The hyperparameters it reads, in declaration order.
    label : str, default=""
        Its part of a model's label in the papers' notation; may interpolate its config
        (``KDB-${.k}``).
    doc : str, default=""
        One line for the docs: the ``doc`` given at registration or the first line of the
        implementation's docstring.
    check : callable, optional
        ``check(values)``, called with the hyperparameter values before use; raises
        :class:`~bncbench.errors.BNCBenchError` to reject a combination the constraints cannot express.
    info : dict
        Kind-specific facts (see above).
    module : str, default=""
        The module it was registered from (tells built-ins from plug-ins).
    """

    kind: str
    name: str
    obj: Any
    hyperparameters: tuple
    label: str = ""
    doc: str = ""
    check: Optional[Callable[[dict], None]] = None
    info: dict = field(default_factory=dict)
    module: str = ""  # where it was registered

    def params(self, values: dict) -> dict:
        """The values of this component's hyperparameters in ``values`` (declared defaults otherwise).

        Parameters
        ----------
        values : dict
            Values by hyperparameter name; other keys are ignored.

        Returns
        -------
        dict
            One entry per declared hyperparameter, in declaration order (values are not validated).
        """
        return {h.name: values.get(h.name, h.default) for h in self.hyperparameters}


class Registry:
    """Named components of one kind.

    Parameters
    ----------
    kind : str
        What the components are (``"structure"``, ``"optimizer"``, ...): the Hydra config group
        and the ``BNClassifier`` keyword that selects one.
    builtins : tuple of str
        Modules that register the built-in components, imported on first use. A package stands for
        every module in it (its submodules whose names do not start with ``_``, in name order): a
        built-in added as a new module of the package is found without editing any list.
    doc : str, default=""
        What the components are, in a few words, for the docs' headings.
    own_defaults : bool, default=False
        Each component declares its own defaults: two components may declare one hyperparameter
        name with different defaults (same type and constraints still). For kinds whose values travel
        per component rather than as shared keywords (an optimizer's ``optimizer_options``: ``sgd``
        runs 20 epochs, ``lbfgs`` up to 10^4 iterations).

    Attributes
    ----------
    kind : str
        As given.
    doc : str
        As given.
    """

    def __init__(self, kind: str, builtins: Iterable[str] = (), doc: str = "", own_defaults: bool = False) -> None:
        """Create an empty registry; the ``builtins`` modules and the plug-ins are imported on first read.

        Parameters
        ----------
        kind : str
            The kind of component (Hydra config group).
        builtins : iterable of str, default=()
            Modules (or packages: every module in them) that register the built-in components.
        doc : str, default=""
            A few words on what the components are.
        own_defaults : bool, default=False
            Each component declares its own defaults (see the class doc).
        """
        self.kind = kind
        self.doc = doc
        self.own_defaults = own_defaults
        self._builtins = tuple(builtins)
        self._loaded = False
        self._items: dict[str, Component] = {}
        self._listeners: list[Callable[[Component], None]] = []

    # ------------------------------------------------------------ registration
    def register(self, name: str, *, hyperparameters: Iterable[Hyperparameter] = (), label: str = "",
                 doc: str | None = None, check: Callable[[dict], None] | None = None, replace: bool = False,
                 module: str | None = None, **info: Any) -> Callable[[Any], Any]:
        """Decorator registering ``obj`` under ``name``; returns ``obj`` unchanged.

        Parameters
        ----------
        name : str
            The component's name: letters, digits, ``-`` and ``_``.
        hyperparameters : iterable of Hyperparameter, default=()
            The hyperparameters it reads.
        label : str, default=""
            Its part of a model's label.
        doc : str, optional
            One line for the docs; the first line of ``obj``'s docstring when None.
        check : callable, optional
            ``check(values)``: extra validation of its hyperparameter values (see :class:`Component`).
        replace : bool, default=False
            Replace a component registered under the same name instead of raising.
        module : str, optional
            The module registering it (tells built-ins from plug-ins); the module calling
            ``register`` when None (a registration helper passes its caller's).
        **info
            Kind-specific facts, stored as :attr:`Component.info`.

        Returns
        -------
        callable
            The decorator. Applying it registers the component through :meth:`add`.

        Raises
        ------
        BNCBenchError
            When the decorator is applied: if the name is bad or taken (unless ``replace``), or if a
            hyperparameter's declaration conflicts with another component's of the same name.
        """

        module = module if module is not None else sys._getframe(1).f_globals.get("__name__", "")

        def deco(obj):
            self.add(Component(self.kind, name, obj, tuple(hyperparameters), label,
                               doc if doc is not None else _first_line(obj), check, dict(info), module),
                     replace=replace)
            return obj

        return deco

    def add(self, comp: Component, *, replace: bool = False) -> Component:
        """Register a :class:`Component` (see :meth:`register`).

        The built-in modules and plug-ins are imported first, so a new declaration is checked
        against theirs; then every :meth:`on_register` listener is called with the component.

        Parameters
        ----------
        comp : Component
            The component; its ``kind`` is not checked against the registry's.
        replace : bool, default=False
            Replace a component registered under the same name instead of raising.

        Returns
        -------
        Component
            ``comp``.

        Raises
        ------
        BNCBenchError
            If the name is empty or has characters other than letters, digits, ``-`` and ``_``; if it
            is taken and ``replace`` is false; or if one of its hyperparameters is declared differently
            (default, type or constraints) by another component of this registry.
        """
        if not comp.name or not comp.name.replace("_", "").replace("-", "").isalnum():
            raise BNCBenchError(f"bad {self.kind} name {comp.name!r} (letters, digits, - and _ only)")
        self._load()  # built-ins first: a plug-in's declarations are checked against theirs
        if comp.name in self._items and not replace:
            raise BNCBenchError(f"{self.kind} {comp.name!r} is already registered")
        _check_compatible(comp, [c for k, c in self._items.items() if k != comp.name], defaults=not self.own_defaults)
        self._items[comp.name] = comp
        for fn in self._listeners:
            fn(comp)
        return comp

    def on_register(self, fn: Callable[[Component], None]) -> None:
        """Call ``fn(component)`` for every component registered from now on.

        Parameters
        ----------
        fn : callable
            Listener taking the :class:`Component`; components registered before are not passed.
        """
        self._listeners.append(fn)

    # ------------------------------------------------------------ lookup
    def _load(self) -> None:
        if not self._loaded:
            self._loaded = True
            self._builtins = _expand(self._builtins)
            for mod in self._builtins:
                importlib.import_module(mod)
            from bncbench.components import load_plugins

            load_plugins()

    def _ordered(self) -> list[Component]:
        """The components: built-ins in the order of their modules in ``builtins``, then plug-ins; each
        module's in registration order. Not the order of registration itself, which depends on which
        module was imported first (its registration loads the others before it is added)."""
        self._load()
        rank = {m: i for i, m in enumerate(self._builtins)}
        return sorted(self._items.values(), key=lambda c: rank.get(c.module, len(rank)))

    def names(self) -> list[str]:
        """Registered names: built-ins in the order of their modules, then plug-ins, each in registration order."""
        return [c.name for c in self._ordered()]

    def builtins(self) -> list[str]:
        """The names of the components that ship with bncbench (no plug-ins), in :meth:`names`' order."""
        return [c.name for c in self._ordered() if c.module in self._builtins]

    def __contains__(self, name) -> bool:
        self._load()
        return name in self._items

    def __iter__(self):
        return iter(self._ordered())

    def __getitem__(self, name: str) -> Component:
        self._load()
        try:
            return self._items[name]
        except (KeyError, TypeError):
            raise BNCBenchError(f"unknown {self.kind} {name!r}; choose one of {', '.join(self.names())}") from None

    def schema(self, name: str) -> type:
        """The typed config (a dataclass) of component ``name``: ``name``, ``label`` and its hyperparameters.

        Hyperparameters set through another config group (``from_group``) or by the dataset
        (``from_dataset``) have no field; one with an ``engine_default`` has a field left unset (None).
        A field's type is the hyperparameter's ``type`` (``Optional`` of it when the default is None).

        Parameters
        ----------
        name : str
            A registered component's name.

        Returns
        -------
        type
            A new dataclass ``<Name><Kind>Conf`` whose fields default to the component's name, label
            and hyperparameter defaults.

        Raises
        ------
        BNCBenchError
            If ``name`` is not registered.
        """
        comp = self[name]
        fields = [("name", str, dataclasses.field(default=comp.name)),
                  ("label", str, dataclasses.field(default=comp.label))]
        for h in comp.hyperparameters:
            if h.from_group or h.from_dataset:
                continue
            default = None if h.engine_default else h.default
            f = dataclasses.field(default_factory=lambda d=default: d) if isinstance(default, (list, dict)) \
                else dataclasses.field(default=default)
            fields.append((h.name, _field_type(h), f))
        cls_name = "".join(p.capitalize() for p in f"{name}_{self.kind}_conf".replace("-", "_").split("_"))
        return dataclasses.make_dataclass(cls_name, fields)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self.names())})"


def _expand(modules: Iterable[str]) -> tuple:
    """``modules`` with every package replaced by its public submodules, in name order (recursively)."""
    out = []
    for name in modules:
        mod = importlib.import_module(name)
        if not hasattr(mod, "__path__"):
            out.append(name)
            continue
        subs = sorted(m.name for m in pkgutil.iter_modules(mod.__path__) if not m.name.startswith("_"))
        out += _expand(f"{name}.{sub}" for sub in subs)
    return tuple(out)


def _field_type(h: Hyperparameter):
    if h.type is Any:
        return Any
    return Optional[h.type] if h.default is None or h.engine_default or None in h.constraints else h.type


def _same(h: Hyperparameter, g: Hyperparameter, defaults: bool = True) -> bool:
    """Two declarations of one name mean the same: same default (unless ``defaults`` is false), type and range."""
    return ((g.default if defaults else None), g.type, [str(c) for c in g.constraints]) == \
        ((h.default if defaults else None), h.type, [str(c) for c in h.constraints])


def _check_compatible(comp: Component, others: Iterable[Component], defaults: bool = True) -> None:
    seen = {h.name: (c, h) for c in others for h in c.hyperparameters}
    for h in comp.hyperparameters:
        if h.name in seen and not _same(h, seen[h.name][1], defaults):
            other = seen[h.name][0]
            raise BNCBenchError(f"{comp.kind} {comp.name!r} declares hyperparameter {h.name!r} unlike "
                                f"{other.kind} {other.name!r} does ({'default, ' if defaults else ''}type or range); "
                                "one name, one meaning")


def union(registries: Iterable["Registry"]) -> dict[str, Hyperparameter]:
    """Every hyperparameter the components of ``registries`` declare, by name (first declaration kept).

    Parameters
    ----------
    registries : iterable of Registry
        The registries to merge, in order of precedence.

    Returns
    -------
    dict of str to Hyperparameter
        The declarations by name, in the order first declared.

    Raises
    ------
    BNCBenchError
        If two components of different kinds declare one name differently (default, type or
        constraints); within a kind, :meth:`Registry.add` refuses that already.
    """
    out: dict[str, Hyperparameter] = {}
    comps = [c for reg in registries for c in reg]
    for i, comp in enumerate(comps):
        _check_compatible(comp, comps[:i])
        for h in comp.hyperparameters:
            out.setdefault(h.name, h)
    return out


def _first_line(obj) -> str:
    doc = getattr(obj, "__doc__", None) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""

"""The package's layout: the import graph of ``bncbench`` has no cycle among module-level imports.

Every module of the package is parsed (``ast``, nothing imported) and its imports of other
``bncbench`` modules listed in two kinds:

* **module-level** imports run when the module is imported: statements at the top of the module,
  in a class body, or under a module-level ``if`` / ``try`` (``if TYPE_CHECKING:`` blocks
  excepted: they never run);
* **function-level** imports run when a function is called (the usual way to break a cycle or to
  keep ``import bncbench`` cheap).

``from a.b import c`` names the module ``a.b.c`` when that is a module, else ``a.b``. Importing
``a.b.c`` also runs the ``__init__`` of ``a.b``: an edge to every package on the way that is not
a package of the importer itself (those are being imported already).

A cycle among module-level imports means that which module of it is imported first decides
whether the others find their names; :func:`test_no_module_level_import_cycle` fails on one and
names every strongly connected component with one cycle through it. Run this file as a script
(``python tests/test_layout.py``) for the whole report: both graphs' sizes, the cycles, and the
module base names that occur more than once.
"""

from __future__ import annotations

import ast
import functools
import re
from collections import defaultdict
from pathlib import Path


PACKAGE = "bncbench"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE


def _module_names(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the package: dotted name to file (a package is its ``__init__.py``)."""
    out = {}
    for f in sorted(root.rglob("*.py")):
        parts = f.relative_to(root.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


@functools.lru_cache(maxsize=None)
def _tree(path: Path) -> ast.Module:
    """A module's syntax tree (parsed once per process)."""
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.Module) -> list[tuple[ast.stmt, bool]]:
    """Every import statement of a module, each with whether it runs at import time."""
    out: list[tuple[ast.stmt, bool]] = []

    def visit(nodes, module_level):
        for node in nodes:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                out.append((node, module_level))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(node.body, False)
            elif isinstance(node, ast.If) and _is_type_checking(node.test):
                visit(node.orelse, module_level)  # the body never runs
            else:
                for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                    sub = getattr(node, field, None)
                    if isinstance(sub, list):
                        visit(sub, module_level)

    visit(tree.body, True)
    return out


def _targets(node: ast.stmt, importer: str, is_package: bool, modules: dict) -> set[str]:
    """The package's modules an import statement names (most specific existing module)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        if node.level:
            base = importer.split(".") if is_package else importer.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            mod = ".".join(base + ([node.module] if node.module else []))
        else:
            mod = node.module or ""
        names = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in modules else mod for a in node.names]
    out = set()
    for n in names:
        while n and n not in modules:  # `import bncbench.data.uci as u` names an existing module; be safe
            n = n.rpartition(".")[0]
        if n and n.split(".")[0] == PACKAGE:
            out.add(n)
    return out


def import_graph(root: Path = ROOT) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """The package's import graph, module-level and function-level edges separately.

    Parameters
    ----------
    root : pathlib.Path
        The package directory.

    Returns
    -------
    module_level, function_level : dict of str to set of str
        Importer to the modules it imports (every module of the package is a key). A package
        ``__init__`` run on the way to an imported module counts as imported, unless it is a
        package of the importer.
    """
    modules = _module_names(root)
    graphs: tuple[dict, dict] = ({m: set() for m in modules}, {m: set() for m in modules})
    for mod, path in modules.items():
        tree = _tree(path)
        is_package = path.name == "__init__.py"
        own = {".".join(mod.split(".")[:k]) for k in range(1, mod.count(".") + 2)}  # the importer's packages
        for node, module_level in _imports(tree):
            for t in _targets(node, mod, is_package, modules):
                parts = t.split(".")
                for k in range(1, len(parts) + 1):
                    step = ".".join(parts[:k])
                    if step not in own and step != mod:
                        graphs[0 if module_level else 1][mod].add(step)
    return graphs


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def connect(v):  # the package has ~150 modules: recursion depth is no concern
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return sorted(out)


def one_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """A shortest cycle through the component's first module, inside the component (breadth first)."""
    members = set(component)
    start = component[0]
    prev = {start: None}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v] & members):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return [*reversed(path), start]
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return component  # unreachable for a strongly connected component


def name_clashes(root: Path = ROOT) -> dict[str, list[str]]:
    """Module base names (``tables``, ``base``, ...) that more than one module of the package has."""
    by_base = defaultdict(list)
    for mod in _module_names(root):
        if "." in mod and not mod.endswith("__main__"):
            by_base[mod.rpartition(".")[2]].append(mod)
    return {b: sorted(ms) for b, ms in sorted(by_base.items()) if len(ms) > 1}


def describe_cycles(graph: dict[str, set[str]]) -> list[str]:
    """One line per strongly connected component: its modules and one cycle through them."""
    return [f"{len(c)} modules {c}; e.g. {' -> '.join(one_cycle(graph, c))}" for c in strongly_connected(graph)]


# --------------------------------------------------------------------------- tests of the tools


def _toy_package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / PACKAGE
    for rel, text in {"__init__.py": "", **files}.items():
        f = root / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    return root


def test_graph_separates_module_level_and_function_level_imports(tmp_path):
    root = _toy_package(tmp_path, {
        "a.py": "from bncbench import b\nimport bncbench.sub.c as c\n"
                "def f():\n    from bncbench.d import x\n",
        "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from bncbench import a\n"
                "try:\n    from . import d\nexcept ImportError:\n    pass\n"
                "class K:\n    from bncbench.sub import c\n",
        "d.py": "x = 1\n",
        "sub/__init__.py": "",
        "sub/c.py": "from ..d import x\nfrom . import e\n",
        "sub/e.py": "from bncbench.sub.c import *\n",
    })
    mod, fun = import_graph(root)
    assert mod["bncbench.a"] == {"bncbench.b", "bncbench.sub", "bncbench.sub.c"}
    assert fun["bncbench.a"] == {"bncbench.d"}
    assert mod["bncbench.b"] == {"bncbench.d", "bncbench.sub", "bncbench.sub.c"}  # TYPE_CHECKING left out
    assert mod["bncbench.sub.c"] == {"bncbench.d", "bncbench.sub.e"}  # its own package is no edge
    assert strongly_connected(mod) == [["bncbench.sub.c", "bncbench.sub.e"]]
    assert one_cycle(mod, ["bncbench.sub.c", "bncbench.sub.e"]) == ["bncbench.sub.c", "bncbench.sub.e",
                                                                    "bncbench.sub.c"]
    assert strongly_connected(fun) == []


def test_a_cycle_through_a_package_init_is_found(tmp_path):
    root = _toy_package(tmp_path, {
        "p/__init__.py": "from bncbench.q import y\n",
        "p/x.py": "x = 1\n",
        "q.py": "from bncbench.p.x import x\ny = 2\n",
    })
    mod, _ = import_graph(root)
    assert mod["bncbench.q"] == {"bncbench.p", "bncbench.p.x"}
    assert strongly_connected(mod) == [["bncbench.p", "bncbench.q"]]


def test_name_clashes_lists_modules_of_one_base_name(tmp_path):
    root = _toy_package(tmp_path, {"tables.py": "", "r/__init__.py": "", "r/tables.py": "", "r/other.py": ""})
    assert name_clashes(root) == {"tables": ["bncbench.r.tables", "bncbench.tables"]}


def private_imports(root: Path = ROOT) -> list[str]:
    """``module: from other import _name`` for every private name a module imports from another module."""
    modules = _module_names(root)
    out = []
    for mod, path in modules.items():
        for node, _ in _imports(_tree(path)):
            if isinstance(node, ast.ImportFrom):
                for t in _targets(node, mod, path.name == "__init__.py", modules):
                    out += [f"{mod}: from {t} import {a.name}" for a in node.names
                            if a.name.startswith("_") and not a.name.startswith("__") and t != mod]
    return sorted(set(out))


def test_private_imports_are_found(tmp_path):
    root = _toy_package(tmp_path, {"a.py": "_x = 1\ny = 2\n", "b.py": "from bncbench.a import _x, y\n",
                                   "c.py": "def f():\n    from .a import _x as z\n"})
    assert private_imports(root) == ["bncbench.b: from bncbench.a import _x", "bncbench.c: from bncbench.a import _x"]


# --------------------------------------------------------------------------- the package

KNOWN_CYCLES = {
    frozenset({"bncbench.components", "bncbench.registry"}):
        "a Registry imports its kind's built-in modules and the plug-ins (bncbench.components.load_plugins) "
        "when it is first read, from inside a function",
}
"""The cycles allowed once function-level imports count too, each with why it is one."""


def test_no_module_level_import_cycle():
    mod, _ = import_graph()
    assert len(mod) > 50  # the whole package was read
    cycles = describe_cycles(mod)
    assert not cycles, "module-level import cycles:\n" + "\n".join(cycles)


def test_function_level_imports_close_no_other_cycle():
    mod, fun = import_graph()
    both = {m: mod[m] | fun[m] for m in mod}
    new = [c for c in strongly_connected(both) if frozenset(c) not in KNOWN_CYCLES]
    assert not new, "import cycles through function-level imports:\n" + "\n".join(
        f"{c}; e.g. {' -> '.join(one_cycle(both, c))}" for c in new)


LAYERS = (
    ("errors", "settings", "paths", "atomic", "metrics", "registry", "components", "validate"),
    ("bn", "data"),
    ("structures", "estimators", "hdp", "engine"),
    ("model",),
    ("baselines", "peers", "executors"),
    ("harness",),
    ("report",),
    ("__main__", ""),
)
"""The package's layers, bottom up, as ``docs/architecture.md`` draws them (``""``: ``bncbench/__init__``).

A module imports modules of its own layer or of lower ones; the registries are one layer (a
registry loads its built-ins from inside a function: :data:`KNOWN_CYCLES`)."""

UPWARD_ALLOWED = {
    ("bncbench.harness.app", "bncbench.report.summary"):
        "`run` prints the summary table of what it computed (a function-level import)",
}
"""The imports that go up a layer, each with why (the packages on the way to the module count as allowed too)."""


def _layer(module: str) -> int:
    top = module.split(".")[1] if "." in module else ""
    for i, names in enumerate(LAYERS):
        if top in names:
            return i
    raise AssertionError(f"{module}: its top-level name {top!r} is in no layer of LAYERS (add it)")


def upward_imports(graphs=None) -> list[str]:
    """``importer -> imported`` for every import (at any level) into a higher layer, not allowed."""
    mod, fun = graphs or import_graph()
    out = []
    for a in mod:
        for b in sorted(mod[a] | fun[a]):
            allowed = any(x == a and (y == b or y.startswith(b + ".")) for x, y in UPWARD_ALLOWED)
            if b != PACKAGE and _layer(b) > _layer(a) and not allowed:
                out.append(f"{a} -> {b}")
    return out


def test_imports_go_down_the_layers():
    mod, _ = import_graph()
    assert {_layer(m) for m in mod} == set(range(len(LAYERS)))  # every module has a layer; every layer a module
    assert upward_imports() == []


def test_upward_import_finder(tmp_path):
    root = _toy_package(tmp_path, {"bn/__init__.py": "", "bn/x.py": "def f():\n    from bncbench.model import y\n",
                                   "model/__init__.py": "", "model/y.py": "from bncbench.bn import x\n"})
    assert upward_imports(import_graph(root)) == ["bncbench.bn.x -> bncbench.model", "bncbench.bn.x -> bncbench.model.y"]


SAME_METHOD = {
    "ande": "AnDE's structure (its subsets) and its estimator",
    "anje": "AnJE's structure and its estimator",
    "ebnc": "the EBNC compatibility mode's estimator and its parameterization",
    "hdp": "the HDP estimator and the HDP sampler it calls",
    "cli": "the command of a package (`bncbench data`, `bncbench report`)",
    "fit": "the entry point of a package's fitting (the CCBN engine, the HDP sampler)",
}
"""Module base names that more than one module has, each for one meaning."""


def test_module_names_clash_only_for_one_meaning():
    clashes = name_clashes()
    assert {b: ms for b, ms in clashes.items() if b not in SAME_METHOD} == {}


def test_data_loading_flows_one_way():
    """No module of bncbench.data imports, at any level, a module that imports it back."""
    mod, fun = import_graph()
    data = {m: {t for t in mod[m] | fun[m] if t.startswith("bncbench.data")} for m in mod
            if m.startswith("bncbench.data")}
    assert len(data) > 15
    assert describe_cycles(data) == []


def environment_reads(root: Path = ROOT) -> list[str]:
    """``module:line`` of every use of ``environ`` / ``getenv`` (``os.environ``, ``from os import environ``)."""
    out = []
    for mod, path in _module_names(root).items():
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Attribute):
                name = node.attr
            elif isinstance(node, ast.ImportFrom) and node.module == "os":
                name = next((a.name for a in node.names if a.name in ("environ", "getenv")), "")
            else:
                continue
            if name in ("environ", "environb", "getenv", "putenv"):
                out.append(f"{mod}:{node.lineno}")
    return sorted(set(out))


MACHINE_PATH = re.compile(r"(?<![\w.$~])/(?:work|home|Users|scratch|mnt|data|srv|tmp)/")
"""An absolute path into one machine's directories, which no string of the package may hold."""


def machine_paths(root: Path = ROOT) -> list[str]:
    """``module:line: text`` of every string constant (messages, docstrings) that names a machine's directory."""
    out = []
    for mod, path in _module_names(root).items():
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and MACHINE_PATH.search(node.value):
                out.append(f"{mod}:{node.lineno}: {node.value.strip()[:80]!r}")
    return sorted(out)


def test_environment_and_machine_path_finders(tmp_path):
    root = _toy_package(tmp_path, {
        "a.py": "import os\nx = os.environ.get('A')\ny = os.getenv('B')\n",
        "b.py": "from os import environ\n'See /work/x'\nmsg = f'e.g. {1} /home/me/data'\n"
                "ok = '$HOME/.cache, a/work/b, ~/data/x'\n",
    })
    assert environment_reads(root) == ["bncbench.a:2", "bncbench.a:3", "bncbench.b:1"]
    assert [m.split(":")[:2] for m in machine_paths(root)] == [["bncbench.b", "2"], ["bncbench.b", "3"]]


def test_environment_is_read_in_settings_only():
    assert [r for r in environment_reads() if not r.startswith("bncbench.settings:")] == []


def test_no_string_names_a_machine_path():
    assert machine_paths() == []


def test_no_data_module_imports_a_private_name_of_another():
    assert [p for p in private_imports() if p.startswith("bncbench.data")] == []


if __name__ == "__main__":  # the report: python tests/test_layout.py
    mod, fun = import_graph()
    print(f"{len(mod)} modules; {sum(map(len, mod.values()))} module-level edges, "
          f"{sum(map(len, fun.values()))} function-level edges")
    print("module-level cycles:", *(describe_cycles(mod) or ["none"]), sep="\n  ")
    both = {m: mod[m] | fun[m] for m in mod}
    print("cycles once function-level imports count too:", *(describe_cycles(both) or ["none"]), sep="\n  ")
    print("private names imported from another module:", *(private_imports() or ["none"]), sep="\n  ")
    print("module base names used more than once:",
          *[f"{b}: {', '.join(ms)}" for b, ms in name_clashes().items()], sep="\n  ")

"""Model specifications: config-group choices -> estimator parameters and a label.

A model is the combination of four config groups (``structure``, ``param``,
``init``, ``optimizer``). Each group option is a small mapping (see
``conf/<group>/*.yaml``); :func:`model_spec` turns one choice per group into
the keyword arguments of :class:`bncbench.BNClassifier` and a label in the
papers' notation (``NB``, ``TAN^w``, ``KDB-1^d (I)``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

from omegaconf import DictConfig, ListConfig, OmegaConf

from bncbench.errors import BNCBenchError

GROUPS = ("structure", "param", "init", "optimizer")
FLOAT_PARAMS = ("m", "lam")
PARAM_SUFFIX = {"generative": "", "discriminative": "d", "extended": "e", "weighted": "w"}


@dataclass(frozen=True)
class ModelSpec:
    label: str
    params: dict  # BNClassifier keyword arguments


def _plain(node) -> dict:
    if isinstance(node, (DictConfig, ListConfig)):
        return OmegaConf.to_container(node, resolve=True)
    return dict(node or {})


def model_spec(structure, param, init, optimizer, extra=None) -> ModelSpec:
    """Build the estimator parameters and label from one option per group."""
    s, p, i, o = (_plain(g) for g in (structure, param, init, optimizer))
    extra = dict(extra or {})
    if extra.get("model", "bnc") != "bnc":  # a baseline: its own parameters only
        params = {k: v for k, v in extra.items() if k != "label"}
        return ModelSpec(extra.get("label") or str(extra["model"]), params)
    params = {"structure": s.get("name", "nb")}
    if params["structure"] in ("kdb", "skdb"):
        k = s.get("k", 1)
        params["k"] = int(k) if isinstance(k, (int, float)) and float(k).is_integer() else k
    if s.get("parents") is not None:
        params["parents"] = s["parents"]
    pname = p.get("name", "generative")
    params["param"] = pname
    for key, val in p.items():
        if key not in ("name", "label", "suffix", "tag"):
            params[key] = val
    if pname != "generative":  # init and optimizer only matter for optimized parameters
        params["init"] = i.get("name", "zeros")
        params["optimizer"] = o.get("name", "lbfgs")
        opts = {k: v for k, v in o.items() if k not in ("name", "label")}
        if opts:
            params["optimizer_options"] = opts
    for key in list(extra):
        if key == "label":
            continue
        params[key] = extra[key]
    # one spelling per value, so `m: 1.0` and `param.m=1` give the same task key
    for key in FLOAT_PARAMS:
        if isinstance(params.get(key), (int, float)) and not isinstance(params.get(key), bool):
            params[key] = float(params[key])
    if params["structure"] == "kdb" and "k" in params:
        base = f"KDB-{params['k']}"
    elif params["structure"] == "skdb":
        base = f"SkDB-{params['k']}"
    else:
        base = s.get("label") or str(params["structure"]).upper()
    suffix = p.get("suffix", PARAM_SUFFIX.get(pname, pname))
    label = base + (f"^{suffix}" if suffix else "") + (f" {p['tag']}" if p.get("tag") else "")
    if pname != "generative" and params.get("init") == "generative":
        label += " (I)"
    if pname != "generative" and o.get("label"):
        label += f" [{o['label']}]"
    label = extra.get("label") or label
    return ModelSpec(label, params)


def load_option(conf_dir: Path, group: str, option) -> dict:
    """Read ``conf/<group>/<option>.yaml`` (or pass a mapping through)."""
    if isinstance(option, (dict, DictConfig)):
        return _plain(option)
    path = Path(conf_dir) / group / f"{option}.yaml"
    if not path.exists():
        choices = sorted(p.stem for p in (Path(conf_dir) / group).glob("*.yaml"))
        raise BNCBenchError(f"unknown {group} {option!r}; choose one of {', '.join(choices)}")
    return _plain(OmegaConf.load(path))


def expand_models(cfg, conf_dir: Path) -> list[ModelSpec]:
    """The experiment's model list.

    ``cfg.models`` is a list of items; each item maps some groups to one
    option or a list of options (crossed within the item); groups not named
    take the composed default (``cfg.structure`` etc.); any other key is a
    direct estimator parameter (e.g. ``m: 5``). Without ``cfg.models`` the
    single model of the composed groups is used.
    """
    defaults = {g: _plain(cfg.get(g)) for g in GROUPS}
    items = cfg.get("models")
    if not items:
        return [model_spec(*(defaults[g] for g in GROUPS))]
    specs: dict[str, ModelSpec] = {}
    for item in items:
        item = _plain(item)
        choices = []
        for g in GROUPS:
            opt = item.get(g)
            if opt is None:
                choices.append([defaults[g]])
            elif isinstance(opt, list):
                choices.append([load_option(conf_dir, g, o) for o in opt])
            else:
                choices.append([load_option(conf_dir, g, opt)])
        extra = {k: v for k, v in item.items() if k not in GROUPS}
        for combo in itertools.product(*choices):
            spec = model_spec(*combo, extra=extra)
            key = repr(sorted(spec.params.items()))
            if spec.label in specs and repr(sorted(specs[spec.label].params.items())) != key:
                raise BNCBenchError(
                    f"two different models share the label {spec.label!r}; give one a 'label'"
                )
            specs[spec.label] = spec
    return list(specs.values())

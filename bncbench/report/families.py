"""Model families, found from the models' stored parameters (never from their labels).

A *family* is a set of models that differ only in their parameterization: the
generative model of a structure and estimate, and the optimized models over it
that share an initialization, optimizer and objective (``NB``, ``NB^w``,
``NB^d``, ``NB^e``; and ``NB``, ``NB^w (I)``, ... for generative
initialization). The report's default W-D-L pairs, plot groups and
convergence comparisons are built from families.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pandas as pd

from bncbench.errors import BNCBenchError
from bncbench.report.slugs import slug

ORDER = ("generative", "weighted", "discriminative", "extended")
"""Member order within a family (the papers' order: NB, NB^w, NB^d, NB^e)."""


@dataclass
class Family:
    """Models that differ only in their parameterization: ``members`` maps a param name to a label.

    Attributes
    ----------
    name : str
        A file-name slug of the family (e.g. ``nb``, ``kdb_1``).
    members : dict of str to str
        Parameterization name (``generative``, ``weighted``, ...) -> model label.
    """

    name: str
    members: dict = field(default_factory=dict)

    def labels(self) -> list[str]:
        """The members' labels, in the papers' order.

        Returns
        -------
        list of str
            Generative, weighted, discriminative, extended (those present), then other
            parameterizations' labels sorted by parameterization name.
        """
        known = [self.members[p] for p in ORDER if p in self.members]
        return known + [m for p, m in sorted(self.members.items()) if p not in ORDER]


def model_params(records: pd.DataFrame) -> dict[str, dict]:
    """``{label: parameters}`` from the ``param.*`` columns of :func:`bncbench.harness.store.load_results`.

    Parameters
    ----------
    records : pandas.DataFrame
        Records with ``model`` and ``param.*`` columns.

    Returns
    -------
    dict of str to dict
        Per label (first record of each), its parameters without the ``param.`` prefix; JSON
        lists and mappings stored as strings are decoded, missing (None/NaN) values left out.
    """
    cols = [c for c in records.columns if c.startswith("param.")]
    out: dict = {}
    for label, g in records.groupby("model", sort=False):
        row = g.iloc[0]
        p = {}
        for c in cols:
            v = row[c]
            if isinstance(v, str) and v[:1] in "[{":
                v = json.loads(v)
            if not (v is None or (isinstance(v, float) and pd.isna(v))):
                p[c[len("param."):]] = v
        out[label] = p
    return out


def _split(params: dict):
    """``(param name, family key, base key)``, or None for a model outside families (a baseline)."""
    from bncbench.components import PARAMETERIZATIONS

    p = dict(params or {})
    name = p.pop("param", None)
    if name is None or "model" in p:
        return None
    try:
        comp = PARAMETERIZATIONS[name]
    except BNCBenchError:  # a plug-in parameterization that is not loaded: not in a family
        return None
    own = [h for h in comp.hyperparameters if not h.from_group]
    fam = {k: v for k, v in p.items() if k not in {h.name for h in own}}
    base = {k: v for k, v in fam.items() if k not in {h.name for h in comp.hyperparameters}}
    return name, json.dumps(fam, sort_keys=True, default=str), json.dumps(base, sort_keys=True, default=str)


def families(models: list[str], params: dict[str, dict]) -> list[Family]:
    """The families among ``models`` (labels in report order), each with its generative base if present.

    Models are grouped by their stored parameters: models of a parameterization other than
    ``generative`` whose parameters are equal apart from the parameterization and its own
    hyperparameters form a family, joined by the generative model of the same structure and
    estimate. Baselines and models whose parameterization is not registered belong to no family.

    Parameters
    ----------
    models : list of str
        Labels, in report order.
    params : dict of str to dict
        Stored parameters by label (:func:`model_params`).

    Returns
    -------
    list of Family
        In order of their first non-generative member; a family without a generative model
        is included too.
    """
    split = {m: _split(params.get(m)) for m in models}
    fams: dict = {}
    for m, s in split.items():
        if s is not None and s[0] != "generative":
            fams.setdefault(s[1], Family("")).members.setdefault(s[0], m)
    generative = {s[2]: m for m, s in split.items() if s is not None and s[0] == "generative"}
    for key, fam in fams.items():
        member = next(iter(fam.members.values()))
        base = generative.get(split[member][2])
        if base is not None:
            fam.members["generative"] = base
        fam.name = _name(fam, params)
    return list(fams.values())


def _name(fam: Family, params: dict) -> str:
    """A file-name slug: the first optimized member's label without its parameterization's label part."""
    from bncbench.components import PARAMETERIZATIONS

    pname = next(p for p in [*ORDER, *fam.members] if p in fam.members and p != "generative")
    label, part = fam.members[pname], PARAMETERIZATIONS[pname].label
    text = label.replace(part, "", 1) if part else label
    return slug(text, empty="group")

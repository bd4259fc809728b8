"""The network a dataset was sampled from (its *planted* structure), where it has one.

A synthetic dataset knows the network that generated it: :func:`bncbench.data.perfect.load_perfect`
(Feelders & Ivanovs' perfect graphs, ``2.5.2-3.1000``) and :func:`bncbench.data.sources.load_synthetic`
(``synth-*``) keep its parent lists in ``Dataset.meta["parents"]``, the one home of that fact. The
``parents`` hyperparameter of this structure is declared ``from_dataset="parents"``: when an
experiment runs the model, the runner sets it from the dataset
(:func:`bncbench.harness.dataset_values.dataset_values`); no config names it. From Python it is an
ordinary keyword: ``BNClassifier(structure="planted", parents=ds.meta["parents"])``.

A dataset without a planted network (a UCI dataset) is an error, one line before any task starts
(:func:`bncbench.harness.dataset_values.check_dataset_values`), unless ``fallback`` names the structure to
learn there instead, with its own hyperparameters in ``fallback_options``: Feelders & Ivanovs (§6)
score their synthetic datasets on the generating graphs and hill-climb the UCI ones, so their
experiment is ``structure: planted, fallback: hill_climb, fallback_options: {make_perfect: true}``,
one model grid over both kinds of data. ``LearnedStructure.info["planted"]`` says which was used.
"""

from __future__ import annotations

from typing import Sequence

from sklearn.utils._param_validation import InvalidParameterError, validate_parameter_constraints

from bncbench.components import STRUCTURES
from bncbench.errors import BNCBenchError
from bncbench.registry import Hyperparameter, ParameterError, options
from bncbench.structures.network import LearnedStructure, TrainingData
from bncbench.structures.custom import validate_parents

NAME = "planted"

PARENTS = Hyperparameter("parents", None, [list, None], "planted: the dataset's generating network, its meta['parents'] "
                         "(set per task by the runner, not by a config)", from_dataset="parents")
"""The same hyperparameter as ``custom``'s (one name, one meaning), filled from the dataset's ``meta["parents"]``."""
FALLBACK = Hyperparameter("fallback", None, [options(STRUCTURES), None],
                          "planted: the structure learned on data without a planted network (None: an error)", str)
FALLBACK_OPTIONS = Hyperparameter("fallback_options", None, [dict, None],
                                  "planted: hyperparameters of the fallback structure (its defaults otherwise)")

NO_PLANTED = ("has no planted network (structure=planted needs data sampled from a known network, such as the "
              "perfect-graph datasets 2.5.2-3.1000 or synth-*; or set structure.fallback)")


def _fallback(values: dict):
    """The fallback component and its hyperparameter values, validated; None without a fallback."""
    name = values.get("fallback")
    if name is None:
        return None
    if name == NAME:
        raise BNCBenchError("structure=planted: fallback cannot be planted itself")
    comp = STRUCTURES[name]
    if comp.info.get("uses"):
        raise BNCBenchError(f"structure=planted: fallback={name!r} reads other components' hyperparameters "
                            f"({', '.join(comp.info['uses'])}); choose a structure that does not")
    given = dict(values.get("fallback_options") or {})
    own = {h.name for h in comp.hyperparameters if not h.from_dataset}
    unknown = sorted(set(given) - own)
    if unknown:
        raise BNCBenchError(f"structure=planted: fallback {name!r} has no hyperparameter {', '.join(unknown)} "
                            f"(its hyperparameters: {', '.join(sorted(own)) or 'none'})")
    try:
        validate_parameter_constraints({h.name: h.constraints for h in comp.hyperparameters if h.name in given},
                                       given, caller_name=f"structure=planted's fallback {name!r}")
    except InvalidParameterError as exc:
        raise ParameterError(str(exc)) from None
    vals = comp.params(given)
    if comp.check is not None:
        comp.check(vals)
    return comp, vals


def _check(values: dict) -> None:
    _fallback(values)
    if values.get("fallback") is None and values.get("fallback_options"):
        raise BNCBenchError("structure=planted: fallback_options given without a fallback structure")


def _check_dataset(values: dict, dataset: str) -> None:
    """One line before any task: ``dataset`` gave no planted network and there is no fallback."""
    if values.get("parents") is None and values.get("fallback") is None:
        raise BNCBenchError(f"dataset {dataset!r} {NO_PLANTED}")


@STRUCTURES.register(NAME, label="PG", hyperparameters=[PARENTS, FALLBACK, FALLBACK_OPTIONS], check=_check,
                     dataset_check=_check_dataset)
def learn_planted(data: TrainingData, *, parents: Sequence[Sequence[int]] | None, fallback: str | None = None,
                  fallback_options: dict | None = None) -> LearnedStructure:
    """The network the data were sampled from; elsewhere the ``fallback`` structure.

    Parameters
    ----------
    data : TrainingData
        Training data.
    parents : sequence of sequence of int, or None
        The planted network's attribute parents per attribute (an experiment sets them from the
        dataset's ``meta["parents"]``); None: the data have none.
    fallback : str, optional
        A registered structure learned when ``parents`` is None.
    fallback_options : dict, optional
        Its hyperparameters (its declared defaults otherwise).

    Returns
    -------
    LearnedStructure
        One network with ``parents`` (``info["planted"] = True``), or what ``fallback`` learns
        (its ``info`` with ``planted = False``).

    Raises
    ------
    BNCBenchError
        If ``parents`` is None and there is no fallback, the parent lists are invalid
        (:func:`~bncbench.structures.custom.validate_parents`), or the fallback is invalid.
    """
    if parents is not None:
        return LearnedStructure.single(validate_parents(parents, data.n_attributes), planted=True)
    fb = _fallback({"fallback": fallback, "fallback_options": fallback_options})
    if fb is None:
        raise BNCBenchError(f"the training data {NO_PLANTED}")
    comp, vals = fb
    learned = comp.obj(data, **vals)
    return LearnedStructure(learned.members, learned.combine, learned.weights, {**learned.info, "planted": False})

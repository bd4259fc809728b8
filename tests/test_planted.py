"""structure=planted: the network a synthetic dataset was sampled from, set per task from the dataset."""

import numpy as np
import pytest

from bncbench import BNClassifier
from bncbench.data.perfect import PAPER_NAMES, parse_name
from bncbench.data.specs import load, resolve
from bncbench.harness.dataset_values import check_dataset_values, dataset_values
from bncbench.errors import BNCBenchError
from bncbench.harness.model_specs import ModelSpec, model_spec
from bncbench.harness.protocol import Protocol
from bncbench.harness.runner import Task, evaluate_task
from bncbench.structures import TrainingData

PLANTED = {"structure": "planted", "param": "generative", "estimator": "map"}


def paper_parents(name):
    """§6 by hand: attribute i has the class and the n_parents - 1 previous attributes, where they exist."""
    p, n = parse_name(name)["n_parents"], parse_name(name)["n_attributes"]
    return [tuple(j for j in range(i - p + 1, i) if j >= 0) for i in range(n)]


@pytest.mark.parametrize("name", PAPER_NAMES)
def test_the_fitted_structure_is_the_generators(name):
    ds = load(resolve(name)[0])
    params = dataset_values(PLANTED, ds.meta)
    X = np.column_stack([ds.X[c].cat.codes.to_numpy() for c in ds.X.columns])
    clf = BNClassifier(**params, discretize=False).fit(X, ds.y)
    assert clf.structure_ == paper_parents(name)
    assert clf.learned_structure_.info["planted"] is True


def test_the_runner_fits_the_planted_network():
    """A task of the experiment path: same parameter count as the generating graph given by hand (custom), not the
    hill-climber's (which keeps fewer arcs on 500 rows)."""
    name = "3.5.2-3.1000"
    spec = resolve(name)[0]
    proto = Protocol(seed=0, rounds=1, folds=2)
    rec = evaluate_task(Task(spec, ModelSpec("PG", dict(PLANTED)), 0, 0, proto))
    ref = evaluate_task(Task(spec, ModelSpec("CUSTOM", {**PLANTED, "structure": "custom",
                                                         "parents": [list(p) for p in paper_parents(name)]}),
                             0, 0, proto))
    hc = evaluate_task(Task(spec, ModelSpec("HC", {**PLANTED, "structure": "hill_climb"}), 0, 0, proto))
    assert rec.status == ref.status == hc.status == "ok", (rec.error, ref.error, hc.error)
    assert rec.n_parameters == ref.n_parameters != hc.n_parameters
    np.testing.assert_array_equal(rec.arrays["proba"], ref.arrays["proba"])


def test_the_parents_are_the_datasets_fact_not_the_models():
    spec = model_spec({"structure": {"name": "planted", "label": "PG"}, "param": {"name": "generative", "label": ""},
                       "estimator": {"name": "map", "label": ""}, "init": {"name": "zeros"},
                       "optimizer": {"name": "lbfgs"}, "objective": {"name": "cll"}})
    assert "parents" not in spec.params  # not in the task key: the dataset's fingerprint is
    with pytest.raises(BNCBenchError, match="no hyperparameter 'parents'"):
        model_spec({"structure": {"name": "planted", "label": "PG", "parents": [[]]},
                    "param": {"name": "generative"}, "estimator": {"name": "map"}, "init": {"name": "zeros"},
                    "optimizer": {"name": "lbfgs"}, "objective": {"name": "cll"}})
    # a synth-* dataset carries its network too
    ds = load(resolve("synth-tree")[0])
    assert dataset_values(PLANTED, ds.meta)["parents"] == [list(p) for p in ds.meta["parents"]]
    # a baseline's parameters are left alone
    assert dataset_values({"model": "random_forest"}, ds.meta) == {"model": "random_forest"}


def test_a_dataset_without_a_planted_network_is_refused_in_one_line():
    iris = resolve("sklearn-iris")
    with pytest.raises(BNCBenchError, match=r"^dataset 'sklearn-iris' has no planted network \(structure=planted"):
        check_dataset_values([ModelSpec("PG", dict(PLANTED))], iris)
    check_dataset_values([ModelSpec("PG", {**PLANTED, "fallback": "nb"})], iris)  # a fallback: accepted
    check_dataset_values([ModelSpec("PG", dict(PLANTED))], resolve("2.5.2-3.100"))  # has one
    ds = load(iris[0])
    with pytest.raises(BNCBenchError, match="has no planted network"):
        BNClassifier(**PLANTED, discretize=True).fit(ds.X, ds.y)


def test_the_fallback_is_the_named_structure_with_its_options():
    ds = load(resolve("sklearn-breast_cancer")[0])
    X = ds.X.to_numpy()
    opts = {"make_perfect": True, "bic_penalty": 0.5}
    got = BNClassifier(structure="planted", fallback="hill_climb", fallback_options=opts, discretize=True).fit(X, ds.y)
    ref = BNClassifier(structure="hill_climb", **opts, discretize=True).fit(X, ds.y)
    assert got.structure_ == ref.structure_ and got.learned_structure_.info["planted"] is False
    assert got.structure_ != BNClassifier(structure="hill_climb", discretize=True).fit(X, ds.y).structure_
    np.testing.assert_allclose(got.predict_proba(X), ref.predict_proba(X))


@pytest.mark.parametrize("kw, msg", [
    ({"fallback": "planted"}, "cannot be planted itself"),
    ({"fallback": "hill_climb", "fallback_options": {"k": 2}}, "has no hyperparameter k"),
    ({"fallback_options": {"k": 2}}, "without a fallback"),
    ({"fallback": "skdb"}, "reads other components' hyperparameters"),
    ({"fallback": "kdb", "fallback_options": {"k": -1}}, r"The 'k' parameter of structure=planted's fallback 'kdb'"),
])
def test_bad_fallbacks_are_refused(kw, msg):
    data = TrainingData(np.zeros((4, 2), dtype=np.int64), np.array([0, 1, 0, 1]), np.array([2, 2]), 2)
    with pytest.raises(BNCBenchError, match=msg):
        BNClassifier(structure="planted", **kw).fit(data.codes, data.y)

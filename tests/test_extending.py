"""Extending is one file and one config: a structure learner and an estimator defined here, outside the package.

This module is itself the plug-in (``BNCBENCH_PLUGINS=test_extending``): importing it registers

* ``nb_tan_mean``, a structure learner returning an *ensemble*, the arithmetic mean of the
  NB and TAN joints (or, with ``rule=geometric``, their weighted geometric combination), and
* ``laplace``, an estimator for networks without attribute parents: add-``alpha`` smoothing of
  every count, ``theta(x | y) = (N(x, y) + alpha) / (N(y) + alpha |X|)``,

and the tests run them in-process, through ``python -m bncbench run`` with an extra config
directory on Hydra's search path, and through ``python -m bncbench report``.
"""

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import run_cli
from sklearn.datasets import load_iris
from sklearn.utils._param_validation import StrOptions

from bncbench import BNClassifier
from bncbench.components import ESTIMATORS, STRUCTURES
from bncbench.errors import BNCBenchError
from bncbench.registry import Hyperparameter, finite
from bncbench.structures import LearnedStructure, Network
from bncbench.structures.tan import tan

HERE = Path(__file__).resolve().parent


# ---------------------------------------------------------------- the plug-in
@STRUCTURES.register("nb_tan_mean", label="NB+TAN", replace=True, hyperparameters=[
    Hyperparameter("rule", "arithmetic", [StrOptions({"arithmetic", "geometric"})], "combination rule", str)])
def learn_nb_tan_mean(data, *, rule):
    """The NB and TAN networks of the data, combined by ``rule``."""
    nb = Network(tuple(() for _ in range(data.n_attributes)))
    tree = Network(tuple(tan(data.codes, data.y, data.cards, data.n_classes)))
    return LearnedStructure((nb, tree), combine=rule, weights=(0.5, 0.5))


class LaplaceScorer:
    def __init__(self, log_prior, log_theta, columns):
        self._prior, self.log_theta, self.columns = log_prior, log_theta, columns
        self.n_classes = log_prior.shape[0]
        self.n_parameters = int(sum(t.shape[0] - 1 for t in log_theta) * self.n_classes + self.n_classes - 1)

    def log_prior(self):
        return self._prior

    def log_joint(self, codes):
        out = np.tile(self._prior, (codes.shape[0], 1))
        for t, c in zip(self.log_theta, self.columns):
            x = codes[:, c]
            ok = (x >= 0) & (x < t.shape[0])
            out[ok] += t[x[ok]]
        return out


@ESTIMATORS.register("laplace", label=" Laplace", replace=True, hyperparameters=[
    Hyperparameter("alpha", 1.0, [finite(0.0)], "pseudo-count added to every count", float)])
def fit_laplace(network, data, *, alpha):
    """Add-alpha smoothing for networks without attribute parents."""
    if any(network.parents[c] for c in network.columns):
        raise BNCBenchError("the laplace estimator handles networks without attribute parents only")
    Y = data.n_classes
    ny = np.bincount(data.y, minlength=Y)
    prior = np.log((ny + alpha) / (ny.sum() + alpha * Y))
    thetas = []
    for c in network.columns:
        card = int(data.cards[c])
        n = np.bincount(data.codes[:, c] * Y + data.y, minlength=card * Y).reshape(card, Y)
        thetas.append(np.log((n + alpha) / (ny + alpha * card)))
    return LaplaceScorer(prior, thetas, network.columns)


# ---------------------------------------------------------------- in-process
@pytest.fixture
def iris_codes():
    X, y = load_iris(return_X_y=True)
    from bncbench.model.preprocess import Discretizer

    d = Discretizer().fit(pd.DataFrame(X), y)
    return d.transform(pd.DataFrame(X)), y, d.cardinalities_


def _jll(clf, codes):
    return clf.scorer_.log_joint(codes)


def test_averaged_model_is_the_mean_of_the_members_joints(iris_codes):
    codes, y, cards = iris_codes
    kw = dict(discretize=False, cardinalities=cards)
    mean = BNClassifier(structure="nb_tan_mean", **kw).fit(codes, y)
    nb = BNClassifier(structure="nb", **kw).fit(codes, y)
    tree = BNClassifier(structure="tan", **kw).fit(codes, y)
    joint = 0.5 * np.exp(_jll(nb, codes)) + 0.5 * np.exp(_jll(tree, codes))
    np.testing.assert_allclose(mean.predict_proba(codes), joint / joint.sum(axis=1, keepdims=True), rtol=1e-12)
    assert mean.n_parameters_ == nb.n_parameters_ + tree.n_parameters_
    assert len(mean.learned_structure_.members) == 2
    # geometric: prior once, each member's class-conditional to the power 1/2
    geo = BNClassifier(structure="nb_tan_mean", rule="geometric", **kw).fit(codes, y)
    prior = nb.scorer_.log_prior()
    want = prior + 0.5 * (_jll(nb, codes) - prior) + 0.5 * (_jll(tree, codes) - prior)
    np.testing.assert_allclose(_jll(geo, codes), want, rtol=1e-12)


def test_plugin_estimator_matches_hand_computed_laplace_estimates():
    codes = np.array([[0, 1], [0, 0], [1, 1], [1, 1], [0, 0]])
    y = np.array([0, 0, 1, 1, 0])
    clf = BNClassifier(estimator="laplace", alpha=1.0, discretize=False, cardinalities=[2, 2]).fit(codes, y)
    # class 0: 3 rows, x0 = 0 three times, x1 = 1 once; class 1: 2 rows, x0 = 1 twice, x1 = 1 twice
    p0 = (3 + 1) / (5 + 2) * (3 + 1) / (3 + 2) * (1 + 1) / (3 + 2)
    p1 = (2 + 1) / (5 + 2) * (0 + 1) / (2 + 2) * (2 + 1) / (2 + 2)
    np.testing.assert_allclose(clf.predict_proba(np.array([[0, 1]]))[0], [p0 / (p0 + p1), p1 / (p0 + p1)],
                               rtol=1e-12)
    with pytest.raises(BNCBenchError, match="alpha"):
        BNClassifier(estimator="laplace", alpha=-1.0).fit(codes, y)
    with pytest.raises(BNCBenchError, match="without attribute parents"):
        BNClassifier(structure="tan", estimator="laplace").fit(codes, y)


def test_plugin_hyperparameters_are_estimator_keywords():
    clf = BNClassifier(structure="nb_tan_mean", rule="geometric", alpha=2.0)
    assert clf.get_params()["rule"] == "geometric" and clf.get_params()["alpha"] == 2.0
    assert "rule" in BNClassifier._parameter_constraints and "alpha" in BNClassifier._parameter_constraints


# ---------------------------------------------------------------- through the command line
CONFIGS = {
    "structure/nb_tan_mean.yaml": "defaults:\n  - /schema/structure/nb_tan_mean@_here_\n  - _self_\n",
    "estimator/laplace.yaml": "defaults:\n  - /schema/estimator/laplace@_here_\n  - _self_\n",
    "experiment/plugin_demo.yaml": """# @package _global_
defaults:
  - override /dataset: quickstart
name: plugin_demo
cv:
  rounds: 2
models:
  - structure: [nb, tan, nb_tan_mean]
  - structure: nb
    estimator: laplace
    alpha: 0.5
report:
  tables:
    - name: mean_vs_members
      pairs: ["NB+TAN:NB", "NB+TAN:TAN", "NB Laplace:NB"]
""",
}


def test_plugin_runs_through_run_and_report(tmp_path):
    extra = tmp_path / "conf_extra"
    for rel, text in CONFIGS.items():
        (extra / rel).parent.mkdir(parents=True, exist_ok=True)
        (extra / rel).write_text(text)
    env = {"BNCBENCH_PLUGINS": "test_extending",
           "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    res = run_cli(["run", "+experiment=plugin_demo", "dataset.names=[sklearn-iris,synth-tree]", "progress=false",
                   f"hydra.searchpath=[file://{extra}]", f"results_dir={tmp_path / 'results'}"], cwd=tmp_path,
                  env_extra=env)
    assert res.returncode == 0, res.stderr[-3000:]
    from bncbench.harness.store import load_results

    recs = load_results(tmp_path / "results" / "plugin_demo")
    assert set(recs["model"]) == {"NB", "TAN", "NB+TAN", "NB Laplace"}
    assert (recs["status"] == "ok").all()
    laplace = recs[recs["model"] == "NB Laplace"]
    assert (laplace["param.estimator"] == "laplace").all() and (laplace["param.alpha"] == 0.5).all()
    res = run_cli(["report", str(tmp_path / "results" / "plugin_demo"), "--out", str(tmp_path / "rep"),
                   "--no-figures"], cwd=tmp_path, env_extra=env)
    assert res.returncode == 0, res.stderr[-3000:]
    table = pd.read_csv(tmp_path / "rep" / "tables" / "mean_vs_members.csv")
    assert {"NB+TAN", "NB Laplace"} <= set(table["model_a"])
    # without the plug-in the same command is one clear line naming the unknown option
    res = run_cli(["run", "+experiment=plugin_demo", f"hydra.searchpath=[file://{extra}]",
                   f"results_dir={tmp_path / 'results2'}"], cwd=tmp_path)
    assert res.returncode == 2 and "nb_tan_mean" in res.stderr
    assert len([ln for ln in res.stderr.splitlines() if ln.strip()]) == 1, res.stderr


def test_optimized_parameters_need_a_geometric_ensemble(iris_codes):
    codes, y, cards = iris_codes
    kw = dict(structure="nb_tan_mean", discretize=False, cardinalities=cards)
    with pytest.raises(BNCBenchError, match="arithmetic mean of 2 networks is not one"):
        BNClassifier(param="weighted", **kw).fit(codes, y)
    # the geometric combination is log-linear: the engine optimizes it (tests/test_ensemble_engine.py)
    geo = BNClassifier(rule="geometric", param="weighted", init="generative", **kw).fit(codes, y)
    gen = BNClassifier(rule="geometric", **kw).fit(codes, y)
    assert geo.scorer_.train_cll > gen.predict_log_proba(codes)[np.arange(len(y)), y].sum() + 1.0

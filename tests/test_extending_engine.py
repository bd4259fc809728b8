"""The engine's parts are plug-ins too: a parameterization, an initialization and an objective defined here.

This module is itself the plug-in (``BNCBENCH_PLUGINS=test_extending_engine``): importing it registers

* ``offset``, an optimized parameterization with a hyperparameter of its own: ``Phi = log theta +
  offset_scale * x`` (free offsets around the generative estimate; the same model space as
  ``discriminative``, so the same optimum),
* ``jitter``, an initialization with two hyperparameters: the origin plus ``jitter_scale`` times
  standard normal noise drawn with ``jitter_seed``,
* ``brier``, an objective with a hyperparameter: ``brier_weight`` times the squared error of the
  class probabilities (Brier's score, summed over instances), written as a
  :class:`~bncbench.engine.score_loss.ScoreLoss` (the per-row part only),

and the tests run them through the engine, through :class:`bncbench.BNClassifier` and through
``python -m bncbench run`` with an extra config directory on Hydra's search path.
"""

import os
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli
from scipy.special import softmax

from bncbench import BNClassifier
from bncbench.engine.fit import build_problem
from bncbench.components import INITS, OBJECTIVES
from bncbench.engine.inits import Start
from bncbench.engine.score_loss import ScoreLoss
from bncbench.engine.params import ParamMap
from bncbench.errors import BNCBenchError
from bncbench.engine.parameterizations import register_optimized
from bncbench.registry import Hyperparameter, finite, integer

HERE = Path(__file__).resolve().parent


# ---------------------------------------------------------------- the plug-in
@register_optimized("offset", label="^o", replace=True, hyperparameters=[
    Hyperparameter("offset_scale", 1.0, [finite(1e-6)], "scale of the offsets", float)])
class Offset(ParamMap):
    """``Phi = log theta + offset_scale * x``: x = 0 is the generative model."""

    name = "offset"

    def __init__(self, layout, gen, init, *, offset_scale):
        super().__init__(layout, gen, init)
        self.scale = float(offset_scale)
        self.n_params = self.nt * self.Y

    def origin(self):
        return Start(np.zeros(self.n_params), self.gen[self.nt:])

    generative = origin

    def phi(self, x):
        return self.gen[: self.nt] + self.scale * x.reshape(self.nt, self.Y)

    def pullback(self, x, G):
        return self.scale * G.ravel()

    def phi_full(self, x):
        return np.vstack([self.phi(x), self.start.rest])


@INITS.register("jitter", label=" (J)", replace=True, hyperparameters=[
    Hyperparameter("jitter_scale", 0.1, [finite(0.0)], "standard deviation of the noise", float),
    Hyperparameter("jitter_seed", 0, [integer(0)], "seed of the noise", int)])
class Jitter:
    """The origin plus small normal noise."""

    def __init__(self, jitter_scale, jitter_seed):
        self.scale, self.seed = jitter_scale, jitter_seed

    def start(self, pmap):
        origin = pmap.origin()
        noise = np.random.default_rng(self.seed).standard_normal(origin.x.size)
        return Start(origin.x + self.scale * noise, origin.rest)


@OBJECTIVES.register("brier", label=" [Brier]", replace=True, hyperparameters=[
    Hyperparameter("brier_weight", 1.0, [finite(0.0)], "weight of the squared error", float)])
class Brier(ScoreLoss):
    """``brier_weight * sum_i sum_y (P(y | x_i) - [y = y_i])^2``."""

    def __init__(self, data, n_rows, *, brier_weight, **engine):
        super().__init__(data, n_rows, **engine)
        self.w = float(brier_weight)

    def row_loss(self, S, C, grad):
        P = softmax(S, axis=1)
        csum = C.sum(axis=1)
        f = self.w * float((csum * (P * P).sum(axis=1) - 2 * (C * P).sum(axis=1) + csum).sum())
        if not grad:
            return f, None
        g = self.w * (2 * csum[:, None] * P - 2 * C)  # dL/dP
        return f, P * (g - (P * g).sum(axis=1, keepdims=True))  # through the softmax


# ---------------------------------------------------------------- data
@pytest.fixture(scope="module")
def toy():
    rng = np.random.default_rng(7)
    cards = np.array([3, 2, 4, 3])
    X = np.column_stack([rng.integers(0, c, 300) for c in cards])
    y = ((X[:, 0] + X[:, 2] + rng.integers(0, 2, 300)) % 3).astype(np.int64)
    return X, y, cards


def _tables(X, y, cards, structure="tan"):
    return BNClassifier(structure=structure, discretize=False, cardinalities=cards).fit(X, y).tables_


def _central_differences(f, x, h=1e-6):
    out = np.empty_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        out[i] = (f(x + e) - f(x - e)) / (2 * h)
    return out


# ---------------------------------------------------------------- the engine calls them
def test_plugin_objective_parameterization_and_init_have_exact_gradients(toy):
    X, y, cards = toy
    _, pmap, problem = build_problem(_tables(X, y, cards), X, y, param="offset", init="jitter", objective="brier",
                                     offset_scale=2.5, jitter_scale=0.3, jitter_seed=4, brier_weight=1.7)
    assert isinstance(pmap, Offset) and pmap.scale == 2.5 and isinstance(problem.cll, Brier)
    assert problem.cll.w == 1.7
    x = pmap.x0()
    f, g = problem.fg(x)
    np.testing.assert_allclose(g, _central_differences(problem.f, x), rtol=1e-5, atol=1e-6)


def test_plugin_init_starts_where_it_says(toy):
    X, y, cards = toy
    _, pmap, _ = build_problem(_tables(X, y, cards), X, y, param="discriminative", init="jitter",
                               jitter_scale=0.5, jitter_seed=11)
    want = 0.5 * np.random.default_rng(11).standard_normal(pmap.n_params)
    np.testing.assert_array_equal(pmap.x0(), want)
    # a different seed, a different start; the untrained rows are the origin's
    _, other, _ = build_problem(_tables(X, y, cards), X, y, param="discriminative", init="jitter",
                                jitter_scale=0.5, jitter_seed=12)
    assert not np.allclose(other.x0(), want)
    np.testing.assert_array_equal(pmap.start.rest, pmap.origin().rest)


def test_brier_weight_scales_the_objective_and_not_its_optimum(toy):
    X, y, cards = toy
    vals = []
    for w in (1.0, 3.0):
        _, pmap, problem = build_problem(_tables(X, y, cards, "nb"), X, y, param="discriminative", init="zeros",
                                         objective="brier", brier_weight=w)
        vals.append(problem.f(pmap.x0() + 0.1))
    assert vals[1] == pytest.approx(3 * vals[0], rel=1e-12)


def test_unknown_engine_hyperparameter_is_one_clear_error(toy):
    X, y, cards = toy
    with pytest.raises(BNCBenchError, match="unknown hyperparameter.*'jiter_seed'"):
        build_problem(_tables(X, y, cards), X, y, param="discriminative", init="jitter", jiter_seed=3)


# ---------------------------------------------------------------- through BNClassifier
def test_plugins_through_bnclassifier(toy):
    X, y, cards = toy
    kw = dict(structure="tan", discretize=False, cardinalities=cards)
    gen = BNClassifier(**kw).fit(X, y)
    # x = 0 is the generative model: no iteration leaves it there, whatever the scale
    still = BNClassifier(param="offset", offset_scale=3.0, init="zeros", optimizer_options={"maxiter": 0},
                         **kw).fit(X, y)
    np.testing.assert_allclose(still.predict_proba(X), gen.predict_proba(X), rtol=1e-12)
    # the same model space as discriminative, so the same (convex) optimum at any scale and start
    opts = {"stop": "paper", "maxiter": 3000}
    off = BNClassifier(param="offset", offset_scale=0.5, init="jitter", jitter_seed=3, optimizer_options=opts,
                       **kw).fit(X, y)
    disc = BNClassifier(param="discriminative", init="zeros", optimizer_options=opts, **kw).fit(X, y)
    assert off.train_cll_ == pytest.approx(disc.train_cll_, rel=1e-6)
    # the Brier objective: its optimum has a lower training squared error than CLL's, at any weight
    onehot = np.eye(3)[y]
    sq = {}
    for w in (1.0, 5.0):
        clf = BNClassifier(param="discriminative", init="zeros", objective="brier", brier_weight=w,
                           optimizer_options=opts, **kw).fit(X, y)
        sq[w] = ((clf.predict_proba(X) - onehot) ** 2).sum()
    assert sq[1.0] < ((disc.predict_proba(X) - onehot) ** 2).sum()
    assert sq[5.0] == pytest.approx(sq[1.0], rel=1e-4)
    assert BNClassifier(objective="brier", brier_weight=2.0).get_params()["brier_weight"] == 2.0


def test_bnclassifier_hands_each_component_its_hyperparameters(toy):
    X, y, cards = toy
    kw = dict(structure="tan", discretize=False, cardinalities=cards, optimizer_options={"maxiter": 0})
    clf = BNClassifier(param="discriminative", init="jitter", jitter_scale=0.2, jitter_seed=9, **kw).fit(X, y)
    np.testing.assert_array_equal(clf.model_.x, 0.2 * np.random.default_rng(9).standard_normal(clf.model_.x.size))
    # uniform probabilities at the origin: each instance's squared error is (2/3)^2 + 2 (1/3)^2 = 2/3
    clf = BNClassifier(param="discriminative", init="zeros", objective="brier", brier_weight=2.5, **kw).fit(X, y)
    assert -clf.train_cll_ == pytest.approx(2.5 * len(y) * 2 / 3, rel=1e-12)
    clf = BNClassifier(param="offset", offset_scale=4.0, init="jitter", jitter_seed=1, jitter_scale=0.1,
                       **kw).fit(X, y)
    assert clf.model_.pmap.scale == 4.0


# ---------------------------------------------------------------- through the command line
CONFIGS = {
    "param/offset.yaml": "defaults:\n  - /schema/param/offset@_here_\n  - _self_\noffset_scale: 2.0\n",
    "init/jitter.yaml": "defaults:\n  - /schema/init/jitter@_here_\n  - _self_\njitter_seed: 5\n",
    "objective/brier.yaml": "defaults:\n  - /schema/objective/brier@_here_\n  - _self_\n",
    "experiment/engine_plugins.yaml": """# @package _global_
defaults:
  - override /dataset: quickstart
name: engine_plugins
cv:
  rounds: 1
models:
  - structure: nb
    param: [discriminative, offset]
    init: [zeros, jitter]
  - structure: nb
    param: discriminative
    init: zeros
    objective: brier
    brier_weight: 2.0
""",
}


def test_engine_plugins_run_through_the_command_line(tmp_path):
    extra = tmp_path / "conf_extra"
    for rel, text in CONFIGS.items():
        (extra / rel).parent.mkdir(parents=True, exist_ok=True)
        (extra / rel).write_text(text)
    env = {"BNCBENCH_PLUGINS": "test_extending_engine",
           "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    res = run_cli(["run", "+experiment=engine_plugins", "dataset.names=[sklearn-iris]", "progress=false",
                   f"hydra.searchpath=[file://{extra}]", f"results_dir={tmp_path / 'results'}"], cwd=tmp_path,
                  env_extra=env)
    assert res.returncode == 0, res.stderr[-3000:]
    from bncbench.harness.store import load_results

    recs = load_results(tmp_path / "results" / "engine_plugins")
    assert (recs["status"] == "ok").all()
    assert set(recs["model"]) == {"NB^d", "NB^d (J)", "NB^o", "NB^o (J)", "NB^d [Brier]"}
    off = recs[recs["model"] == "NB^o (J)"]
    assert (off["param.offset_scale"] == 2.0).all() and (off["param.jitter_seed"] == 5).all()
    brier = recs[recs["model"] == "NB^d [Brier]"]
    assert (brier["param.objective"] == "brier").all() and (brier["param.brier_weight"] == 2.0).all()

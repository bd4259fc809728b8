"""``missing="first_value"``: the authors' EBNC code's reading of '?', in the harness's own data path.

Their code (github ``nayyarzaidi/EBNC``, ``wdBayes``) reads a missing value as the attribute's first
declared value. The anchors (``../shared/anchors/ebnc/``, copied in ``tests/fixtures/ebnc/``) are its
full-data fits of vote, whose 16 attributes all have '?'. Checked here: vote loaded and coded as the
experiment runner does (a missing code reserved per attribute, :func:`model_cardinalities` leaving it out
for this model), or handed to ``BNClassifier`` as a table with NaN, gives their class probabilities (MAP
to 1e-12; d and w on the paths test_ebnc_compat.py finds theirs, to its tolerances, with their iteration
counts); the default reading ('?' a value of its own) does not; the zaidi2017_ebnc experiment sets it on
every model; and the runner's task evaluation reads the missing code as the first value.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import data_dir_or_skip
from test_ebnc_compat import EBNC_OPTIONS, PROB_TOL, STRUCTURES, _probs, _run

from bncbench import BNClassifier
from bncbench.harness.model_specs import make_estimator
from bncbench.model.classifier import model_cardinalities
from bncbench.model.preprocess import Discretizer

MODELS = {"MAP": dict(estimator="ebnc"),
          "dCCBN": dict(estimator="ebnc", param="discriminative", init="ebnc", optimizer_options=EBNC_OPTIONS),
          "wCCBN": dict(estimator="ebnc", param="weighted", init="ebnc", optimizer_options=EBNC_OPTIONS)}
NOT_CHAOTIC = [("NB", "MAP"), ("TAN", "MAP"), ("KDB1", "MAP"), ("NB", "dCCBN"), ("TAN", "dCCBN"),
               ("KDB1", "dCCBN"), ("NB", "wCCBN"), ("TAN", "wCCBN"), ("KDB1", "wCCBN")]


@pytest.fixture(scope="module")
def vote():
    from bncbench.data import specs

    ds = specs.load({"name": "vote", "source": "uci"}, data_dir_or_skip())
    assert ds.missing_mask.all()  # every attribute of vote has '?'
    return ds


def _runner_codes(ds):
    """vote coded as the experiment runner codes a fold (here: the full data), missing codes reserved."""
    disc = Discretizer(reserve_missing=ds.missing_mask).fit(ds.X, ds.y)
    return disc.transform(ds.X), disc.cardinalities_


def _params(structure, tag, missing="first_value"):
    return {**STRUCTURES[structure][1], **MODELS[tag], "missing": missing}


def _check(clf, P, structure, tag):
    key = ("vote", structure, tag)
    np.testing.assert_allclose(P, _probs("vote", structure, tag), rtol=0,
                               atol=1e-12 if tag == "MAP" else PROB_TOL.get(key, 1e-9))
    if tag != "MAP":
        assert clf.scorer_.n_iter == _run("vote", structure, tag).iterations


@pytest.mark.parametrize("structure,tag", NOT_CHAOTIC)
def test_runner_coding_gives_their_probabilities(vote, structure, tag):
    codes, cards = _runner_codes(vote)
    assert (codes == cards - 1).any()  # the runner's missing code, the last of each attribute
    params = _params(structure, tag)
    clf = make_estimator(params, model_cardinalities(params, cards, vote.missing_mask)).fit(codes, vote.y)
    assert (clf.cardinalities_ == cards - 1).all()
    _check(clf, clf.predict_proba(codes), structure, tag)


@pytest.mark.parametrize("structure,tag", [("NB", "MAP"), ("TAN", "MAP"), ("TAN", "dCCBN")])
def test_a_table_with_nan_gives_their_probabilities(vote, structure, tag):
    X = vote.X.astype(object).where(vote.X.notna(), np.nan)
    clf = BNClassifier(**_params(structure, tag)).fit(X, vote.y)
    assert not clf.discretizer_.has_missing_code_.any()
    _check(clf, clf.predict_proba(X), structure, tag)


@pytest.mark.parametrize("structure", list(STRUCTURES))
def test_the_default_reading_is_not_theirs(vote, structure):
    codes, cards = _runner_codes(vote)
    params = _params(structure, "MAP", missing="ignore")
    assert (model_cardinalities(params, cards, vote.missing_mask) == cards).all()
    P = make_estimator(params, cards).fit(codes, vote.y).predict_proba(codes)
    assert np.abs(P - _probs("vote", structure, "MAP")).max() > 1e-3


def test_first_value_maps_every_unknown_code_to_zero():
    X = np.array([[0, 1], [1, 0], [-1, 1], [1, 2], [0, 0], [1, 1]])
    y = np.array([0, 0, 1, 1, 0, 1])
    a = BNClassifier(missing="first_value", cardinalities=[2, 2], discretize=False).fit(X, y)
    b = BNClassifier(cardinalities=[2, 2], discretize=False).fit(np.where((X < 0) | (X >= 2), 0, X), y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(np.where((X < 0) | (X >= 2), 0, X)))
    assert not np.allclose(a.predict_proba(X), BNClassifier(cardinalities=[2, 2], discretize=False)
                           .fit(X[[0, 1, 4, 5]], y[[0, 1, 4, 5]]).predict_proba(X))


def test_the_experiment_reads_missing_as_first_value():
    from bncbench.harness import app
    from bncbench.harness.model_specs import expand_models

    with app._hydra():
        cfg = app._compose(["+experiment=zaidi2017_ebnc"])
        models = expand_models(cfg, app.option_composer([]))
    assert len(models) == 12
    assert all(m.params.get("missing") == "first_value" for m in models)
    assert all("EBNC" in m.label for m in models)


def test_runner_task_reads_missing_as_first_value(vote):
    from bncbench.data import specs
    from bncbench.harness.model_specs import ModelSpec
    from bncbench.harness.protocol import Protocol
    from bncbench.harness.runner import Task, _prepared_fold, evaluate_task

    spec = specs.resolve(["vote"])[0]
    params = _params("TAN", "MAP")
    rec = evaluate_task(Task(spec, ModelSpec("TAN [EBNC estimate]", params), 0, 1, Protocol(0, 5, 2),
                             data_dir_or_skip()))
    assert rec.status == "ok", rec.error
    ds, train, test, codes, cards = _prepared_fold(json.dumps(spec, sort_keys=True, default=str),
                                                   data_dir_or_skip(), 0, 2, 0, 1)
    theirs = np.where(codes == cards - 1, 0, codes)  # '?' as the first declared value, as their code reads it
    clf = BNClassifier(**STRUCTURES["TAN"][1], estimator="ebnc", discretize=False,
                       cardinalities=cards - 1).fit(theirs[train], ds.y[train])
    np.testing.assert_allclose(rec.arrays["proba"], clf.predict_proba(theirs[test]), rtol=0, atol=1e-12)
    default = evaluate_task(Task(spec, ModelSpec("TAN [EBNC estimate]", {**params, "missing": "ignore"}), 0, 1,
                                 Protocol(0, 5, 2), data_dir_or_skip()))
    assert np.abs(default.arrays["proba"] - rec.arrays["proba"]).max() > 1e-3


"""Features removed at test time within the protocol (cv.missing_features) and the `missing` model key."""

import numpy as np
import pytest

from bncbench import BNClassifier
from bncbench.data import specs
from bncbench.data.sources import random_bnc, sample_random_bnc
from bncbench.errors import BNCBenchError
from bncbench.harness.missing_protocol import curves, evaluate, settings
from bncbench.harness.model_specs import model_spec
from bncbench.harness.runner import Protocol, Task, run_experiment
from bncbench.harness.store import load_results
from bncbench.harness.model_specs import ModelSpec


class Spy:
    """A classifier that takes missing values and remembers what it was shown."""

    def __init__(self, takes_missing=True):
        self.seen, self.takes = [], takes_missing

    def __sklearn_tags__(self):
        from sklearn.utils import Tags, InputTags, TargetTags
        return Tags(estimator_type="classifier", target_tags=TargetTags(required=True),
                    input_tags=InputTags(allow_nan=self.takes))

    def predict(self, X):
        self.seen.append(np.array(X))
        return np.zeros(len(X), dtype=int)


@pytest.fixture(scope="module")
def data():
    model = random_bnc(8, (2, 4), p=1, n_classes=3, alpha=1.0, seed=1)
    X, y = sample_random_bnc(model, 400, seed=2)
    return X[:300], y[:300], X[300:], y[300:], model.cards


S = settings({"ks": [0, 2, 8], "repeats": 3, "impute": False})


def test_settings_are_checked():
    assert S["neighbours"] == 5 and S["max_rows"] is None and S["seed"] == 0
    for node, match in [({"ks": []}, "ks"), ({"ks": [1], "repeats": 0}, "repeats"), ({"ks": [1], "kk": 2}, "kk"),
                        ({"ks": [-1]}, "ks")]:
        with pytest.raises(BNCBenchError, match=match):
            settings(node)
    assert settings(None) is None


def test_every_model_sees_the_same_removed_sets_and_exactly_k_per_row(data):
    Xtr, ytr, Xte, yte, _ = data
    a, b = Spy(), Spy()
    evaluate(a, Xtr, Xte, yte, S, (0, 1, 0))
    evaluate(b, Xtr, Xte, yte, S, (0, 1, 0))
    assert len(a.seen) == 9
    for xa, xb, k in zip(a.seen, b.seen, [0] * 3 + [2] * 3 + [8] * 3):
        np.testing.assert_array_equal(xa, xb)
        assert ((xa == -1).sum(axis=1) == k).all()
        np.testing.assert_array_equal(np.where(xa == -1, Xte, xa), Xte)
    c = Spy()
    evaluate(c, Xtr, Xte, yte, S, (0, 1, 1))  # another fold: other draws
    assert not np.array_equal(c.seen[3], a.seen[3])


def test_a_bnc_with_every_feature_summed_out_predicts_its_prior_mode(data):
    Xtr, ytr, Xte, yte, cards = data
    clf = BNClassifier(structure="tan", missing="marginalize", discretize=False, cardinalities=cards).fit(Xtr, ytr)
    out = evaluate(clf, Xtr, Xte, yte, S, (0, 0, 0))
    assert out["method"] == "missing" and out["k"] == [0, 2, 8] and "rate_knn_mode" not in out
    assert out["rate"][0] == [pytest.approx(np.mean(clf.predict(Xte) == yte))] * 3
    mode = clf.classes_[np.argmax(clf.scorer_.log_prior())]
    assert out["rate"][2] == [pytest.approx(np.mean(yte == mode))] * 3  # all 8 removed: P(c) only


def test_a_model_without_missing_values_is_given_knn_mean_imputations(data):
    Xtr, ytr, Xte, yte, _ = data
    spy = Spy(takes_missing=False)
    out = evaluate(spy, Xtr, Xte, yte, {**S, "ks": [3], "repeats": 1, "neighbours": 1}, (0, 0, 0))
    assert out["method"] == "knn_mean" and len(spy.seen) == 1
    X = spy.seen[0]
    assert (X != -1).all()
    gap = X != Xte  # a 1-nearest-neighbour mean is a training row's value
    assert gap.sum() <= 3 * len(Xte)


def test_the_protocol_records_the_curves_and_the_option_is_in_the_key(data, tmp_path):
    mf = settings({"ks": [0, 3], "repeats": 2, "max_rows": 40})
    models = [model_spec_of("TAN-marg", structure="tan", missing="marginalize"),
              ModelSpec("SVM", {"model": "svm_rbf"})]
    p = Protocol(seed=0, rounds=1, folds=2, missing_features=mf)
    counts = run_experiment(specs.resolve(["synth-nb"]), models, results_root=tmp_path, protocol=p, progress=False)
    assert counts["ok"] == 4
    df = load_results(tmp_path)
    cur = curves(df)
    assert set(cur["method"]) == {"missing", "knn_mode", "knn_mean"}
    assert (cur["n"] == 4).all()  # 2 folds x 2 draws
    assert set(cur["k"]) == {0, 3}
    again = run_experiment(specs.resolve(["synth-nb"]), models, results_root=tmp_path, protocol=p, progress=False)
    assert again["skipped"] == 4
    ds = specs.resolve(["synth-nb"])[0]
    with_it, without = (Task(ds, models[0], 0, 0, q).key for q in (p, Protocol(seed=0, rounds=1, folds=2)))
    assert with_it != without and set(counts["keys"]) >= {with_it}


def model_spec_of(label, **params):
    return ModelSpec(label, params)


def test_missing_is_a_model_key():
    from omegaconf import OmegaConf
    parts = {g: OmegaConf.create({"name": n}) for g, n in
             [("structure", "tan"), ("param", "generative"), ("estimator", "map"), ("init", "generative"),
              ("optimizer", "lbfgs"), ("objective", "cll")]}
    assert model_spec(parts, {"missing": "marginalize"}).params["missing"] == "marginalize"
    assert "missing" not in model_spec(parts, {"missing": "ignore"}).params  # the default: keys unchanged
    with pytest.raises(BNCBenchError, match="missing"):
        model_spec(parts, {"missing": "impute"})


def test_the_experiments_compose_with_the_option_and_the_model_key(tmp_path):
    from bncbench.harness.app import plan as plan_of

    plan = plan_of(["+experiment=pernkopf_uci", "dataset.names=[synth-nb]", f"results_dir={tmp_path}"])
    assert plan.protocol.missing_features == {"ks": [0, 2, 4, 8, 12], "repeats": 5, "seed": 0, "impute": True,
                                              "neighbours": 5, "max_rows": 500}
    assert len(plan.models) == 14  # 12 BNCs, the SVM on raw features and on codes
    assert [m.params.get("features") for m in plan.models if m.params.get("model") == "svm_rbf"] == ["raw", None]
    assert sum(m.params.get("missing") == "marginalize" for m in plan.models) == 12
    mm = [m for m in plan.models if m.params.get("objective") == "margin"]
    assert len(mm) == 4 and all("grid" in m.params["optimizer_options"] for m in mm)
    with pytest.raises(BNCBenchError, match="repeats"):
        plan_of(["+experiment=pernkopf_uci", "dataset.names=[synth-nb]", "cv.missing_features.repeats=0"])

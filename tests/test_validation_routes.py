"""One validation pass (issue #35, item 3): a bad value gets the same line from Python and from the command line.

Each case is a bad value given both ways: as command-line overrides (``app.plan``: what ``python -m
bncbench run`` checks before any task) and from Python (``BNClassifier.fit``, ``make_executor``,
``run_experiment``). Both go through :mod:`bncbench.validate`; the command line's line is the Python
message, prefixed with the model's label (``model 'KDB--1': ``) or, for a type Hydra refuses at
composition, with ``bad configuration: `` and followed by Hydra's reason in parentheses.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import run_cli

from bncbench import BNClassifier
from bncbench.harness.app import plan
from bncbench.errors import BNCBenchError
from bncbench.executors import make_executor
from bncbench.harness.model_specs import ModelSpec
from bncbench.registry import ParameterError
from bncbench.harness.runner import run_experiment

W = {"param": "weighted"}
CASES = [  # (command-line overrides, BNClassifier keywords or ("executor", name, options))
    (["structure=kdb", "structure.k=-1"], dict(structure="kdb", k=-1)),
    (["structure=kdb", "structure.k=abc"], dict(structure="kdb", k="abc")),
    (["structure=kdb", "structure.k=1.5"], dict(structure="kdb", k=1.5)),
    (["estimator.m=-1"], dict(m=-1.0)),
    (["structure=anje", "structure.n=0"], dict(structure="anje", n=0)),
    (["param=weighted", "param.level=9"], dict(W, level=9)),
    (["param=weighted", "optimizer.history=0"], dict(W, optimizer_options={"history": 0})),
    (["param=weighted", "optimizer.history=abc"], dict(W, optimizer_options={"history": "abc"})),
    (["param=weighted", "optimizer.stop=foo"], dict(W, optimizer_options={"stop": "foo"})),
    (["param=weighted", "+optimizer.histry=3"], dict(W, optimizer_options={"histry": 3})),
    (["param=weighted", "optimizer=sgd", "optimizer.lr=-1"], dict(W, optimizer="sgd", optimizer_options={"lr": -1.0})),
    (["param=weighted", "estimator=hdp"], dict(W, estimator="hdp")),
    (["param=weighted", "objective=margin", "objective.margin_lam=-1"], dict(W, objective="margin", margin_lam=-1.0)),
    (["param=weighted", "objective=margin", "objective.margin_lam=abc"], dict(W, objective="margin", margin_lam="abc")),
    (["executor.n_jobs=0"], ("executor", "joblib", {"n_jobs": 0})),
    (["executor.n_jobs=abc"], ("executor", "joblib", {"n_jobs": "abc"})),
    (["+executor.n_job=2"], ("executor", "joblib", {"n_job": 2})),
    (["executor=dask", "executor.n_workers=0"], ("executor", "dask", {"n_workers": 0})),
]
IDS = [" ".join(o) for o, _ in CASES]


def _data():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(60, 4))
    return X, (X[:, 0] + rng.integers(0, 2, size=60) > 1).astype(int)


def _python(route) -> str:
    with pytest.raises(BNCBenchError) as err:
        if isinstance(route, tuple):
            make_executor(route[1], **route[2])
        else:
            BNClassifier(**route, discretize=False).fit(*_data())
    return str(err.value)


def _cli(overrides) -> str:
    with pytest.raises(BNCBenchError) as err:
        plan(["dataset.names=[synth-nb]", *overrides])
    return str(err.value)


@pytest.mark.parametrize("overrides,route", CASES, ids=IDS)
def test_a_bad_value_gets_the_same_line_from_python_and_the_command_line(overrides, route):
    py, cli = _python(route), _cli(overrides)
    assert "\n" not in py and "\n" not in cli
    model = re.match(r"model '[^']*': ", cli)
    if model:  # the model pass: the label, then the Python line
        assert cli == model.group(0) + py
    elif cli.startswith("bad configuration: "):  # Hydra refused the type: the registry's line, then Hydra's reason
        assert cli.startswith(f"bad configuration: {py} (") and "could not be converted" in cli
    else:  # an undeclared key, an executor's own check: the same line
        assert cli == py


def test_constraint_violations_raise_scikit_learns_error_type():
    """From Python a value outside its range is a ParameterError (scikit-learn's InvalidParameterError too)."""
    with pytest.raises(ParameterError):
        BNClassifier(structure="kdb", k=-1).fit(*_data())
    with pytest.raises(ParameterError):
        make_executor("joblib", n_jobs="abc")


@pytest.mark.parametrize("params,line", [
    ({"structure": "kdb", "k": -1}, "The 'k' parameter of BNClassifier must be an int in the range [0, inf). "
                                    "Got -1 instead."),
    ({"param": "weighted", "optimizer_options": {"histry": 3}}, "optimizer 'lbfgs' has no hyperparameter 'histry'"),
    ({"structure": "anje", "n": 0}, "structure='anje' needs n >= 1 (A0JE is not defined)"),
    ({"structure": "nb", "kk": 1}, "unexpected keyword argument(s) kk"),
])
def test_the_runner_refuses_a_bad_model_before_any_task(tmp_path, params, line):
    """``run_experiment`` runs the command line's model pass: one line, nothing written (before, every
    task ran and was recorded as failed)."""
    with pytest.raises(BNCBenchError) as err:
        run_experiment([{"name": "synth-nb", "source": "synthetic"}], [ModelSpec("bad", params)],
                       results_root=tmp_path / "r", progress=False)
    assert str(err.value).startswith("model 'bad': ") and line in str(err.value)
    assert not (tmp_path / "r").exists()


def test_command_line_type_error_is_one_line_exit_2(tmp_path):
    res = run_cli(["run", "structure=kdb", "structure.k=abc", f"results_dir={tmp_path / 'r'}"], cwd=tmp_path)
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "The 'k' parameter of BNClassifier must be an int in the range [0, inf). Got 'abc' " \
                               "instead." in lines[0]


@pytest.mark.parametrize("option,value", [("stop_grace", -1.0), ("max_crashes", 0)])
def test_a_run_option_gets_the_same_line_from_python_and_the_command_line(tmp_path, option, value):
    """``run_experiment``'s own options, checked by the one function both routes call, before anything is written."""
    with pytest.raises(BNCBenchError) as err:
        run_experiment([{"name": "synth-nb", "source": "synthetic"}], [ModelSpec("NB", {"structure": "nb"})],
                       results_root=tmp_path / "r", progress=False, **{option: value})
    assert _cli([f"{option}={value}"]) == str(err.value) and option in str(err.value)
    assert not (tmp_path / "r").exists()

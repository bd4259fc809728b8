import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
DATA_DIR = os.environ.get("BNCBENCH_DATA_DIR")


def data_dir_or_skip():
    if not DATA_DIR or not Path(DATA_DIR).is_dir():
        pytest.skip("BNCBENCH_DATA_DIR is not set or not a directory: the shared UCI data is absent")
    return DATA_DIR


def run_cli(args, cwd, env_extra=None, timeout=300):
    """Run `python -m bncbench ARGS` in a subprocess; returns CompletedProcess."""
    env = dict(os.environ)
    env.update(env_extra or {})
    env.setdefault("MPLBACKEND", "Agg")
    return subprocess.run(
        [sys.executable, "-m", "bncbench", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def recorded_fits(monkeypatch):
    """Every fit of an estimator the harness makes (``make_estimator``), in order: ``(params, X, y)`` copies.

    The runner's warm-up fits and timed fits both go through ``make_estimator``; a fresh ``_WARM`` set makes
    this process meet every model for the first time.
    """
    import bncbench.harness.model_specs as model_specs
    import bncbench.harness.runner as runner

    fits = []
    real = model_specs.make_estimator

    def recording(params, cards):
        clf = real(params, cards)
        fit = clf.fit

        def fit_and_record(X, y):
            fits.append((params, np.array(X, dtype=float), np.array(y)))
            return fit(X, y)

        clf.fit = fit_and_record
        return clf

    monkeypatch.setattr(model_specs, "make_estimator", recording)
    monkeypatch.setattr(runner, "_WARM", set())
    return fits

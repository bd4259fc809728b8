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


_BATCH = r"""import json, os, sys, traceback, warnings
from bncbench.__main__ import main
for case in json.load(open(sys.argv[1])):
    os.chdir(case["cwd"])
    warnings.filterwarnings("default", append=True)  # (a change of the filters: each case shows its warnings again)
    sys.stdout.flush(); sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with open(case["out"], "w") as out, open(case["err"], "w") as err:
        os.dup2(out.fileno(), 1); os.dup2(err.fileno(), 2)
        try:
            code = main(case["args"])
        except SystemExit as exc:  # as the interpreter ends on it
            code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
            if isinstance(exc.code, str):
                print(exc.code, file=sys.stderr)
        except BaseException:
            traceback.print_exc()
            code = 1
        finally:
            sys.stdout.flush(); sys.stderr.flush()
            os.dup2(saved[0], 1); os.dup2(saved[1], 2)
            os.close(saved[0]); os.close(saved[1])
    with open(case["code"], "w") as f:
        f.write(str(code))
"""


def run_cli_batch(cases, timeout=600):
    """``python -m bncbench ARGS`` for each ``(args, cwd)`` of ``cases``, one after the other in one subprocess.

    For many quick commands (bad input refused before any task) the imports, a few seconds a process, are paid once.
    Each command runs as the program would (``bncbench.__main__.main``; a ``SystemExit`` is its exit code) with its
    own working directory and its stdout and stderr (the file descriptors: whatever writes to them, Python or C);
    warnings are shown afresh in each. Returns one ``CompletedProcess`` a case, in order."""
    import json
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        files = ("out", "err", "code")
        spec = [{"args": list(args), "cwd": str(cwd), **{k: os.path.join(tmp, f"{i}.{k}") for k in files}}
                for i, (args, cwd) in enumerate(cases)]
        Path(tmp, "cases.json").write_text(json.dumps(spec))
        env = {**os.environ, "MPLBACKEND": os.environ.get("MPLBACKEND", "Agg")}
        done = subprocess.run([sys.executable, "-c", _BATCH, os.path.join(tmp, "cases.json")], env=env,
                              capture_output=True, text=True, timeout=timeout)
        out = []
        for case in spec:
            if not os.path.exists(case["code"]):
                raise AssertionError(f"the batch stopped before {case['args']}: {done.stderr[-3000:]}")
            out.append(subprocess.CompletedProcess([sys.executable, "-m", "bncbench", *case["args"]],
                                                   int(Path(case["code"]).read_text()), Path(case["out"]).read_text(),
                                                   Path(case["err"]).read_text()))
        return out


def assert_same_output(got: Path, want: Path, rtol: float = 1e-12) -> None:
    """A file a script wrote is the committed one: the same text, but a CSV's floats to ``rtol``.

    The floats a script computes may differ in the last bits between machines (numpy and OpenBLAS choose their
    kernels by the CPU's instruction sets: an Intel Xeon and an AMD EPYC gave other last bits), so a CSV written
    elsewhere need not be the same bytes; any other difference (a row, a column, a label, an integer, a number off
    by more than rounding: the CSVs not regenerated) fails.
    """
    import pandas as pd

    if got.suffix != ".csv":
        assert got.read_text() == want.read_text(), got.name
        return
    a, b = pd.read_csv(got), pd.read_csv(want)
    assert list(a.columns) == list(b.columns) and a.shape == b.shape, got.name
    for col in a.columns:
        x, y = a[col], b[col]
        if pd.api.types.is_float_dtype(x) and pd.api.types.is_float_dtype(y):
            np.testing.assert_allclose(x.to_numpy(), y.to_numpy(), rtol=rtol, atol=0, err_msg=f"{got.name}: {col}")
        else:  # text, integers, or a column of both text and numbers: cell by cell, numbers to rtol
            for i, (u, v) in enumerate(zip(x, y)):
                assert u == v or _close(u, v, rtol) or (pd.isna(u) and pd.isna(v)), f"{got.name}: {col}[{i}]: {u} {v}"


def _close(u, v, rtol: float) -> bool:
    try:
        u, v = float(u), float(v)
    except (TypeError, ValueError):
        return False
    return abs(u - v) <= rtol * abs(v)


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

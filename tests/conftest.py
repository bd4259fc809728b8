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

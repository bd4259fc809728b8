"""Every experiment config in conf/experiment/ composes and runs with a tiny override."""

from pathlib import Path

import pytest
from conftest import REPO, run_cli

from bncbench.store import load_results

EXPERIMENTS = sorted(p.stem for p in (REPO / "conf" / "experiment").glob("*.yaml"))


def test_there_are_experiments():
    assert "quickstart" in EXPERIMENTS


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_experiment_config_smoke_runs(tmp_path, name):
    # synth-nb has no given train/test split: a holdout experiment (digits_smoke) runs as CV here;
    # its own protocol is composed in tests/test_holdout.py
    res = run_cli(["run", f"+experiment={name}", "dataset.names=[synth-nb]", "cv.mode=cv", "cv.rounds=1",
                   "n_jobs=1", "progress=false", f"results_dir={tmp_path}"], cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    roots = [p for p in tmp_path.iterdir() if (p / "records").is_dir()]
    assert len(roots) == 1
    df = load_results(roots[0])
    assert len(df) > 0 and (df["status"] == "ok").all(), df.get("error")
    assert df["zero_one"].between(0, 0.5).all()

"""The command line: bad input gives one clear line and exit 2, and writes nothing."""

from pathlib import Path

import pandas as pd
import pytest
from conftest import run_cli, run_cli_batch

from bncbench.harness.store import load_results

BAD = [
    (["+experiment=nope"], "Could not find 'experiment/nope'"),
    (["dataset=nope"], "Could not find 'dataset/nope'"),
    (["dataset.names=[nosuch]"], "unknown dataset or group 'nosuch'"),
    (["structure=forest"], "Could not find 'structure/forest'"),
    (["strucure=nb"], "Could not override 'strucure'"),
    (["structure=kdb", "structure.k=-1"], "The 'k' parameter of BNClassifier must be an int in the range [0, inf)"),
    (["cv.folds=1"], "cv.folds must be >= 2"),
    (["estimator.m=-1"], "The 'm' parameter of BNClassifier must be a finite float >= 0.0"),
    (["dataset.names=[{name:synth-x,n_samples:0}]"], "needs n_samples >= 1"),
    (["dataset.names=[{name:synth-x,n_classes:1}]"], "n_classes >= 2"),
    (["dataset=adult", "data_dir=/nonexistent/dir"], "not found"),
    (["-m", "structure=nb,forest"], "Could not find 'structure/forest'"),
    (["param=hdp"], "Could not find 'param/hdp'"),
    # the root config is typed too (bncbench.harness.run_config.RunConfig)
    (["retry_failed=maybe"], "Value 'maybe' is not a valid bool"),
    (["progress=sometimes"], "Value 'sometimes' is not a valid bool"),
    (["seed=abc"], "Value 'abc' of type 'str' could not be converted to Integer"),
    (["seed=-1"], "seed must be >= 0, got -1"),
    (["dry_run=true", "seed=-1"], "seed must be >= 0, got -1"),
    (["checkpoint_every=-5"], "checkpoint_every must be >= 0 seconds (0: every iteration) or null, got -5.0"),
    (["checkpoint_every=often"], "Value 'often' of type 'str' could not be converted to Float"),
    (["max_crashes=0"], "max_crashes must be an integer >= 1 (deaths of a task's process in a row before it is "
                        "recorded failed) or null (no limit), got 0"),
    (["max_crashes=often"], "Value 'often' of type 'str' could not be converted to Integer"),
    (["stop_grace=-1"], "stop_grace must be a number of seconds >= 0 (how long a stopped run waits for its workers' "
                        "fits to save), got -1.0"),
    (["stop_grace=null"], "field 'stop_grace' is not Optional"),
    # unknown keys, with or without +, name the closest valid key (issue #36, item 1)
    (["strucure=nb"], "the run config has no key 'strucure' (did you mean 'structure'?)"),
    (["+strucure=tan"], "unknown key 'strucure' (did you mean 'structure'?)"),
    (["+experimnet=quickstart"], "unknown key 'experimnet' (did you mean 'experiment'?); +experiment=NAME"),
    (["experimnet=quickstart"], "no key 'experimnet' (did you mean 'experiment'?)"),
    (["cv.round=2"], "'cv' has no key 'round' (did you mean 'cv.rounds'?)"),
    (["+cv.round=2"], "unknown key(s) cv.round (did you mean 'cv.rounds'?)"),
    (["structure=kdb", "+structure.kk=2"], "structure 'kdb' has no hyperparameter 'kk' (structure.kk) (did you mean "
                                           "'structure.k'?)"),
    (["+executor.n_job=2"], "executor 'joblib' has no option 'n_job' (executor.n_job) (did you mean "
                            "'executor.n_jobs'?)"),
    (["+dataset.name=[synth-nb]"], "unknown key 'dataset.name' (did you mean 'dataset.names'?)"),
    (["-m", "+strucure=nb,tan"], "unknown key 'strucure' (did you mean 'structure'?)"),
]


@pytest.fixture(scope="module")
def refused(tmp_path_factory):
    """Each command of ``BAD`` and ``INVALID_MODELS`` (with the extra arguments of its test) run in one subprocess
    (:func:`conftest.run_cli_batch`), each in a directory of its own: (list, index) -> (CompletedProcess, directory)."""
    cases = {("BAD", i): ("run", *args) for i, (args, _) in enumerate(BAD)}
    cases.update({("INVALID_MODELS", i): ("run", *args, "dataset.names=[synth-nb]")
                  for i, (args, _) in enumerate(INVALID_MODELS)})
    dirs = {key: tmp_path_factory.mktemp("refused") for key in cases}
    runs = run_cli_batch([([*args, f"results_dir={dirs[key] / 'results'}"], dirs[key]) for key, args in cases.items()])
    return {key: (res, dirs[key]) for key, res in zip(cases, runs)}


@pytest.mark.parametrize("i", range(len(BAD)), ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_is_one_line_exit_2_and_no_results(refused, i):
    (res, tmp_path), message = refused["BAD", i], BAD[i][1]
    assert res.returncode == 2, res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("bncbench: error:") and message in lines[0]
    assert "Traceback" not in res.stderr + res.stdout
    assert not (tmp_path / "results").exists()


def test_one_class_file_dataset_is_rejected(tmp_path):
    csv = tmp_path / "one.csv"
    csv.write_text("a,b,cls\n1,x,yes\n2,y,yes\n3,x,yes\n")
    res = run_cli(["run", f"dataset.names=[{{name:one,path:{csv},class_column:cls}}]",
                   f"results_dir={tmp_path / 'results'}"], cwd=tmp_path)
    assert res.returncode == 2
    assert "only 1 class" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "results").exists()


def test_unknown_command_and_help(tmp_path):
    res = run_cli(["frobnicate"], cwd=tmp_path)
    assert res.returncode == 2 and "unknown command" in res.stderr
    assert run_cli(["--help"], cwd=tmp_path).returncode == 0


def test_multirun_sweeps_through_the_joblib_launcher(tmp_path):
    res = run_cli(["run", "-m", "structure=nb,tan", "dataset.names=[synth-nb]", "cv.rounds=2", "progress=false",
                   f"results_dir={tmp_path / 'r'}", "name=sweep"], cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "Joblib.Parallel" in res.stdout + res.stderr
    df = load_results(tmp_path / "r" / "sweep")
    assert sorted(df["model"].unique()) == ["NB", "TAN"]
    assert len(df) == 8 and (df["status"] == "ok").all()
    # the composed config of each job is saved for provenance
    assert len(list((tmp_path / "r" / "sweep" / "hydra" / "multirun").glob("*/.hydra/config.yaml"))) == 2


def test_hydra_glob_and_range_sweeps(tmp_path):
    """Hydra's own sweep syntax: a glob over a group's options, a range over a hyperparameter."""
    base = ["dataset.names=[synth-nb]", "cv.rounds=1", "progress=false", f"results_dir={tmp_path / 'r'}", "name=s"]
    res = run_cli(["run", "-m", "dry_run=true", "structure=glob(kdb?)", *base], cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    heads = [w for ln in res.stdout.splitlines() if ln.startswith("# ") for w in ln.split() if "structure=" in w]
    assert heads == [f"structure=kdb{k}" for k in range(1, 6)]
    assert not (tmp_path / "r").exists()
    res = run_cli(["run", "-m", "structure=kdb", "structure.k=range(1,3)", *base], cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    df = load_results(tmp_path / "r" / "s")
    assert sorted(df["model"].unique()) == ["KDB-1", "KDB-2"] and (df["status"] == "ok").all()
    assert sorted(df["param.k"].unique()) == [1, 2]


def test_quickstart_multirun_through_the_submitit_local_launcher(tmp_path):
    """README's cluster line with the local submitit launcher: real subprocesses, one per sweep job."""
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher", reason="hydra-submitit-launcher is not installed")
    res = run_cli(["run", "-m", "+experiment=quickstart", "hydra/launcher=submitit_local",
                   "dataset.names=[synth-nb],[synth-tree]", "cv.rounds=1", "n_jobs=1", "progress=false",
                   f"results_dir={tmp_path / 'r'}"], cwd=tmp_path, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    df = load_results(tmp_path / "r" / "quickstart")
    # one job per dataset, each running the experiment's three models
    assert sorted(df["model"].unique()) == ["KDB-1", "NB", "TAN"] and (df["status"] == "ok").all()
    assert sorted(df["dataset"].unique()) == ["synth-nb", "synth-tree"] and len(df) == 12
    jobs = sorted((tmp_path / "r" / "quickstart" / "hydra" / "multirun").glob(".submitit/*/*_log.out"))
    assert len({p.parent for p in jobs}) == 2, "each sweep job ran as a submitit job of its own"


def test_slurm_launcher_without_sbatch_is_one_clear_line(tmp_path):
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher", reason="hydra-submitit-launcher is not installed")
    import shutil

    if shutil.which("sbatch"):
        pytest.skip("sbatch is on this machine: the SLURM line would submit real jobs")
    res = run_cli(["run", "+experiment=quickstart", "hydra/launcher=submitit_slurm", "-m",
                   f"results_dir={tmp_path / 'r'}"], cwd=tmp_path)
    assert res.returncode == 2
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "sbatch" in lines[0], res.stderr
    assert not (tmp_path / "r").exists()


def test_summary_csv_and_printed_table(tmp_path):
    res = run_cli(["run", "structure=kdb2", "dataset.names=[synth-kdb2]", "cv.rounds=2", "progress=false",
                   f"results_dir={tmp_path / 'r'}", "name=one"], cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "KDB-2" in res.stdout and "synth-kdb2" in res.stdout
    s = pd.read_csv(tmp_path / "r" / "one" / "summary.csv")
    assert list(s["model"]) == ["KDB-2"] and s["n_ok"].iloc[0] == 4
    assert abs(s["bias"].iloc[0] + s["variance"].iloc[0] - s["zero_one"].iloc[0]) < 1e-12


INVALID_MODELS = [
    (["structure.name=foo"], "unknown structure"),
    (["param=weighted", "init.name=foo"], "unknown init"),
    (["param=weighted", "optimizer.name=foo"], "unknown optimizer 'foo'; choose one of lbfgs"),
    (["param=weighted", "param.level=9"], "'level' parameter of BNClassifier must be an int in the range [1, 4]"),
    (["param=weighted", "param.reg=foo"], "'reg' parameter of BNClassifier must be a str among"),
    (["structure.name=custom"], "needs parents"),
    (["structure=kdb", "structure.k=2.5"], "could not be converted to Integer"),
    (["structure=nb", "+structure.k=2"], "structure 'nb' has no hyperparameter 'k' (structure.k)"),
    (["structure=kdb", "+structure.n=2"], "structure 'kdb' has no hyperparameter 'n'"),
    (["param=weighted", "+optimizer.momentum=0.9"], "optimizer 'lbfgs' has no hyperparameter 'momentum'"),
    # the basic sweeper enumerates choices, globs and ranges; an interval needs a sampling sweeper
    (["-m", "structure=kdb", "structure.k=interval(1,3)"], "does not support sweep type : INTERVAL_SWEEP"),
    (["-m", "structure=glob(*)"], "needs parents"),  # the glob's custom: every job is checked first
]


@pytest.mark.parametrize("i", range(len(INVALID_MODELS)), ids=[" ".join(a) for a, _ in INVALID_MODELS])
def test_invalid_models_are_caught_before_any_task(refused, i):
    (res, tmp_path), message = refused["INVALID_MODELS", i], INVALID_MODELS[i][1]
    assert res.returncode == 2, res.stdout + res.stderr
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "results").exists()


def test_a_top_level_key_the_schema_lacks_fails_in_an_experiment_file(tmp_path):
    conf = tmp_path / "conf" / "experiment"
    conf.mkdir(parents=True)
    (conf / "typo.yaml").write_text("# @package _global_\nname: typo\nreprot:\n  reference: NB\n")
    res = run_cli(["run", "+experiment=typo", "dataset.names=[synth-nb]", f"hydra.searchpath=[file://{tmp_path / 'conf'}]",
                   f"results_dir={tmp_path / 'results'}"], cwd=tmp_path)
    assert res.returncode == 2, res.stdout + res.stderr
    assert "Key 'reprot' not in 'RunConfig'" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "results").exists()


def _tree(root):
    return {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in Path(root).rglob("*")}


def test_dry_run_lists_pending_tasks_and_writes_nothing(tmp_path):
    base = ["dataset.names=[synth-nb,synth-tree]", "cv.rounds=1", "progress=false", f"results_dir={tmp_path / 'r'}",
            "name=dry"]
    res = run_cli(["run", "dry_run=true", *base], cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert not (tmp_path / "r").exists()
    rows = [ln.split() for ln in res.stdout.splitlines()]
    assert rows[0] == ["dataset", "model", "pending", "failed", "before", "checkpointed", "died", "tasks"]
    assert rows[1:3] == [["synth-nb", "NB", "2", "0", "0", "0", "2"], ["synth-tree", "NB", "2", "0", "0", "0", "2"]]
    assert res.stdout.splitlines()[-1] == "tasks: 4 total, 0 already done, 4 pending (dry run: nothing ran)"

    # NB on synth-nb done; a model whose every task fails on synth-tree (a parent list of the wrong length)
    assert run_cli(["run", *base, "dataset.names=[synth-nb]"], cwd=tmp_path).returncode == 0
    bad = ["structure.name=custom", "+structure.parents=[[0]]", "structure.label=BAD"]
    assert run_cli(["run", *base, *bad, "dataset.names=[synth-tree]"], cwd=tmp_path).returncode == 1
    failed = sorted((tmp_path / "r" / "dry" / "records" / "synth-tree" / "BAD").glob("*.json"))[0]
    failed.with_suffix(".fit0.npz").write_bytes(b"")  # what a fit killed in its retry would leave
    before = _tree(tmp_path / "r")
    res = run_cli(["run", "-m", "dry_run=true", *base, "structure=nb,tan"], cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    jobs = res.stdout.split("# ")[1:]
    assert [j.splitlines()[0].split()[-1] for j in jobs] == ["structure=nb", "structure=tan"]
    assert [ln.split() for ln in jobs[0].splitlines()[2:]] == [["synth-tree", "NB", "2", "0", "0", "0", "2"],
                                                               "tasks: 4 total, 2 already done, 2 pending (dry "
                                                               "run: nothing ran)".split()]
    assert "tasks: 4 total, 0 already done, 4 pending" in jobs[1]
    res = run_cli(["run", "dry_run=true", *base, *bad], cwd=tmp_path)
    assert [ln.split() for ln in res.stdout.splitlines()[1:3]] == [["synth-nb", "BAD", "2", "0", "0", "0", "2"],
                                                                   ["synth-tree", "BAD", "2", "2", "1", "0", "2"]]
    res = run_cli(["run", "dry_run=true", "retry_failed=false", *base, *bad], cwd=tmp_path)
    assert [ln.split() for ln in res.stdout.splitlines()[1:]] == [
        ["synth-nb", "BAD", "2", "0", "0", "0", "2"], "tasks: 4 total, 2 already done, 2 pending (dry run: nothing ran)".split()]
    assert _tree(tmp_path / "r") == before


def test_each_job_is_composed_and_validated_once(tmp_path, monkeypatch):
    """A single run composes its config once and validates it once; a multirun's jobs reuse their plans."""
    from bncbench.harness import app

    calls = {"compose": 0, "prepare": 0}
    compose, prepare = app._compose, app.prepare

    def counted(name, fn):
        def wrapper(*a, **kw):
            calls[name] += 1
            return fn(*a, **kw)
        return wrapper

    monkeypatch.setattr(app, "_compose", counted("compose", compose))
    monkeypatch.setattr(app, "prepare", counted("prepare", prepare))
    base = ["dataset.names=[synth-nb]", "cv.rounds=1", "progress=false", f"results_dir={tmp_path / 'r'}"]
    assert app.run_cli(["structure=tan", *base, "name=one"]) == 0
    assert calls == {"compose": 1, "prepare": 1}
    assert (tmp_path / "r" / "one" / "hydra" / "run" / ".hydra" / "config.yaml").is_file()  # provenance kept
    assert list(load_results(tmp_path / "r" / "one")["model"].unique()) == ["TAN"]
    calls.update(compose=0, prepare=0)
    assert app.run_cli(["-m", "structure=nb,tan", *base, "name=two"]) == 0
    assert calls["prepare"] == 2  # one per job, before the first ran
    assert sorted(load_results(tmp_path / "r" / "two")["model"].unique()) == ["NB", "TAN"]

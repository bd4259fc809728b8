"""Every experiment config in conf/experiment/ composes and runs with a tiny override."""


import pytest
from conftest import REPO, run_cli_batch

from bncbench.harness.store import load_results

EXPERIMENTS = sorted(p.stem for p in (REPO / "conf" / "experiment").glob("*.yaml"))


def test_there_are_experiments():
    assert "quickstart" in EXPERIMENTS


CHUNKS = [EXPERIMENTS[i::3] for i in range(3)]  # three subprocesses, so that xdist's workers share them


@pytest.mark.parametrize("names", CHUNKS, ids=[",".join(c) for c in CHUNKS])
def test_experiment_configs_smoke_run(tmp_path, names):
    """Each experiment of the chunk runs on synth-nb (one round), each in a results directory of its own, the chunk
    in one subprocess (:func:`conftest.run_cli_batch`: the imports paid once, 2x faster); every failing experiment
    is named. synth-nb has no given train/test split: a holdout experiment (digits_smoke) runs as CV here; its own
    protocol is composed in tests/test_holdout.py."""
    dirs = {name: tmp_path / name for name in names}
    for d in dirs.values():
        d.mkdir()
    runs = run_cli_batch([(["run", f"+experiment={name}", "dataset.names=[synth-nb]", "cv.mode=cv", "cv.rounds=1",
                            "n_jobs=1", "progress=false", f"results_dir={dirs[name]}"], dirs[name]) for name in names])
    problems = []
    for name, res in zip(names, runs):
        if res.returncode != 0:
            problems.append(f"{name}: exit {res.returncode}: {res.stderr[-3000:]}")
            continue
        roots = [p for p in dirs[name].iterdir() if (p / "records").is_dir()]
        if len(roots) != 1:
            problems.append(f"{name}: {len(roots)} stores")
            continue
        df = load_results(roots[0])
        if not (len(df) > 0 and (df["status"] == "ok").all() and df["zero_one"].between(0, 0.5).all()):
            problems.append(f"{name}: {len(df)} records, errors {df.get('error')}, 0-1 {df['zero_one'].tolist()}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_the_grid_composed_at_once_equals_each_option_composed_alone(name):
    """option_composer's prefetch composes every option of a grid in one composition: same models."""
    from bncbench.harness import app
    from bncbench.harness.model_specs import expand_models

    with app._hydra():
        cfg = app._compose([f"+experiment={name}"])
        at_once = expand_models(cfg, app.option_composer([]))
        alone = app.option_composer([])
        del alone.prefetch
        assert at_once == expand_models(cfg, alone)


def test_a_bad_option_of_a_grid_is_named(tmp_path):
    conf = tmp_path / "conf" / "experiment"
    conf.mkdir(parents=True)
    (conf / "grid.yaml").write_text("# @package _global_\nname: grid\nmodels:\n  - structure: [nb, kdb2, forest]\n"
                                    "  - structure: mine\n")
    (tmp_path / "conf" / "structure").mkdir()
    (tmp_path / "conf" / "structure" / "mine.yaml").write_text("defaults:\n  - /schema/structure/kdb@_here_\n"
                                                               "  - _self_\nk: 3\n")
    from bncbench.harness import app
    from bncbench.errors import BNCBenchError

    search = f"hydra.searchpath=[file://{tmp_path / 'conf'}]"
    with pytest.raises(BNCBenchError, match=r"bad model option structure=forest: .*Could not find 'structure/forest'"):
        app.plan(["+experiment=grid", "dataset.names=[synth-nb]", search])
    (conf / "grid.yaml").write_text("# @package _global_\nname: grid\nmodels:\n  - structure: [nb, kdb2, mine]\n")
    labels = [m.label for m in app.plan(["+experiment=grid", "dataset.names=[synth-nb]", search]).models]
    assert labels == ["NB", "KDB-2", "KDB-3"]  # the searchpath's own option, composed with the others


def test_pernkopf_mnist_is_pernkopfs_grid_on_mnist14():
    """Table 1's experiment reuses pernkopf.yaml's models (Hydra defaults), not a copy of them."""
    from omegaconf import OmegaConf

    from bncbench.harness import app

    with app._hydra():
        mnist, usps = app._compose(["+experiment=pernkopf_mnist"]), app._compose(["+experiment=pernkopf"])
    assert OmegaConf.to_container(mnist.models) == OmegaConf.to_container(usps.models)
    assert list(mnist.dataset.names) == ["mnist14"] and list(usps.dataset.names) == ["usps"]
    assert mnist.name == "pernkopf_mnist" and mnist.cv.mode.value == "holdout"
    assert list(mnist.cv.missing_features.ks) == [0, 25, 50, 100, 150] and mnist.cv.missing_features.impute

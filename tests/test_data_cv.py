"""Every registered dataset goes through fold-wise MDL discretization and one NB 5x2-CV run (one round of it for
those over 100,000 rows: their five rounds took 15-40 s each in CI, and a round's two folds run every step the
others do)."""

import pytest
from conftest import data_dir_or_skip

from bncbench.data import uci
from bncbench.data.dataset import DBL_BIG_THRESHOLD
from bncbench.data.given_split import names_with_split
from bncbench.harness.runner import evaluate

# datasets with a given train/test split (the digits) are evaluated on it: tests/test_holdout.py
NAMES = sorted(set(uci.load_registry()) - set(names_with_split()))
ROUNDS = {n: 1 for n, e in uci.load_registry().items() if e.get("expected", {}).get("rows", 0) > DBL_BIG_THRESHOLD}


@pytest.mark.data
@pytest.mark.parametrize("name", NAMES)
def test_nb_5x2cv_on_every_registered_dataset(name):
    data_dir = data_dir_or_skip()
    rounds = ROUNDS.get(name, 5)
    df = evaluate(name, {"structure": "nb"}, data_dir=data_dir, rounds=rounds)
    assert len(df) == 2 * rounds and sorted(zip(df["round"], df["fold"])) == [(r, f) for r in range(rounds)
                                                                               for f in range(2)]
    assert (df["status"] == "ok").all(), df.get("error", "").tolist()
    n = int(df["n_instances"].iloc[0])
    assert ((df["n_train"] + df["n_test"]) == n).all()
    # NB must beat always guessing uniformly at random
    k = int(df["n_classes"].iloc[0])
    assert df["zero_one"].mean() < 1 - 1 / k
    assert df["rmse"].between(0, 1).all()

"""Feelders & Ivanovs' datasets in the registry: the 12 perfect-graph names and satimage (sat.trn)."""

from pathlib import Path

import numpy as np
import pytest

from bncbench.data.perfect import PAPER_NAMES, load_perfect
from bncbench.data.specs import load, resolve
from bncbench.errors import BNCBenchError
from bncbench.settings import data_dir


def test_the_papers_synthetic_names_resolve_and_load():
    specs = resolve("feelders_synthetic")
    assert [s["name"] for s in specs] == list(PAPER_NAMES) and len(specs) == 12
    assert {s["source"] for s in specs} == {"perfect"}
    assert [s["seed"] for s in specs] == [2] * 6 + [0] * 6  # default_seed: no class below 0.2
    ds = load(resolve("2.5.2-3.100")[0])
    ref = load_perfect("2.5.2-3.100", seed=2)
    assert min(np.bincount(ds.y)) >= 20
    assert ds.X.shape == (100, 5) and ds.meta["parents"] == [(), (0,), (1,), (2,), (3,)]
    np.testing.assert_array_equal(ds.y, ref.y)
    assert ds.X.equals(ref.X)
    # an inline spec chooses the seed
    other = load(resolve({"name": "2.5.2-3.100", "source": "perfect", "seed": 5})[0])
    assert not np.array_equal(other.y, ds.y) or not other.X.equals(ds.X)
    with pytest.raises(BNCBenchError):
        resolve("2.5.x.100")


@pytest.mark.skipif(not data_dir() or not (Path(data_dir()) / "satellite.tsv").is_file(),
                    reason="needs BNCBENCH_DATA_DIR with satellite.tsv")
def test_satimage_is_the_first_4435_rows_of_satellite():
    sat = load(resolve("satimage")[0], data_dir())
    full = load(resolve("satellite")[0], data_dir())
    assert sat.X.shape == (4435, 36)
    assert sat.X.equals(full.X.iloc[:4435].reset_index(drop=True))
    np.testing.assert_array_equal(sat.y, full.y[:4435])
    # sat.trn's class counts (UCI's documentation of the Statlog training set)
    assert dict(zip(sat.classes, np.bincount(sat.y))) == {"1": 1072, "2": 479, "3": 961, "4": 415, "5": 470,
                                                           "7": 1038}

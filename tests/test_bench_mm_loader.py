"""The digit benchmarks' one loader (``benchmarks/bench_mm.py: given_split_codes``) gives the runner's data.

On the real digits (skipped when their directory is absent): the given split's sizes, the codes and cardinalities
the experiment runner computes for ``cv.mode=holdout`` (``runner._prepared_fold``), a stratified subsample whose
class counts are the training part's proportions, and the raw features of exactly those rows.
"""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest
from conftest import REPO
from sklearn.model_selection import train_test_split

from bncbench.data import specs
from bncbench.data.catalog import load_registry
from bncbench.data.given_split import holdout_indices
from bncbench.data.locate import entry_dir
from bncbench.errors import BNCBenchError
from bncbench.harness import runner
from bncbench.model.preprocess import Discretizer


def _bench_mm():
    spec = importlib.util.spec_from_file_location("bench_mm", REPO / "benchmarks" / "bench_mm.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _digits_or_skip(name: str) -> None:
    try:
        d = entry_dir(load_registry()[name])
    except BNCBenchError as exc:
        pytest.skip(f"the digits directory is unknown: {exc}")
    if not d.is_dir():
        pytest.skip(f"the digits directory {d} is absent (set BNCBENCH_DIGITS_DIR)")


def test_given_split_codes_are_the_runners_holdout_codes_on_usps():
    _digits_or_skip("usps")
    Xtr, Xte, ytr, yte, cards, Rtr, Rte = _bench_mm().given_split_codes("usps", raw=True)
    spec = specs.resolve(["usps"])[0]
    ds, train, test, codes, run_cards = runner._prepared_fold(json.dumps(spec), None, 0, 2, 0, 0, "holdout")
    assert (Xtr.shape, Xte.shape) == ((7291, 256), (2007, 256))
    np.testing.assert_array_equal(Xtr, codes[train])
    np.testing.assert_array_equal(Xte, codes[test])
    np.testing.assert_array_equal(cards, run_cards)
    np.testing.assert_array_equal(ytr, np.asarray(ds.y)[train])
    np.testing.assert_array_equal(yte, np.asarray(ds.y)[test])
    np.testing.assert_array_equal(Rtr, ds.X.iloc[train].to_numpy(dtype=float))
    np.testing.assert_array_equal(Rte, ds.X.iloc[test].to_numpy(dtype=float))


def test_given_split_codes_on_mnist14_a_stratified_subsample_with_the_whole_test_part():
    _digits_or_skip("mnist")
    Xtr, Xte, ytr, yte, cards, Rtr, Rte = _bench_mm().given_split_codes("mnist14", rows=3000, raw=True)
    ds = specs.load(specs.resolve(["mnist14"])[0])
    train, test = holdout_indices(ds)
    assert (train.size, test.size) == (60000, 10000)
    assert (Xtr.shape, Xte.shape, Rtr.shape, Rte.shape) == ((3000, 196), (10000, 196), (3000, 196), (10000, 196))
    y = np.asarray(ds.y)
    np.testing.assert_array_equal(yte, y[test])
    np.testing.assert_array_equal(Rte, ds.X.iloc[test].to_numpy(dtype=float))
    # stratified: each class's count is its share of the 60,000 training images, to one image
    labels = np.unique(y[train])
    full = np.array([np.count_nonzero(y[train] == c) for c in labels])
    sub = np.array([np.count_nonzero(ytr == c) for c in labels])
    assert sub.sum() == 3000 and np.all(np.abs(sub - full * 3000 / 60000) <= 1)
    # the rows are the stratified draw (seed 0) of the training part, their codes MDL cut on those rows alone
    rows, _ = train_test_split(train, train_size=3000, stratify=y[train], random_state=0)
    np.testing.assert_array_equal(ytr, y[rows])
    np.testing.assert_array_equal(Rtr, ds.X.iloc[rows].to_numpy(dtype=float))
    disc = Discretizer(reserve_missing=ds.missing_mask).fit(ds.X.iloc[rows], y[rows])
    np.testing.assert_array_equal(Xtr, disc.transform(ds.X.iloc[rows]))
    np.testing.assert_array_equal(Xte, disc.transform(ds.X.iloc[test]))
    np.testing.assert_array_equal(cards, disc.cardinalities_)

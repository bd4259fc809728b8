"""DBLⁿ / LRⁿ without the row-index table: the on-the-fly design of attribute-subset models.

:class:`bncbench.engine.subset_design.SubsetDesign` finds every row of ``Phi`` from the codes
inside its kernels; :meth:`SubsetLayout.rows` materializes them (through the scorer's own
``factor_rows``), the reference. Checked against it: the rows themselves, the NLL and gradient
(general and two-class kernels, training data bit for bit, test data with unseen combinations,
unknown (-1) and out-of-range codes to 1e-10), prediction scores, blocks of every size, the
binary-search lookup, the scipy backend, minibatches, whole fits (the same iterates), and that
no ``(N, n_subsets)`` array is allocated.
"""

import tracemalloc

import numpy as np
import pytest
from test_ccbn import _data

from bncbench import BNClassifier
from bncbench.engine.fit import _problem, factor_layout
from bncbench.engine import CLL, Data
from bncbench.engine.loss import ENGINE
from bncbench.engine import subset_design as sd
from bncbench.engine.row_table import RowTable, design_of
from bncbench.engine.subset_design import SubsetDesign
from bncbench.engine.subset_layout import SubsetLayout

RTOL = 1e-10
KEEP = (0, 1 << 40)
"""``keep_bytes`` of the per-subset kernels: rows found again for the scatter, or kept."""


def _codes(Y):
    X, y, cards = _data(700, seed=21, n_attr=6, card=(2, 4), n_classes=Y, p=2)
    Xt, yt, _ = _data(500, seed=99, n_attr=6, card=(2, 4), n_classes=Y, p=2)  # other BN: unseen combinations
    Xt = np.minimum(Xt, cards - 1)
    Xt[::7, 2] = -1  # unknown at prediction
    Xt[::11, 4] = cards[4] + 3  # out of range: no contribution either
    return X, y, cards, Xt, yt


@pytest.fixture(scope="module", params=[2, 3], ids=["two-class", "three-class"])
def problem(request):
    Y = request.param
    X, y, cards, Xt, yt = _codes(Y)
    layouts = {}
    for n in (1, 2, 3):
        scorer = BNClassifier(structure="anje", n=n, discretize=False, cardinalities=cards).fit(X, y).scorer_
        layouts[n] = factor_layout(scorer, X, "weighted")[:2]
    return Y, X, y, Xt, yt, layouts, cards


def _phi(layout, gen, seed=0):
    return gen + 0.4 * np.random.default_rng(seed).standard_normal(gen.shape)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_rows_found_on_the_fly_are_the_materialized_rows(problem, n):
    Y, X, y, Xt, yt, layouts, _ = problem
    layout, _ = layouts[n]
    assert isinstance(layout, SubsetLayout)
    for codes in (X, Xt):
        design = layout.design(codes)
        assert isinstance(design, SubsetDesign) and design.codes.shape == codes.shape
        np.testing.assert_array_equal(design.rows(), layout.rows(codes))
    if n == 3:
        assert (layout.rows(Xt)[:, 1:] >= layout.n_trained).any()  # unseen rows
    assert (layout.rows(Xt)[:, 1:] == -1).any()  # no contribution


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("two_class", [True, False])
def test_training_nll_and_gradient_bit_for_bit(problem, n, two_class):
    """Training codes: the same compressed rows in the same order, the same sums: identical numbers."""
    Y, X, y, _, _, layouts, _ = problem
    layout, gen = layouts[n]
    ref = Data.from_rows(layout.rows(X), y, Y)
    new = Data.from_design(layout.design(X, combine=False), y, Y)  # the row table's order (combined: below)
    assert isinstance(new.design, SubsetDesign) and new.n == ref.n < X.shape[0]
    np.testing.assert_array_equal(new.C, ref.C)
    np.testing.assert_array_equal(new.idx, ref.idx)  # same design rows, same order
    Phi = _phi(layout, gen)
    for grad in (True, False):
        f_ref, G_ref = CLL(ref, layout.n_rows, two_class=two_class)(Phi, grad=grad)
        f_new, G_new = CLL(new, layout.n_rows, two_class=two_class)(Phi, grad=grad)
        assert f_new == f_ref
        if grad:
            np.testing.assert_array_equal(G_new, G_ref)


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("two_class", [True, False])
@pytest.mark.parametrize("compress", [True, False])
def test_nll_and_gradient_with_unseen_and_unknown_values(problem, n, two_class, compress):
    Y, _, _, Xt, yt, layouts, _ = problem
    layout, gen = layouts[n]
    ref = Data.from_rows(layout.rows(Xt), yt, Y, compress=compress)
    new = Data.from_design(layout.design(Xt), yt, Y, compress=compress)
    for seed in (0, 1):
        Phi = _phi(layout, gen, seed)
        f_ref, G_ref = CLL(ref, layout.n_rows, two_class=two_class)(Phi)
        f_new, G_new = CLL(new, layout.n_rows, two_class=two_class)(Phi)
        assert abs(f_new - f_ref) <= RTOL * abs(f_ref)
        np.testing.assert_allclose(G_new, G_ref, rtol=RTOL, atol=RTOL * np.abs(G_ref).max())
        assert np.count_nonzero(G_new) == np.count_nonzero(G_ref)
        if not compress:  # one design row per instance in order: the same sums
            assert f_new == f_ref


@pytest.mark.parametrize("n", [1, 2, 3])
def test_scores_at_prediction(problem, n):
    Y, X, _, Xt, _, layouts, _ = problem
    layout, gen = layouts[n]
    Phi = _phi(layout, gen)
    for codes in (X, Xt):
        np.testing.assert_array_equal(layout.design(codes).scores(Phi), RowTable(layout.rows(codes)).scores(Phi))


@pytest.mark.parametrize("cached", [True, False], ids=["small-blocks", "large-blocks"])
@pytest.mark.parametrize("chunk", [1, 7, 64, 10_000])
def test_blocks_of_any_size(problem, monkeypatch, chunk, cached):
    """The kernels go over blocks of at most CHUNK_ROWS design rows: any block size, a partial last block."""
    Y, X, y, Xt, yt, layouts, _ = problem
    layout, gen = layouts[3]
    Phi = _phi(layout, gen)
    ref = Data.from_rows(layout.rows(X), y, Y)
    want = [CLL(ref, layout.n_rows, two_class=tc)(Phi) for tc in (True, False)]
    want_scores = RowTable(layout.rows(Xt)).scores(Phi)
    monkeypatch.setattr(sd, "CHUNK_ROWS", chunk)
    if not cached:  # a working set beyond the cache: blocks of CHUNK_ROWS
        monkeypatch.setattr(sd, "CACHE_BYTES", 0)
    B = sd.block_size(layout.n_factors - 1, 1)
    assert B == chunk if not cached else 1 <= B <= chunk
    new = Data.from_design(layout.design(X, combine=False), y, Y)
    for tc, (f, G) in zip((True, False), want):
        f_new, G_new = CLL(new, layout.n_rows, two_class=tc)(Phi)
        assert f_new == f
        np.testing.assert_array_equal(G_new, G)
    np.testing.assert_array_equal(layout.design(Xt).scores(Phi), want_scores)


@pytest.mark.parametrize("budget", [0, 200])
def test_binary_search_lookup(problem, budget):
    """Subsets beyond the dense-map budget are looked up by binary search: the same rows."""
    Y, X, y, Xt, yt, layouts, _ = problem
    layout, gen = layouts[3]
    small = SubsetLayout(layout.scorer, dense_budget=budget)
    dense = small.lookup.dense_off >= 0
    assert (~dense).any() and (dense.any() == (budget > 0))
    for codes in (X, Xt):
        np.testing.assert_array_equal(small.design(codes).rows(), layout.rows(codes))
    Phi = _phi(layout, gen)
    f_ref, G_ref = CLL(Data.from_rows(layout.rows(Xt), yt, Y), layout.n_rows)(Phi)
    f_new, G_new = CLL(Data.from_design(small.design(Xt), yt, Y), layout.n_rows)(Phi)
    assert abs(f_new - f_ref) <= RTOL * abs(f_ref)
    np.testing.assert_allclose(G_new, G_ref, rtol=RTOL, atol=RTOL * np.abs(G_ref).max())


def test_scipy_backend_and_minibatches(problem):
    Y, X, y, _, _, layouts, _ = problem
    layout, gen = layouts[2]
    new = Data.from_design(layout.design(X, combine=False), y, Y)
    ref = Data.from_rows(layout.rows(X), y, Y)
    Phi = _phi(layout, gen)
    f, G = CLL(new, layout.n_rows)(Phi)
    f_sp, G_sp = CLL(new, layout.n_rows, "scipy")(Phi)
    assert f_sp == pytest.approx(f, rel=1e-12)
    np.testing.assert_allclose(G_sp, G, rtol=1e-9, atol=1e-9 * np.abs(G).max())
    rows = np.random.default_rng(0).permutation(new.n)[:50]
    batch = new.subset(rows)
    assert isinstance(batch.design, SubsetDesign)
    f_b, G_b = CLL(new, layout.n_rows)(Phi, data=batch)
    f_r, G_r = CLL(ref, layout.n_rows)(Phi, data=ref.subset(rows))
    assert f_b == f_r
    np.testing.assert_array_equal(G_b, G_r)


@pytest.mark.parametrize("n,param,optimizer", [(2, "weighted", "lbfgs"), (3, "discriminative", "lbfgs"),
                                               (2, "weighted", "sgd")])
def test_fit_is_the_materialized_fit(problem, n, param, optimizer):
    """The engine option ``materialize`` (the reference path) gives the same iterates and predictions (the sums in
    the row table's order: ``combine_subsets`` false)."""
    Y, X, y, Xt, _, _, cards = problem
    opts = {"maxiter": 15, "combine_subsets": False}
    fits = [BNClassifier(structure="anje", n=n, param=param, init="generative", optimizer=optimizer, reg="l2",
                         lam=0.01, discretize=False, cardinalities=cards,
                         optimizer_options={**opts, "materialize": mat}).fit(X, y) for mat in (False, True)]
    lazy, table = (f.scorer_ for f in fits)
    assert fits[0].n_iter_ == fits[1].n_iter_
    np.testing.assert_array_equal(lazy.x, table.x)
    assert lazy.train_cll == table.train_cll
    np.testing.assert_array_equal(fits[0].predict_proba(Xt), fits[1].predict_proba(Xt))


def test_no_table_of_instances_by_subsets():
    """Building the problem and one evaluation allocate far less than the (N, n_subsets) table."""
    X, y, cards = _data(20_000, seed=5, n_attr=16, card=(2, 3), n_classes=2, p=1)
    scorer = BNClassifier(structure="anje", n=3, discretize=False, cardinalities=cards).fit(X, y).scorer_
    layout, gen, _ = factor_layout(scorer, X, "weighted")
    table = X.shape[0] * layout.n_factors * 4  # 45 MB
    peaks = {}
    for mat in (False, True):
        tracemalloc.start()
        pmap, prob = _problem(layout, gen, X, y, param="weighted", init="generative", level=4, reg="l2", lam=0.01,
                              objective="cll", materialize=mat)
        prob.fg(pmap.x0())
        peaks[mat] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        design = prob.cll.data.design
        assert isinstance(design, RowTable if mat else SubsetDesign)
    assert peaks[True] > table
    assert peaks[False] < table / 8, (peaks, table)


def test_design_of_prefers_the_on_the_fly_design(problem):
    Y, X, _, _, _, layouts, _ = problem
    layout, _ = layouts[2]
    assert isinstance(design_of(layout, X), SubsetDesign)
    assert isinstance(design_of(layout, X, materialize=True), RowTable)


def _two_class_args(layout, gen, codes, y, seed=0, compress=True, combine=False):
    data = Data.from_design(layout.design(codes, combine=combine), y, 2, compress=compress)
    Phi = _phi(layout, gen, seed)
    return data, np.ascontiguousarray(Phi[:, 1] - Phi[:, 0])


@pytest.mark.parametrize("n", [1, 2, 3])
def test_dense_two_class_kernel_is_the_general_one_bit_for_bit(problem, n):
    """The dense kernel (training codes: every subset dense, every code known, no unseen row) gives the numbers of
    the general two-class kernel bit for bit, at any block size and scatter tile."""
    Y, X, y, _, _, layouts, _ = problem
    if Y != 2:
        pytest.skip("two classes")
    layout, gen = layouts[n]
    data, D = _two_class_args(layout, gen, X, y)
    design, arrays = data.design, data.design.lookup.kernel_arrays()
    assert design.dense_exact(True) and design.dense_exact(False)
    for chunk in (1, 5, 64, 10_000):
        for grad in (True, False):
            g_ref = np.zeros(layout.n_rows if grad else 1)
            f_ref = sd._subset_cll2(design.codes, data.C1, data.csum, D, g_ref, grad, chunk, *arrays)
            for tile in (1, 3, 64):
                for keep in KEEP:
                    g = np.zeros_like(g_ref)
                    f = sd._subset_cll2_dense(design.codes, data.C1, data.csum, D, g, grad, chunk, tile, keep, *arrays)
                    assert f == f_ref
                    np.testing.assert_array_equal(g, g_ref)
    g_ref, g = np.zeros(layout.n_rows), np.zeros(layout.n_rows)
    f_ref = sd._subset_cll2(design.codes, data.C1, data.csum, D, g_ref, True, 64, *arrays)
    assert design.nll2(D, data.C1, data.csum, g, True) == f_ref  # nll2 takes the dense kernel: the same
    np.testing.assert_array_equal(g, g_ref)


def test_dense_kernel_only_where_exact(problem, monkeypatch):
    """Unseen combinations with known codes: the dense kernel for the NLL (exact), the general one for the gradient
    (two keys on one unseen row would be summed in another order); a gradient not starting at 0 or a binary-search
    subset: the general kernel."""
    Y, X, y, Xt, yt, layouts, cards = problem
    if Y != 2:
        pytest.skip("two classes")
    layout, gen = layouts[3]
    known = np.clip(Xt, 0, cards - 1)
    data, D = _two_class_args(layout, gen, known, yt, compress=False)  # one design row per instance, in order
    design = data.design
    assert (layout.rows(known)[:, 1:] >= layout.n_trained).any()  # unseen rows
    assert design.dense_exact(False) and not design.dense_exact(True)
    calls = []
    dense = sd._subset_cll2_dense
    monkeypatch.setattr(sd, "_subset_cll2_dense", lambda *a: calls.append(a[5]) or dense(*a))
    ref = Data.from_rows(layout.rows(known), yt, 2, compress=False)
    Phi = _phi(layout, gen)
    for grad in (False, True):
        f_ref, G_ref = CLL(ref, layout.n_rows)(Phi, grad=grad)
        f, G = CLL(data, layout.n_rows)(Phi, grad=grad)
        assert f == f_ref
        if grad:
            np.testing.assert_array_equal(G, G_ref)
    assert calls == [False]
    train, Dx = _two_class_args(layout, gen, X, y)
    g = np.ones(layout.n_rows)
    train.design.nll2(Dx, train.C1, train.csum, g, True)  # adds into a nonzero g: the general kernel
    assert calls == [False]
    assert not SubsetLayout(layout.scorer, dense_budget=0).design(known).dense_exact(False)


# ---------------------------------------------------------------- combined tables (engine option combine_subsets)
def _close(f, g, f_ref, g_ref, rtol=1e-12):
    assert abs(f - f_ref) <= rtol * abs(f_ref)
    np.testing.assert_allclose(g, g_ref, rtol=rtol, atol=rtol * np.abs(g_ref).max())


@pytest.mark.parametrize("max_keys", [1, 8, 64, sd.GROUP_KEYS])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_groups_cover_every_subset_and_read_its_rows(problem, n, max_keys):
    """Groups are consecutive subsets, each once; a table has at most ``max_keys`` entries unless it is one subset;
    every entry reads, per subset, the row the materialized table gives for the entry's values."""
    _, X, _, _, _, layouts, cards = problem
    layout, _ = layouts[n]
    lk = layout.lookup
    grp = sd.SubsetGroups(lk, max_keys)
    sizes = np.diff(grp.table_off)
    assert grp.entry_n.sum() == lk.n_subsets and (grp.entry_n >= 1).all()
    assert ((sizes <= max_keys) | (grp.entry_n == 1)).all()
    if max_keys == 1:
        assert grp.n_groups == lk.n_subsets
    first = 0
    for g in range(grp.n_groups):
        members = range(first, first + grp.entry_n[g])
        first += grp.entry_n[g]
        u = grp.attrs[g, :grp.n_attrs[g]]
        assert set(u) == {int(a) for s in members for a in lk.subsets[s]}
        assert sizes[g] == np.prod(cards[u])
        for e in range(sizes[g]):  # a code row with the entry's values (the others 0): its rows in the subsets
            codes = np.zeros((1, X.shape[1]), np.int64)
            codes[0, u] = [(e // st) % c for st, c in zip(grp.strides[g, :len(u)], cards[u])]
            want = layout.rows(codes)[0, 1 + np.array(members)]
            p = grp.entry_start[g] + e * grp.entry_n[g]
            np.testing.assert_array_equal(grp.entry_rows[p:p + grp.entry_n[g]], want)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_combined_kernel_is_the_per_subset_kernel_to_rounding(problem, n):
    """The combined-table kernel against the per-subset two-class kernel (the row table's order): NLL and gradient
    to 1e-12 relative, for training codes (compressed and not), codes with unseen combinations, a gradient not
    starting at 0, any block size, tile and table bound."""
    Y, X, y, Xt, yt, layouts, cards = problem
    if Y != 2:
        pytest.skip("two classes")
    layout, gen = layouts[n]
    known = np.clip(Xt, 0, cards - 1)
    assert n < 3 or (layout.rows(known)[:, 1:] >= layout.n_trained).any()  # unseen rows (n = 3; 1, 2: all seen)
    for codes, yy, compress in ((X, y, True), (X, y, False), (known, yt, True)):
        data, D = _two_class_args(layout, gen, codes, yy, compress=compress)
        design, arrays = data.design, data.design.lookup.kernel_arrays()
        for max_keys in (1, 8, 64, sd.GROUP_KEYS):
            grp = sd.SubsetGroups(design.lookup, max_keys)
            for grad in (True, False):
                g_ref = np.zeros(layout.n_rows if grad else 1)
                f_ref = sd._subset_cll2(design.codes, data.C1, data.csum, D, g_ref, grad, 64, *arrays)
                for chunk, tile in ((1, 1), (5, 3), (64, 64), (10_000, 2)):
                    g = np.zeros_like(g_ref)
                    f = sd._grouped_cll2(design.codes, data.C1, data.csum, D, g, grad, chunk, tile, *grp.arrays())
                    _close(f, g, f_ref, g_ref)
        g0 = np.random.default_rng(3).standard_normal(layout.n_rows)
        g_ref, g = g0.copy(), g0.copy()
        f_ref = sd._subset_cll2(design.codes, data.C1, data.csum, D, g_ref, True, 64, *arrays)
        grp = sd.SubsetGroups(design.lookup)
        f = sd._grouped_cll2(design.codes, data.C1, data.csum, D, g, True, 64, 8, *grp.arrays())
        _close(f, g, f_ref, g_ref)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_combined_softmax_kernel_is_the_per_subset_kernel_to_rounding(problem, n):
    """Any number of classes (the softmax kernels; two classes too, as ``two_class=False`` runs them): the combined
    tables against the per-subset kernel, NLL and gradient to 1e-12 relative, for training codes and codes with
    unseen combinations, a gradient not starting at 0, any block size and table bound; equal to itself bit for bit
    at every block size."""
    Y, X, y, Xt, yt, layouts, cards = problem
    layout, gen = layouts[n]
    known = np.clip(Xt, 0, cards - 1)
    Phi = _phi(layout, gen)
    for codes, yy in ((X, y), (known, yt)):
        data = Data.from_design(layout.design(codes, combine=False), yy, Y)
        design, arrays = data.design, data.design.lookup.kernel_arrays()
        for max_keys in (1, 8, 64, sd.GROUP_KEYS):
            grp = sd.SubsetGroups(design.lookup, max_keys)
            for grad in (True, False):
                G_ref = np.zeros((layout.n_rows, Y) if grad else (1, 1))
                f_ref = sd._subset_cll(design.codes, data.C, data.csum, Phi, G_ref, grad, 64, *arrays)
                first = None
                for chunk in (1, 5, 64, sd.score_block_rows(Y), 10_000):
                    G = np.zeros_like(G_ref)
                    f = sd._grouped_cll(design.codes, data.C, data.csum, Phi, G, grad, chunk, *grp.arrays())
                    _close(f, G, f_ref, G_ref)
                    first = first or (f, G)  # and the same sums in the same order at every block size: bit for bit
                    assert f == first[0]
                    np.testing.assert_array_equal(G, first[1])
        G0 = np.random.default_rng(3).standard_normal((layout.n_rows, Y))
        G_ref, G = G0.copy(), G0.copy()
        f_ref = sd._subset_cll(design.codes, data.C, data.csum, Phi, G_ref, True, 64, *arrays)
        grp = sd.SubsetGroups(design.lookup)
        f = sd._grouped_cll(design.codes, data.C, data.csum, Phi, G, True, 64, *grp.arrays())
        _close(f, G, f_ref, G_ref)
    on = Data.from_design(layout.design(X), y, Y)  # through CLL: the combined kernel
    assert on.design.combined(Y) is not None
    _close(*CLL(on, layout.n_rows, two_class=False)(Phi), *CLL(Data.from_rows(layout.rows(X), y, Y), layout.n_rows,
                                                            two_class=False)(Phi))


@pytest.mark.parametrize("n", [2, 3])
def test_combined_kernels_touch_only_the_rows_the_loss_has(problem, n, monkeypatch):
    """The loss holds the trained rows of ``Phi`` only (``CLL(data, layout.n_trained)``, as ``engine.fit`` builds it),
    while a combined table lists every value combination of its attributes, so entries name subsets' unseen rows
    (beyond ``n_trained``). Run as Python (every compiled function of the module replaced by its ``py_func``: every
    index checked) on ``n_trained`` rows, the kernels (per evaluation, with stored keys, any number of classes) read
    and write within them and equal the per-subset kernels; compiled, they crashed (syncon's DBL3, 34,220 triples)."""
    Y, X, y, _, _, layouts, _ = problem
    layout, gen = layouts[n]
    nt = layout.n_trained
    grp = sd.SubsetGroups(layout.lookup)
    assert n < 3 or (grp.entry_rows >= nt).any()  # entries built from unseen rows (n = 3)
    data = Data.from_design(layout.design(X, combine=False), y, Y)
    design, arrays = data.design, data.design.lookup.kernel_arrays()
    Phi = np.ascontiguousarray(_phi(layout, gen)[:nt])
    D = np.ascontiguousarray(Phi[:, 1] - Phi[:, 0])
    refs = {}
    for grad in (True, False):  # compiled references first
        G_ref = np.zeros((nt, Y) if grad else (1, 1))
        f_soft = sd._subset_cll(design.codes, data.C, data.csum, Phi, G_ref, grad, 64, *arrays)
        refs["softmax", grad] = f_soft, G_ref
        if Y == 2:
            g_ref = np.zeros(nt if grad else 1)
            refs["two", grad] = sd._subset_cll2(design.codes, data.C1, data.csum, D, g_ref, grad, 64, *arrays), g_ref
    keys = _key_table(design, grp, 64, np.int32)  # compiled: the keys are within the tables (asserted by their test)
    for name in dir(sd):
        if hasattr(getattr(sd, name), "py_func"):
            monkeypatch.setattr(sd, name, getattr(sd, name).py_func)
    for grad in (True, False):
        G = np.zeros((nt, Y) if grad else (1, 1))
        f = sd._grouped_cll(design.codes, data.C, data.csum, Phi, G, grad, 64, *grp.arrays())
        _close(f, G, *refs["softmax", grad])
        if Y == 2:
            g = np.zeros(nt if grad else 1)
            f = sd._grouped_cll2(design.codes, data.C1, data.csum, D, g, grad, 64, 8, *grp.arrays())
            _close(f, g, *refs["two", grad])
            g = np.zeros(nt if grad else 1)
            f = sd._keyed_cll2(keys, data.C1, data.csum, D, g, grad, 64, 8, grp.table_off, grp.entry_start,
                               grp.entry_n, grp.entry_rows, None)
            _close(f, g, *refs["two", grad])


def test_combined_tables_only_where_they_apply(problem, monkeypatch):
    """``combine``: the combined kernel when every subset is dense, every code known and the groups combine; the
    per-subset kernels otherwise (``combine=False``, an unknown code, a binary-search subset, too few combine, tables
    beyond the budget)."""
    Y, X, y, Xt, yt, layouts, cards = problem
    if Y != 2:
        pytest.skip("two classes")
    layout, gen = layouts[2]
    calls = []
    grouped = sd._grouped_cll2
    monkeypatch.setattr(sd, "_grouped_cll2", lambda *a: calls.append(a[5]) or grouped(*a))
    Phi = _phi(layout, gen)
    ref = CLL(Data.from_rows(layout.rows(X), y, 2), layout.n_rows)(Phi)
    on = Data.from_design(layout.design(X), y, 2)  # the default: combined
    assert on.design.combine is ENGINE["combine_subsets"] is True and on.design.combined() is not None
    assert on.design.combined().n_groups <= sd.GROUP_RATIO * layout.lookup.n_subsets
    _close(*CLL(on, layout.n_rows)(Phi), *ref)
    assert calls == [True]
    assert on.subset(np.arange(10)).design.combine  # minibatches keep the setting
    off = Data.from_design(layout.design(X, combine=False), y, 2)
    f, G = CLL(off, layout.n_rows)(Phi)
    assert f == ref[0] and calls == [True]
    assert layout.design(Xt).combined() is None  # unknown codes
    assert SubsetLayout(layout.scorer, dense_budget=200).design(X).combined() is None  # binary search
    need = 16 * on.design.combined().table_off[-1] + on.design.combined().entry_rows.nbytes
    monkeypatch.setattr(sd, "GROUP_BUDGET", need)  # (a fresh lookup: the groups are built once per lookup)
    assert SubsetLayout(layout.scorer).design(X).combined() is not None
    monkeypatch.setattr(sd, "GROUP_BUDGET", need - 1)  # beyond the budget
    assert SubsetLayout(layout.scorer).design(X).combined() is None
    monkeypatch.setattr(sd, "GROUP_BUDGET", 2**40)
    assert SubsetLayout(layout.scorer).design(X).combined(values=2**30) is None  # (budget counted per value)
    monkeypatch.setattr(sd, "GROUP_KEYS", 1)  # nothing combines
    assert SubsetLayout(layout.scorer).design(X).combined() is None
    monkeypatch.setattr(sd, "GROUP_KEYS", 729)
    monkeypatch.setattr(sd, "GROUP_RATIO", 0.0)  # too few combine
    assert SubsetLayout(layout.scorer).design(X).combined() is None


@pytest.mark.parametrize("param", ["weighted", "discriminative"])
def test_combined_fit_ends_where_the_exact_order_does(problem, param):
    """A whole DBL² / LR² fit with the authors' penalty, converged as far as L-BFGS goes (no relative stop): the
    combined tables (the default) and the row table's order (``combine_subsets`` false) end at the same objective to
    1e-12 relative and predict the same (two and three classes).

    The training NLL alone agrees to ~4e-9 only: at the penalized optimum it moves at first order with ``x``, and
    the exact order's own fits with 7 and 10 L-BFGS corrections differ by as much (1e-9 to 9e-9 here)."""
    Y, X, y, Xt, _, _, cards = problem
    opts = {"maxiter": 5000, "ftol": 0.0, "gtol": 1e-10}
    fits = [BNClassifier(structure="anje", n=2, param=param, init="zeros", optimizer="lbfgs", reg="rows", lam=0.01,
                         discretize=False, cardinalities=cards,
                         optimizer_options={**opts, "combine_subsets": c}).fit(X, y) for c in (True, False)]
    a, b = (f.scorer_ for f in fits)
    assert fits[0].n_iter_ > 100 and fits[1].n_iter_ > 100
    assert a.trace[-1]["obj"] == pytest.approx(b.trace[-1]["obj"], rel=1e-12)
    assert a.train_cll == pytest.approx(b.train_cll, rel=2e-8)
    np.testing.assert_allclose(fits[0].predict_proba(Xt), fits[1].predict_proba(Xt), atol=1e-4)
    np.testing.assert_array_equal(fits[0].predict(Xt), fits[1].predict(Xt))


# ---------------------------------------------------------------- stored group keys (SubsetDesign.group_keys)
def _key_table(design, grp, chunk, dtype, local=False):
    """Every design row's key in every combined table: the entry in the concatenated tables, or within its group's
    table (``local``)."""
    keys = np.zeros((-(-design.n // chunk), grp.n_groups, chunk + sd.TABLE_PAD), dtype)
    base = np.zeros_like(grp.table_off) if local else grp.table_off
    sd._group_key_table(design.codes, chunk, grp.attrs, grp.strides, grp.n_attrs, base, keys)
    return keys


@pytest.mark.parametrize("n", [1, 2, 3])
def test_keyed_kernel_is_the_grouped_kernel_bit_for_bit(problem, n):
    """The combined-table kernel with the design rows' table entries stored (uint16 and int32; in the concatenated
    tables or within each group's, with the groups' offsets) gives the numbers of
    the one that finds them from the codes, bit for bit: training codes (compressed and not), codes with unseen
    combinations, any table bound, block size and tile, with and without gradient, a gradient not starting at 0."""
    Y, X, y, Xt, yt, layouts, cards = problem
    if Y != 2:
        pytest.skip("two classes")
    layout, gen = layouts[n]
    known = np.clip(Xt, 0, cards - 1)
    g0 = np.random.default_rng(3).standard_normal(layout.n_rows)
    for codes, yy, compress in ((X, y, True), (X, y, False), (known, yt, True)):
        data, D = _two_class_args(layout, gen, codes, yy, compress=compress)
        design = data.design
        for max_keys in (1, 8, 64, sd.GROUP_KEYS):
            grp = sd.SubsetGroups(design.lookup, max_keys)
            tables = (grp.table_off, grp.entry_start, grp.entry_n, grp.entry_rows)
            for chunk, tile in ((1, 1), (5, 3), (64, 64), (10_000, 2)):
                for dtype, local in ((np.uint16, False), (np.int32, False), (np.uint16, True)):
                    keys = _key_table(design, grp, chunk, dtype, local)
                    off = grp.table_off if local else None
                    assert keys[:, :, chunk:].sum() == 0  # the padding is never written
                    for grad, start in ((True, None), (False, None), (True, g0)):
                        g_ref = np.zeros(layout.n_rows if grad else 1) if start is None else start.copy()
                        g = g_ref.copy()
                        f_ref = sd._grouped_cll2(design.codes, data.C1, data.csum, D, g_ref, grad, chunk, tile,
                                                 *grp.arrays())
                        f = sd._keyed_cll2(keys, data.C1, data.csum, D, g, grad, chunk, tile, *tables, off)
                        assert f == f_ref
                        np.testing.assert_array_equal(g, g_ref)


def _evaluated_twice(monkeypatch, layout, gen, X, y):
    """Two evaluations of a two-class ``CLL`` at the same point, checked equal bit for bit: the arguments of every
    call of the keyed kernel (the first evaluation finds the keys from the codes, later ones read them stored)."""
    calls = []
    keyed = sd._keyed_cll2
    monkeypatch.setattr(sd, "_keyed_cll2", lambda *a: calls.append(a) or keyed(*a))
    cll = CLL(Data.from_design(layout.design(X), y, 2), layout.n_rows)
    Phi = _phi(layout, gen)
    f1, G1 = cll(Phi)
    f2, G2 = cll(Phi)
    assert f1 == f2
    np.testing.assert_array_equal(G1, G2)
    return calls


def test_group_keys_stored_from_the_second_evaluation(problem, monkeypatch):
    """``group_keys``: nothing at a design's first evaluation (a minibatch's only one), the keys from the second on
    for the same groups and block size (uint16: these tables have fewer than 65,536 entries), nothing beyond
    ``KEY_BUDGET``; through ``CLL`` the second evaluation runs the keyed kernel and gives the first's numbers bit for
    bit."""
    Y, X, y, _, _, layouts, _ = problem
    if Y != 2:
        pytest.skip("two classes")
    layout, gen = layouts[2]
    design = layout.design(X)
    grp = design.combined()
    assert grp is not None
    assert design.group_keys(grp, 64) is None
    keys = design.group_keys(grp, 64)
    assert grp.key_offsets is None  # at most 65,536 entries in all: keys in the concatenated tables
    assert grp.key_dtype == np.uint16
    assert keys.dtype == np.uint16 and keys.shape == (-(-design.n // 64), grp.n_groups, 64 + sd.TABLE_PAD)
    np.testing.assert_array_equal(keys, _key_table(design, grp, 64, np.int32))
    assert design.group_keys(grp, 64) is keys
    assert design.group_keys(grp, 32) is None  # another block size: first call again
    assert design.group_keys(grp, 32).shape[2] == 32 + sd.TABLE_PAD
    monkeypatch.setattr(sd, "KEY_BUDGET", keys.nbytes - 1)
    small = layout.design(X)
    assert small.group_keys(grp, 64) is None and small.group_keys(grp, 64) is None  # beyond the budget
    monkeypatch.setattr(sd, "KEY_BUDGET", keys.nbytes)
    exact = layout.design(X)
    assert exact.group_keys(grp, 64) is None and exact.group_keys(grp, 64) is not None
    calls = _evaluated_twice(monkeypatch, layout, gen, X, y)
    assert [a[5] for a in calls] == [True]  # the second evaluation, with the gradient


def test_stored_keys_are_uint16_within_their_group_whatever_the_tables_total(monkeypatch):
    """Tables of more than 65,536 entries in all (36 binary attributes, triples): every stored key is its entry
    within its own group's table, as uint16; the keyed second evaluation gives the first's numbers (keys found from
    the codes) bit for bit."""
    rng = np.random.default_rng(5)
    X = rng.integers(0, 2, (400, 36))
    y = (X[:, :3].sum(axis=1) + rng.integers(0, 2, 400) >= 2).astype(int)
    cards = np.full(36, 2)
    scorer = BNClassifier(structure="anje", n=3, discretize=False, cardinalities=cards).fit(X, y).scorer_
    layout, gen = factor_layout(scorer, X, "weighted")[:2]
    grp = layout.design(X).combined()
    assert grp is not None and grp.table_off[-1] > 2**16
    assert grp.key_dtype == np.uint16 and np.diff(grp.table_off).max() <= 2**16
    ((keys, *args),) = _evaluated_twice(monkeypatch, layout, gen, X, y)
    assert keys.dtype == np.uint16 and np.array_equal(args[-1], grp.table_off)  # relative to the groups' offsets
    sizes = np.diff(grp.table_off)
    assert (keys.max(axis=(0, 2)) < sizes).all() and keys.max() >= 256  # within each group's table


@pytest.mark.parametrize("param", ["weighted", "discriminative"])
def test_fit_with_stored_keys_is_the_same_fit(problem, param, monkeypatch):
    """A whole DBL² / LR² fit with the authors' penalty: with the keys stored (the default) and found at every
    evaluation (``KEY_BUDGET`` 0), the same iterates: the same final ``x`` bit for bit, iterations and trace."""
    Y, X, y, _, _, _, cards = problem
    if Y != 2:
        pytest.skip("two classes")

    def fit():
        return BNClassifier(structure="anje", n=2, param=param, init="zeros", optimizer="lbfgs", reg="rows",
                            lam=0.01, discretize=False, cardinalities=cards,
                            optimizer_options={"maxiter": 300, "history": 5}).fit(X, y)

    a = fit()
    monkeypatch.setattr(sd, "KEY_BUDGET", 0)
    b = fit()
    assert a.n_iter_ == b.n_iter_ > 20
    assert [t["obj"] for t in a.scorer_.trace] == [t["obj"] for t in b.scorer_.trace]
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


@pytest.mark.parametrize("budget", [None, 0, 200], ids=["dense", "binary-search", "mixed"])
def test_softmax_kernel_at_any_block_size_is_the_reference_bit_for_bit(problem, budget):
    """The per-subset softmax kernel goes subset by subset over a block of design rows in the gather and again in the
    scatter (finding the subset's rows of the block again from the codes): at every block size (one row, a few, all
    and more than all), with dense maps, binary search or both, on training codes and on codes with unknown and
    out-of-range values, its NLL and gradient are the materialized table's bit for bit (one design row per instance,
    in order), and the block size the design picks is one of them."""
    Y, X, y, Xt, yt, layouts, _ = problem
    layout, gen = layouts[3]
    if budget is not None:
        layout = SubsetLayout(layout.scorer, dense_budget=budget)
    Phi = _phi(layout, gen)
    for codes, labels in ((X, y), (Xt, yt)):
        ref = Data.from_rows(layout.rows(codes), labels, Y, compress=False)
        f_ref, G_ref = CLL(ref, layout.n_rows, two_class=False)(Phi)
        design = layout.design(codes, combine=False)
        data = Data.from_design(design, labels, Y, compress=False)
        arrays = design.lookup.kernel_arrays()
        for chunk in (1, 5, 64, sd.score_block_rows(Y), 10_000):
            G = np.zeros_like(G_ref)
            f = sd._subset_cll(design.codes, data.C, data.csum, Phi, G, True, chunk, *arrays)
            assert f == f_ref
            np.testing.assert_array_equal(G, G_ref)
            G = np.zeros((1, 1))
            assert sd._subset_cll(design.codes, data.C, data.csum, Phi, G, False, chunk, *arrays) == f_ref


def test_dense_kernel_reads_and_writes_only_the_rows_it_is_given(problem):
    """A fit hands the two-class kernels the trained rows only (score differences and gradient stop before the
    unseen rows, to which the dense maps of unseen keys point). The dense kernel, run as plain Python (where an
    index out of range raises), reads and writes within them, and gives the compiled kernel's numbers."""
    Y, X, y, _, _, layouts, _ = problem
    if Y != 2:
        pytest.skip("two classes")
    layout, gen = layouts[3]
    data, D_all = _two_class_args(layout, gen, X, y)
    design, arrays = data.design, data.design.lookup.kernel_arrays()
    n_trained = design.lookup.unseen_base
    assert n_trained < layout.n_rows and (design.lookup.dense_rows >= n_trained).any()  # unseen keys exist
    D = np.ascontiguousarray(D_all[:n_trained])
    g_py, g = np.zeros(n_trained), np.zeros(n_trained)
    f_py = sd._subset_cll2_dense.py_func(design.codes, data.C1, data.csum, D, g_py, True, 16, 3, 0, *arrays)
    f = sd._subset_cll2_dense(design.codes, data.C1, data.csum, D, g, True, 16, 3, 0, *arrays)
    g_all = np.zeros(layout.n_rows)
    f_all = sd._subset_cll2_dense(design.codes, data.C1, data.csum, D_all, g_all, True, 16, 3, KEEP[1], *arrays)
    assert f_py == f == f_all
    np.testing.assert_array_equal(g_py, g)
    np.testing.assert_array_equal(g, g_all[:n_trained])
    assert not g_all[n_trained:].any()

"""The small fit's fixed costs cut without changing what is computed (issue 39, third pass): each against the former computation."""

import numpy as np
import pytest

from bncbench.engine.params import same_point


def _former_same_point(a, b):
    return a.shape == b.shape and (a.size == 0 or (a.flat[0] == b.flat[0] and bool((a == b).all())))


@pytest.mark.parametrize("n", [0, 1, 5, 33, 512, 513, 5000])
def test_same_point_as_before(n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n)
    cases = [(a, a.copy()), (a, a[::-1].copy()), (a, a + 1.0), (a, a.astype(np.float32)), (a, a.reshape(1, -1))]
    if n:
        for i in {0, n // 2, n - 1}:
            b = a.copy()
            b[i] = np.nextafter(b[i], np.inf)
            cases.append((a, b))
            z, mz = a.copy(), a.copy()
            z[i], mz[i] = 0.0, -0.0  # equal values, different bits
            cases.append((z, mz))
            nan = a.copy()
            nan[i] = np.nan  # NaN is unequal to itself, as in np.array_equal
            cases.append((nan, nan.copy()))
        cases.append((a[::2], a[::2].copy()))  # a strided view
    for x, y in cases:
        assert same_point(x, y) == _former_same_point(x, y) == np.array_equal(x, y)


def _former_split(y, fraction, seed=0):
    """``validation.split`` before the compiled pass (the reference)."""
    y = np.asarray(y)
    rng = np.random.default_rng(int(seed))
    perm = rng.permutation(y.size)
    order = perm[np.argsort(y[perm], kind="stable")]
    counts = np.bincount(y)
    rank = np.arange(y.size) - np.repeat(np.cumsum(counts) - counts, counts)
    take = np.minimum(np.rint(fraction * counts), np.maximum(counts - 1, 0)).astype(np.int64)
    held = np.sort(order[rank < np.repeat(take, counts)])
    return np.setdiff1d(np.arange(y.size), held), held


def test_validation_split_as_before():
    from bncbench.engine.validation import split
    from bncbench.errors import BNCBenchError

    rng = np.random.default_rng(0)
    for t in range(300):
        n = int(rng.integers(2, 400))
        y = rng.integers(0, int(rng.integers(1, 12)), n)
        if t % 3 == 0:
            y = np.sort(y)
        if t % 5 == 0:
            y = y.astype(np.int32)
        fraction = float(rng.choice([0.1, 0.2, 0.25, 0.5, 0.05, 0.9, rng.uniform(0.01, 0.99)]))
        seed = int(rng.integers(0, 5))
        want = _former_split(y, fraction, seed)
        if want[1].size == 0:  # nothing held out: refused, as before
            with pytest.raises(BNCBenchError):
                split(y, fraction, seed)
            continue
        got = split(y, fraction, seed)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
            assert g.dtype == np.intp
    with pytest.raises(ValueError):
        split(np.array([0, 1, -1, 1]), 0.5)
    with pytest.raises(TypeError):
        split(np.array([0.0, 1.0, 1.0, 0.0]), 0.5)


def _former_error_and_nll(S, y):
    """``Validation.__call__``'s error rate and NLL before the compiled passes (the reference)."""
    from bncbench.engine.validation import logsumexp_rows

    err = float(np.count_nonzero(np.argmax(S, axis=1) != y) / y.size)
    nll = float((logsumexp_rows(S) - S[np.arange(y.size), y]).sum())
    return err, nll


@pytest.mark.parametrize("K", [2, 3, 4, 7, 8, 9, 10, 17])
def test_validation_error_and_nll_as_before_to_the_bit(K):
    from bncbench.engine.validation import error_and_nll

    rng = np.random.default_rng(K)
    for n in (1, 5, 8, 9, 129, 300, 1000):
        for scale in (1e-3, 1.0, 50.0):
            S = scale * rng.standard_normal((n, K))
            S[: n // 3, 1] = S[: n // 3, 0]  # ties for the maximum
            S[n // 3 : n // 2] = np.round(S[n // 3 : n // 2])  # more ties
            y = rng.integers(0, K, n)
            assert error_and_nll(S, y) == _former_error_and_nll(S, y)


def test_validation_of_a_whole_fit_as_before(monkeypatch):
    """An early-stopped MM fit: the same trace (held-out error and NLL of every iterate) and parameters."""
    from bncbench import BNClassifier
    from bncbench.data.sources import random_bnc, sample_random_bnc
    from bncbench.engine import validation

    net = random_bnc(5, (2, 4), p=1, n_classes=4, seed=2)
    X, y = sample_random_bnc(net, 500, seed=3)
    kw = dict(structure="nb", param="extended", objective="margin", optimizer="cg", margin_lam=0.05, kappa=0.25,
              optimizer_options={"validation_fraction": 0.3, "patience": 4})
    new = BNClassifier(**kw).fit(X, y)
    monkeypatch.setattr(validation, "error_and_nll", _former_error_and_nll)
    old = BNClassifier(**kw).fit(X, y)
    strip = lambda tr: [{k: v for k, v in r.items() if k != "time"} for r in tr]  # noqa: E731
    assert strip(new.trace_) == strip(old.trace_)
    np.testing.assert_array_equal(new.scorer_.x, old.scorer_.x)


@pytest.mark.parametrize("outside", [1, 2])
def test_blas_limited_during_the_fit_and_restored(outside):
    """The limit is skipped only when the BLAS runs that many threads already: inside 1 thread, outside as before."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from bncbench import BNClassifier
    from bncbench.engine import optimize
    from bncbench.engine.fit import build_problem

    def blas():
        return max((i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"), default=1)

    rng = np.random.default_rng(0)
    X, y = rng.integers(0, 3, (200, 4)), rng.integers(0, 2, 200)
    tables = BNClassifier(structure="nb", discretize=False, cardinalities=[3] * 4).fit(X, y).tables_
    _, pmap, problem = build_problem(tables, X, y, param="discriminative")
    seen, fg = [], problem.fg

    def spy(x):
        seen.append(blas())
        return fg(x)

    problem.fg = spy
    with threadpool_limits(limits=outside, user_api="blas"):
        before = blas()
        optimize("cg", problem, pmap.x0(), {"maxiter": 3})
        assert blas() == before
    assert seen and set(seen) == {1}


@pytest.mark.parametrize("method", ["cg", "bfgs"])
def test_value_and_gradient_apart_give_scipys_iterates_as_before(monkeypatch, method):
    """scipy's CG and BFGS given the value and the gradient as two functions: the same fit, to the bit, as with
    ``jac=True`` (the former call), early stopping included."""
    from bncbench import BNClassifier
    from bncbench.data.sources import random_bnc, sample_random_bnc
    from bncbench.engine import optim

    net = random_bnc(5, (2, 4), p=1, n_classes=3, seed=7)
    X, y = sample_random_bnc(net, 400, seed=8)
    kw = dict(structure="tan", param="extended", objective="margin", optimizer=method, margin_lam=0.05, kappa=0.25,
              optimizer_options={"validation_fraction": 0.2, "patience": 6})
    new = BNClassifier(**kw).fit(X, y)
    real = optim.minimize

    def former(fun, x0, jac=None, **rest):  # the former call: one function giving both, jac=True
        return real(lambda x: (fun(x), jac(x)), x0, jac=True, **rest)

    monkeypatch.setattr(optim, "minimize", former)
    old = BNClassifier(**kw).fit(X, y)
    strip = lambda tr: [{k: v for k, v in r.items() if k != "time"} for r in tr]  # noqa: E731
    assert strip(new.trace_) == strip(old.trace_)
    np.testing.assert_array_equal(new.scorer_.x, old.scorer_.x)
    assert new.scorer_.n_fev == old.scorer_.n_fev


def test_integer_array_features_as_validate_data_sets_them():
    """An integer ndarray's fit sets n_features_in_ and drops a former table's feature_names_in_, as
    scikit-learn's validate_data(reset=True) does (the path it replaces)."""
    import pandas as pd
    from sklearn.utils.validation import validate_data

    from bncbench import BNClassifier
    from bncbench.model.classifier import _reset_features

    rng = np.random.default_rng(0)
    X, y = rng.integers(0, 3, (60, 4)), rng.integers(0, 2, 60)
    frame = pd.DataFrame(X, columns=list("abcd"))
    for first in (None, frame):
        a, b = BNClassifier(), BNClassifier()
        if first is not None:
            a.fit(first, y)
            b.fit(first, y)
            assert list(a.feature_names_in_) == list("abcd")
        validate_data(a, X[:, :3], reset=True, skip_check_array=True)
        _reset_features(b, X[:, :3])
        assert a.n_features_in_ == b.n_features_in_ == 3
        assert hasattr(a, "feature_names_in_") == hasattr(b, "feature_names_in_") == False  # noqa: E712
    clf = BNClassifier().fit(frame, y).fit(X, y)
    assert clf.n_features_in_ == 4 and not hasattr(clf, "feature_names_in_")


def test_constraint_checks_as_scikit_learns():
    """check_constraints accepts and refuses as scikit-learn's validate_parameter_constraints (the former call), the
    same message; a registry's names are re-read (a removed name is refused after it was accepted)."""
    from sklearn.utils._param_validation import InvalidParameterError, validate_parameter_constraints

    from bncbench.components import STRUCTURES
    from bncbench.model.classifier import _hyperparameters
    from bncbench.registry import ParameterError
    from bncbench.validate import check_constraints

    spec = _hyperparameters()
    cons = {name: c for name, (_, c) in spec.items()}
    good = {name: d for name, (d, _) in spec.items()}
    bad = {"k": [-1, 1.5, "2", None, True], "m": [-1.0, "x", float("nan")], "structure": ["nope", 3],
           "random_state": [-3, 2.0], "missing": ["zero", None], "discretize": ["yes", 2]}
    for _ in range(2):  # the second time from what the first remembered
        check_constraints(cons, good, "BNClassifier")
        for name, values in bad.items():
            for v in values:
                vals = {**good, name: v}
                try:
                    validate_parameter_constraints(cons, vals, caller_name="BNClassifier")
                except InvalidParameterError as exc:
                    with pytest.raises(ParameterError) as got:
                        check_constraints(cons, vals, "BNClassifier")
                    assert str(got.value) == " ".join(str(exc).split())
                else:  # accepted by scikit-learn: accepted here too
                    check_constraints(cons, vals, "BNClassifier")
    check_constraints(cons, {**good, "structure": "tan"}, "BNClassifier")
    entry = STRUCTURES._items.pop("tan")
    try:
        with pytest.raises(ParameterError):
            check_constraints(cons, {**good, "structure": "tan"}, "BNClassifier")
    finally:
        STRUCTURES._items["tan"] = entry


@pytest.mark.parametrize("structure", ["nb", "tan", "kdb"])
def test_extended_untrained_rows_as_before(structure):
    """The untrained rows of the start: none without back-off blocks (no map of every row for an empty slice);
    with them, the map of every row as before."""
    from bncbench import BNClassifier
    from bncbench.data.sources import random_bnc, sample_random_bnc
    from bncbench.engine.design import Layout
    from bncbench.engine.params import Extended
    from tests.test_block_softmax import _former_map

    from bncbench.engine.params import _blocks

    net = random_bnc(6, (2, 4), p=2, n_classes=3, seed=1)
    X, y = sample_random_bnc(net, 150, seed=2)
    kw = {"k": 2} if structure == "kdb" else {}
    tables = BNClassifier(structure=structure, discretize=False, **kw).fit(X, y).tables_
    cols = BNClassifier(structure=structure, discretize=False, **kw).fit(X, y).columns_
    layout = Layout(tables, X[:, cols])
    pm = Extended(layout, layout.generative_phi(1.0), "generative")
    for start in (pm.generative(), pm.origin()):
        assert start.rest.shape == (layout.n_rows - layout.n_trained, layout.n_classes)
    bs = layout.block_start
    want = _former_map(pm._beta0, bs, _blocks(bs, layout.n_rows))[layout.n_trained :]
    np.testing.assert_array_equal(pm.generative().rest, want)
    if structure == "nb":
        assert layout.n_rows == layout.n_trained
    else:  # back-off blocks that no training row reaches: untrained rows
        assert layout.n_rows > layout.n_trained


def test_registry_name_constraint_as_strOptions():
    """A registry's names constraint accepts what StrOptions over its names accepts (plug-ins included)."""
    from sklearn.utils._param_validation import StrOptions

    from bncbench.components import ESTIMATORS, OPTIMIZERS, STRUCTURES
    from bncbench.registry import options

    for reg in (STRUCTURES, ESTIMATORS, OPTIMIZERS):
        lazy, plain = options(reg), StrOptions(set(reg.names()))
        for v in [*reg.names(), "nope", "", None, 3, b"nb", "NB", "tan "]:
            assert lazy.is_satisfied_by(v) == plain.is_satisfied_by(v)


@pytest.mark.parametrize("structure", ["nb", "tan"])
def test_layout_rows_compiled_as_numpy(structure):
    """Layout.rows of the factors without parents, compiled, equals the numpy form (float codes still take it):
    out-of-range and negative codes, int32 and int64 tables."""
    from bncbench import BNClassifier
    from bncbench.data.sources import random_bnc, sample_random_bnc
    from bncbench.engine.design import Layout

    net = random_bnc(7, (2, 5), p=1, n_classes=3, seed=3)
    X, y = sample_random_bnc(net, 300, seed=4)
    clf = BNClassifier(structure=structure, discretize=False).fit(X, y)
    layout = Layout(clf.tables_, X[:, clf.columns_])
    rng = np.random.default_rng(5)
    T = X[:, clf.columns_].copy()
    T[rng.random(T.shape) < 0.1] = -1
    T[rng.random(T.shape) < 0.1] = 9
    for dtype in (np.int32, np.int64):
        got = layout.rows(T, dtype=dtype)
        want = layout.rows(T.astype(float), dtype=dtype)  # the numpy form
        assert got.dtype == want.dtype == dtype
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(layout.rows(T.astype(np.int32), dtype=dtype), want)


@pytest.mark.parametrize("backoff", ["per_class", "any_class"])
def test_parentless_generative_phi_as_per_factor(monkeypatch, backoff):
    """NB's generative Phi computed for all factors at once equals the per-factor path to the bit (m = 0 with unseen
    values and classes too: -inf and NaN floored)."""
    from bncbench import BNClassifier
    from bncbench.engine.design import Layout

    rng = np.random.default_rng(11)
    X = rng.integers(0, 5, (120, 6))
    X[:, 2] = np.minimum(X[:, 2], 2)  # values never seen (cardinality 5 declared)
    y = rng.integers(0, 3, 120)
    y[X[:, 0] == 4] = 0  # class 1, 2 never with X0 = 4
    for m in (0.0, 0.3, 1.0, 7.0):
        clf = BNClassifier(structure="nb", discretize=False, cardinalities=[5] * 6, m=m, backoff=backoff).fit(X, y)
        layout = Layout(clf.tables_, X[:, clf.columns_])
        assert layout._parentless_log_theta(m) is not None
        new = layout.generative_phi(m)
        with monkeypatch.context() as mp:
            mp.setattr(Layout, "_parentless_log_theta", lambda self, m: None)
            old = layout.generative_phi(m)
        np.testing.assert_array_equal(new, old)
    tan = BNClassifier(structure="tan", discretize=False).fit(X, y)
    assert Layout(tan.tables_, X[:, tan.columns_])._parentless_log_theta(1.0) is None  # parents: the general path


def _former_layout_init(self, tables, codes):
    """``Layout.__init__`` before the vectorized row attributes (the reference)."""
    self.tables = tables
    codes = np.asarray(codes)
    factors = tables.factors
    self.n_attributes = len(factors)
    self.n_factors = 1 + self.n_attributes
    self.n_classes = tables.n_classes
    used = [[np.zeros(lv.n_keys, bool) for lv in f.levels] for f in factors]
    for fi, f in enumerate(factors):
        used[fi][-1][:] = True
        if len(f.levels) == 1:
            continue
        for lev, pos, _ in self._resolve(f, codes):
            used[fi][lev][pos] = True
    self.block_row = [[np.full(lv.n_keys, -1, np.int64) for lv in f.levels] for f in factors]
    segs = []
    for trained in (True, False):
        for fi, f in enumerate(factors):
            for lev in range(len(f.levels)):
                pos = np.flatnonzero(used[fi][lev] == trained)
                if pos.size:
                    segs.append((fi, lev, pos, trained))
    start = 1
    rf, rv, rl, bs = [np.zeros(1, np.int64)], [np.zeros(1, np.int64)], [np.zeros(1, np.int64)], []
    self.segments = []
    n_trained = 1
    for fi, lev, pos, trained in segs:
        card = factors[fi].card
        rows = start + np.arange(pos.size, dtype=np.int64) * card
        self.block_row[fi][lev][pos] = rows
        self.segments.append((fi, lev, pos, start, card))
        bs.append(rows)
        n = pos.size * card
        rf.append(np.full(n, fi + 1, np.int64))
        rv.append(np.tile(np.arange(card, dtype=np.int64), pos.size))
        rl.append(np.full(n, lev, np.int64))
        start += n
        if trained:
            n_trained = start
    self.n_rows = start
    self.n_trained = n_trained
    self.row_factor = np.concatenate(rf)
    self.row_value = np.concatenate(rv)
    self.row_level = np.concatenate(rl)
    self.block_start = np.concatenate(bs) if bs else np.zeros(0, np.int64)
    self.cards = np.array([f.card for f in factors], dtype=np.int64)
    self.value_offset = np.zeros(self.n_attributes + 1, np.int64)
    np.cumsum(self.cards, out=self.value_offset[1:])


@pytest.mark.parametrize("structure,kw", [("nb", {}), ("tan", {}), ("kdb", {"k": 2}), ("skdb", {"k": 1})])
def test_layout_as_before(structure, kw):
    """Every attribute of the layout equals the former construction's (rows, blocks, segments, back-off blocks)."""
    from bncbench import BNClassifier
    from bncbench.data.sources import random_bnc, sample_random_bnc
    from bncbench.engine.design import Layout

    net = random_bnc(7, (2, 5), p=2, n_classes=3, seed=12)
    X, y = sample_random_bnc(net, 200, seed=13)
    clf = BNClassifier(structure=structure, discretize=False, **kw).fit(X, y)
    codes = X[:, clf.columns_]
    new = Layout(clf.tables_, codes)
    old = Layout.__new__(Layout)
    _former_layout_init(old, clf.tables_, codes)
    for name in ("n_rows", "n_trained", "n_factors", "n_attributes", "n_classes"):
        assert getattr(new, name) == getattr(old, name)
    for name in ("row_factor", "row_value", "row_level", "block_start", "cards", "value_offset"):
        a, b = getattr(new, name), getattr(old, name)
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    for a, b in zip(new.block_row, old.block_row, strict=True):
        for u, v in zip(a, b, strict=True):
            np.testing.assert_array_equal(u, v)
    assert len(new.segments) == len(old.segments)
    for s, t in zip(new.segments, old.segments):
        assert s[0] == t[0] and s[1] == t[1] and s[3:] == t[3:] and s[2].dtype == t[2].dtype
        np.testing.assert_array_equal(s[2], t[2])
    np.testing.assert_array_equal(new.rows(codes), old.rows(codes))


def _former_unique_rows(idx):
    N, F = idx.shape
    code = np.zeros(N, np.int64)
    space = 1
    for c in range(F):
        v = idx[:, c].astype(np.int64) + 1
        card = int(v.max()) + 1 if N else 1
        if space * card >= (1 << 62):
            _, code = np.unique(code, return_inverse=True)
            code = code.astype(np.int64).ravel()
            space = int(code.max()) + 1
        code = code * card + v
        space *= card
    return code


def test_unique_rows_as_before():
    """The compiled codes equal the numpy form's, the renumbering case (a code space past 2**62) included."""
    from bncbench.engine.row_table import unique_rows

    rng = np.random.default_rng(3)
    for N, F, high in [(0, 3, 5), (1, 1, 1), (200, 5, 7), (500, 12, 40), (300, 40, 3000), (100, 3, 2**40)]:
        idx = rng.integers(-1, high, (N, F)).astype(np.int64)
        for dt in (np.int32, np.int64) if high < 2**31 else (np.int64,):
            got = unique_rows(idx.astype(dt))
            assert got.dtype == np.int64
            np.testing.assert_array_equal(got, _former_unique_rows(idx.astype(dt)))

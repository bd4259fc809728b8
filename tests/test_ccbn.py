"""Discriminative parameter learning engine: gradients, optima, back-off, traces, optimizers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.special import logsumexp

from bncbench import BNClassifier
from bncbench.engine.fit import build_problem
from bncbench.bn.counts import mixed_radix
from bncbench.data.sources import random_bnc, sample_random_bnc
from bncbench.engine import CLL, Data
from bncbench.errors import BNCBenchError
from bncbench.harness.app import plan

CONF = Path(__file__).resolve().parents[1] / "conf"
STRUCTS = {"nb": dict(structure="nb"), "tan": dict(structure="tan"), "kdb2": dict(structure="kdb", k=2),
           "kdb1": dict(structure="kdb", k=1)}
MAPS = [("discriminative", 4), ("extended", 4), ("weighted", 1), ("weighted", 2), ("weighted", 3), ("weighted", 4)]


def _data(n, seed=0, n_attr=5, card=(2, 3), n_classes=3, p=2, alpha=1.0):
    model = random_bnc(n_attr, card, p=p, n_classes=n_classes, alpha=alpha, seed=seed)
    X, y = sample_random_bnc(model, n, seed=seed + 1)
    return X, y, model.cards


@pytest.fixture(scope="module")
def small():
    return _data(300, seed=3)


def _tables(X, y, cards, struct):
    return BNClassifier(**STRUCTS[struct], discretize=False, cardinalities=cards).fit(X, y).tables_


def _fd_check(problem, x, rng, max_coords=40, h=1e-5):
    f, g = problem.fg(x)
    coords = np.arange(x.size) if x.size <= max_coords else rng.choice(x.size, max_coords, replace=False)
    fd = np.empty(coords.size)
    for j, c in enumerate(coords):
        e = np.zeros_like(x)
        e[c] = h
        fd[j] = (problem.f(x + e) - problem.f(x - e)) / (2 * h)
    # plus one random direction over all coordinates
    d = rng.standard_normal(x.size)
    dd = (problem.f(x + h * d) - problem.f(x - h * d)) / (2 * h)
    err = np.linalg.norm(g[coords] - fd) / max(np.linalg.norm(fd), 1e-12)
    err_dir = abs(g @ d - dd) / max(abs(dd), 1e-12)
    return err, err_dir


@pytest.mark.parametrize("struct", ["nb", "tan", "kdb2"])
@pytest.mark.parametrize("init", ["zeros", "generative"])
@pytest.mark.parametrize("param,level", MAPS)
def test_gradient_finite_differences(small, struct, init, param, level):
    X, y, cards = small
    tables = _tables(X, y, cards, struct)
    _, pmap, problem = build_problem(tables, X, y, param=param, init=init, level=level)
    rng = np.random.default_rng(7)
    for x in (pmap.x0(), pmap.x0() + 0.3 * rng.standard_normal(pmap.n_params)):
        err, err_dir = _fd_check(problem, x, rng)
        assert err < 1e-6, (err, err_dir)
        assert err_dir < 1e-6, (err, err_dir)


@pytest.mark.parametrize("struct", ["nb", "tan"])
@pytest.mark.parametrize("param,level", MAPS)
def test_gradient_finite_differences_two_classes(struct, param, level):
    X, y, cards = _data(300, seed=8, n_classes=2)
    tables = _tables(X, y, cards, struct)
    _, pmap, problem = build_problem(tables, X, y, param=param, init="generative", level=level)
    rng = np.random.default_rng(3)
    err, err_dir = _fd_check(problem, pmap.x0() + 0.3 * rng.standard_normal(pmap.n_params), rng)
    assert err < 1e-6 and err_dir < 1e-6, (err, err_dir)


@pytest.mark.parametrize("param,reg", [("discriminative", "l2"), ("extended", "l2"), ("weighted", "l2"),
                                       ("weighted", "l2_one")])
def test_gradient_regularized(small, param, reg):
    X, y, cards = small
    tables = _tables(X, y, cards, "tan")
    _, pmap, problem = build_problem(tables, X, y, param=param, init="generative", reg=reg, lam=0.7)
    rng = np.random.default_rng(1)
    x = pmap.x0() + 0.2 * rng.standard_normal(pmap.n_params)
    err, err_dir = _fd_check(problem, x, rng)
    assert err < 1e-6 and err_dir < 1e-6
    f_reg = problem.f(x)
    assert f_reg == pytest.approx(problem.nll(x) + 0.35 * np.sum((x - (1.0 if reg == "l2_one" else 0.0)) ** 2))


@pytest.mark.parametrize("struct", ["nb", "kdb2"])
def test_backends_and_compression_agree(small, struct):
    X, y, cards = small
    Xd = np.vstack([X, X[:100]])  # duplicates so compression merges rows
    yd = np.r_[y, y[:100]]
    tables = _tables(Xd, yd, cards, struct)
    layout, pmap, problem = build_problem(tables, Xd, yd, param="discriminative", init="generative")
    assert problem.cll.data.n < Xd.shape[0]
    Phi = pmap.phi(pmap.x0() + np.random.default_rng(0).standard_normal(pmap.n_params))
    idx = layout.rows(Xd)
    ref_nll, ref_G = CLL(Data.from_rows(idx, yd, 3, compress=False), layout.n_trained, "scipy")(Phi)
    # dense reference from first principles
    S = np.zeros((Xd.shape[0], 3))
    for f in range(idx.shape[1]):
        ok = idx[:, f] >= 0
        S[ok] += Phi[idx[ok, f]]
    dense_nll = -np.sum(S[np.arange(len(yd)), yd] - logsumexp(S, axis=1))
    assert ref_nll == pytest.approx(dense_nll, rel=1e-12)
    for backend in ("numba", "scipy"):
        for compress in (True, False):
            nll, G = CLL(Data.from_rows(idx, yd, 3, compress=compress), layout.n_trained, backend)(Phi)
            assert nll == pytest.approx(ref_nll, rel=1e-12)
            np.testing.assert_allclose(G, ref_G, rtol=1e-9, atol=1e-9)


@pytest.fixture(scope="module")
def convex_data():
    # many instances per parameter so that the optimum is finite
    return _data(4000, seed=11, n_attr=4, card=(2, 3), n_classes=2, p=1, alpha=2.0)


@pytest.mark.parametrize("struct", ["nb", "tan", "kdb1"])
def test_same_optimum_all_parameterizations(convex_data, struct):
    X, y, cards = convex_data
    clls = {}
    for param in ("discriminative", "extended", "weighted"):
        clf = BNClassifier(**STRUCTS[struct], param=param, init="zeros", discretize=False, cardinalities=cards,
                           optimizer_options={"stop": "paper", "maxiter": 3000}).fit(X, y)
        clls[param] = clf.train_cll_
        assert clf.train_cll_ == pytest.approx(-clf.trace_[-1]["nll"])
    ref = clls["discriminative"]
    for param, v in clls.items():
        assert abs(v - ref) <= 1e-5 * abs(ref), clls
    # and the discriminative optimum is better than the generative model's CLL
    gen = BNClassifier(**STRUCTS[struct], discretize=False, cardinalities=cards).fit(X, y)
    gen_cll = gen.predict_log_proba(X)[np.arange(len(y)), y].sum()
    assert ref > gen_cll


@pytest.mark.parametrize("n_classes", [3, 2])  # 2: the two-class kernel vs binary logistic regression
def test_nb_discriminative_is_logistic_regression(n_classes):
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import OneHotEncoder

    X, y, cards = _data(3000, seed=5, n_attr=5, card=(2, 4), n_classes=n_classes, p=1, alpha=2.0)
    clf = BNClassifier(structure="nb", param="discriminative", init="zeros", discretize=False,
                       cardinalities=cards, optimizer_options={"stop": "paper"}).fit(X, y)
    Z = OneHotEncoder(categories=[np.arange(c) for c in cards]).fit_transform(X)
    # penalty=None (deprecated in scikit-learn 1.8 in favour of C=inf: the same unpenalized model)
    lr = LogisticRegression(C=np.inf, tol=1e-10, max_iter=10000).fit(Z, y)
    lr_cll = lr.predict_log_proba(Z)[np.arange(len(y)), y].sum()
    ours = clf.predict_log_proba(X)[np.arange(len(y)), y].sum()
    assert ours == pytest.approx(clf.train_cll_, rel=1e-12)
    assert abs(ours - lr_cll) <= 1e-4 * abs(lr_cll), (ours, lr_cll)
    assert np.array_equal(clf.predict(X), lr.predict(Z))


@pytest.mark.parametrize("struct", ["nb", "tan"])
def test_weighted_levels_nested(struct):
    X, y, cards = _data(4000, seed=11, n_attr=4, card=(3, 4), n_classes=3, p=1, alpha=2.0)
    nll = []
    for level in (1, 2, 3, 4):
        clf = BNClassifier(**STRUCTS[struct], param="weighted", level=level, init="generative", discretize=False,
                           cardinalities=cards, optimizer_options={"stop": "paper", "maxiter": 3000}).fit(X, y)
        nll.append(-clf.train_cll_)
        if level == 1:
            assert clf.model_.pmap.n_params == X.shape[1] + 1  # one weight per attribute, one for the class
    # never worse with a finer level; strictly better where the finer level adds freedom
    assert all(a >= b - 1e-8 * abs(b) for a, b in zip(nll, nll[1:])), nll
    assert nll[0] > nll[1] + 1e-2 and nll[1] > nll[2] + 1e-2, nll
    if struct == "nb":  # no parents: level 4 = level 3
        assert nll[3] == pytest.approx(nll[2], rel=1e-8)
    else:
        assert nll[2] > nll[3] + 1e-2, nll


@pytest.mark.parametrize("param", ["discriminative", "extended", "weighted"])
@pytest.mark.parametrize("init", ["zeros", "generative"])
def test_lbfgs_trace(small, param, init):
    X, y, cards = small
    clf = BNClassifier(structure="tan", param=param, init=init, discretize=False, cardinalities=cards).fit(X, y)
    tr = clf.trace_
    assert [t["iter"] for t in tr] == list(range(len(tr)))
    assert len(tr) == clf.n_iter_ + 1 and clf.n_iter_ > 3
    assert all(set(t) == {"iter", "nll", "n_fev", "time"} for t in tr)
    nll = [t["nll"] for t in tr]
    assert all(b <= a for a, b in zip(nll, nll[1:])), nll
    fev = [t["n_fev"] for t in tr]
    assert fev[0] == 1 and all(b > a for a, b in zip(fev, fev[1:])) and fev[-1] <= clf.n_fev_
    assert tr[-1]["nll"] == pytest.approx(-clf.train_cll_)
    if init == "zeros":
        assert tr[0]["nll"] == pytest.approx(len(y) * np.log(3))


@pytest.mark.parametrize("param,level", MAPS)
def test_generative_init_is_generative_model_at_iteration_0(param, level):
    X, y, cards = _data(400, seed=21, n_attr=6, card=(2, 4), n_classes=3, p=2)
    Xt, _, _ = _data(300, seed=99, n_attr=6, card=(2, 4), n_classes=3, p=2)  # other BN: unseen configurations
    Xt = np.minimum(Xt, cards - 1)
    gen = BNClassifier(structure="kdb", k=2, discretize=False, cardinalities=cards).fit(X, y)
    clf = BNClassifier(structure="kdb", k=2, param=param, level=level, init="generative", discretize=False,
                       cardinalities=cards, optimizer_options={"maxiter": 0}).fit(X, y)
    assert clf.n_iter_ == 0 and len(clf.trace_) == 1
    gen_nll = -gen.predict_log_proba(X)[np.arange(len(y)), y].sum()
    assert clf.trace_[0]["nll"] == pytest.approx(gen_nll, rel=1e-12)
    lay = clf.model_.layout
    assert (lay.row_level[lay.rows(Xt)[:, 1:].ravel()] < 2).any()  # the test set does back off
    for data in (X, Xt):
        np.testing.assert_allclose(clf.predict_log_proba(data), gen.predict_log_proba(data), atol=1e-10)
        assert np.array_equal(clf.predict(data), gen.predict(data))


def _expected_level(seen, x_row, parents):
    """Longest prefix of the parent configuration seen in training (brute force)."""
    for lev in range(len(parents), -1, -1):
        if tuple(x_row[list(parents[:lev])]) in seen[lev]:
            return lev
    return -1


@pytest.mark.parametrize("param,init,level", [("discriminative", "zeros", 4), ("discriminative", "generative", 4),
                                              ("extended", "zeros", 4), ("weighted", "zeros", 4),
                                              ("weighted", "generative", 2)])
def test_backoff_unseen_parent_configurations(param, init, level):
    X, y, cards = _data(500, seed=4, n_attr=5, card=(3, 4), n_classes=2, p=2)
    keep = ~((X[:, 0] == 0) & (X[:, 1] == 0)) & (X[:, 2] != 2)  # some configurations never seen
    X, y = X[keep], y[keep]
    clf = BNClassifier(structure="kdb", k=2, param=param, level=level, init=init, discretize=False,
                       cardinalities=cards, optimizer_options={"maxiter": 15}).fit(X, y)
    rng = np.random.default_rng(0)
    Xt = np.column_stack([rng.integers(0, c, 200) for c in cards])
    Xt[:5] = [-1, cards[1], 0, 0, 0]  # out-of-range and missing values must not crash
    model, lay = clf.model_, clf.model_.layout
    idx = model.rows(Xt)
    gen_phi = lay.generative_phi(1.0)
    n_backoff = 0
    for fi, f in enumerate(clf.tables_.factors):
        seen = [{tuple(r[list(f.parents[:lev])]) for r in X} for lev in range(len(f.parents) + 1)]
        for n in range(Xt.shape[0]):
            r = idx[n, fi + 1]
            x = Xt[n, f.child]
            if not 0 <= x < f.card:
                assert r == -1
                continue
            lev = _expected_level(seen, Xt[n], f.parents)
            assert lay.row_factor[r] == fi + 1 and lay.row_value[r] == x and lay.row_level[r] == lev
            key = mixed_radix(Xt[n : n + 1], f.parents[:lev], cards)[0] if lev else 0
            pos = np.flatnonzero(lay.block_row[fi][lev] == r - x)
            assert f.levels[lev].keys[pos[0]] == key
            if lev < len(f.parents):  # an untrained prefix row: the documented values
                n_backoff += 1
                assert r >= lay.n_trained
                phi = model.phi[r]
                if param == "discriminative":
                    expect = np.zeros(2) if init == "zeros" else gen_phi[r]
                elif param == "extended":
                    expect = np.full(2, -np.log(f.card))
                elif level == 4:
                    expect = gen_phi[r]
                else:  # tied weight of (attribute, value) times generative log theta
                    w = model.x[model.pmap.T[r]]
                    expect = w * gen_phi[r]
                np.testing.assert_allclose(phi, expect, atol=1e-12)
    assert n_backoff > 20
    S = clf.model_.log_potentials(Xt)
    manual = np.zeros_like(S)
    for c in range(idx.shape[1]):
        ok = idx[:, c] >= 0
        manual[ok] += model.phi[idx[ok, c]]
    np.testing.assert_allclose(S, manual)
    assert np.isfinite(clf.predict_proba(Xt)).all()


@pytest.mark.parametrize("opt,opts", [("cg", {}), ("cgb", {}), ("bfgs", {}), ("sgd", {"maxiter": 15}),
                                      ("sgd", {"method": "sgd", "lr": 0.05, "maxiter": 10}),
                                      ("lbfgs", {"stop": "paper", "maxiter": 50})])
def test_optimizers(small, opt, opts):
    X, y, cards = small
    ref = BNClassifier(structure="nb", param="discriminative", init="zeros", discretize=False, cardinalities=cards,
                       optimizer_options={"stop": "paper"}).fit(X, y)
    clf = BNClassifier(structure="nb", param="weighted", init="zeros", discretize=False, cardinalities=cards,
                       optimizer=opt, optimizer_options=opts).fit(X, y)
    tr = clf.trace_
    assert [t["iter"] for t in tr] == list(range(clf.n_iter_ + 1))
    assert tr[-1]["nll"] < 0.8 * tr[0]["nll"]
    assert all(t["time"] >= 0 for t in tr) and [t["n_fev"] for t in tr] == sorted(t["n_fev"] for t in tr)
    if opt in ("cg", "cgb", "bfgs"):
        assert -clf.train_cll_ == pytest.approx(-ref.train_cll_, rel=1e-4)
        nll = [t["nll"] for t in tr]
        assert all(b <= a * (1 + 1e-12) for a, b in zip(nll, nll[1:]))
    if opt == "lbfgs":
        assert clf.n_iter_ <= 50


def test_regularization_pulls(small):
    X, y, cards = small
    kw = dict(structure="tan", discretize=False, cardinalities=cards, init="zeros")
    free = BNClassifier(param="weighted", **kw).fit(X, y)
    to_one = BNClassifier(param="weighted", reg="l2_one", lam=1e4, **kw).fit(X, y)
    np.testing.assert_allclose(to_one.model_.x, 1.0, atol=0.05)  # strong pull: the generative model
    to_zero = BNClassifier(param="discriminative", reg="l2", lam=10.0, **kw).fit(X, y)
    assert to_zero.train_cll_ < free.train_cll_
    assert "obj" in to_zero.trace_[-1] and to_zero.trace_[-1]["obj"] > to_zero.trace_[-1]["nll"]


def test_reg_scale_mean_is_lam_times_n_beside_the_summed_nll(small):
    # mean NLL + lam/2 ||x||^2 has the optimum of summed NLL + (N lam)/2 ||x||^2: same weights, same trace
    X, y, cards = small
    kw = dict(structure="nb", param="weighted", init="zeros", discretize=False, cardinalities=cards, reg="l2",
              optimizer_options={"stop": "paper"})
    mean = BNClassifier(lam=0.05, reg_scale="mean", **kw).fit(X, y)
    summed = BNClassifier(lam=0.05 * len(y), **kw).fit(X, y)
    weak = BNClassifier(lam=0.05, **kw).fit(X, y)
    np.testing.assert_allclose(mean.model_.x, summed.model_.x, rtol=1e-10, atol=1e-12)
    assert [t["obj"] for t in mean.trace_] == pytest.approx([t["obj"] for t in summed.trace_], rel=1e-12)
    assert np.linalg.norm(mean.model_.x) < 0.9 * np.linalg.norm(weak.model_.x)  # N = len(y) times the pull
    base = ["structure=nb", "param=weighted", "dataset.names=[synth-nb]"]
    (default,) = plan(base).models
    assert "reg_scale" not in default.params  # the default stays out of model parameters, so out of task keys
    (scaled,) = plan([*base, "param.reg_scale=mean"]).models
    assert scaled.params == {**default.params, "reg_scale": "mean"}
    with pytest.raises(BNCBenchError, match="reg_scale"):
        BNClassifier(reg_scale="max", **kw).fit(X, y)


def test_bad_options(small):
    X, y, cards = small
    kw = dict(discretize=False, cardinalities=cards, param="weighted")
    for bad in (dict(level=5), dict(reg="l1"), dict(init="random"), dict(optimizer="adam"),
                dict(optimizer_options={"stop": "never"}), dict(optimizer_options={"bogus": 1}),
                dict(optimizer="bfgs", structure="kdb", k=2, optimizer_options={"max_params": 10}),
                dict(optimizer_options={"blas_threads": 0}), dict(optimizer_options={"blas_threads": "2"})):
        with pytest.raises(BNCBenchError):
            BNClassifier(**{**kw, **bad}).fit(X, y)


def test_config_groups_build_working_models(small):
    X, y, cards = small
    opts = {"lbfgs": {}, "lbfgs_paper": {"maxiter": 5}, "cg": {"maxiter": 5}, "cgb": {"maxiter": 5},
            "bfgs": {"maxiter": 5}, "sgd": {"maxiter": 2}}
    for param in ("generative", "discriminative", "extended", "weighted"):
        for opt, extra in opts.items():
            (spec,) = plan(["structure=tan", f"param={param}", "init=generative", f"optimizer={opt}",
                            "dataset.names=[synth-nb]"]).models
            params = dict(spec.params)
            if param != "generative":
                params["optimizer_options"] = {**params.get("optimizer_options", {}), **extra}
            clf = BNClassifier(**params, discretize=False, cardinalities=cards).fit(X, y)
            assert clf.predict_proba(X).shape == (len(y), 3)
            assert hasattr(clf, "trace_") == (param != "generative")


@pytest.mark.parametrize("level", [1, 2, 3])
def test_weighted_tying_groups(small, level):
    """Level 1: one weight per attribute; 2: per attribute value; 3: per attribute value and class."""
    X, y, cards = small
    tables = _tables(X, y, cards, "kdb2")
    lay, pmap, _ = build_problem(tables, X, y, param="weighted", init="zeros", level=level)
    x = np.random.default_rng(0).uniform(0.5, 2.0, pmap.n_params)
    W = pmap.phi_full(x) / pmap.gen  # the effective weight of every (row, class)
    Y = W.shape[1]
    fac = np.repeat(lay.row_factor[:, None], Y, axis=1)
    val = np.repeat(lay.row_value[:, None], Y, axis=1)
    cls = np.repeat(np.arange(Y)[None, :], lay.n_rows, axis=0)
    cls_row = fac == 0
    key = {1: (fac,), 2: (fac, val), 3: (fac, val, cls)}[level]
    key = tuple(np.where(cls_row, cls if level > 1 else 0, k) for k in key) + (cls_row,)
    groups = {}
    for k, w in zip(zip(*(a.ravel() for a in key)), W.ravel()):
        groups.setdefault(k, set()).add(round(float(w), 10))
    assert all(len(v) == 1 for v in groups.values())
    assert len(groups) <= pmap.n_params
    assert len({next(iter(v)) for v in groups.values()}) == len(groups)  # distinct groups, distinct weights


@pytest.mark.parametrize("scale", [0.5, 30.0])
def test_two_class_kernel_equals_general(scale):
    """The score-difference kernel (two classes) = the general kernel: NLL and gradient, relative 1e-12."""
    rng = np.random.default_rng(int(scale))
    N, F, n_rows = 2000, 7, 40
    idx = rng.integers(0, n_rows, (N, F)).astype(np.int32)
    idx[rng.random((N, F)) < 0.15] = -1  # missing factors contribute nothing
    idx[:, 0] = 0
    idx[N // 2 :] = idx[rng.integers(0, N // 2, N - N // 2)]  # duplicates: compressed counts > 1
    y = rng.integers(0, 2, N)
    data = Data.from_rows(idx, y, 2, compress=True)
    assert data.n < N and data.C.max() > 1 and (data.C.min(axis=1) > 0).any()
    Phi = scale * rng.standard_normal((n_rows, 2))  # scale 30: |d| up to hundreds, both signs
    two, gen = CLL(data, n_rows, "numba"), CLL(data, n_rows, "numba", two_class=False)
    nll2, G2 = two(Phi)
    nll, G = gen(Phi)
    assert abs(nll2 - nll) <= 1e-12 * abs(nll)
    np.testing.assert_allclose(G2, G, rtol=1e-12, atol=1e-12 * np.abs(G).max())
    assert np.array_equal(G2[:, 0], -G2[:, 1])  # gradient rows sum to zero over the classes
    assert two(Phi, grad=False) == (nll2, None)
    ref, Gref = CLL(Data.from_rows(idx, y, 2, compress=False), n_rows, "scipy")(Phi)
    assert nll2 == pytest.approx(ref, rel=1e-12)
    np.testing.assert_allclose(G2, Gref, rtol=1e-9, atol=1e-9 * np.abs(Gref).max())


def test_n_parameters_counts_optimized_parameters():
    """Optimized models count the parameters the optimizer adjusts, not the generative tables."""
    # cards (2, 3, 2), two classes; value 2 of attribute 1 never occurs in training
    R = np.array([(a0, a1, a2, c) for a0, a1, a2, c in np.ndindex(2, 2, 2, 2)
                  for _ in range(1 + 3 * (a1 == a2) + 2 * (a0 == c))])
    X, y, cards = R[:, :3], R[:, 3], [2, 3, 2]
    kw = dict(discretize=False, cardinalities=cards, optimizer_options={"maxiter": 3})
    tan = BNClassifier(structure="tan", **kw).fit(X, y)
    assert tan.structure_ == [(), (0,), (1,)]  # chain A0 -> A1 -> A2
    # generative tables: x0 | y: 2 * 1; x1 | y, x0: 2 * 2 * 2; x2 | y, x1 (x1 in {0, 1} seen): 2 * 2 * 1; + 1
    assert tan.n_parameters_ == 2 + 8 + 4 + 1
    # trained rows of Phi: NB 1 + 2 + 3 + 2 = 8; TAN 1 + 2 + 3 * 2 + 2 * 2 (two seen x1 values) = 13
    expected = {
        ("nb", "discriminative", 4): 16, ("nb", "extended", 4): 16,
        ("tan", "discriminative", 4): 26, ("tan", "extended", 4): 26,
        ("nb", "weighted", 1): 4, ("tan", "weighted", 1): 4,  # 3 attributes + class
        ("nb", "weighted", 2): 9, ("tan", "weighted", 2): 9,  # 2 classes + 7 attribute values
        ("nb", "weighted", 3): 16, ("tan", "weighted", 3): 16,  # 2 * (1 + 7)
        ("nb", "weighted", 4): 16, ("tan", "weighted", 4): 26,  # every log theta entry of the trained rows
    }
    for (struct, param, level), n in expected.items():
        clf = BNClassifier(structure=struct, param=param, level=level, **kw).fit(X, y)
        assert clf.n_parameters_ == n == clf.model_.x.size, (struct, param, level, clf.n_parameters_)


def test_optimizers_run_with_single_threaded_blas(small):
    """L-BFGS-B's small vector algebra must not pay for BLAS threads (default blas_threads=1)."""
    from threadpoolctl import threadpool_info

    from bncbench.engine import optimize

    X, y, cards = small
    _, pmap, problem = build_problem(_tables(X, y, cards, "nb"), X, y, param="discriminative")
    seen, fg = [], problem.fg

    def spy(x):
        seen.append(max((i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"), default=1))
        return fg(x)

    problem.fg = spy
    x1, _, _ = optimize("lbfgs", problem, pmap.x0(), {"maxiter": 3})
    assert seen and set(seen) == {1}
    _, pmap2, problem2 = build_problem(_tables(X, y, cards, "nb"), X, y, param="discriminative")
    x2, _, _ = optimize("lbfgs", problem2, pmap2.x0(), {"maxiter": 3, "blas_threads": None})
    np.testing.assert_allclose(x1, x2, rtol=1e-10, atol=1e-12)


def test_a_long_fit_logs_its_progress_within_fit_progress(small, capsys):
    from bncbench.engine.optim import fit_progress

    X, y, cards = small
    make = lambda: BNClassifier(structure="tan", param="weighted", discretize=False, cardinalities=cards)  # noqa: E731
    make().fit(X, y)
    assert capsys.readouterr().err == ""  # outside the block: silent
    with fit_progress("small / TAN^w r0f0", every=0.0):  # every iteration counts as a minute late
        clf = make().fit(X, y)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == len(clf.trace_) == clf.n_iter_ + 1
    for ln, t in zip(lines, clf.trace_):
        assert ln.startswith(f"small / TAN^w r0f0: iteration {t['iter']}, objective {t['nll']:.10g}, "
                             f"{t['n_fev']} evaluations, "), ln
    make().fit(X, y)
    assert capsys.readouterr().err == ""  # the block restored the silence

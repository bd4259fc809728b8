"""Feelders & Ivanovs' three parameter spaces (§3, §5): Roos's mapping, the BN space and the LR mapping.

Which existing maps they are (proved on the maps' outputs), the §3.3 parameter counts, exact
gradients, the same CLL at the start in every space, and the same maximal CLL for all nine
(optimizer, space) combinations on perfect graphs.
"""

import numpy as np
import pytest

from bncbench import BNClassifier
from bncbench.engine.fit import build_problem
from bncbench.data.perfect import parse_name, perfect_bnc
from bncbench.data.sources import sample_random_bnc
from bncbench.engine.flops import bn_costs, lr_costs
from bncbench.engine.optim import optimize
from bncbench.engine.params import Discriminative, Extended
from bncbench.engine.roos import BNSpace, LRRoos
from bncbench.structures.canonical import canonical_form, lr_parameter_count

SPACES = ("lr_mapping", "lr_roos", "bn_space")
OPTIMIZERS = ("cg_nash", "cgb", "bfgs_nash")


def _tables(X, y, cards, parents):
    return BNClassifier(structure="custom", parents=[list(p) for p in parents], discretize=False,
                        cardinalities=cards).fit(X, y).tables_


def _problems(X, y, cards, parents, m=1.0):
    tables = _tables(X, y, cards, parents)
    return {p: build_problem(tables, X, y, param=p, init="generative", m=m) for p in
            ("discriminative", "extended", *SPACES)}


def test_fig1_parameter_counts():
    """§3.3: all binary, the Fig. 1 graph has 9 LR parameters and 14 LR_Roos ones.

    In Fig. 1, X1 is a parent of X2 and X3 but not a child of the class (the canonical form marries it
    to the class): Roos's families are {1,2}, {1,3}, {3,4}, {5}, 4 + 4 + 4 + 2 = 14, and the paper's
    count leaves out the intercept (the indicator of the class's empty parent configuration). bncbench's
    class is a parent of every attribute, so X1's family {1} adds 2 and the intercept 1: 17.
    """
    parents = [(), (0,), (0,), (2,), ()]
    cards = [2] * 5
    assert lr_parameter_count(canonical_form(parents), cards, 2) == 9
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(3000, 5))
    y = rng.integers(0, 2, size=3000)
    P = _problems(X, y, cards, parents)
    assert P["lr_mapping"][1].n_params == 9
    roos = P["lr_roos"][1]
    assert roos.n_params == 1 + 2 + 14
    # the LR_Roos design has 1 + n ones per instance (|pa(0)| = 0), as §5.1 says
    data = P["lr_roos"][2].cll.data
    assert roos.n_ones(data) == 3000 * (1 + 5)
    assert roos.flop_costs(data) == lr_costs(3000 * 6, 3000, 2)


def _perfect(name="2.5.2-3.1000", seed=1):
    sp = parse_name(name)
    model = perfect_bnc(sp["n_parents"], sp["n_attributes"], sp["domain"], seed=seed)
    X, y = sample_random_bnc(model, sp["n_samples"], seed=seed + 7919)
    return np.asarray(X, dtype=np.int64), np.asarray(y), [int(c) for c in model.cards], model.parents


def test_roos_is_the_discriminative_map_with_the_reference_class_fixed():
    X, y, cards, parents = _perfect()
    P = _problems(X, y, cards, parents)
    _, dmap, dprob = P["discriminative"]
    _, rmap, rprob = P["lr_roos"]
    assert isinstance(dmap, Discriminative) and isinstance(rmap, LRRoos)
    assert dmap.n_params == dmap.nt * dmap.Y and rmap.n_params == dmap.nt * (dmap.Y - 1)
    rng = np.random.default_rng(3)
    w = rng.standard_normal(rmap.n_params)
    beta = np.zeros((dmap.nt, dmap.Y))
    beta[:, 1:] = w.reshape(dmap.nt, -1)
    np.testing.assert_array_equal(rmap.phi(w), dmap.phi(beta.ravel()))
    assert rprob.f(w) == dprob.f(beta.ravel())
    # and any beta is a Roos point: subtracting class 0's column per row leaves the CLL unchanged
    b = rng.standard_normal(dmap.n_params).reshape(dmap.nt, -1)
    assert rprob.f((b[:, 1:] - b[:, :1]).ravel()) == pytest.approx(dprob.f(b.ravel()), rel=1e-12)


def test_bn_space_is_the_extended_map():
    """§5.2's theta = softmax(beta) per (attribute, parent configuration incl. class), and over the classes."""
    X, y, cards, parents = _perfect("2.5.2-3.100")
    P = _problems(X, y, cards, parents)
    _, emap, eprob = P["extended"]
    layout, bmap, bprob = P["bn_space"]
    assert isinstance(bmap, BNSpace) and isinstance(bmap, Extended) and bmap.n_params == emap.n_params
    rng = np.random.default_rng(5)
    beta = rng.standard_normal(bmap.n_params)
    phi = bmap.phi(beta)
    np.testing.assert_array_equal(phi, emap.phi(beta))
    B = beta.reshape(bmap.nt, bmap.Y)
    # class row: log softmax over the classes
    np.testing.assert_allclose(phi[0], B[0] - np.log(np.exp(B[0]).sum()))
    # every other block: log softmax over the attribute's values, per class
    st = np.r_[layout.block_start[layout.block_start < bmap.nt], bmap.nt]
    for a, b in zip(st[:-1], st[1:]):
        np.testing.assert_allclose(phi[a:b], B[a:b] - np.log(np.exp(B[a:b]).sum(axis=0)), atol=1e-12)
    # |beta| = sum over (attribute, class x attribute-parent configuration seen) of d_j, plus d0
    data = bprob.cll.data
    assert bmap.flop_costs(data) == bn_costs(bmap.n_params, len(y), 2, cards)


@pytest.mark.parametrize("space", ["lr_roos", "bn_space"])
def test_gradient_by_finite_differences(space):
    X, y, cards, parents = _perfect("3.5.2-3.100", seed=2)
    _, pmap, prob = _problems(X, y, cards, parents)[space]
    rng = np.random.default_rng(0)
    x = pmap.x0() + 0.3 * rng.standard_normal(pmap.n_params)
    f, g = prob.fg(x)
    h = 1e-6
    d = rng.standard_normal(x.size)
    assert g @ d == pytest.approx((prob.f(x + h * d) - prob.f(x - h * d)) / (2 * h), rel=1e-6)
    for c in rng.choice(pmap.n_params, 20, replace=False):
        e = np.zeros_like(x)
        e[c] = h
        assert g[c] == pytest.approx((prob.f(x + e) - prob.f(x - e)) / (2 * h), rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("name", ["1.5.2-3.1000", "2.5.2-3.3000"])
def test_nine_combinations_same_start_and_same_optimum(name):
    """§5.3: the Laplace estimate mapped into each space gives one starting CLL; all nine reach one maximum.

    The samples are ones where the maximum is attained (no configuration seen with one class only, which
    sends a weight to infinity and leaves Nash's CG far from it after 5000 iterations: 3.5.2-3.1000 with
    seed 4 stops 1.5e-4 short)."""
    X, y, cards, parents = _perfect(name, seed=4)
    P = _problems(X, y, cards, parents)
    starts = {s: P[s][2].nll(P[s][1].x0()) for s in SPACES}
    assert starts["lr_roos"] == pytest.approx(starts["lr_mapping"], rel=1e-12)
    assert starts["bn_space"] == pytest.approx(starts["lr_mapping"], rel=1e-12)
    ends = {}
    for s in SPACES:
        for o in OPTIMIZERS:
            _, pmap, prob = build_problem(_tables(X, y, cards, parents), X, y, param=s, init="generative")
            opts = {"maxiter": 5000, "reltol": 1e-14} if o != "cgb" else {"maxiter": 5000, "ftol": 1e-14,
                                                                          "gtol": 1e-9}
            x, tr, _ = optimize(o, prob, pmap.x0(), opts)
            assert tr[0]["nll"] == pytest.approx(starts["lr_mapping"], rel=1e-12)
            assert tr[-1]["flops_total"] > 0
            ends[(s, o)] = prob.nll(x)
    best = min(ends.values())
    bad = {k: v for k, v in ends.items() if v > best * (1 + 1e-6)}
    assert not bad, (best, bad)


@pytest.mark.parametrize("space", ["lr_roos", "bn_space"])
def test_fits_through_bnclassifier(space):
    """``param=lr_roos|bn_space`` fit through BNClassifier to the free log-potentials' optimum, flops traced."""
    X, y, cards, _ = _perfect("2.5.2-3.3000", seed=4)
    kw = dict(structure="tan", init="generative", discretize=False, cardinalities=cards)
    ours = BNClassifier(**kw, param=space, optimizer="bfgs_nash", optimizer_options={"maxiter": 2000}).fit(X, y)
    ref = BNClassifier(**kw, param="discriminative", optimizer_options={"stop": "paper"}).fit(X, y)
    assert ours.train_cll_ == pytest.approx(ref.train_cll_, rel=1e-6)
    assert ours.trace_[-1]["flops_total"] > ours.trace_[0]["flops"] > 0

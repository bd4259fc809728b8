"""The EBNC compatibility mode against the authors' code (github ``nayyarzaidi/EBNC``, ``wdBayes``, run here).

The numbers are the anchors measured from their code (``../shared/anchors/ebnc/``, copied in
``tests/fixtures/ebnc/``): full-data fits of vote (its '?' read as the attribute's first declared
value, as their code reads it) and tic-tac-toe, NB / TAN / KDB-1 x MAP / dCCBN / wCCBN / eCCBN, default
options. The compatibility mode is ``structure=nb|tan_ebnc|kdb_ebnc``, ``estimator=ebnc``,
``param=generative|discriminative|weighted|ebnc_e``, ``init=ebnc`` and the optimizer options of
``conf/optimizer/lbfgs_ebnc.yaml``. Checked:

* the parent lists equal theirs (TAN rooted at attribute 0, KDB's ties in Weka's sort order, which
  our default KDB does not follow on tic-tac-toe), and Weka's sort order itself (outputs of
  ``weka.core.Utils.sort`` 3.9.7 run on these arrays);
* MAP's class probabilities equal theirs to 1e-12 (their estimate, class term P(y));
* every optimized fit starts at their objective (NLL - N ln nc at the start: their ``-W 0``);
* where the path is not chaotic (13 of 18 fits), the same iterations (and, but for two, evaluations)
  and class probabilities equal to 1e-9, or to the bound measured (:data:`PROB_TOL`) where rounding
  drifts further after 50-80 iterations;
* one fit's path follows theirs on one CPU only (:data:`CPU_DEPENDENT`): where it does not, its end point is
  compared, to the bound measured;
* the 5 chaotic fits (:data:`CHAOTIC`): their iteration counts change with the summation order of the
  objective alone (``compress``, ``backend``, ``two_class``: the same function, rounded differently) -
  e.g. vote TAN^e 301, 300, 244 or 206 iterations (theirs 266) - so only the end point is compared;
* e's direction is the gradient times (1 + softmax), not the gradient (finite differences).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import data_dir_or_skip

from bncbench import BNClassifier
from bncbench.engine.fit import _problem, factor_layout
from bncbench.harness.app import compose_config
from bncbench.harness.model_specs import config_model
from bncbench.structures.tan_kdb_ebnc import LOG2, ebnc_conditional_mutual_information, kdb_ebnc, tan_ebnc, weka_sort
from bncbench.structures.kdb import kdb

FIX = Path(__file__).resolve().parent / "fixtures" / "ebnc"
RUNS = pd.read_csv(FIX / "train_full.csv")
STRUCTURES = {"NB": ("-S NB", dict(structure="nb")), "TAN": ("-S TAN", dict(structure="tan_ebnc")),
              "KDB1": ("-S KDB -K 1", dict(structure="kdb_ebnc", k=1))}
PARAMS = {"dCCBN": "discriminative", "wCCBN": "weighted", "eCCBN": "ebnc_e"}
_EBNC = compose_config(["optimizer=lbfgs_ebnc", "param=discriminative"])
EBNC_OPTIONS = config_model(_EBNC).params["optimizer_options"]
"""``conf/optimizer/lbfgs_ebnc.yaml``'s options, as an experiment composes them (the schema's defaults included)."""
CHAOTIC = {("vote", "TAN", "eCCBN"), ("vote", "KDB1", "eCCBN"), ("tic-tac-toe", "TAN", "eCCBN"),
           ("tic-tac-toe", "KDB1", "dCCBN"), ("tic-tac-toe", "KDB1", "wCCBN")}
"""Fits whose iteration count changes with the rounding of the objective (see the module docstring)."""
PROB_TOL = {("vote", "NB", "eCCBN"): 5e-8, ("vote", "TAN", "dCCBN"): 1e-8, ("vote", "KDB1", "wCCBN"): 1e-6,
            ("tic-tac-toe", "KDB1", "eCCBN"): 2e-7}
"""Same path, but the end point differs by more than 1e-9 (measured 1.4e-8, 3.0e-9, 2.9e-7, 4.4e-8)."""
EVALS_DIFFER = {("tic-tac-toe", "KDB1", "eCCBN"), ("tic-tac-toe", "NB", "eCCBN")}
"""Same iterations; KDB-1^e: evaluations 153 against their 155; NB^e: 75 against 76, one point asked for twice
(``Problem`` serves it from its cache and does not count it; scipy's own count is 76)."""
CPU_DEPENDENT = {("tic-tac-toe", "KDB1", "eCCBN"): (0.025, 0.02)}
"""Fits whose path follows theirs on one CPU and not on another, with the bounds of the end point where it does not
(training NLL, class probabilities). tic-tac-toe KDB-1^e: on an Intel Xeon the same 83 iterations as theirs, its
probabilities within 2e-7; on an AMD EPYC (AVX2), whose numpy and OpenBLAS round the objective's sums and
logarithms differently, ours leaves their path and ``factr`` stops it at iteration 55, at a training NLL 0.0196
above their 26.6349 (probabilities within 0.0135): the fit creeps (their gradient is still 0.056 when it stops)."""
FITS = [(d, s, p) for d in ("vote", "tic-tac-toe") for s in STRUCTURES for p in PARAMS]


def _their_codes(name):
    """The dataset as their code reads it: declared value order, a missing value as the first declared value."""
    from bncbench.data.uci import load_uci

    ds = load_uci(name, data_dir_or_skip())
    X = np.column_stack([ds.X[c].cat.codes.to_numpy() for c in ds.X.columns]).astype(np.int64)
    X[X < 0] = 0
    return X, np.asarray(ds.y), [len(ds.X[c].cat.categories) for c in ds.X.columns]


@pytest.fixture(scope="module")
def datasets():
    return {name: _their_codes(name) for name in ("vote", "tic-tac-toe")}


def _run(name, structure, tag):
    row = RUNS[(RUNS.name == name) & (RUNS.options == f"{STRUCTURES[structure][0]} -P {tag} -V")]
    assert len(row) == 1
    return row.iloc[0]


def _their_parents(name, structure):
    out = []
    for part in _run(name, structure, "MAP").parents.split(";"):
        vals = part.split(":")[1].split()
        out.append(tuple(int(v) for v in vals))
    return out


def _probs(name, structure, tag):
    return pd.read_csv(FIX / f"{name}.{structure}.{tag}.csv.gz", header=None).to_numpy()


def test_weka_sort_order():
    # weka.core.Utils.sort (Weka 3.9.7) on these arrays; equal values do not come out in index order
    assert weka_sort([3, 1, 3, 3, 0, 1, 3, 1, 0, 3]) == [4, 8, 7, 1, 5, 6, 0, 2, 3, 9]
    assert weka_sort([0.5] * 9) == [0, 6, 5, 7, 4, 2, 1, 3, 8]
    assert weka_sort([2, 2, 1, 1, 2, 2, 1, 1, 2, 2, 1, 1, 0]) == [12, 10, 7, 11, 6, 3, 2, 5, 1, 8, 4, 9, 0]
    vote_mi = [0.0819147642, 4.34123621e-06, 0.287108274, 0.497781433, 0.28727734, 0.101560619, 0.13319886,
               0.235810511, 0.182897469, 0.00328578739, 0.0735743514, 0.236048665, 0.14427138, 0.203870763,
               0.148958009, 0.00292733688]
    assert weka_sort(vote_mi) == [1, 15, 9, 10, 0, 5, 6, 12, 14, 8, 13, 7, 11, 2, 4, 3]


def _cmi_one_bincount_per_pair(codes, y, cards, n_classes):
    """The former computation: one bincount per pair (the reference the shared pair counts must equal)."""
    N, n = float(len(y)), codes.shape[1]
    cy = np.bincount(y, minlength=n_classes).astype(float)
    cxy = [np.bincount(codes[:, i] * n_classes + y, minlength=c * n_classes).reshape(c, n_classes).astype(float)
           for i, c in enumerate(cards)]
    out = np.zeros((n, n))
    for u1 in range(1, n):
        for u2 in range(u1):
            c1, c2 = int(cards[u1]), int(cards[u2])
            a = np.bincount((codes[:, u1] * c2 + codes[:, u2]) * n_classes + y,
                            minlength=c1 * c2 * n_classes).reshape(c1, c2, n_classes).astype(float)
            with np.errstate(divide="ignore", invalid="ignore"):
                t = (a / N) * np.log((a * cy) / (cxy[u1][:, None, :] * cxy[u2][None, :, :])) / LOG2
            out[u1, u2] = out[u2, u1] = np.cumsum(np.where(a > 0, t, 0.0).ravel())[-1]
    return out


@pytest.mark.parametrize("cards", [[3, 2, 4, 3, 2, 5], [40, 3, 60, 2]])  # Gram path; per-pair kernel path
def test_cmi_from_shared_pair_counts_is_the_former_to_the_bit(cards):
    rng = np.random.default_rng(7)
    X = np.column_stack([rng.integers(0, c, 500) for c in cards])
    y = (X[:, 0] + rng.integers(0, 2, 500)) % 3
    got = ebnc_conditional_mutual_information(X, y, cards, 3)
    assert np.array_equal(got, _cmi_one_bincount_per_pair(X, y, cards, 3))
    assert got[1, 0] > 0 and got[0, 1] == got[1, 0]


@pytest.mark.parametrize("name", ["vote", "tic-tac-toe"])
def test_structures(datasets, name):
    X, y, cards = datasets[name]
    assert tan_ebnc(X, y, cards, 2) == _their_parents(name, "TAN")
    assert kdb_ebnc(X, y, cards, 2, 1) == _their_parents(name, "KDB1")
    if name == "tic-tac-toe":  # ties among the corners: our default KDB breaks them by index
        assert kdb(X, y, cards, 2, 1) != _their_parents(name, "KDB1")


@pytest.mark.parametrize("name", ["vote", "tic-tac-toe"])
@pytest.mark.parametrize("structure", list(STRUCTURES))
def test_map_probabilities(datasets, name, structure):
    X, y, cards = datasets[name]
    clf = BNClassifier(**STRUCTURES[structure][1], estimator="ebnc", discretize=False, cardinalities=cards).fit(X, y)
    P = clf.predict_proba(X)
    np.testing.assert_allclose(P, _probs(name, structure, "MAP"), rtol=0, atol=1e-12)
    nll = -np.log(P[np.arange(len(y)), y]).sum()
    assert nll == pytest.approx(_run(name, structure, "MAP").nll_train, rel=1e-12)
    # MAP's class term is P(y) itself: with ln P(y) the scores differ by ln P(y) - P(y) per class
    assert np.allclose(clf.scorer_.log_prior(), (np.bincount(y) + 0.5) / (len(y) + 1))


@pytest.mark.parametrize("name,structure,tag", FITS)
def test_optimized_fits(datasets, name, structure, tag):
    X, y, cards = datasets[name]
    clf = BNClassifier(**STRUCTURES[structure][1], estimator="ebnc", param=PARAMS[tag], init="ebnc",
                       optimizer_options=EBNC_OPTIONS, discretize=False, cardinalities=cards).fit(X, y)
    model, theirs = clf.scorer_, _run(name, structure, tag)
    offset = len(y) * np.log(theirs.nc)
    assert model.trace[0]["nll"] - offset == pytest.approx(theirs.f0, rel=1e-12, abs=1e-9)  # their start
    P = clf.predict_proba(X)
    nll = -np.log(P[np.arange(len(y)), y]).sum()
    key = (name, structure, tag)
    if key in CHAOTIC:
        assert abs(nll - theirs.nll_train) < 2e-3
        np.testing.assert_allclose(P, _probs(name, structure, tag), rtol=0, atol=5e-3)
        return
    if key in CPU_DEPENDENT and model.n_iter != theirs.iterations:
        d_nll, d_p = CPU_DEPENDENT[key]
        assert abs(nll - theirs.nll_train) < d_nll
        np.testing.assert_allclose(P, _probs(name, structure, tag), rtol=0, atol=d_p)
        return
    assert model.n_iter == theirs.iterations
    if key not in EVALS_DIFFER:
        assert model.n_fev == theirs.fevals
    assert nll == pytest.approx(theirs.nll_train, rel=1e-7, abs=1e-12)
    np.testing.assert_allclose(P, _probs(name, structure, tag), rtol=0, atol=PROB_TOL.get(key, 1e-9))


def test_e_direction_is_not_a_gradient(datasets):
    X, y, cards = datasets["vote"]
    gen = BNClassifier(structure="tan_ebnc", estimator="ebnc", discretize=False, cardinalities=cards).fit(X, y).scorer_
    layout, g0, cols = factor_layout(gen, X, "ebnc_e")
    emap, eprob = _problem(layout, g0, X[:, cols], y, param="ebnc_e", init="ebnc", reg="none", lam=0.0,
                           objective="cll")
    dmap, dprob = _problem(layout, g0, X[:, cols], y, param="discriminative", init="ebnc", reg="none", lam=0.0,
                           objective="cll")
    x = emap.x0() + 0.1 * np.random.default_rng(0).standard_normal(emap.n_params)
    fe, ge = eprob.fg(x)
    fd, gd = dprob.fg(x)
    assert fe == fd  # the same model
    h = 1e-6
    for k in [0, 1, 5, 40, emap.n_params - 1]:  # the class row and attribute rows
        e = np.zeros_like(x)
        e[k] = h
        fdiff = (dprob.f(x + e) - dprob.f(x - e)) / (2 * h)
        assert gd[k] == pytest.approx(fdiff, rel=1e-5, abs=1e-6)
    B = x.reshape(emap.nt, emap.Y)
    k = emap.Y * 3 + 1  # an attribute row: the gradient times 1 + exp(beta) / sum over its block
    row, c = divmod(k, emap.Y)
    st = layout.block_start[layout.block_start <= row].max()
    end = st + layout.cards[layout.row_factor[row] - 1]
    soft = np.exp(B[row, c]) / np.exp(B[st:end, c]).sum()
    assert ge[k] == pytest.approx(gd[k] * (1 + soft), rel=1e-12)
    assert ge[0] == gd[0]  # the class row keeps the gradient
    assert not np.allclose(ge, gd)


def test_uniform_offset_changes_only_the_stop(datasets):
    X, y, cards = datasets["vote"]
    kw = dict(structure="tan_ebnc", estimator="ebnc", param="discriminative", init="ebnc", discretize=False,
              cardinalities=cards)
    with_offset = BNClassifier(**kw, optimizer_options=EBNC_OPTIONS).fit(X, y).scorer_
    without = BNClassifier(**kw, optimizer_options={**EBNC_OPTIONS, "uniform_offset": False}).fit(X, y).scorer_
    assert with_offset.trace[0]["nll"] == without.trace[0]["nll"]
    assert with_offset.n_iter == 52 and without.n_iter != 52  # the relative test fires elsewhere


def test_ebnc_start_needs_one_network():
    from bncbench.errors import BNCBenchError

    X = np.random.default_rng(0).integers(0, 2, (40, 3))
    y = (X[:, 0] ^ X[:, 1]).astype(int)
    with pytest.raises(BNCBenchError, match="init 'ebnc'"):
        BNClassifier(structure="anje", n=1, param="discriminative", init="ebnc", discretize=False).fit(X, y)

"""HDP estimates of the probability tables of a Bayesian network classifier.

Petitjean, Buntine, Webb & Zaidi (2018), "Accurate parameter estimation for
Bayesian network classifiers using hierarchical Dirichlet processes",
Machine Learning 107, §3-§4 (Algorithms 1-5, Eqs. 7-15). ``docs/hdp.md``
describes the model, every choice we made where the paper is silent or
differs from the authors' Java code, and the measured speed.

For every attribute ``X_c`` (a conditional probability table) we build a
*context tree*: the root is P(X_c), depth 1 branches on the class, depth
``d >= 2`` on the ``(d-1)``-th attribute parent. The parents are ordered by
decreasing I(X_c; X_p | Y) (``parent_order="cmi"``, §3.3; for KDB this is
the order the structure already uses, for a hand-made structure it may not
be). Nodes exist only for the parent configurations seen in training.

The latent pseudo-counts ``t`` of every node are sampled by a collapsed Gibbs
sampler (within +-``window`` of their current value, Eq. 11 and Algorithm 3)
with weights built from ratios of neighbouring unsigned Stirling numbers of
the first kind (two shared tables, grown on demand by a recurrence in ratio
space); concentrations are tied per ``tying`` strategy and
resampled every ``conc_every`` iterations by the Beta/Gamma augmentation
(Algorithm 5, Gamma(2, 1) prior, capped at 4000); the estimates of
Eqs. 12-14 are averaged over every post-burn-in iteration.

Defaults reproduce the authors' reference implementation (github
fpetitjean/HDP): burn-in ``min(1000, iterations // 10)``, concentrations
start at 2, concentration sampled at iterations ``i`` with
``(i + conc_every // 2) % conc_every == 0``, the root's concentration fixed at
2 and its table counts ``t = min(1, n)``, and the class prior the m-estimate
with m = 1 (the reference classifiers' ``xyDist``).

The sampler is compiled with numba and works on flat arrays per tree (node
parent index, counts ``n`` and pseudo-counts ``t`` of shape (n_nodes, card),
concentration group per node); a whole run of one tree is one compiled call.
Trees are independent, so ``n_jobs > 1`` runs them on threads (the compiled
code releases the GIL); each tree has its own random stream derived from
``seed``, so results do not depend on ``n_jobs``.

Public API
----------
``fit_hdp(X, y, structure, cards, n_classes, **options) -> HDPTables``,
``HDPTables.log_joint(X)``, ``HDPTables.factor_log_theta(X, i)``,
``HDPTables.query(i, y, parent_values)``, ``HDPTables.n_parameters()``,
``log_stirling(n, t)``, ``stirling_table(rows, cols)``, ``TYINGS``.

Modules
-------
``stirling``  unsigned Stirling numbers of the first kind: the shared log and
              ratio tables, grown on demand under a process-wide lock;
``rng``       the sampler's random numbers (xoshiro256**, normal, Gamma and
              Beta variates), compiled;
``kernels``   the compiled Gibbs sampler: the sweep over pseudo-counts, the
              concentration draws, the running estimates, one tree's run;
``tree``      context trees: building, parent order, concentration groups,
              initialisation, invariants and the sampler's layout of a tree;
``tables``    :class:`HDPTables`, the fitted estimates and their queries;
``fit``       :func:`fit_hdp`, the driver (one sampler run per tree, threads).
"""

from bncbench.hdp.fit import fit_hdp
from bncbench.hdp.kernels import AGG_DEPTH, CONCENTRATION_CAP, PRIOR_RATE, PRIOR_SHAPE
from bncbench.hdp.rng import SMALL_BETA
from bncbench.hdp.stirling import MAX_TABLE_BYTES, log_stirling, stirling_table
from bncbench.hdp.estimates import HDPTables
from bncbench.hdp.tree import ROOT_CONCENTRATION, TYINGS, check_invariants

__all__ = [
    "AGG_DEPTH", "CONCENTRATION_CAP", "HDPTables", "MAX_TABLE_BYTES", "PRIOR_RATE", "PRIOR_SHAPE",
    "ROOT_CONCENTRATION", "SMALL_BETA", "TYINGS", "check_invariants", "fit_hdp", "log_stirling",
    "stirling_table",
]

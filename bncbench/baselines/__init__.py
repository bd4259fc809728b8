"""Non-BNC baselines evaluated under the same protocol: one module per registered baseline.

Every public module of this package is a built-in of :data:`bncbench.components.BASELINES`
(a new baseline is a new module; no list to edit).
"""

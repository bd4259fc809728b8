"""Bayesian-network primitives the model's parts share: count statistics and count tables.

``counts`` has the vectorized joint counts and (conditional) mutual information that structure
learners use; ``count_tables`` the count tables of a network and their generative estimates
(m-estimates with back-off) that estimators and the engine read.
"""

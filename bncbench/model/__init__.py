"""The classifier assembled from registered parts, and the steps around its fit.

``classifier`` is :class:`BNClassifier` (scikit-learn estimator: structure, estimator,
parameterization, initialization, objective, optimizer); ``preprocess`` and ``discretize`` turn
typed tables into integer codes (Weka's MDL per training fold); ``marginal`` sums out attributes
missing at prediction; ``impute`` is the kNN imputation the max-margin paper compares it with.
"""

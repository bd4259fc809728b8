"""bncbench: a reproducible experiment harness for Bayesian network classifiers."""

__version__ = "0.1.0"

from bncbench.errors import BNCBenchError  # noqa: E402

__all__ = ["BNCBenchError", "BNClassifier", "__version__"]


def __getattr__(name):  # lazy: keep `import bncbench` cheap for the CLI
    if name == "BNClassifier":
        from bncbench.model.classifier import BNClassifier

        return BNClassifier
    raise AttributeError(f"module 'bncbench' has no attribute {name!r}")

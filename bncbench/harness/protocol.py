"""The evaluation protocol: repeated 2-fold cross-validation (or a given holdout split) and its metrics.

Zaidi et al. (2017, §7) and Petitjean et al. (2018, §6.1) evaluate with 5
rounds of 2-fold cross-validation and report 0-1 loss, RMSE and the
Kohavi–Wolpert bias/variance decomposition estimated as Webb (2000) does it
from repeated cross-validation: every instance is tested once per round, and
its ``R`` predicted labels estimate the distribution of the learner's
prediction at that point. Datasets with a given train/test split (MNIST, USPS;
:mod:`bncbench.data.given_split`) can instead be evaluated on that split once
(``cv.mode: holdout``), without bias and variance.
"""

from __future__ import annotations

import dataclasses
import enum
import typing
from typing import Optional
import zlib
from dataclasses import dataclass

import numpy as np

from bncbench.errors import BNCBenchError, did_you_mean


class ProtocolMode(enum.Enum):
    """How a run splits each dataset (``cv.mode``)."""

    cv = "cv"  # cv.rounds x cv.folds-fold cross-validation on all the rows
    holdout = "holdout"  # the dataset's given train/test split, evaluated once


MODES = tuple(m.value for m in ProtocolMode)
"""The protocol modes' names: ``("cv", "holdout")``."""


@dataclass(frozen=True)
class Metric:
    """One measured quantity of a task or a summary (an entry of :data:`METRIC_TABLE`).

    Attributes
    ----------
    name : str
        Its column in records and summaries (``zero_one``, ``rmse``, ...).
    title : str
        Its display name in reports (``0-1 Loss``).
    per_fold : bool
        Measured on each fold (summaries take its mean over the successful folds); False: estimated
        from the predictions of all rounds (the Kohavi–Wolpert terms).
    std : bool, default=False
        Summaries keep its standard deviation over the folds (``<name>_std``).
    time : bool, default=False
        Seconds (plotted on a log axis).
    core : bool, default=True
        A column of every summary, an empty one included; False: a property of the model
        (``n_parameters``) that a summary has when a record has it.
    """

    name: str
    title: str
    per_fold: bool
    std: bool = False
    time: bool = False
    core: bool = True


METRIC_TABLE = (
    Metric("zero_one", "0-1 Loss", per_fold=True, std=True),
    Metric("rmse", "RMSE", per_fold=True, std=True),
    Metric("bias", "Bias", per_fold=False),
    Metric("variance", "Variance", per_fold=False),
    Metric("train_time", "Training time", per_fold=True, std=True, time=True),
    Metric("test_time", "Test time", per_fold=True, std=True, time=True),
    Metric("train_cpu", "Training CPU time", per_fold=True, std=True, time=True, core=False),
    Metric("test_cpu", "Test CPU time", per_fold=True, std=True, time=True, core=False),
    Metric("n_parameters", "Parameters", per_fold=True, core=False),
)
"""Every metric, all lower-is-better: the one list that summaries, reports and their checks read."""
TIME_METRICS = tuple(m.name for m in METRIC_TABLE if m.time)
"""The metrics in seconds: ``train_time``, ``test_time`` (wall) and ``train_cpu``, ``test_cpu`` (CPU)."""


@dataclass
class Protocol:
    """The evaluation protocol: ``rounds`` x ``folds``-fold CV from ``seed``, or the given holdout split.

    The one declaration of the protocol's fields and defaults: the run config's ``seed`` and its
    ``cv`` node (:data:`CVConfig`, generated from this class) read them from here, and
    :meth:`from_config` checks a run config's values.

    ``mode="holdout"`` evaluates each dataset once, trained on its given training part and
    tested on its given test part (:func:`bncbench.data.given_split.holdout_indices`),
    recorded as round 0, fold 0 of one round of one fold.

    Parameters
    ----------
    seed : int, default=0
        The experiment's seed (of the CV splits; see :func:`split_seed`).
    rounds : int, default=5
        Rounds of cross-validation (1 for holdout).
    folds : int, default=2
        Folds per round (1 for holdout).
    mode : {"cv", "holdout"}, default="cv"
        The protocol mode (:data:`MODES`).
    missing_features : dict, optional
        Also evaluate every fitted model with features removed at test time: the validated
        settings of ``cv.missing_features`` (:func:`bncbench.harness.missing_protocol.settings`); None: not.

    Raises
    ------
    BNCBenchError
        At construction, if ``mode`` is unknown, or ``mode="holdout"`` with ``rounds`` or
        ``folds`` other than 1. (``rounds`` and ``folds`` of CV are checked by :meth:`of`.)
    """

    seed: int = 0
    rounds: int = 5
    folds: int = 2
    mode: str = ProtocolMode.cv.value
    missing_features: Optional[dict] = None

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise BNCBenchError(f"unknown protocol mode {self.mode!r}; expected one of {', '.join(MODES)}")
        if self.mode == "holdout" and (self.rounds, self.folds) != (1, 1):
            raise BNCBenchError("the holdout protocol is one round of one fold (Protocol(seed, 1, 1, 'holdout'))")

    @classmethod
    def of(cls, seed: int = 0, rounds: int = 5, folds: int = 2, mode: str = "cv",
           missing_features=None) -> "Protocol":
        """The checked protocol of these values; ``rounds`` and ``folds`` are ignored for holdout.

        Parameters
        ----------
        seed, rounds, folds, mode
            As the class's fields (the defaults are the class's own).
        missing_features : mapping, optional
            A ``cv.missing_features`` node (checked by :func:`bncbench.harness.missing_protocol.settings`).

        Returns
        -------
        Protocol
            ``Protocol(seed, 1, 1, "holdout")`` for holdout, else ``Protocol(seed, rounds, folds, mode)``.

        Raises
        ------
        BNCBenchError
            One line: ``seed`` below 0, an unknown mode, fewer than 1 round or 2 folds of CV.
        """
        from bncbench.harness import missing_protocol

        mode = str(getattr(mode, "value", mode))
        seed, rounds, folds = int(seed), int(rounds), int(folds)
        missing = missing_protocol.settings(missing_features)
        if seed < 0:
            raise BNCBenchError(f"seed must be >= 0, got {seed}")
        if mode == ProtocolMode.holdout.value:
            return cls(seed, 1, 1, mode, missing)
        if mode == ProtocolMode.cv.value and rounds < 1:
            raise BNCBenchError(f"cv.rounds must be >= 1, got {rounds}")
        if mode == ProtocolMode.cv.value and folds < 2:
            raise BNCBenchError(f"cv.folds must be >= 2, got {folds}")
        return cls(seed, rounds, folds, mode, missing)

    @classmethod
    def from_config(cls, cfg) -> "Protocol":
        """The checked protocol of a run config: its ``seed`` and its ``cv`` node.

        Parameters
        ----------
        cfg : mapping
            The run config (``omegaconf.DictConfig`` or dict); missing values take the defaults.

        Returns
        -------
        Protocol
            As :meth:`of`.

        Raises
        ------
        BNCBenchError
            As :meth:`of`, or if ``cv`` has a key that is not a field of :data:`CVConfig`.
        """
        cv = cfg.get("cv") or {}
        keys = [f.name for f in dataclasses.fields(CVConfig)]
        extra = sorted(set(cv) - set(keys))
        if extra:
            cv_keys = ["cv." + k for k in keys]
            raise BNCBenchError(f"unknown key(s) cv.{', cv.'.join(extra)}{did_you_mean('cv.' + extra[0], cv_keys)}; "
                                f"the protocol's keys: {', '.join(cv_keys)}")
        values = {k: cv[k] for k in keys if cv.get(k) is not None}
        if "missing_features" in values and hasattr(values["missing_features"], "keys"):
            values["missing_features"] = {k: _plain(v) for k, v in values["missing_features"].items()}
        return cls.of(cfg.get("seed", cls.seed), **values)


def _plain(value):
    """A config value as plain Python (an OmegaConf list becomes a list)."""
    return list(value) if hasattr(value, "__len__") and not isinstance(value, (str, bytes, dict)) else value


def _cv_config() -> type:
    """The typed ``cv`` node (``mode``, ``rounds``, ``folds``, ``missing_features``), its fields and defaults
    :class:`Protocol`'s."""
    from bncbench.harness.missing_protocol import MissingFeaturesConfig

    hints = typing.get_type_hints(Protocol)
    fields = []
    for name in ("mode", "rounds", "folds"):
        default = getattr(Protocol, name)
        typ = hints[name]
        if name == "mode":  # typed as the enum: another mode fails when Hydra composes the config
            typ, default = ProtocolMode, ProtocolMode(default)
        fields.append((name, typ, dataclasses.field(default=default)))
    # the typed node of the validated settings Protocol.missing_features holds (bncbench/harness/missing_protocol.py)
    fields.append(("missing_features", Optional[MissingFeaturesConfig], dataclasses.field(default=None)))
    cls = dataclasses.make_dataclass("CVConfig", fields)
    cls.__module__ = __name__
    cls.__doc__ = """The typed ``cv`` node of the run config (a field of :class:`bncbench.harness.run_config.RunConfig`).

    ``mode: cv`` is ``rounds`` x ``folds``-fold cross-validation; ``mode: holdout`` trains on
    each dataset's given training part and tests on its given test part, once (``rounds``
    and ``folds`` are then unused). A value of another type, or another mode, fails when
    Hydra composes the config. Fields and defaults are :class:`Protocol`'s (``mode`` typed as
    :class:`ProtocolMode`).
    """
    return cls


CVConfig = _cv_config()


def split_seed(seed: int, dataset: str, round_: int) -> np.random.SeedSequence:
    """The seed of one round's split: a function of (experiment seed, dataset, round) only.

    Parameters
    ----------
    seed : int
        The experiment's seed.
    dataset : str
        The dataset's name (its CRC-32 enters the seed).
    round_ : int
        The round.

    Returns
    -------
    numpy.random.SeedSequence
        Seeded with the entropy ``[int(seed), zlib.crc32(dataset), int(round_)]``.
    """
    return np.random.SeedSequence([int(seed), zlib.crc32(dataset.encode()), int(round_)])


def cv_folds(y: np.ndarray, *, seed: int, dataset: str, round_: int, folds: int = 2) -> np.ndarray:
    """Fold number (0..folds-1) of every instance for one round.

    Stratified: instances are shuffled, then dealt to folds in turn within
    each class, so every fold has the class distribution of the whole.

    Parameters
    ----------
    y : ndarray of shape (N,)
        Class codes (any sortable values).
    seed : int
        The experiment's seed.
    dataset : str
        The dataset's name.
    round_ : int
        The round; the shuffle is seeded by :func:`split_seed` of ``(seed, dataset, round_)``.
    folds : int, default=2
        Number of folds.

    Returns
    -------
    ndarray of int64, shape (N,)
        Fold in ``[0, folds)`` of every instance; fold sizes differ by at most one.
    """
    y = np.asarray(y)
    n = y.shape[0]
    rng = np.random.default_rng(split_seed(seed, dataset, round_))
    perm = rng.permutation(n)
    order = perm[np.argsort(y[perm], kind="stable")]  # grouped by class, shuffled within
    fold = np.empty(n, dtype=np.int64)
    # deal in turn, continuing the count across classes so fold sizes differ by at most one
    fold[order] = np.arange(n) % folds
    return fold


def min_rows(folds: int) -> int:
    """The fewest rows ``folds``-fold cross-validation can evaluate: a test row in every fold, and
    at least two training rows in every training part (``n - ceil(n / folds) >= 2``).

    Parameters
    ----------
    folds : int
        Folds per round (>= 2).

    Returns
    -------
    int
        4 for 2 folds, ``folds`` for 3 or more.
    """
    n = int(folds)
    while n - -(-n // folds) < 2:
        n += 1
    return n


def check_dataset_fits(ds, *, folds: int | None) -> None:
    """Refuse, before any task, a dataset the protocol cannot evaluate (one line naming why).

    Parameters
    ----------
    ds : bncbench.data.dataset.Dataset
        The loaded dataset.
    folds : int or None
        Folds per round of cross-validation; ``None`` for the holdout protocol (its given split
        is checked where it is read).

    Raises
    ------
    BNCBenchError
        If ``folds`` is given and the dataset has fewer rows than :func:`min_rows`; or if its
        class has more distinct values than half its rows (fewer than two rows per class on
        average: a continuous target read as a class, whose every fold would score about 1.0).
    """
    from bncbench.errors import BNCBenchError

    if folds is not None and ds.n_instances < min_rows(folds):
        raise BNCBenchError(f"dataset {ds.name!r} has {ds.n_instances} rows; {folds}-fold cross-validation needs at "
                            f"least {min_rows(folds)} (a test row in every fold, two training rows in every training "
                            "part)")
    if ds.n_classes > ds.n_instances / 2:
        raise BNCBenchError(f"dataset {ds.name!r}: its class has {ds.n_classes} distinct values on {ds.n_instances} "
                            "rows, fewer than two rows per class (a continuous target?); a classifier needs a nominal "
                            "class (discretize the target first)")

"""The authors' KDB and selective KDB learner ("Gigal", github ``anamf/SKDB``) as a peer, on the same codes.

Petitjean et al. (2018) and Martínez et al.'s selective KDB were computed with Gigal, a C++ learner of
Monash University. Its README asks that it not be redistributed, so nothing of it is kept here: the
peer is built from a copy fetched by the user (``$BNCBENCH_GIGAL_SOURCE``: a source checkout or a git
directory, :func:`bncbench.settings.gigal_source`).

* :func:`connect4_split`, :func:`adult_split`: the two datasets coded and split as the anchors' ``prep.py``
  (``anchors/gigal/prep.py``) codes them, the one home of that encoding (``tests/test_backoff.py`` and
  ``benchmarks/bench_skdb.py`` use it);
* :func:`write_files`: a split as Gigal's ``.pmeta`` / ``.pdata`` text files;
* :func:`build`: extract, instrument and compile Gigal with ``g++`` (cached by the sources' hash);
* :func:`run`: train on the training file, test on the test file, and read its report: test 0-1 loss,
  CPU times of ``train()`` and of the test loop, the whole process's wall and CPU time.

The instrumentation: Gigal's ``trainTest.cpp`` times ``train()`` and the test loop with ``getrusage`` but
keeps whole seconds only. The build copy's four readings of ``ru_utime.tv_sec + ru_stime.tv_sec`` are
replaced by the same sum in microseconds (:func:`instrument`), so its report's "Training time" and
"Classification time" are CPU microseconds (user + system); nothing else changes.
"""

from __future__ import annotations

import hashlib
import io
import re
import resource
import shutil
import subprocess
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import NamedTuple

import numpy as np
import pandas as pd

from bncbench import settings
from bncbench.atomic import publish_directory
from bncbench.errors import BNCBenchError

__all__ = ["GIGAL_LEARNERS", "SPLITS", "GigalFiles", "GigalRun", "Split", "adult_split", "anchor_probs",
           "anchors_dir", "build", "connect4_split", "instrument", "learner_args", "parse_report", "run",
           "source_tree", "split_rows", "write_files"]

GIGAL_LEARNERS = {"kdb": ("-lkdb",), "skdb": ("-lkdb-Selective", "-selectiveK")}
"""Gigal's learner arguments for each of our structures (``-k<k>`` follows): KDB-k, and SkDB choosing both
the attributes and k* <= k by leave-one-out RMSE."""

CXX_FLAGS = ("-O3", "-DNDEBUG", "-fpermissive", "-w")
"""The makefile's flags (``-O3 -DNDEBUG``) and ``-fpermissive``: GCC >= 12 rejects a template of its
``utils.h`` that calls a function declared after it (two-phase lookup) without it; ``-w``: its warnings."""

_SECONDS = "usage.ru_utime.tv_sec+usage.ru_stime.tv_sec"
_MICROSECONDS = ("(usage.ru_utime.tv_sec*1000000L+usage.ru_utime.tv_usec"
                 "+usage.ru_stime.tv_sec*1000000L+usage.ru_stime.tv_usec)")
_TIMED_FILE = "trainTest.cpp"
_TAG = "bncbench: CPU microseconds"


# --------------------------------------------------------------------------------------- the data
class Split(NamedTuple):
    """A dataset's codes split in a training and a test half (unpacks as ``Xtr, ytr, Xte, yte, cards``)."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    cards: list

    @property
    def n_classes(self) -> int:
        """The number of classes (codes ``0 .. n_classes - 1``, from both halves)."""
        return int(max(self.y_train.max(), self.y_test.max())) + 1


def split_rows(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``prep.py``'s split: ``default_rng(0).permutation(n)``, training the first ``n // 2`` rows, test the rest.

    Parameters
    ----------
    n : int
        The number of rows.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        The training rows and the test rows.
    """
    perm = np.random.default_rng(0).permutation(n)
    return perm[: n // 2], perm[n // 2:]


def _rank_codes(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Every value coded by its rank among the column's distinct values (sorted), and their number."""
    vals, codes = np.unique(values, return_inverse=True)
    return codes.astype(np.int64), len(vals)


def connect4_split(data_dir) -> Split:
    """connect-4 as ``prep.py`` codes and splits it: every column and the class coded by the rank of its value.

    Parameters
    ----------
    data_dir : str or pathlib.Path
        The directory holding ``connect-4.csv.gz`` (the shared UCI data).

    Returns
    -------
    Split
        33,778 training and 33,779 test rows of 42 three-valued attributes.
    """
    raw = pd.read_csv(Path(data_dir) / "connect-4.csv.gz", header=None).to_numpy()
    cols = [_rank_codes(raw[:, j]) for j in range(raw.shape[1] - 1)]
    X = np.column_stack([codes for codes, _ in cols])
    y = _rank_codes(raw[:, -1])[0]
    tr, te = split_rows(len(y))
    return Split(X[tr], y[tr], X[te], y[te], [c for _, c in cols])


def adult_split(data_dir) -> Split:
    """adult as ``prep.py`` codes and splits it.

    The numeric columns are cut once by our MDL (Fayyad-Irani) on the training half, a missing value
    ('?') a code of its own after the intervals; the nominal columns are coded by sorted distinct value
    ('?' is a value); the class by its sorted labels, a trailing '.' removed.

    Parameters
    ----------
    data_dir : str or pathlib.Path
        The directory holding ``adult.csv.gz``.

    Returns
    -------
    Split
        The training and test halves.
    """
    from bncbench.model.discretize import apply_cuts, mdl_cut_points

    df = pd.read_csv(Path(data_dir) / "adult.csv.gz", header=None, skipinitialspace=True, dtype=str)
    df = df.apply(lambda c: c.str.strip())
    y, n_classes = _rank_codes(df.iloc[:, -1].str.rstrip(".").to_numpy())
    tr, te = split_rows(len(y))
    X = np.empty((len(df), df.shape[1] - 1), dtype=np.int64)
    cards = []
    for j in range(df.shape[1] - 1):
        col = df.iloc[:, j]
        num = pd.to_numeric(col.replace("?", np.nan), errors="coerce")
        if num.notna().sum() == col.ne("?").sum():  # numeric column
            x = num.to_numpy(dtype=np.float64)
            ok = ~np.isnan(x[tr])
            cuts = mdl_cut_points(x[tr][ok], y[tr][ok], n_classes)
            codes = apply_cuts(x, cuts)
            c = len(cuts) + 1
            if (codes < 0).any():  # a missing numeric value: its own code
                codes[codes < 0] = c
                c += 1
            X[:, j] = codes
            cards.append(c)
        else:
            X[:, j], c = _rank_codes(col.to_numpy())
            cards.append(c)
    return Split(X[tr], y[tr], X[te], y[te], cards)


SPLITS = {"connect-4": connect4_split, "adult": adult_split}
"""The datasets the anchors measured, by name."""


def anchors_dir() -> Path:
    """The anchors' directory: ``$BNCBENCH_ANCHORS_DIR``, or ``shared/anchors`` beside the repository.

    Returns
    -------
    pathlib.Path
        The directory (it may not exist).
    """
    from bncbench.paths import REPO_ROOT

    return settings.anchors_dir() or REPO_ROOT.parent / "shared" / "anchors"


def anchor_probs(dataset: str, model: str) -> Path:
    """The file of stock Gigal's test-set probabilities for ``dataset`` (``connect-4``) and ``model`` (``skdb5``).

    Parameters
    ----------
    dataset : str
        A name of :data:`SPLITS`.
    model : str
        ``kdb1``, ``kdb5`` or ``skdb5``.

    Returns
    -------
    pathlib.Path
        ``anchors/gigal/probs/<dataset without '-'>.<model>.test.txt.gz`` (it may not exist).
    """
    return anchors_dir() / "gigal" / "probs" / f"{dataset.replace('-', '')}.{model}.test.txt.gz"


# ------------------------------------------------------------------------------------ Gigal's files
@dataclass(frozen=True)
class GigalFiles:
    """The three files Gigal reads: the metadata, the training and the test data."""

    meta: Path
    train: Path
    test: Path


def _pdata(path: Path, X: np.ndarray, y: np.ndarray) -> None:
    """Rows as ``v<code>,...,c<class>`` lines."""
    cells = np.char.add("v", np.asarray(X, dtype=np.int64).astype(str))
    table = pd.DataFrame(np.column_stack([cells, np.char.add("c", np.asarray(y, dtype=np.int64).astype(str))]))
    table.to_csv(path, header=False, index=False, lineterminator="\n")


def write_files(split: Split, directory, name: str) -> GigalFiles:
    """Write a split as Gigal's ``<name>.pmeta``, ``<name>.train.pdata`` and ``<name>.test.pdata``.

    Attribute ``j`` is ``a<j>`` with values ``v0 .. v<card - 1>``, the class ``class`` with values
    ``c0 .. c<n - 1>`` (the last column of the data), as ``prep.py`` writes them.

    Parameters
    ----------
    split : Split
        The codes (every code in ``[0, card)``).
    directory : str or pathlib.Path
        Where to write (created if needed).
    name : str
        The files' stem.

    Returns
    -------
    GigalFiles
        Their paths.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    cards = np.asarray(split.cards, dtype=np.int64)
    for X in (split.X_train, split.X_test):
        if ((X < 0) | (X >= cards)).any():
            raise BNCBenchError("every code must be in [0, card) to be written for Gigal")
    files = GigalFiles(directory / f"{name}.pmeta", directory / f"{name}.train.pdata", directory / f"{name}.test.pdata")
    lines = [f"a{j}: " + ",".join(f"v{v}" for v in range(c)) for j, c in enumerate(cards)]
    lines.append("class: " + ",".join(f"c{v}" for v in range(split.n_classes)))
    files.meta.write_text("\n".join(lines) + "\n")
    _pdata(files.train, split.X_train, split.y_train)
    _pdata(files.test, split.X_test, split.y_test)
    return files


# ------------------------------------------------------------------------------------------- build
def source_tree(source, into) -> Path:
    """Gigal's sources as a directory: ``source`` itself when it holds ``gigal.cpp``, else ``HEAD`` of the
    git directory it is (or holds as ``.git``), extracted into ``into``.

    Parameters
    ----------
    source : str or pathlib.Path
        A source checkout, or a git directory (bare, or a checkout's ``.git``).
    into : str or pathlib.Path
        Where a git directory's ``HEAD`` is extracted.

    Returns
    -------
    pathlib.Path
        A directory holding ``gigal.cpp`` and its ``makefile``.
    """
    source = Path(source).expanduser()
    if (source / "gigal.cpp").is_file():
        return source
    git_dir = source / ".git" if (source / ".git").is_dir() else source
    if not ((git_dir / "HEAD").is_file() and (git_dir / "objects").is_dir()):
        raise BNCBenchError(f"no Gigal sources at {source}: neither gigal.cpp nor a git directory")
    if shutil.which("git") is None:
        raise BNCBenchError(f"git is needed to read the Gigal sources of the git directory {source}")
    res = subprocess.run(["git", f"--git-dir={git_dir}", "archive", "--format=tar", "HEAD"], capture_output=True)
    if res.returncode != 0:
        raise BNCBenchError(f"git archive HEAD failed in {git_dir}: {res.stderr.decode().strip()[-200:]}")
    into = Path(into)
    into.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(res.stdout)) as tar:
        _extract(tar, into, git_dir)
    if not (into / "gigal.cpp").is_file():
        raise BNCBenchError(f"the git directory {git_dir} holds no gigal.cpp at its top")
    return into


def _extract(tar: tarfile.TarFile, into: Path, git_dir: Path) -> None:
    """Extract ``git archive``'s tar into ``into`` with the "data" filter; on a Python without extraction filters
    (3.11 before 3.11.4: Debian 12's 3.11.2) after checking as that filter would that every member is a file or a
    directory below ``into`` (a git archive's links are refused there)."""
    if hasattr(tarfile, "data_filter"):
        tar.extractall(into, filter="data")
        return
    for member in tar.getmembers():
        parts = PurePosixPath(member.name).parts
        if member.name.startswith("/") or ".." in parts or not (member.isfile() or member.isdir()):
            raise BNCBenchError(f"the git archive of {git_dir} holds {member.name!r}, which this Python cannot "
                                "extract safely (a link, or a path outside; Python 3.11.4 or later can)")
    tar.extractall(into)


def instrument(text: str) -> str:
    """``trainTest.cpp`` with its CPU readings in microseconds instead of whole seconds.

    Parameters
    ----------
    text : str
        The file's text.

    Returns
    -------
    str
        The text with its four readings of ``ru_utime.tv_sec + ru_stime.tv_sec`` (before and after
        ``train()`` and the test loop) as microseconds, and a comment saying so.
    """
    if text.count(_SECONDS) != 4:
        raise BNCBenchError(f"Gigal's {_TIMED_FILE} is not the one this peer instruments: "
                            f"{text.count(_SECONDS)} CPU readings in whole seconds, 4 expected")
    return f"/* {_TAG} */\n" + text.replace(_SECONDS, _MICROSECONDS)


def build(source=None, build_dir=None) -> Path:
    """Gigal compiled, instrumented (:func:`instrument`); built once per sources and flags.

    Processes that build at once (pytest-xdist workers, two runs sharing a cache) each stage and
    compile in a directory of their own; the first to finish puts its build in place, and the others
    return it.

    Parameters
    ----------
    source : str or pathlib.Path, optional
        A source checkout or git directory; default ``$BNCBENCH_GIGAL_SOURCE``.
    build_dir : str or pathlib.Path, optional
        Where builds are kept, one subdirectory per hash of the sources and flags; default
        ``gigal/`` of the parse cache's directory (``$BNCBENCH_CACHE_DIR``).

    Returns
    -------
    pathlib.Path
        The executable.
    """
    from bncbench.data.cache import cache_dir

    source = source if source is not None else settings.gigal_source()
    if source is None:
        raise BNCBenchError(f"no Gigal sources: set {settings.GIGAL_SOURCE} to a checkout or git directory of "
                            "github anamf/SKDB")
    if shutil.which("g++") is None:
        raise BNCBenchError("g++ is needed to build Gigal and is not on PATH")
    root = Path(build_dir) if build_dir is not None else cache_dir() / "gigal"
    root.mkdir(parents=True, exist_ok=True)
    # this process's own staging and build directories: concurrent builds (pytest-xdist workers, two runs
    # sharing a cache) never remove each other's files; the first to finish puts its build in place
    with tempfile.TemporaryDirectory(dir=root, prefix="sources-") as staging:
        tree = source_tree(source, staging)
        makefile = (tree / "makefile").read_text()
        found = re.search(r"^SOURCE\s*=\s*(.+)$", makefile, flags=re.M)
        if found is None:
            raise BNCBenchError(f"Gigal's makefile in {tree} names no SOURCE files")
        units = found.group(1).split()
        texts = {p.name: p.read_bytes() for p in sorted(tree.iterdir()) if p.suffix in (".cpp", ".h")}
    texts[_TIMED_FILE] = instrument(texts[_TIMED_FILE].decode("latin-1")).encode("latin-1")
    digest = hashlib.sha256(" ".join(CXX_FLAGS + tuple(units)).encode())
    for name, data in texts.items():
        digest.update(name.encode() + b"\0" + data)
    out = root / digest.hexdigest()[:16]
    binary = out / "gigal"
    if binary.is_file():
        return binary
    work = Path(tempfile.mkdtemp(dir=root, prefix=f"{out.name}.building-"))  # kept if g++ fails, to look into
    for name, data in texts.items():
        (work / name).write_bytes(data)
    res = subprocess.run(["g++", *CXX_FLAGS, "-o", "gigal", *units], cwd=work, capture_output=True, text=True)
    if res.returncode != 0:
        first = next((ln for ln in res.stderr.splitlines() if "error" in ln), res.stderr.strip()[-200:])
        raise BNCBenchError(f"g++ failed to build Gigal in {work}: {first}")
    publish_directory(work, out, binary)  # or another process's build of the same sources: the same binary
    return binary


# --------------------------------------------------------------------------------------------- run
@dataclass(frozen=True)
class GigalRun:
    """One Gigal train / test run.

    ``fit`` and ``predict`` are CPU seconds (user + system) of ``train()`` and of the test loop, measured
    inside Gigal (both include reading its text files: Gigal streams them); ``process_wall`` and
    ``process_cpu`` are the whole process's.
    """

    zero_one: float
    n_test: int
    fit: float
    predict: float
    process_wall: float
    process_cpu: float


def learner_args(structure: str, k: int) -> list[str]:
    """Gigal's arguments for our ``structure`` (``kdb`` or ``skdb``) with ``k`` parents at most.

    Parameters
    ----------
    structure : str
        A key of :data:`GIGAL_LEARNERS`.
    k : int
        The number of attribute parents.

    Returns
    -------
    list of str
        E.g. ``["-lkdb-Selective", "-selectiveK", "-k5"]``.
    """
    if structure not in GIGAL_LEARNERS:
        raise BNCBenchError(f"Gigal has no learner for the structure {structure!r} here "
                            f"(known: {', '.join(GIGAL_LEARNERS)})")
    return [*GIGAL_LEARNERS[structure], f"-k{int(k)}"]


def parse_report(text: str) -> dict:
    """Read Gigal's train / test report (its standard output).

    Parameters
    ----------
    text : str
        The output of an instrumented build.

    Returns
    -------
    dict
        ``n_test``, ``zero_one`` and the CPU seconds ``fit`` and ``predict``.
    """
    fields = {"n_test": r"^(\d+) test cases$", "zero_one": r"^0-1 loss = ([0-9.]+)$",
              "fit": r"^Training time: (\d+)$", "predict": r"^Classification time: (\d+)$"}
    out = {}
    for key, pattern in fields.items():
        found = re.search(pattern, text, flags=re.M)
        if found is None:
            raise BNCBenchError(f"Gigal's report has no {key.replace('_', ' ')} line")
        out[key] = found.group(1)
    return {"n_test": int(out["n_test"]), "zero_one": float(out["zero_one"]),
            "fit": int(out["fit"]) / 1e6, "predict": int(out["predict"]) / 1e6}


def run(binary, files: GigalFiles, structure: str, k: int, *, timeout: float = 600.0) -> GigalRun:
    """Train Gigal on ``files.train`` and test it on ``files.test``.

    Parameters
    ----------
    binary : str or pathlib.Path
        An executable from :func:`build`.
    files : GigalFiles
        The data, from :func:`write_files`.
    structure : str
        ``kdb`` or ``skdb``.
    k : int
        The number of attribute parents (SkDB: at most).
    timeout : float
        Seconds before the run is abandoned.

    Returns
    -------
    GigalRun
        Its test 0-1 loss and times.
    """
    cmd = [str(binary), str(files.meta), str(files.train), f"-t{files.test}", "-v0", *learner_args(structure, k)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        tail = (res.stderr.strip() or res.stdout.strip()).splitlines()[-1:]
        raise BNCBenchError(f"Gigal failed ({' '.join(cmd[3:])}): {tail}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return GigalRun(**parse_report(res.stdout), process_wall=wall, process_cpu=cpu)

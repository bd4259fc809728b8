"""Weka as a peer: run a Weka classifier on the same integer codes and read its class probabilities.

The codes are written as a nominal ARFF (attribute ``j`` takes the values ``0 .. cards[j] - 1``,
the class ``0 .. n_classes - 1``; a missing value coded by the project as a value of its own is
such a value, so Weka never sees ``?``). A small Java class (:data:`JAVA_SOURCE`, compiled once
per machine against the jar with ``javac``) builds the classifier, prints its build and
prediction times measured inside the JVM and every class distribution to full precision
(``Double.toString`` round-trips). Used by ``tests/test_weka.py`` and ``benchmarks/bench_anjde.py``.

The jar is ``$WEKA_JAR`` or ``/usr/share/java/weka.jar`` (Debian's ``apt-get install weka``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bncbench import settings
from bncbench.atomic import publish_directory
from bncbench.errors import BNCBenchError

DEFAULT_JAR = "/usr/share/java/weka.jar"
MAIN_CLASS = "BncbenchWekaDistribution"
JAVA_SOURCE = """\
import java.io.*;
import weka.core.*;

/** Build a Weka classifier on train.arff, print build/predict seconds and test.arff's class distributions. */
public class BncbenchWekaDistribution {
  public static void main(String[] args) throws Exception {
    String name = args[0];
    Instances train = new Instances(new BufferedReader(new FileReader(args[1])));
    Instances test = new Instances(new BufferedReader(new FileReader(args[2])));
    train.setClassIndex(train.numAttributes() - 1);
    test.setClassIndex(test.numAttributes() - 1);
    String[] options = new String[args.length - 3];
    System.arraycopy(args, 3, options, 0, options.length);
    weka.classifiers.Classifier c =
        (weka.classifiers.Classifier) Class.forName(name).getDeclaredConstructor().newInstance();
    ((OptionHandler) c).setOptions(options);
    long t0 = System.nanoTime();
    c.buildClassifier(train);
    long t1 = System.nanoTime();
    double[][] dist = new double[test.numInstances()][];
    for (int i = 0; i < test.numInstances(); i++) dist[i] = c.distributionForInstance(test.instance(i));
    long t2 = System.nanoTime();
    PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out), 1 << 16));
    out.println((t1 - t0) / 1e9 + " " + (t2 - t1) / 1e9);
    StringBuilder sb = new StringBuilder();
    for (double[] d : dist) {
      sb.setLength(0);
      for (int k = 0; k < d.length; k++) { if (k > 0) sb.append(' '); sb.append(Double.toString(d[k])); }
      out.println(sb);
    }
    out.flush();
  }
}
"""


@dataclass
class WekaResult:
    """A Weka run: class probabilities of the test rows and times in seconds.

    ``build`` and ``predict`` are measured inside the JVM around ``buildClassifier`` and the loop of
    ``distributionForInstance``; ``process`` is the whole Java process (JVM start, ARFF parsing).
    """

    proba: np.ndarray
    build: float
    predict: float
    process: float


def weka_jar() -> Path | None:
    """The Weka jar, or None when there is none (or no ``java``/``javac`` to run it)."""
    jar = settings.weka_jar() or Path(DEFAULT_JAR)
    if not jar.is_file() or shutil.which("java") is None or shutil.which("javac") is None:
        return None
    return jar


def write_codes_arff(path, codes: np.ndarray, y: np.ndarray, cards, n_classes: int) -> None:
    """Integer codes (all in range) and class codes as a nominal ARFF, the class last."""
    codes = np.asarray(codes, dtype=np.int64)
    cards = np.asarray(cards, dtype=np.int64)
    if ((codes < 0) | (codes >= cards)).any():
        raise BNCBenchError("every code must be in [0, card) to be written as a nominal ARFF value")
    lines = ["@relation codes"]
    lines += [f"@attribute a{j} {{{','.join(map(str, range(int(c))))}}}" for j, c in enumerate(cards)]
    lines += [f"@attribute class {{{','.join(map(str, range(int(n_classes))))}}}", "@data"]
    table = np.column_stack([codes, np.asarray(y, dtype=np.int64)])
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
        np.savetxt(fh, table, fmt="%d", delimiter=",")


def _compiled(jar: Path) -> Path:
    """Directory holding the compiled :data:`MAIN_CLASS` for ``jar`` (compiled on first use).

    Compiled in a directory of this process's own and moved into place whole, so that a process that
    compiles at the same time (a pytest-xdist worker) never loads a half-written class file.
    """
    tag = hashlib.sha256((JAVA_SOURCE + str(jar.resolve())).encode()).hexdigest()[:16]
    out = Path(tempfile.gettempdir()) / f"bncbench-weka-{tag}"
    if not (out / f"{MAIN_CLASS}.class").is_file():
        work = Path(tempfile.mkdtemp(prefix=f"{out.name}.building-"))
        src = work / f"{MAIN_CLASS}.java"
        src.write_text(JAVA_SOURCE)
        res = subprocess.run(["javac", "-nowarn", "-cp", str(jar), "-d", str(work), str(src)], capture_output=True,
                             text=True)
        if res.returncode != 0:
            shutil.rmtree(work, ignore_errors=True)
            raise BNCBenchError(f"javac failed on the Weka runner: {res.stderr.strip().splitlines()[-1:]}")
        try:
            publish_directory(work, out, out / f"{MAIN_CLASS}.class")  # or another process's compilation
        except OSError:
            raise BNCBenchError(f"{out} holds no {MAIN_CLASS}.class (left by an earlier version's failed "
                                "compilation?): remove it and run again") from None
    return out


def run_weka(classifier: str, options, train_codes, train_y, test_codes, cards, n_classes: int, *,
             java_options=(), workdir=None) -> WekaResult:
    """Fit Weka's ``classifier`` (e.g. ``"weka.classifiers.bayes.AODE"``) with ``options`` and predict ``test_codes``.

    Raises :class:`BNCBenchError` when Weka is not available or fails.
    """
    jar = weka_jar()
    if jar is None:
        raise BNCBenchError(f"Weka is not available: no jar at $WEKA_JAR or {DEFAULT_JAR}, or no java/javac")
    classes = _compiled(jar)
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        train, test = Path(tmp) / "train.arff", Path(tmp) / "test.arff"
        write_codes_arff(train, train_codes, train_y, cards, n_classes)
        write_codes_arff(test, test_codes, np.zeros(len(test_codes), dtype=np.int64), cards, n_classes)
        cmd = ["java", *java_options, "-cp", f"{jar}{os.pathsep}{classes}", MAIN_CLASS, classifier, str(train),
               str(test), *map(str, options)]
        t0 = time.perf_counter()
        res = subprocess.run(cmd, capture_output=True, text=True)
        process = time.perf_counter() - t0
    if res.returncode != 0:
        tail = [ln for ln in res.stderr.strip().splitlines() if ln.strip()][-1:]
        raise BNCBenchError(f"Weka {classifier} failed: {tail}")
    head, _, body = res.stdout.partition("\n")
    build, predict = (float(v) for v in head.split())
    proba = np.loadtxt(body.splitlines(), ndmin=2) if body.strip() else np.zeros((0, n_classes))
    return WekaResult(proba, build, predict, process)

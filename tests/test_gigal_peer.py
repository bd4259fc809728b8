"""The authors' KDB / SkDB learner as a peer (``bncbench.peers.gigal``): its files, build, report and our agreement.

The encoding is checked byte for byte against the anchors' own ``prep.py``; the build and the report
reader on a toy program shaped like Gigal's ``trainTest.cpp`` (its CPU readings must come out in
microseconds: whole seconds read 0 for a fraction of a second); and, when ``$BNCBENCH_GIGAL_SOURCE``
names a copy of github ``anamf/SKDB``, the real learner built from it against ours with the authors'
back-off (same test 0-1 loss on connect-4 and adult).
"""

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from conftest import REPO, data_dir_or_skip

from bncbench import BNClassifier, settings
from bncbench.errors import BNCBenchError
from bncbench.peers import gigal

SMALL = gigal.Split(np.array([[0, 2], [1, 0]]), np.array([1, 0]), np.array([[1, 1]]), np.array([1]), [2, 3])


def test_write_files_writes_what_prep_py_writes(tmp_path):
    files = gigal.write_files(SMALL, tmp_path / "out", "toy")
    assert files.meta.read_text() == "a0: v0,v1\na1: v0,v1,v2\nclass: c0,c1\n"
    assert files.train.read_text() == "v0,v2,c1\nv1,v0,c0\n"
    assert files.test.read_text() == "v1,v1,c1\n"
    bad = SMALL._replace(X_test=np.array([[2, 0]]))
    with pytest.raises(BNCBenchError, match=r"^every code must be in \[0, card\) to be written for Gigal$"):
        gigal.write_files(bad, tmp_path, "bad")


def test_the_split_is_prep_pys():
    tr, te = gigal.split_rows(7)
    perm = np.random.default_rng(0).permutation(7)
    np.testing.assert_array_equal(np.concatenate([tr, te]), perm)
    assert (len(tr), len(te)) == (3, 4)


@pytest.mark.data
def test_the_encoding_is_the_anchors_prep_py_byte_for_byte(tmp_path):
    prep = gigal.anchors_dir() / "gigal" / "prep.py"
    if not prep.is_file():
        pytest.skip(f"the anchors' prep.py is absent ({prep}; set BNCBENCH_ANCHORS_DIR)")
    src = data_dir_or_skip()
    # prep.py was written when the discretizer was bncbench.discretize (now bncbench.model.discretize): run it
    # with that name bound to the module, unchanged otherwise
    run = ("import runpy, sys; import bncbench.model.discretize as d; sys.modules['bncbench.discretize'] = d; "
           "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')")
    subprocess.run([sys.executable, "-c", run, str(prep), src, str(tmp_path / "prep")], check=True,
                   capture_output=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    for name, load in gigal.SPLITS.items():
        stem = name.replace("-", "")
        split = load(src)
        gigal.write_files(split, tmp_path / "ours", stem)
        for suffix in (".pmeta", ".train.pdata", ".test.pdata"):
            assert (tmp_path / "ours" / f"{stem}{suffix}").read_bytes() == \
                   (tmp_path / "prep" / f"{stem}{suffix}").read_bytes(), (name, suffix)
        theirs = np.load(tmp_path / "prep" / f"{stem}.npz")
        for field, key in zip(gigal.Split._fields, ("Xtr", "ytr", "Xte", "yte", "cards")):
            np.testing.assert_array_equal(getattr(split, field), theirs[key])
        assert split.n_classes == int(theirs["n_classes"])


def test_instrument_reads_cpu_time_in_microseconds():
    reading = "usage.ru_utime.tv_sec+usage.ru_stime.tv_sec"
    text = "\n".join([f"a = {reading};", f"a = (({reading})-a);", f"b= {reading};", f"b = (({reading})-b);"])
    out = gigal.instrument(text)
    assert reading not in out and out.count("usage.ru_utime.tv_usec") == 4 and out.count("1000000L") == 8
    with pytest.raises(BNCBenchError, match=r"^Gigal's trainTest.cpp is not the one this peer instruments: 3 CPU "
                                            r"readings in whole seconds, 4 expected$"):
        gigal.instrument(text.rsplit("\n", 1)[0])


def test_parse_report_and_learner_args():
    report = ("======================\nGigal\n\n33779 test cases\n0-1 loss = 0.138044\nRoot mean squared error = 0.3\n"
              "Training time: 432620\nClassification time: 94352\n")
    assert gigal.parse_report(report) == {"n_test": 33779, "zero_one": 0.138044, "fit": 0.43262, "predict": 0.094352}
    with pytest.raises(BNCBenchError, match=r"^Gigal's report has no zero one line$"):
        gigal.parse_report(report.replace("0-1 loss", "loss"))
    assert gigal.learner_args("skdb", 5) == ["-lkdb-Selective", "-selectiveK", "-k5"]
    assert gigal.learner_args("kdb", 1) == ["-lkdb", "-k1"]
    with pytest.raises(BNCBenchError, match=r"^Gigal has no learner for the structure .tan. here \(known: kdb, skdb\)"):
        gigal.learner_args("tan", 1)


def test_settings_name_the_source_and_the_anchors(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    for variable in (settings.GIGAL_SOURCE, settings.ANCHORS_DIR):
        monkeypatch.setenv(variable, "")
    assert settings.gigal_source() is None and settings.anchors_dir() is None
    assert gigal.anchors_dir() == REPO.parent / "shared" / "anchors"
    with pytest.raises(BNCBenchError, match=r"^no Gigal sources: set BNCBENCH_GIGAL_SOURCE to a checkout or git "
                                            r"directory of github anamf/SKDB$"):
        gigal.build()
    monkeypatch.setenv(settings.GIGAL_SOURCE, "~/skdb")
    monkeypatch.setenv(settings.ANCHORS_DIR, "~/a")
    assert settings.gigal_source() == tmp_path / "skdb"
    assert gigal.anchor_probs("connect-4", "skdb5") == tmp_path / "a" / "gigal" / "probs" / "connect4.skdb5.test.txt.gz"


# A toy with Gigal's layout: a makefile naming its SOURCE, and a trainTest.cpp reading the CPU time four
# times as Gigal's does, around about 0.05 s of work for "train()" and the "test loop".
TOY_MAIN = """#include <cstdio>
void trainTest(int argc);
int main(int argc, char** argv) { trainTest(argc); return 0; }
"""
TOY_TRAIN_TEST = """#include <cstdio>
#include <sys/time.h>
#include <sys/resource.h>
static double work(long n) { volatile double s = 0; for (long i = 0; i < n; i++) s = s + 1.0 / (i + 1); return s; }
void trainTest(int argc) {
  struct rusage usage;
  long int trainTime = 0, testTime = 0;
  getrusage(RUSAGE_SELF, &usage);
  trainTime = usage.ru_utime.tv_sec+usage.ru_stime.tv_sec;
  work(40000000L);
  getrusage(RUSAGE_SELF, &usage);
  trainTime = ((usage.ru_utime.tv_sec+usage.ru_stime.tv_sec)-trainTime);
  getrusage(RUSAGE_SELF, &usage);
  testTime= usage.ru_utime.tv_sec+usage.ru_stime.tv_sec;
  work(20000000L);
  getrusage(RUSAGE_SELF, &usage);
  testTime = ((usage.ru_utime.tv_sec+usage.ru_stime.tv_sec)-testTime);
  printf("\\n%d test cases\\n0-1 loss = %0.6f\\nTraining time: %ld\\nClassification time: %ld\\n",
         argc, 0.25, trainTime, testTime);
}
"""


def _toy_sources(directory):
    directory.mkdir(parents=True)
    (directory / "gigal.cpp").write_text(TOY_MAIN)
    (directory / "trainTest.cpp").write_text(TOY_TRAIN_TEST)
    (directory / "makefile").write_text("CC = g++\nSOURCE  = gigal.cpp trainTest.cpp\ngigal: ${SOURCE}\n")
    return directory


@pytest.mark.skipif(shutil.which("g++") is None or shutil.which("git") is None, reason="needs g++ and git")
def test_build_from_a_checkout_or_a_git_directory_and_run(tmp_path):
    checkout = _toy_sources(tmp_path / "checkout")
    binary = gigal.build(checkout, tmp_path / "builds")
    assert gigal.build(checkout, tmp_path / "builds") == binary  # built once per sources
    files = gigal.write_files(SMALL, tmp_path / "data", "toy")
    got = gigal.run(binary, files, "skdb", 5)
    assert (got.n_test, got.zero_one) == (8, 0.25)  # 8 arguments: the program, 3 files, -v0 and SkDB's three
    assert got.fit > 0 and got.predict > 0          # whole seconds would read 0 for this little work
    assert got.process_cpu >= got.fit + got.predict - 0.01

    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q", str(checkout)], check=True)
    subprocess.run([*git, "-C", str(checkout), "add", "."], check=True)
    subprocess.run([*git, "-C", str(checkout), "commit", "-qm", "toy"], check=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(checkout), str(tmp_path / "bare.git")], check=True)
    for source in (tmp_path / "bare.git", checkout / ".git"):
        tree = gigal.source_tree(source, tmp_path / "x" / source.name)
        assert (tree / "trainTest.cpp").read_text() == TOY_TRAIN_TEST
    assert gigal.build(tmp_path / "bare.git", tmp_path / "builds") == binary  # the same sources
    with pytest.raises(BNCBenchError, match=r"^no Gigal sources at .*: neither gigal.cpp nor a git directory$"):
        gigal.source_tree(tmp_path / "data", tmp_path / "y")


@pytest.mark.skipif(shutil.which("g++") is None or shutil.which("git") is None, reason="needs g++ and git")
def test_builds_at_once_into_one_directory_give_one_binary(tmp_path):
    """Three builds of the same sources started together (as pytest-xdist workers would): none removes
    another's files, all return the one build put in place, and no staging or build directory is left."""
    import concurrent.futures
    import threading

    checkout = _toy_sources(tmp_path / "checkout")
    subprocess.run(["git", "init", "-q", str(checkout)], check=True)
    git = ["git", "-C", str(checkout), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "toy"], check=True)
    start = threading.Barrier(3)

    def build(_):
        start.wait()
        return gigal.build(checkout / ".git", tmp_path / "builds")  # staged from git: the staging shared before

    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        binaries = list(pool.map(build, range(3)))
    assert len(set(binaries)) == 1 and binaries[0].is_file()
    assert sorted(p.name for p in (tmp_path / "builds").iterdir()) == [binaries[0].parent.name]
    files = gigal.write_files(SMALL, tmp_path / "data", "toy")
    assert gigal.run(binaries[0], files, "skdb", 5).n_test == 8


@pytest.mark.data
@pytest.mark.slow
def test_the_authors_learner_built_here_makes_our_test_errors(tmp_path):
    """Gigal built from ``$BNCBENCH_GIGAL_SOURCE`` (about a minute of g++ the first time) and ours with its
    back-off: the same test 0-1 loss for KDB-1, KDB-5 and SkDB-5 on both of ``prep.py``'s splits."""
    source = settings.gigal_source()
    if source is None:
        pytest.skip(f"the authors' sources are absent: set {settings.GIGAL_SOURCE} to a checkout or git directory "
                    "of github anamf/SKDB")
    if shutil.which("g++") is None:
        pytest.skip("g++ is not on PATH")
    binary = gigal.build(source)
    src = data_dir_or_skip()
    for name, load in gigal.SPLITS.items():
        split = load(src)
        files = gigal.write_files(split, tmp_path, name)
        for structure, k in (("kdb", 1), ("kdb", 5), ("skdb", 5)):
            theirs = gigal.run(binary, files, structure, k)
            clf = BNClassifier(structure=structure, k=k, m=1.0, backoff="any_class", cardinalities=split.cards)
            ours = np.mean(clf.fit(split.X_train, split.y_train).predict(split.X_test) != split.y_test)
            assert theirs.n_test == len(split.y_test)
            assert ours == pytest.approx(theirs.zero_one, abs=5e-7), (name, structure, k)


def _tar(*members):
    """An in-memory tar of ``(name, kind)`` members (``file``: a short text; ``link``: a symlink to ``/etc/passwd``)."""
    import io
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, kind in members:
            info = tarfile.TarInfo(name)
            if kind == "link":
                info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
                tar.addfile(info)
            else:
                data = b"int main() {}\n"
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    buf.seek(0)
    return tarfile.open(fileobj=buf)


@pytest.mark.parametrize("filters", [True, False])
def test_a_git_archive_is_extracted_safely_with_or_without_extraction_filters(tmp_path, monkeypatch, filters):
    """Python 3.11 before 3.11.4 (Debian 12's 3.11.2) has no ``extractall(filter=...)``: the sources are then checked as
    the "data" filter would check them (files and directories below the target only), and extracted."""
    import tarfile

    if not filters:
        monkeypatch.delattr(tarfile, "data_filter", raising=False)
    elif not hasattr(tarfile, "data_filter"):
        pytest.skip("this Python has no extraction filters")
    with _tar(("src/gigal.cpp", "file")) as tar:
        gigal._extract(tar, tmp_path / "ok", tmp_path)
    assert (tmp_path / "ok" / "src" / "gigal.cpp").read_text() == "int main() {}\n"
    for bad in (("../outside.cpp", "file"), ("src/passwd", "link")):
        refused = (BNCBenchError, getattr(tarfile, "FilterError", BNCBenchError))  # ours, or the data filter's
        with _tar(("gigal.cpp", "file"), bad) as tar, pytest.raises(refused):
            gigal._extract(tar, tmp_path / "bad", tmp_path)
        assert not (tmp_path / "outside.cpp").exists() and not (tmp_path / "bad" / "src" / "passwd").exists()

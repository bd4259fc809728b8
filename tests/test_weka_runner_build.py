"""The Weka runner's one compilation per jar, safe when processes compile at once (pytest-xdist workers).

No Weka needed: a stand-in ``javac`` on ``PATH`` writes the class file in two halves with a pause between,
as a real compiler's output is written over time.
"""

import concurrent.futures
import os
import threading

from bncbench.peers import weka

FAKE_JAVAC = """#!/bin/sh
# javac -nowarn -cp JAR -d DIR SRC: the class file in two halves
echo "$*" >> "$CALLS"
out="$5/$MAIN.class"
printf 'half' > "$out"
sleep 0.3
printf 'half-whole' > "$out"
"""


def test_compilations_at_once_never_expose_a_half_written_class(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    javac = bin_dir / "javac"
    javac.write_text(FAKE_JAVAC)
    javac.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("CALLS", str(tmp_path / "calls"))
    monkeypatch.setenv("MAIN", weka.MAIN_CLASS)
    monkeypatch.setattr(weka.tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    jar = tmp_path / "weka.jar"
    jar.write_bytes(b"")
    start = threading.Barrier(3)

    def compiled(delay):
        start.wait()
        threading.Event().wait(delay)  # one thread comes while another's javac is writing
        out = weka._compiled(jar)
        return out, (out / f"{weka.MAIN_CLASS}.class").read_text()

    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        got = list(pool.map(compiled, (0.0, 0.05, 0.35)))
    assert {out for out, _ in got} == {got[0][0]}
    assert [text for _, text in got] == ["half-whole"] * 3  # each caller sees the whole class file
    assert sorted(p.name for p in (tmp_path / "tmp").iterdir()) == [got[0][0].name]  # no build directory left
    calls = len((tmp_path / "calls").read_text().splitlines())
    assert weka._compiled(jar) == got[0][0]  # compiled once per jar from then on
    assert len((tmp_path / "calls").read_text().splitlines()) == calls

"""Dataset names are strings (issue #35): a name the config's parser turns into a float, bool, None or int
is refused in one line (the text typed is lost: 1e3 comes back as 1000.0), a quoted one works."""

from __future__ import annotations

import pytest
from conftest import run_cli

from bncbench.harness.app import plan
from bncbench.data import specs
from bncbench.errors import BNCBenchError

PARSED = {"nan": "float", "inf": "float", "null": "null", "true": "bool", "1e3": "float"}


def _csv(tmp_path):
    csv = tmp_path / "d.csv"
    rows = [f"{i % 3},{'xy'[i % 2]},{'ab'[(i // 2) % 2]}" for i in range(40)]
    csv.write_text("a,b,cls\n" + "\n".join(rows) + "\n")
    return csv


@pytest.mark.parametrize("text", sorted(PARSED))
def test_a_name_read_as_another_type_is_refused_in_one_line(tmp_path, text):
    csv = _csv(tmp_path)
    with pytest.raises(BNCBenchError, match=rf"was read as {PARSED[text]}, not as a string") as err:
        plan([f"dataset.names=[{{name: {text}, path: {csv}, class_column: cls}}]", "cv.rounds=1",
              f"results_dir={tmp_path / 'r'}"])
    assert "\n" not in str(err.value)
    with pytest.raises(BNCBenchError, match="not as a string"):  # a bare entry too
        plan([f"dataset.names=[{text}]"])


@pytest.mark.parametrize("value", [float("nan"), 1000.0, True, None, 7])
def test_python_route_refuses_the_same(value):
    with pytest.raises(BNCBenchError, match="not as a string"):
        specs.resolve([{"name": value, "path": "x.csv", "class_column": "cls"}])
    with pytest.raises(BNCBenchError, match="not as a string"):
        specs.resolve([value])


def test_a_quoted_name_is_the_string_typed(tmp_path):
    csv = _csv(tmp_path)
    p = plan([f"dataset.names=[{{name: 'nan', path: {csv}, class_column: cls}}, "
              f"{{name: '1e3', path: {csv}, class_column: cls}}]", "cv.rounds=1", f"results_dir={tmp_path / 'r'}"])
    assert [d["name"] for d in p.datasets] == ["nan", "1e3"]
    res = run_cli(["run", f"dataset.names=[{{name: 'nan', path: {csv}, class_column: cls}}]", "cv.rounds=1",
                   "progress=false", "name=q", f"results_dir={tmp_path / 'r'}"], cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    from bncbench.harness.store import load_results

    assert set(load_results(tmp_path / "r" / "q")["dataset"]) == {"nan"}


def test_command_line_refusal_is_one_line_exit_2(tmp_path):
    csv = _csv(tmp_path)
    res = run_cli(["run", f"dataset.names=[{{name: 1e3, path: {csv}, class_column: cls}}]",
                   f"results_dir={tmp_path / 'r'}"], cwd=tmp_path)
    assert res.returncode == 2
    assert len(res.stderr.strip().splitlines()) == 1 and "1000.0 was read as float" in res.stderr

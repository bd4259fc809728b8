"""bncbench.settings: every environment variable, read when asked, an empty value as unset; the modules that ask it."""

from pathlib import Path

import pytest

from bncbench import paths, settings
from bncbench.data import cache, catalog, locate
from bncbench.errors import BNCBenchError

VARIABLES = [settings.DATA_DIR, settings.CACHE_DIR, settings.REGISTRY, settings.CONF_DIR, settings.PLUGINS,
             settings.WEKA_JAR, "TOY_DIR"]


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    for v in VARIABLES:
        monkeypatch.delenv(v, raising=False)


def test_each_setting_reads_its_variable_when_asked(monkeypatch):
    monkeypatch.setenv("HOME", "/h")
    assert settings.data_dir() is None and settings.cache_dir() is None and settings.plugins() == []
    monkeypatch.setenv(settings.DATA_DIR, "~/uci")
    monkeypatch.setenv(settings.CACHE_DIR, "~/c")
    monkeypatch.setenv(settings.REGISTRY, "~/r.yaml")
    monkeypatch.setenv(settings.CONF_DIR, "conf2")
    monkeypatch.setenv(settings.PLUGINS, " a.b, ,c ")
    monkeypatch.setenv(settings.WEKA_JAR, "w.jar")
    monkeypatch.setenv("TOY_DIR", "~/toy")
    assert settings.data_dir() == "~/uci"  # expanded by locate.resolve_data_dir, as before
    assert settings.cache_dir() == Path("/h/c")
    assert settings.registry_file() == Path("/h/r.yaml")
    assert settings.conf_dir() == Path("conf2")
    assert settings.plugins() == ["a.b", "c"]
    assert settings.weka_jar() == Path("w.jar")
    assert settings.directory("TOY_DIR") == Path("/h/toy")
    for v in VARIABLES:
        monkeypatch.setenv(v, "")  # empty: unset
    assert [settings.data_dir(), settings.cache_dir(), settings.registry_file(), settings.conf_dir(),
            settings.weka_jar(), settings.directory("TOY_DIR")] == [None] * 6
    assert settings.plugins() == []


def test_the_modules_ask_settings_and_keep_their_defaults(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache.cache_dir() == tmp_path / ".cache" / "bncbench"
    assert catalog.registry_path() == paths.registry_dir() / "registry.yaml"
    assert paths.conf_dir() == (paths.REPO_ROOT / "conf").resolve()
    with pytest.raises(BNCBenchError, match=r"^no data directory: set BNCBENCH_DATA_DIR to the directory of the "
                                            r"registered datasets' files, or pass data_dir$"):
        locate.resolve_data_dir()
    monkeypatch.setenv(settings.CACHE_DIR, str(tmp_path / "c"))
    monkeypatch.setenv(settings.REGISTRY, str(tmp_path / "r.yaml"))
    monkeypatch.setenv(settings.DATA_DIR, str(tmp_path / "d"))
    monkeypatch.setenv(settings.CONF_DIR, str(tmp_path / "conf"))
    assert cache.cache_dir() == tmp_path / "c"
    assert paths.conf_dir() == (tmp_path / "conf").resolve()
    assert catalog.registry_path() == tmp_path / "r.yaml"
    assert locate.resolve_data_dir() == tmp_path / "d"
    assert locate.resolve_data_dir(tmp_path / "e") == tmp_path / "e"  # the argument wins
    entry = {"name": "toy", "directory": {"env": "TOY_DIR", "sibling": "digits"}, "file": "x"}
    assert locate.entry_dir(entry) == tmp_path / "digits"
    monkeypatch.setenv("TOY_DIR", str(tmp_path / "own"))
    assert locate.entry_dir(entry) == tmp_path / "own"

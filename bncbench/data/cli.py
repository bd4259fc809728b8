"""``python -m bncbench data {list,check,show,fetch}`` — inspect and verify the dataset registry.

``main(argv)`` receives the arguments after the word ``data`` and returns an exit
code: 0 success, 1 a data problem found by ``check`` (or nothing to check), and
user errors raise :class:`bncbench.errors.BNCBenchError` (exit 2 in the CLI).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import urllib.error
import urllib.request
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from bncbench.data import catalog, uci
from bncbench.data.dataset import BIG_THRESHOLD
from bncbench.data.identifiers import describe
from bncbench.data.locate import describe_directory, entry_dir, entry_files, resolve_data_dir, sha256_file
from bncbench.errors import BNCBenchError, IdentifierWarning


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse would exit(2) itself; raise the project's error instead
        raise BNCBenchError(f"data: {message}")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="bncbench data", description="Inspect, verify and fetch the registered datasets.")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--data-dir", default=None, help="data directory (default: $BNCBENCH_DATA_DIR)")
    common.add_argument("--registry", default=None, help="registry YAML (default: datasets/registry.yaml)")
    sub = p.add_subparsers(dest="cmd", metavar="{list,check,show,fetch}", parser_class=_Parser)
    sp = sub.add_parser("list", parents=[common], help="every registered dataset and whether it is present")
    sp.add_argument("--group", default=None, help=f"only this group ({', '.join(catalog.GROUP_NAMES)})")
    sp = sub.add_parser("check", parents=[common], help="verify presence, sha256 and shape of every file")
    sp.add_argument("names", nargs="*", help="datasets or groups to check (default: all)")
    sp = sub.add_parser("show", parents=[common], help="attributes, class distribution, provenance")
    sp.add_argument("name")
    sp = sub.add_parser("fetch", parents=[common], help="download a dataset that has a url / OpenML id")
    sp.add_argument("names", nargs="+")
    sp.add_argument("--force", action="store_true", help="download even if an intact copy exists")
    sp.add_argument("--timeout", type=float, default=60.0)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run one ``data`` subcommand (``list``, ``check``, ``show`` or ``fetch``), printing to stdout.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the word ``data``; default ``sys.argv[1:]``.

    Returns
    -------
    int
        The exit code: 0 on success; 1 when ``check`` finds a bad file or no intact one;
        2 (after printing the usage on stderr) when no subcommand is given.

    Raises
    ------
    BNCBenchError
        On a usage error (unknown subcommand or option, missing argument) and on the
        subcommands' user errors: unknown dataset or group, no data directory, a
        download that fails or has the wrong sha256, ...
    SystemExit
        With status 0 after ``-h`` / ``--help`` (argparse).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    if args.cmd is None:
        _parser().print_help(sys.stderr)
        return 2
    return {"list": _cmd_list, "check": _cmd_check, "show": _cmd_show, "fetch": _cmd_fetch}[args.cmd](args)


def _quick_status(entry: dict, ddir: Path | None) -> str:
    if ddir is None and "directory" not in entry:
        return "no data dir"
    try:
        edir = entry_dir(entry, ddir)
    except BNCBenchError:
        return "no directory"
    if not edir.is_dir():
        return "no directory" if "directory" in entry else "missing"
    for f in entry_files(entry):
        path = edir / f["file"]
        if not path.is_file():
            return "missing"
        if f.get("bytes") is not None and path.stat().st_size != int(f["bytes"]):
            return f"BAD (size {path.stat().st_size}, expected {f['bytes']})"
        if f.get("sha256") and sha256_file(path) != f["sha256"]:
            return "BAD (sha256 mismatch)"
    return "ok"


def _own_directories(reg: dict, names: list, ddir: Path | None) -> list[str]:
    """One line per ``directory`` of the listed entries (the digits): where it is and how it is found."""
    by_spec: dict[str, list[str]] = {}
    for n in names:
        if "directory" in reg[n]:
            by_spec.setdefault(repr(reg[n]["directory"]), []).append(n)
    lines = []
    for members in by_spec.values():
        e = reg[members[0]]
        try:
            d = entry_dir(e, ddir)
            where = f"{d}{'' if d.is_dir() else ' (absent)'}"
        except BNCBenchError:
            where = "(unknown)"
        lines.append(f"directory of {', '.join(members)}: {where}; {describe_directory(e)}")
    return lines


def _ddir_or_none(arg) -> Path | None:
    try:
        return resolve_data_dir(arg)
    except BNCBenchError:
        return None


def _cmd_list(args) -> int:
    reg = catalog.load_registry(args.registry)
    names = list(reg)
    if args.group:
        names = catalog.resolve_names([args.group], args.registry)
    ddir = _ddir_or_none(args.data_dir)
    print(f"data directory: {ddir if ddir else '(unset: set BNCBENCH_DATA_DIR)'}")
    for line in _own_directories(reg, names, ddir):
        print(line)
    w = _name_width(names)
    hdr = f"{'name':<{w}} {'rows':>8} {'attrs':>5} {'cls':>4} {'big':>3}  {'paper':<6} status"
    print(hdr)
    print("-" * len(hdr))
    n_ok = 0
    for n in names:
        e = reg[n]
        ex = e.get("expected", {})
        status = _quick_status(e, ddir)
        n_ok += status == "ok"
        big = "yes" if int(ex.get("rows", 0)) > BIG_THRESHOLD else ""
        paper = "same" if e.get("matches_paper") else "differs"
        print(f"{n:<{w}} {ex.get('rows', '?'):>8} {ex.get('attributes', '?'):>5} {ex.get('classes', '?'):>4} "
              f"{big:>3}  {paper:<6} {status}")
    print(f"{len(names)} datasets, {n_ok} present and intact")
    return 0


def _name_width(names) -> int:
    """The width of the name column: the longest name, at least 16."""
    return max([16, *map(len, names)])


def _cmd_check(args) -> int:
    reg = catalog.load_registry(args.registry)
    names = catalog.resolve_names(args.names, args.registry) if args.names else list(reg)
    ddir = resolve_data_dir(args.data_dir)
    if not ddir.is_dir():
        raise BNCBenchError(f"data directory {ddir} does not exist")
    bad: list[str] = []
    missing: list[str] = []
    skipped: list[str] = []
    ok = 0
    w = _name_width(names)
    for n in names:
        status, detail = uci.check_file(n, ddir, registry=args.registry)
        if status == "ok":
            ok += 1
            print(f"ok       {n:<{w}} {detail}")
        elif status == "missing":
            missing.append(n)
            print(f"missing  {n:<{w}} {detail}")
        elif status == "skipped":  # an entry with a directory of its own that is absent (the digits)
            skipped.append(n)
            print(f"skipped  {n:<{w}} {detail}")
        else:
            bad.append(n)
            print(f"BAD      {n:<{w}} {detail}")
    print(f"{ok} intact, {len(bad)} bad, {len(missing)} missing{f', {len(skipped)} skipped' if skipped else ''} "
          f"(of {len(names)}) in {ddir}")
    for line in _own_directories(reg, names, ddir):
        print(line)
    if bad:
        print(f"bad files: {', '.join(f['file'] for n in bad for f in entry_files(reg[n]))}")
        return 1
    if ok == 0:
        print("no registered dataset file is present")
        return 1
    return 0


def _fmt_counts(values: pd.Series, limit: int = 12) -> str:
    vc = values.value_counts(dropna=True, sort=False)
    items = [f"{k}:{v}" for k, v in vc.items()]
    if len(items) > limit:
        items = items[:limit] + [f"... ({len(vc)} values)"]
    return " ".join(items)


def _cmd_show(args) -> int:
    reg = catalog.load_registry(args.registry)
    e = catalog.lookup(args.name, reg)
    with warnings.catch_warnings():  # identifiers are shown below
        warnings.simplefilter("ignore", IdentifierWarning)
        ds = uci.load_uci(args.name, args.data_dir, registry=args.registry)
    ids = ds.meta.get("identifiers") or {}
    print(f"{ds.name}: {ds.n_instances} rows, {ds.n_attributes} attributes "
          f"({int(ds.numeric_mask.sum())} numeric), {ds.n_classes} classes"
          f"{', Big' if ds.is_big else ''}")
    if "files" in ds.meta:  # a given train/test split in several files
        print(f"directory: {ds.meta['path']}  ({describe_directory(e)})")
        for f in ds.meta["files"]:
            print(f"  {f['part']:<5} {f['file']}  ({e['format']})  sha256 {f['sha256']}")
        split = ds.meta["split"]
        print(f"given split: {split['train']} training rows, then {split['test']} test rows "
              "(`run cv.mode=holdout` trains on the first and tests on the second)")
    else:
        print(f"file: {ds.meta['path']}  ({e['format']}{', gzip' if e.get('gzip') else ''})  "
              f"sha256 {ds.meta['sha256']}")
    if e.get("variant_of"):
        print(f"variant of {e['variant_of']} (same files)")
    print()
    print(f"{'attribute':<28} {'type':<8} {'card':>5} {'missing':>8}")
    for c in ds.X.columns:
        s = ds.X[c]
        nominal = isinstance(s.dtype, pd.CategoricalDtype)
        card = len(s.cat.categories) if nominal else s.nunique(dropna=True)
        print(f"{str(c)[:28]:<28} {'nominal' if nominal else 'numeric':<8} {card:>5} {int(s.isna().sum()):>8}"
              f"{'  identifier' if str(c) in ids else ''}")
    if ids:
        done = "dropped (drop_identifiers)" if ds.meta.get("identifiers_dropped") else \
            "kept (set drop_identifiers: true to drop)"
        print(f"{describe(ids, ds.n_instances)}: {done}")
    print()
    counts = np.bincount(ds.y, minlength=ds.n_classes)
    print("class distribution:")
    for lab, k in zip(ds.classes, counts):
        print(f"  {lab:<30} {int(k):>7}  {k / ds.n_instances:6.1%}")
    for t in e.get("transforms") or []:
        print(f"transform: {t}")
    print()
    prov = e.get("provenance") or {}
    print(f"source: {prov.get('source', '?')}")
    if prov.get("notes"):
        print(f"notes: {prov['notes']}")
    shapes = catalog.paper_shapes(args.name, args.registry)
    if shapes:
        print(f"paper: {(e.get('paper') or {}).get('name')}")
    for key, z in shapes.items():
        print(f"  {catalog.PAPERS[key]}: {z['rows']} rows, {z['attributes_incl_class']} attributes incl. class, "
              f"{z['classes']} classes")
    paper = e.get("paper") or {}
    pk = paper.get("pernkopf")
    if pk:
        print(f"paper: {paper.get('name')} — {pk['rows']} rows ({pk['train']} training, {pk['test']} test), "
              f"{pk['attributes_incl_class']} attributes incl. class, {pk['classes']} classes "
              f"(Pernkopf et al., Table {pk['table']})")
    diffs = e.get("differences") or []
    print("known differences from the paper:" if diffs else "known differences from the paper: none")
    for d in diffs:
        print(f"  - {d}")
    return 0


def _fetch_url(entry: dict, timeout: float) -> str:
    if entry.get("url"):
        return str(entry["url"])
    oid = entry.get("openml_id")
    if oid is not None:
        import json

        meta_url = f"https://www.openml.org/api/v1/json/data/{int(oid)}"
        try:
            with urllib.request.urlopen(meta_url, timeout=timeout) as r:
                desc = json.load(r)["data_set_description"]
        except (urllib.error.URLError, OSError, KeyError, ValueError) as exc:
            raise BNCBenchError(f"cannot resolve OpenML dataset {oid}: {exc}") from None
        return str(desc["url"])
    raise BNCBenchError(f"dataset {entry['name']!r} has no url or openml_id in the registry; nothing to fetch")


def fetch(
    name: str,
    data_dir: str | os.PathLike | None = None,
    *,
    registry: str | os.PathLike | None = None,
    force: bool = False,
    timeout: float = 60.0,
) -> Path:
    """Download a registered dataset into the data directory (sha256-checked, atomic).

    The file is downloaded from the entry's ``url``, else from the download URL OpenML gives
    for its ``openml_id``, into a temporary file in the data directory, and renamed to the
    entry's ``file`` only if its sha256 matches the entry's (or the entry has none).

    Parameters
    ----------
    name : str
        A registered dataset name (a single-file entry).
    data_dir : str or os.PathLike, optional
        The data directory; default ``$BNCBENCH_DATA_DIR``. Created if missing.
    registry : str or os.PathLike, optional
        The registry file; default :func:`bncbench.data.catalog.registry_path`.
    force : bool, default=False
        Download even if the file is present with the expected sha256.
    timeout : float, default=60.0
        Socket timeout in seconds of the network requests (passed to :func:`urllib.request.urlopen`).

    Returns
    -------
    pathlib.Path
        The dataset's file, ``data_dir / entry["file"]`` (not downloaded again when already
        intact and not ``force``).

    Raises
    ------
    BNCBenchError
        If the name is unknown, the entry has no ``url`` or ``openml_id``, the OpenML metadata
        or the file cannot be downloaded, the download's sha256 differs from the entry's
        (nothing is written then), or there is no data directory.
    """
    entry = catalog.lookup(name, catalog.load_registry(registry))
    url = _fetch_url(entry, timeout)
    ddir = resolve_data_dir(data_dir)
    dest = ddir / entry["file"]
    want = entry.get("sha256")
    if dest.is_file() and not force and want and sha256_file(dest) == want:
        return dest
    ddir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{entry['file']}.", suffix=".part", dir=ddir)
    h = hashlib.sha256()
    try:
        with os.fdopen(fd, "wb") as out:
            try:
                with urllib.request.urlopen(url, timeout=timeout) as r:
                    for block in iter(lambda: r.read(1 << 16), b""):
                        h.update(block)
                        out.write(block)
            except (urllib.error.URLError, OSError) as exc:
                raise BNCBenchError(f"cannot download {name!r} from {url}: {exc}") from None
        got = h.hexdigest()
        if want and got != want:
            raise BNCBenchError(
                f"download of {name!r} from {url} has sha256 {got[:16]}…, expected {want[:16]}…; "
                f"nothing was written to {ddir}"
            )
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return dest


def _cmd_fetch(args) -> int:
    names = catalog.resolve_names(args.names, args.registry)
    w = _name_width(names)
    for n in names:
        dest = fetch(n, args.data_dir, registry=args.registry, force=args.force, timeout=args.timeout)
        print(f"ok       {n:<{w}} {dest}")
    return 0

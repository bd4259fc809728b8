"""Generate ``conf/dataset/<name>.yaml`` for every registered dataset and every group.

Each file contains exactly ``names: [<name>]``; the runner expands group names itself
via :func:`bncbench.data.uci.groups`. Run after editing ``datasets/registry.yaml``::

    python datasets/make_dataset_configs.py          # write the files
    python datasets/make_dataset_configs.py --check  # exit 1 if any is missing or stale

Only files for registry names and groups are touched; other configs in
``conf/dataset/`` (e.g. quickstart.yaml) are left alone.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONF_DIR = ROOT / "conf" / "dataset"


def expected_configs(registry: str | None = None) -> dict[str, str]:
    """``{file name: content}`` for every registered dataset and group."""
    sys.path.insert(0, str(ROOT))
    from bncbench.data import uci

    names = list(uci.load_registry(registry)) + list(uci.groups(registry))
    return {f"{n}.yaml": f"names: [{n}]\n" for n in names}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only verify; exit 1 when out of sync")
    ap.add_argument("--conf-dir", default=str(CONF_DIR))
    args = ap.parse_args(argv)
    conf = Path(args.conf_dir)
    stale = []
    for fname, content in expected_configs().items():
        path = conf / fname
        current = path.read_text() if path.exists() else None
        if current == content:
            continue
        stale.append(fname)
        if not args.check:
            conf.mkdir(parents=True, exist_ok=True)
            path.write_text(content)
    if args.check:
        if stale:
            print(f"out of sync with the registry: {', '.join(stale)}; run {Path(__file__).name}")
            return 1
        print("conf/dataset is in sync with the registry")
        return 0
    print(f"wrote {len(stale)} config(s) to {conf}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

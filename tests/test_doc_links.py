"""Every relative link of the repository's Markdown leads somewhere: the file exists and, for ``#anchor``
links into Markdown, a heading of the target has that anchor (as GitHub gives it); plus the anchor rule
itself on hand-written headings, and the report index's table of contents built with it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from bncbench.report.slugs import heading_anchor, slug

REPO = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _markdown_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "*.md"], cwd=REPO, capture_output=True, text=True, check=True)
        return [REPO / line for line in out.stdout.splitlines()]
    except (OSError, subprocess.CalledProcessError):
        return [p for p in REPO.rglob("*.md") if not any(part.startswith(".") for part in p.relative_to(REPO).parts)]


def _text(path: Path) -> str:
    return FENCE.sub("", path.read_text(encoding="utf-8", errors="replace"))


def _anchors(path: Path) -> set[str]:
    text = _text(path)
    heads = {heading_anchor(h) for h in re.findall(r"^#{1,6}\s+(.*?)\s*#*\s*$", text, flags=re.M)}
    return heads | set(re.findall(r'<a (?:name|id)="([^"]+)"', text))


@pytest.mark.parametrize(("title", "anchor"), [
    ("Convergence to the threshold (Feelders & Ivanovs, Table 2)",
     "convergence-to-the-threshold-feelders--ivanovs-table-2"),
    ("The Big three: what a fold costs, and how to run them", "the-big-three-what-a-fold-costs-and-how-to-run-them"),
    ("Tables 2–4: the paper's W-D-L beside ours", "tables-24-the-papers-w-d-l-beside-ours"),
    ("DBLⁿ vs LRⁿ", "dblⁿ-vs-lrⁿ"),
    ("snake_case and `code`", "snake_case-and-code"),
])
def test_heading_anchor_is_githubs(title, anchor):
    assert heading_anchor(title) == anchor


def test_slug_merges_runs_and_falls_back():
    assert slug("KDB-1 (w)") == "kdb_1_w"
    assert slug("ⁿ") == "x" and slug("--", empty="group") == "group"


def test_every_relative_link_and_anchor_resolves():
    files = _markdown_files()
    assert len(files) > 50
    broken = []
    for path in files:
        for target in LINK.findall(_text(path)):
            if re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", target):
                continue  # http:, https:, mailto:
            name, _, frag = target.partition("#")
            dest = (path.parent / name) if name else path
            if not dest.exists():
                broken.append(f"{path.relative_to(REPO)}: {target} (no such file)")
            elif frag and dest.suffix == ".md" and frag not in _anchors(dest):
                broken.append(f"{path.relative_to(REPO)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_report_index_contents_link_to_its_headings(tmp_path):
    from bncbench.report.build import _write_index, _Writer
    from bncbench.report.sections import Section

    titles = ["Win–Draw–Loss (Zaidi & al., Table 4)", "Geometric means: 0-1 loss", "Features removed at test time"]
    _write_index(_Writer(tmp_path), "toy", [Section(t, [("text", "x")]) for t in titles])
    index = tmp_path / "index.md"
    links = [t.lstrip("#") for t in LINK.findall(index.read_text()) if t.startswith("#")]
    assert links == [heading_anchor(t) for t in titles] and set(links) <= _anchors(index)
    assert links[0] == "windrawloss-zaidi--al-table-4"

"""Every reproduction doc's claims table cites only W-D-L counts its rows' CSVs hold.

Each doc under ``docs/reproductions/`` opens with a table of the paper's claims marked reproduced / partly / not,
each row naming the committed CSVs it rests on (Markdown links, or backticked file names found through the doc's
links or under its own folders). Every ``w/d/l`` (or ``w–d–l``) triple in a row's "ours" cell must be a row of
one of those CSVs (``wins, draws, losses``, ``fewer, equal, more``, or the paper's columns ``paper_wins, ...``
where a CSV carries the paper beside ours): some row, not necessarily the pair the prose names, so this catches a
count that no CSV holds (a typo, a store that moved), not a count cited for the wrong pair. The few triples that are
neither, the paper's numbers quoted beside ours where no CSV carries them and counts of an earlier, smaller store,
are listed below with the reason, and each must still be in its doc (so the list cannot outlive the text).
"""

import re
from functools import lru_cache
from pathlib import Path

import pandas as pd
import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs" / "reproductions"
TRIPLE = re.compile(r"(?<![\d.,])(\d+)[–/-](\d+)[–/-](\d+)(?![\d.])")
LINK = re.compile(r"\[[^\]]*\]\(([^)#]+\.csv)\)")
TICK = re.compile(r"`([^`/]+\.csv)`")
COLUMNS = [("wins", "draws", "losses"), ("fewer", "equal", "more"), ("paper_wins", "paper_draws", "paper_losses")]

# (doc, claim row's start, triple): why the triple is in no CSV of its row.
NOT_OURS = {
    ("petitjean2018.md", "HDP estimates beat m-estimates", "41–4–23"): "the paper's Table 2 (NB), quoted",
    ("zaidi2017.md", "TAN^w loses to TAN on RMSE", "29/2/41"): "the paper's KDB-1^w vs KDB-1, quoted",
    ("zaidi_dbl.md", "A2DE has lower RMSE than DBL³", "18/0/34"): "DBL³ vs A2DE with 52 datasets, history",
}


def _claims(doc: str, docs: Path = DOCS):
    """(claim, ours, CSV paths) of each row of the doc's first claims table."""
    text = (docs / doc).read_text()
    links = {}
    for p in LINK.findall(text):
        links.setdefault(Path(p).name, docs / p)
    lines = text.splitlines()
    h = next(i for i, line in enumerate(lines) if line.startswith(("| the paper's claim", "| claim")))
    head = [c.strip() for c in lines[h].strip("|").split("|")]
    ours = next(i for i, c in enumerate(head) if c.startswith("ours"))
    rests = next(i for i, c in enumerate(head) if c in ("rests on", "evidence"))
    for line in lines[h + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        csvs = [docs / p for p in LINK.findall(cells[rests])]
        for name in TICK.findall(cells[rests]):
            found = links.get(name) or next(iter(sorted(docs.glob(f"{doc[:-3]}*/**/{name}"))), None)
            assert found is not None, (doc, cells[0], name)
            csvs.append(found)
        yield cells[0], cells[ours], csvs


@lru_cache(maxsize=None)
def _triples(csv: Path) -> frozenset:
    f = pd.read_csv(csv)
    got = set()
    for cols in COLUMNS:
        if set(cols) <= set(f.columns):
            got |= {tuple(int(v) for v in t) for t in f[list(cols)].dropna().itertuples(index=False)}
    return frozenset(got)


def check(doc: str, docs: Path = DOCS) -> int:
    """How many triples of the doc's claims table were found in their rows' CSVs; AssertionError at one that
    is not, unless ``NOT_OURS`` lists it."""
    checked = 0
    for claim, ours, csvs in _claims(doc, docs):
        assert all(c.exists() for c in csvs), (doc, claim, csvs)
        have = set().union(*map(_triples, csvs)) if csvs else set()
        for m in TRIPLE.finditer(ours):
            t = tuple(int(v) for v in m.groups())
            if t in have:
                checked += 1
                continue
            why = [v for (d, c, s), v in NOT_OURS.items() if d == doc and claim.startswith(c) and s == m.group(0)]
            assert why, f"{doc}: '{claim[:50]}' cites {m.group(0)}, in none of {[c.name for c in csvs]}"
    return checked


@pytest.mark.parametrize("doc", ["petitjean2018.md", "zaidi2017.md", "pernkopf.md", "zaidi_dbl_l2.md",
                                 "zaidi_dbl.md"])
def test_every_wdl_a_claims_row_cites_is_in_its_csvs(doc):
    assert check(doc) >= 4


def test_the_list_of_triples_not_ours_is_still_in_the_docs():
    for (doc, claim, triple), why in NOT_OURS.items():
        rows = [ours for c, ours, _ in _claims(doc) if c.startswith(claim)]
        assert len(rows) == 1 and triple in rows[0], (doc, claim, triple, why)


def test_a_triple_in_no_csv_is_caught(tmp_path):
    """The check can fail: a doc whose row cites a count its CSV does not hold."""
    (tmp_path / "x").mkdir()
    pd.DataFrame({"wins": [3], "draws": [1], "losses": [2]}).to_csv(tmp_path / "x" / "t.csv", index=False)
    (tmp_path / "x.md").write_text("| the paper's claim | ours | rests on |\n|---|---|---|\n"
                                   "| a claim | 3/1/2 and 4/1/2 | [`t.csv`](x/t.csv) |\n")
    with pytest.raises(AssertionError, match="cites 4/1/2"):
        check("x.md", tmp_path)
    (tmp_path / "x.md").write_text((tmp_path / "x.md").read_text().replace("4/1/2", "3–1–2"))
    assert check("x.md", tmp_path) == 2


def test_feelders_claims_are_what_its_script_writes_and_the_page_shows(tmp_path):
    """Feelders & Ivanovs' claims table checks each claim by one rule on the paper's Table 2 and on ours
    (``feelders/claims.py``): run on a copy of its folder, the script writes the committed ``claims.csv`` and
    ``table2_side_by_side.md`` again, and the page's table is ``claims.csv`` row for row, its verdict following
    from the two ``holds`` columns."""
    import shutil
    import subprocess
    import sys

    copy = tmp_path / "feelders"
    shutil.copytree(DOCS / "feelders", copy)
    subprocess.run([sys.executable, str(copy / "claims.py")], check=True, capture_output=True)
    for name in ("claims.csv", "table2_side_by_side.md"):
        assert (copy / name).read_text() == (DOCS / "feelders" / name).read_text(), name
    claims = pd.read_csv(DOCS / "feelders" / "claims.csv")
    lines = (DOCS / "feelders.md").read_text().splitlines()
    h = lines.index("| claim | paper's Table 2 | ours | verdict |")
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines[h + 2:h + 2 + len(claims) + 1]
            if line.startswith("|")]
    assert len(rows) == len(claims)
    verdict = {(True, True): "**reproduced**", (True, False): "**not reproduced**",
               (False, True): "**holds here, not in the paper's own table**"}
    for row, c in zip(rows, claims.itertuples()):
        assert row[:3] == [c.claim, c.paper_table2, c.ours], row
        assert row[3] == verdict[(c.paper_holds, c.ours_holds)], row

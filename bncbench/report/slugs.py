"""Names of a report's parts: file-name slugs of its figures and tables, Markdown anchors of its headings."""

from __future__ import annotations

import re


def slug(text: str, empty: str = "x") -> str:
    """``text`` as a file-name part: each run of characters other than ASCII letters and digits becomes ``_``.

    Parameters
    ----------
    text : str
        A model label, dataset name or section title (``"KDB-1 (w)"``).
    empty : str, default="x"
        The slug of a text with no ASCII letter or digit.

    Returns
    -------
    str
        Lower case, no leading or trailing ``_`` (``"kdb_1_w"``).
    """
    return re.sub(r"[^A-Za-z0-9]+", "_", str(text)).strip("_").lower() or empty


def heading_anchor(title: str) -> str:
    """The anchor GitHub (and GitLab) give a Markdown heading, for links to it (``[..](#anchor)``).

    Lower case; every character that is not a letter, digit, ``_``, ``-`` or space dropped; each space
    a ``-``. Unlike :func:`slug` runs are not merged: ``"Feelders & Ivanovs"`` is ``feelders--ivanovs``.

    Parameters
    ----------
    title : str
        The heading's text, without the ``#`` marks.

    Returns
    -------
    str
    """
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")

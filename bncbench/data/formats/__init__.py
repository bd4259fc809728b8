"""File-format parsers for dataset files: ARFF (:mod:`.arff`) and delimited text (:mod:`.text`).

:mod:`.common` holds what both share (reading a file's text, column lookup,
typed-column conversion). The parsers take text and return typed columns; finding,
verifying and caching the files is :mod:`bncbench.data.uci`'s job.
"""

from bncbench.data.formats.arff import ArffAttribute, ArffTable, parse_arff

__all__ = ["ArffAttribute", "ArffTable", "parse_arff"]

"""File-format parsers for dataset files: ARFF (:mod:`.arff`) and delimited text (:mod:`.text`).

:mod:`.common` holds what both share (reading a file's text, column lookup,
typed-column conversion); :mod:`.idx` reads MNIST's binary files. The parsers take text and
return typed columns; choosing one for a file is :mod:`bncbench.data.parse`'s job, finding and
verifying the files :mod:`bncbench.data.locate`'s, caching the tables :mod:`bncbench.data.table`'s.
"""

from bncbench.data.formats.arff import ArffAttribute, ArffTable, parse_arff

__all__ = ["ArffAttribute", "ArffTable", "parse_arff"]

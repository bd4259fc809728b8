"""Dataset names are strings: a name YAML or Hydra's override grammar reads as another type is refused.

Hydra reads ``dataset.names=[{name: 1e3, ...}]`` as the float 1000.0, ``true`` as a bool, ``null`` as
None, ``nan`` and ``inf`` as floats, and a YAML file reads ``007`` as the integer 7: the name typed is
lost (``str`` of the value is another name), so :func:`dataset_name` refuses it in one line that says
how to quote it, rather than guessing.
"""

from __future__ import annotations

from typing import Any

from bncbench.errors import BNCBenchError


def dataset_name(value: Any) -> str:
    """``value`` if it is a string, else one clear line.

    Parameters
    ----------
    value : object
        A dataset name as the config gives it (an entry of ``dataset.names`` or an inline spec's ``name``).

    Returns
    -------
    str
        ``value`` itself.

    Raises
    ------
    BNCBenchError
        If ``value`` is not a ``str`` (a float, int, bool or None the config's parser made of the text).
    """
    if isinstance(value, str):
        return value
    kind = "null" if value is None else type(value).__name__
    raise BNCBenchError(f"dataset name {value!r} was read as {kind}, not as a string (YAML and Hydra read nan, inf, "
                        "null, true, 1e3 so); quote the name as typed: name: 'nan' in YAML, "
                        "\"dataset.names=[{name: 'nan', ...}]\" on the command line")

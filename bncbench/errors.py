"""Errors and warnings that the command line reports as one clear line."""


class BNCBenchError(ValueError):
    """A user-facing error: bad input, bad configuration, bad data.

    The command line prints ``bncbench: error: <message>`` and exits with
    code 2; no traceback is shown.
    """

    exit_code = 2


class BNCBenchWarning(UserWarning):
    """A user-facing warning about the data or the configuration; the work goes on.

    The command line prints ``bncbench: warning: <message>``, one line, without
    the source location Python would add.
    """


class IdentifierWarning(BNCBenchWarning):
    """An attribute has a distinct value on (nearly) every row: an identifier, not evidence.

    See :mod:`bncbench.data.identifiers` for the definition.
    """


def did_you_mean(word: str, choices) -> str:
    """`` (did you mean 'x'?)`` naming the choice closest to ``word``, or ``""`` when none is close.

    Parameters
    ----------
    word : str
        The unknown name (a misspelled key or option).
    choices : iterable of str
        The valid names.

    Returns
    -------
    str
        The suffix for a one-line error message (difflib's closest match, ratio >= 0.6), or ``""``.
    """
    import difflib

    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""

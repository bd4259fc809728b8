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

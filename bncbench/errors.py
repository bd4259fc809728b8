"""Errors that the command line reports as one clear line and exit code 2."""


class BNCBenchError(ValueError):
    """A user-facing error: bad input, bad configuration, bad data.

    The command line prints ``bncbench: error: <message>`` and exits with
    code 2; no traceback is shown.
    """

    exit_code = 2

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


SYSTEM_ERROR_EXIT = 74
"""The command line's exit code for a system error (``EX_IOERR`` of ``sysexits.h``): a file or
directory that cannot be read or written, a full disk (:func:`system_error`)."""


def system_error(exc: OSError) -> str:
    """One line for an operating-system error, naming the file and what to do.

    Parameters
    ----------
    exc : OSError
        The error (``errno``, ``strerror`` and ``filename`` are used when set).

    Returns
    -------
    str
        ``"<what> <file>: <reason>"``, one line, without a traceback.
    """
    import errno

    where = exc.filename if exc.filename is not None else ""
    reason = exc.strerror or " ".join(str(exc).split()) or type(exc).__name__
    if exc.errno == errno.ENOSPC:
        return (f"no space left on the device{f' of {where}' if where else ''}: finished tasks are saved and "
                "nothing half-written is left; free some space and rerun the same command to resume")
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return f"cannot write {where}: {reason} (results_dir and the report's --out need a writable directory)"
    if exc.errno == errno.ENOTDIR:
        return f"cannot create {where}: a part of the path is a file, not a directory"
    return f"{where}: {reason}" if where else reason


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

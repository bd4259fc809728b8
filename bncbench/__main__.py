"""Command line: ``python -m bncbench {run,data,report} ...``."""

from __future__ import annotations

import contextlib
import sys

USAGE = """usage: python -m bncbench COMMAND [ARGS]

commands:
  run [+experiment=NAME] [overrides...] [-m]   run an experiment (Hydra overrides)
  data {list,check,show NAME,fetch NAME}       the dataset registry
  components                                   every registered component and its hyperparameters
  report RESULTS_DIR [options]                 tables and figures from results

examples:
  python -m bncbench run +experiment=quickstart
  python -m bncbench run structure=tan dataset=smoke cv.rounds=2
  python -m bncbench run -m +experiment=quickstart structure=nb,tan
"""


def _one_line_warnings() -> None:
    """Print the project's warnings as ``bncbench: warning: <message>``; others as Python does."""
    import warnings

    from bncbench.errors import BNCBenchWarning

    python_show = warnings.showwarning
    if getattr(python_show, "one_line", False):
        return

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, BNCBenchWarning):
            print(f"bncbench: warning: {message}", file=file if file is not None else sys.stderr)
        else:
            python_show(message, category, filename, lineno, file, line)

    show.one_line = True
    warnings.showwarning = show


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, a batch system ending the job the run is in): stops the run as Ctrl-C does."""


@contextlib.contextmanager
def _sigterm_as_interrupt():
    """Within the block, SIGTERM raises :class:`Terminated` in the main thread, so that a killed run
    cancels the jobs it submitted and closes its workers, as Ctrl-C does, instead of leaving them
    computing; a second SIGTERM ends the process at once. A SIGTERM that is ignored, or already
    handled by the embedding program, is left as it is."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def stop(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        raise Terminated

    signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def main(argv: list[str] | None = None) -> int:
    """Run one ``python -m bncbench`` command and return its exit code.

    Dispatches ``run`` (:func:`bncbench.harness.app.run_cli`), ``data`` (:func:`bncbench.data.cli.main`),
    ``components`` (prints :func:`bncbench.components.describe`) and ``report``
    (:func:`bncbench.report.cli.main`). A :class:`~bncbench.errors.BNCBenchError` is printed as
    ``bncbench: error: <message>`` on stderr and turned into its exit code instead of propagating.

    Parameters
    ----------
    argv : list of str, optional
        The command and its arguments, without the program name; ``sys.argv[1:]`` when None.

    Returns
    -------
    int
        The exit code: 0 on success (also for ``--help`` and a closed output pipe), 2 for usage
        or input errors (no command at all, unknown command, a ``BNCBenchError``), 74 for a
        system error (an ``OSError``: a full disk, a file that cannot be written; one line,
        :func:`bncbench.errors.system_error`), 130 when
        interrupted (Ctrl-C), 143 when stopped by SIGTERM (:class:`Terminated`: the same
        clean-up), otherwise the subcommand's own code (1 when ``run`` had failed tasks).
    """
    from bncbench.errors import BNCBenchError

    _one_line_warnings()
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    try:
        with _sigterm_as_interrupt():
            return _dispatch(cmd, rest)
    except BNCBenchError as exc:
        print(f"bncbench: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:  # e.g. `... | head`
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:  # a full disk, a read-only directory, a path through a file: one line
        from bncbench.errors import SYSTEM_ERROR_EXIT, system_error

        print(f"bncbench: error: {system_error(exc)}", file=sys.stderr)
        return SYSTEM_ERROR_EXIT
    except KeyboardInterrupt as exc:
        how = "stopped by SIGTERM" if isinstance(exc, Terminated) else "interrupted"
        print(f"bncbench: {how} (finished tasks are saved; rerun to resume)", file=sys.stderr)
        return 143 if isinstance(exc, Terminated) else 130


def _dispatch(cmd: str, rest: list[str]) -> int:
    """The subcommand ``cmd`` on its arguments ``rest``; its exit code (see :func:`main`)."""
    from bncbench.errors import BNCBenchError

    if cmd == "run":
        from bncbench.engine.checkpoint import request_save_here_and_below, save_on_signal
        from bncbench.harness.app import run_cli

        save_on_signal(request_save_here_and_below)  # SIGUSR1: the run's fits save now, here and in its workers

        return run_cli(rest)
    if cmd == "data":
        from bncbench.data.cli import main as data_main

        return data_main(rest)
    if cmd == "components":
        from bncbench.components import describe

        print(describe())
        return 0
    if cmd == "report":
        from bncbench.report.cli import main as report_main

        return report_main(rest)
    raise BNCBenchError(f"unknown command {cmd!r}; expected run, data, components or report")


if __name__ == "__main__":
    sys.exit(main())

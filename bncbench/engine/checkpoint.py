"""Checkpoints of long fits: a killed task's L-BFGS goes on where it was saved, with the same result.

A DBL³ fold on census-income optimizes for hours (on one-hot covertype for days); a time limit,
a preempted node or the end of a session used to cost the whole fold. Within
:func:`fit_checkpoint` (the runner's tasks, ``checkpoint_every``), :func:`bncbench.engine.optim.lbfgs`
saves L-BFGS-B's whole state (its driver's: :class:`bncbench.engine.lbfgs_compact.State` or
:class:`bncbench.engine.lbfgsb.State`), the trace so far and the
evaluation count every ``every`` seconds (the first save of a fresh optimization after :data:`FIRST`, a minute,
if that is sooner), at the end of an iteration, to
``<prefix>.fit<i>.npz`` (``i``: the fit's optimizations in order, from 0), written atomically.
When the same task runs again, an optimization whose file is there and was saved by the same
problem goes on from it: the same steps, so the same parameters, predictions and trace (but
its times) as a fit that was never stopped. "The same problem" is checked, not assumed: the
file keeps a fingerprint of the starting point, the optimizer's settings, the objective's value
there (computed again, one evaluation) and scipy's version; a file that does not match is left
aside with one line on stderr and the fit starts afresh (it then overwrites it).

What is saved costs about 22 parameter vectors with the default driver (the 10 correction pairs'
``s`` and ``y``, the iterate and the gradient; ``setulb``'s: about 28.5, its work array of ``2 m + 5``
vectors and its integer work array): about 65 MB for DBL³ on connect-4, 1.9 GB on census-income; at the
default of one save every 30 minutes that is seconds an hour. A save that cannot be written (a full disk)
is skipped with one line and tried again at the next interval; the fit goes on. The runner removes the
files once the task's record is written.

Two more saves, so that stopping a fit costs at most the iteration it was in, not up to ``every`` seconds:

* **on interrupt**: when Ctrl-C, SIGTERM (:class:`bncbench.__main__.Terminated`) or ``SystemExit`` (submitit's
  requeue at a SLURM time limit) stops an evaluation of the default driver's line search, the state as the
  iteration began is saved before the interrupt goes on (:func:`bncbench.engine.lbfgs_compact.run`'s
  ``on_interrupt``; not with ``driver=setulb``, whose work arrays then hold a line search in progress);
* **on request**: SIGUSR1 (:func:`save_on_signal`, installed by the runner's tasks and by ``python -m bncbench
  run``, which passes it on to its joblib workers) asks every fit of the process to save at the end of its
  current iteration and go on: ``kill -USR1 <pid of the run>`` before a machine is shut down or a session ends.
  A run stopped by Ctrl-C or SIGTERM asks its workers' fits the same way, and waits for their saves, before it
  closes them (:func:`bncbench.harness.runner._saves_before_stop`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import sys
import threading
import time
import zipfile
from dataclasses import fields
from pathlib import Path

import numpy as np


class SavedState:
    """What makes a driver's state (a dataclass of arrays and scalars) a checkpoint's: :meth:`arrays` and
    :meth:`from_arrays`, its fields by name, the scalars (fields declared ``float`` or ``int``) as 0-d arrays."""

    def arrays(self) -> dict:
        """Field name to value, the scalars as 0-d arrays (what :func:`numpy.savez` takes).

        Returns
        -------
        dict of str to ndarray
        """
        return {f.name: np.asarray(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_arrays(cls, arrays):
        """The state :meth:`arrays` gave, read back (from a mapping such as an open ``.npz``).

        Parameters
        ----------
        arrays : mapping of str to ndarray
            A file's arrays are new: they are taken, not copied.

        Returns
        -------
        SavedState
            An instance of the class it is called on.
        """
        scalar = {"float": float, "int": int}
        return cls(**{f.name: scalar[f.type](arrays[f.name]) if f.type in scalar else np.asarray(arrays[f.name])
                      for f in fields(cls)})


EVERY = 1800.0
"""Seconds between saves, unless a run says otherwise (the run config's ``checkpoint_every``)."""

FIRST = 60.0
"""Seconds to the first save of an optimization that starts afresh, when ``every`` is longer.

So that a fit killed without warning (SIGKILL, the out-of-memory killer, a session's or node's end) after its first
minute has progress to show: its rerun goes on from the save, and the runner does not count the death as one
without progress (:func:`bncbench.harness.runner.crash_count`), which would have run the task alone, and after
``max_crashes`` such deaths recorded it failed. An optimization that goes on from a save keeps ``every``, so a task
that dies again where it was is still counted (one attempt later than without this save)."""

_ACTIVE: "FitCheckpoint | None" = None
_REQUESTS = 0  # requests to save now in this process (request_save); each saver serves those it has not served


def request_save(signum=None, frame=None) -> None:  # noqa: ARG001 - a signal handler's signature
    """Ask every fit of this process to save its checkpoint at the end of its current iteration, whatever ``every``.

    The handler of SIGUSR1 (:func:`save_on_signal`). A request made during a task before its fit optimizes
    (its counts, its set-up) is served at the fit's first iteration; one made between tasks, by none.

    Parameters
    ----------
    signum, frame : optional
        A signal handler's arguments (unused).
    """
    global _REQUESTS
    _REQUESTS += 1


def request_save_here_and_below(signum=None, frame=None) -> None:  # noqa: ARG001 - a signal handler's signature
    """:func:`request_save` in this process, and SIGUSR1 to every child process that handles it
    (:func:`saving_children`): the handler of a run's main process, whose tasks may run in worker processes
    (``executor=joblib``).

    Parameters
    ----------
    signum, frame : optional
        A signal handler's arguments (unused).
    """
    request_save()
    ask_to_save(saving_children(os.getpid()))


def ask_to_save(pids) -> None:
    """SIGUSR1 to each of ``pids`` (processes that catch it: :func:`saving_children`); one that just ended is skipped.

    Parameters
    ----------
    pids : iterable of int
        The processes.
    """
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGUSR1)


def saving_children(pid: int) -> list[int]:
    """The child processes of ``pid`` that catch SIGUSR1 (loky's workers once they ran a task; not its resource
    trackers, nor Dask's processes, which SIGUSR1 would end). From Linux's ``/proc``; elsewhere none.

    Parameters
    ----------
    pid : int
        A process.

    Returns
    -------
    list of int
        Their pids, in order.
    """
    usr1 = getattr(signal, "SIGUSR1", None)
    kids: set[int] = set()
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    if usr1 is None:
        return []
    for tid in threads:
        with contextlib.suppress(OSError, ValueError):
            kids.update(int(c) for c in Path(f"/proc/{pid}/task/{tid}/children").read_text().split())
    out = []
    for kid in sorted(kids):
        with contextlib.suppress(OSError, ValueError, IndexError):
            caught = next(line for line in Path(f"/proc/{kid}/status").read_text().splitlines()
                          if line.startswith("SigCgt:"))
            if int(caught.split()[1], 16) >> (int(usr1) - 1) & 1:
                out.append(kid)
    return out


def save_on_signal(handler=request_save) -> bool:
    """From now on SIGUSR1 calls ``handler`` in this process (instead of ending it, its default).

    Installed only from the main thread, where SIGUSR1 exists and still has its default action (a
    handler of the embedding program is left as it is); it stays for the life of the process.

    Parameters
    ----------
    handler : callable, default=request_save
        :func:`request_save` (a task's process), or :func:`request_save_here_and_below` (a run's main process).

    Returns
    -------
    bool
        Whether SIGUSR1 calls ``handler`` in this process now.
    """
    usr1 = getattr(signal, "SIGUSR1", None)
    if usr1 is None or threading.current_thread() is not threading.main_thread():
        return False
    if signal.getsignal(usr1) is signal.SIG_DFL:
        signal.signal(usr1, handler)
    return signal.getsignal(usr1) is handler


class FitCheckpoint:
    """Where and how often the optimizations of one task save their state, and what resumed.

    Parameters
    ----------
    prefix : str or os.PathLike
        Files are ``<prefix>.fit<i>.npz``.
    every : float
        Seconds between saves of one optimization (0: at every iteration); the first save comes
        ``every`` seconds after the optimization starts, or :data:`FIRST` if that is sooner and the
        optimization starts afresh (not from a save).
    label : str, optional
        What is being fitted, for the lines on stderr; default the prefix's name.
    clock : callable, default=time.monotonic
        The clock of ``every``.

    Attributes
    ----------
    resumed : list of int
        The iterations the optimizations went on from, in order: a fit killed twice went on twice.
    credited : float
        The optimizer's seconds before those checkpoints (spent by earlier runs of the task).
    credited_cpu : float or None
        The same in CPU seconds of the process; ``None`` once a checkpoint without them (saved before they were)
        was resumed.
    served : int
        The requests to save (:func:`request_save`) of the process that this task's fits have served, or that
        came before the task.
    """

    def __init__(self, prefix, every: float, label: str | None = None, clock=time.monotonic) -> None:
        """Set the place and the interval; nothing is read or written.

        Parameters
        ----------
        prefix : str or os.PathLike
            Files are ``<prefix>.fit<i>.npz``.
        every : float
            Seconds between saves (0: every iteration).
        label : str, optional
            For the lines on stderr.
        clock : callable, default=time.monotonic
            The clock of ``every``.
        """
        self.prefix = Path(prefix)
        self.every = float(every)
        self.label = label or self.prefix.name
        self.clock = clock
        self.resumed: list[int] = []
        self.credited = 0.0
        self.credited_cpu: float | None = 0.0
        self._next = 0  # the index of the next optimization
        self.served = _REQUESTS  # requests to save (request_save) made before this task: not its to serve

    def path(self, i: int) -> Path:
        """The file of optimization ``i``.

        Parameters
        ----------
        i : int

        Returns
        -------
        pathlib.Path
            ``<prefix>.fit<i>.npz``.
        """
        return self.prefix.with_name(f"{self.prefix.name}.fit{i}.npz")

    def files(self) -> list[Path]:
        """The checkpoint files of this prefix that exist (:func:`files`).

        Returns
        -------
        list of pathlib.Path
        """
        return files(self.prefix)

    def clear(self) -> None:
        """Remove every checkpoint file of this prefix (once the task's record is written)."""
        for p in self.files():
            p.unlink(missing_ok=True)

    def begin(self, fingerprint: str, state_class) -> "Saver":
        """Start the next optimization: its saver, with the saved state if its file matches.

        Parameters
        ----------
        fingerprint : str
            :func:`fingerprint` of the optimization.
        state_class : type
            Its driver's state (:class:`bncbench.engine.lbfgs_compact.State` or
            :class:`bncbench.engine.lbfgsb.State`): what a saved file is read back as.

        Returns
        -------
        Saver
        """
        i, self._next = self._next, self._next + 1
        saver = Saver(self, self.path(i), fingerprint)
        saver.load(state_class)
        return saver


class Saver:
    """One optimization's checkpoint: what it resumes from and when it saves next.

    Made by :meth:`FitCheckpoint.begin`.

    Attributes
    ----------
    state : lbfgs_compact.State, lbfgsb.State or None
        The saved L-BFGS-B state to go on from (``None``: start afresh).
    trace : list of dict
        The saved trace (empty when starting afresh).
    n_fev : int
        The saved evaluation count.
    elapsed : float
        The optimizer's seconds when it was saved.
    cpu : float or None
        The optimizer's CPU seconds then (``None``: a file saved before they were).
    resumed : list of int
        The iterations this optimization went on from, in this run and the killed ones (saved with it).
    """

    def __init__(self, owner: FitCheckpoint, path: Path, fingerprint: str) -> None:
        self.owner, self.path, self.fingerprint = owner, path, fingerprint
        self.state, self.trace, self.n_fev, self.elapsed, self.resumed = None, [], 0, 0.0, []
        self.cpu: float | None = 0.0
        self._last = owner.clock()
        self._failed = False  # a save failed (said once)
        self._saved = False  # this optimization saved in this run

    def load(self, state_class) -> None:
        """Read the file as a ``state_class`` if it exists and matches (else leave it aside with one line on stderr)."""
        if not self.path.exists():
            return
        try:
            with np.load(self.path) as z:
                if str(z["fingerprint"]) != self.fingerprint:
                    _say(f"{self.owner.label}: checkpoint {self.path.name} is of another fit (other code, "
                         "settings or data); starting afresh")
                    return
                state = state_class.from_arrays(z)
                trace, n_fev, elapsed = json.loads(str(z["trace"])), int(z["n_fev"]), float(z["elapsed"])
                cpu = float(z["cpu"]) if "cpu" in z.files else None
                earlier = z["resumed"] if "resumed" in z.files else ()  # (not in this session's first files)
                resumed = [int(i) for i in earlier] + [state.n_iter]
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            _say(f"{self.owner.label}: checkpoint {self.path.name} cannot be read ({exc}); starting afresh")
            return
        self.state, self.trace, self.n_fev, self.elapsed, self.resumed = state, trace, n_fev, elapsed, resumed
        self.cpu = cpu
        self.owner.resumed += resumed
        self.owner.credited += elapsed
        if self.owner.credited_cpu is not None:
            self.owner.credited_cpu = None if cpu is None else self.owner.credited_cpu + cpu
        _say(f"{self.owner.label}: going on from the checkpoint at iteration {state.n_iter} "
             f"({elapsed / 60:.1f} min of optimizing before)")

    def maybe_save(self, state, trace: list, n_fev: int, elapsed: float, cpu: float | None) -> bool:
        """Save the state if ``every`` seconds have passed since the start or the last save (:data:`FIRST`, if sooner,
        before the first save of an optimization that started afresh), or a save was asked for
        (:func:`request_save`, SIGUSR1) since.

        Parameters
        ----------
        state : lbfgs_compact.State or lbfgsb.State
            The optimizer's state at the end of an iteration.
        trace : list of dict
            The trace up to this iteration.
        n_fev : int
            The problem's evaluation count.
        elapsed : float
            The optimizer's seconds so far (earlier runs' included).
        cpu : float or None
            The same in CPU seconds of the process; ``None`` (not saved) where an earlier run's are unknown.

        Returns
        -------
        bool
            Whether it saved (:meth:`save`; a save that was asked for says so in one line). A file that cannot
            be written (a full disk: a save of DBL³ on optdigits is 3.6 GB) is not saved, the fit goes on and
            the next interval tries again.
        """
        now = self.owner.clock()
        asked = _REQUESTS > self.owner.served
        every = self.owner.every if self._saved or self.state is not None else min(self.owner.every, FIRST)
        if not asked and now - self._last < every:
            return False
        self.owner.served = _REQUESTS
        saved = self.save(state, trace, n_fev, elapsed, cpu)
        if saved and asked:
            _say(f"{self.owner.label}: saved the checkpoint at iteration {state.n_iter}, as asked (SIGUSR1)")
        return saved

    def save_interrupted(self, state, trace: list, n_fev: int, elapsed: float, cpu: float | None) -> bool:
        """Save the state of an interrupted optimization (the arguments of :meth:`maybe_save`), whatever the clock.

        ``state`` must be as at the end of an iteration (:func:`bncbench.engine.lbfgs_compact.run`'s
        ``on_interrupt``), ``trace`` and ``n_fev`` as they were then.

        Returns
        -------
        bool
            Whether it saved; says so in one line on stderr.
        """
        saved = self.save(state, trace, n_fev, elapsed, cpu)
        if saved:
            _say(f"{self.owner.label}: interrupted; saved the checkpoint at iteration {state.n_iter}: "
                 "the next run goes on from it")
        return saved

    def save(self, state, trace: list, n_fev: int, elapsed: float, cpu: float | None) -> bool:
        """Write the checkpoint now (atomically; the arguments of :meth:`maybe_save`).

        Returns
        -------
        bool
            Whether it saved: a file that cannot be written is not, the previous one stays, and the
            first failure of the fit says so in one line.
        """
        from bncbench.atomic import atomic_file

        try:
            with atomic_file(self.path) as fh:
                np.savez(fh, fingerprint=np.array(self.fingerprint), trace=np.array(json.dumps(trace)),
                         n_fev=np.array(n_fev), elapsed=np.array(elapsed),
                         resumed=np.array(self.resumed, np.int64), **({} if cpu is None else {"cpu": np.array(cpu)}),
                         **state.arrays())
        except OSError as exc:
            self._last = self.owner.clock()
            if not self._failed:
                self._failed = True
                _say(f"{self.owner.label}: cannot save the checkpoint {self.path} "
                     f"({exc.strerror or exc}); the fit goes on and tries again at each save's time")
            return False
        self._last = self.owner.clock()
        self._saved = True
        return True


def fingerprint(x0: np.ndarray, f0: float, settings: dict) -> str:
    """What must be equal for a saved state to belong to an optimization.

    Parameters
    ----------
    x0 : ndarray
        The starting point.
    f0 : float
        The objective there.
    settings : dict
        The optimizer's settings (JSON-serializable).

    Returns
    -------
    str
        A SHA-256 of the point's bytes, the objective's bits, the settings and scipy's version.
    """
    import scipy

    h = hashlib.sha256(np.ascontiguousarray(x0, dtype=np.float64).tobytes())
    h.update(np.float64(f0).tobytes())
    h.update(json.dumps(settings, sort_keys=True).encode())
    h.update(scipy.__version__.encode())
    return h.hexdigest()


def files(prefix) -> list[Path]:
    """The checkpoint files of ``prefix`` that exist, in order.

    Parameters
    ----------
    prefix : str or os.PathLike
        As :class:`FitCheckpoint`'s.

    Returns
    -------
    list of pathlib.Path
        ``<prefix>.fit<i>.npz`` for every ``i`` there is.
    """
    prefix = Path(prefix)
    return sorted(prefix.parent.glob(f"{prefix.name}.fit*.npz"))


def saved_iterations(prefix) -> int:
    """How far the saved fits of ``prefix`` are: the iterations their checkpoints would go on from, summed.

    What a rerun of the task would resume from (its optimizations in order, each from its last
    save); it grows with every save, so the runner tells a killed fit that progressed from one
    that died again where it was (:func:`bncbench.harness.runner.crash_count`). Only each file's
    iteration count is read, not its state.

    Parameters
    ----------
    prefix : str or os.PathLike
        As :class:`FitCheckpoint`'s.

    Returns
    -------
    int
        The sum of the saved ``n_iter`` over :func:`files`; 0 without a checkpoint (a file that
        cannot be read counts 0).
    """
    total = 0
    for path in files(prefix):
        try:
            with np.load(path) as z:
                total += int(z["n_iter"])
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
            continue
    return total


def active() -> FitCheckpoint | None:
    """The checkpoint of the enclosing :func:`fit_checkpoint` block, if any.

    Returns
    -------
    FitCheckpoint or None
    """
    return _ACTIVE


@contextlib.contextmanager
def fit_checkpoint(prefix, every: float = EVERY, label: str | None = None):
    """Within the block, L-BFGS fits save their state every ``every`` seconds and resume from it.

    Parameters
    ----------
    prefix : str or os.PathLike
        Files are ``<prefix>.fit<i>.npz``, one per optimization of the block, in order.
    every : float, default=EVERY
        Seconds between saves (0: every iteration).
    label : str, optional
        What is being fitted, for the lines on stderr.

    Yields
    ------
    FitCheckpoint
        Its ``resumed``, ``credited`` and ``credited_cpu`` tell, after the block, what earlier runs did.
    """
    global _ACTIVE
    old, _ACTIVE = _ACTIVE, FitCheckpoint(prefix, every, label)
    try:
        yield _ACTIVE
    finally:
        _ACTIVE = old


@contextlib.contextmanager
def suspended():
    """Within the block, fits neither save nor resume (the runner's untimed warm-up fit).

    Yields
    ------
    None
    """
    global _ACTIVE
    old, _ACTIVE = _ACTIVE, None
    try:
        yield
    finally:
        _ACTIVE = old


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)

"""What the executors that submit SLURM jobs share: their job options, and asking ``squeue``.

``slurm`` submits the tasks as job arrays (submitit); ``dask`` with ``jobqueue=slurm`` submits
Dask workers as jobs (dask-jobqueue). Both declare the options below (one declaration, the same
names and meaning in both), and both must notice a job that left the queue without telling them:
on a cluster without job accounting nothing else says so (:class:`Vanished`).
"""

from __future__ import annotations

import getpass
import shutil
import subprocess
import time
from typing import Callable, Hashable

from bncbench.errors import BNCBenchError
from bncbench.registry import Hyperparameter, finite, integer

JOB_OPTIONS = [
    Hyperparameter("partition", None, [str, None], "SLURM partition (None: the cluster's default)", str),
    Hyperparameter("timeout_min", 1440, [integer(1)],
                   "time limit of one job (slurm: an array element; dask: a worker), minutes", int),
    Hyperparameter("mem_gb", None, [finite(0.0), None],
                   "memory of one job, GB (None: the cluster's default; dask needs it)", float),
    Hyperparameter("sbatch", {}, [dict], "more #SBATCH options: {account: x, qos: y, gres: 'gpu:0'}", dict),
    Hyperparameter("setup", [], [list], "shell lines before each job (module load, source venv)", list),
    Hyperparameter("poll_seconds", 30.0, [finite(0.0)], "seconds between two looks at the jobs' states", float),
]
"""The SLURM job options of ``executor=slurm`` and ``executor=dask`` (``jobqueue=slurm``)."""

def require_commands(executor: str, commands: tuple[str, ...], hint: str = "") -> None:
    """Before any task: SLURM's ``commands`` on this machine's PATH (a login node), else one line.

    Parameters
    ----------
    executor : str
        The executor's registered name, for the message.
    commands : tuple of str
        The commands it calls (``sbatch``, ``srun``).
    hint : str, default=""
        Appended to the message (what to use instead).

    Raises
    ------
    BNCBenchError
        Naming the missing commands.
    """
    missing = [c for c in commands if shutil.which(c) is None]
    if missing:
        raise BNCBenchError(f"executor {executor}: no {' or '.join(missing)} on this machine's PATH; run from a "
                            f"SLURM login node{hint}")


VANISHED_GRACE = 60.0
"""Seconds a job must have been missing from ``squeue`` before it counts as ended."""


def queued() -> set[str] | None:
    """The ids of this user's jobs ``squeue`` lists (array elements one by one), or None if it fails."""
    try:
        out = subprocess.run(["squeue", "--noheader", "--array", "--format=%i", f"--user={getpass.getuser()}"],
                             capture_output=True, text=True, timeout=120, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return set(out.split())


class Vanished:
    """The jobs that ``squeue`` no longer lists, for long enough to be sure.

    Called once per poll with the jobs to watch (key to SLURM job id). A job counts once ``squeue``
    has missed it at two calls in a row, the first at least ``grace`` seconds before: time for a
    file written just before the job left (a result, a log) to show on a shared file system (NFS
    caches attributes for up to a minute), which the caller then looks for once more. A failing
    ``squeue`` decides nothing, and the count starts again; no job to watch asks nothing.

    Parameters
    ----------
    grace : float
        Seconds between the first miss and the verdict.
    clock : callable, default=time.monotonic
        Seconds (tests pass their own).
    """

    def __init__(self, grace: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.grace, self.clock = grace, clock
        self.since: dict[Hashable, float] = {}

    def __call__(self, watched: dict[Hashable, str]) -> list:
        """The keys of ``watched`` whose job has been missing from ``squeue`` for ``grace`` seconds.

        Parameters
        ----------
        watched : dict
            Key (any hashable) to SLURM job id (``"41"``, ``"7_2"``).

        Returns
        -------
        list
            The keys of the jobs missed at this call and the one before, the first at least
            ``grace`` seconds ago; sorted.
        """
        listed = queued() if watched else None
        if listed is None:
            self.since = {}
            return []
        now, before = self.clock(), self.since
        self.since = {k: before.get(k, now) for k, job_id in watched.items() if str(job_id) not in listed}
        return sorted(k for k, t in self.since.items() if k in before and now - t >= self.grace)

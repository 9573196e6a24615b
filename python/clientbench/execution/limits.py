"""The machine's limits a workload can hit: open files (a connection is a file descriptor at each end, and the
started server runs here too) and threads (a sync row's worker is a thread). The runner raises its soft limit on
open files to the hard one at start (its children, the server and the drivers, inherit it), as load generators
do; a workload past what is allowed is a one-line error naming the limit and how to raise it."""

from __future__ import annotations

import resource

from ..errors import SetupError

#: descriptors a process needs besides its connections (the interpreter, libraries, pipes, logs)
SPARE_FDS = 256
#: the most threads a sync row runs (one per worker); past it the row is unsupported at that point
MAX_THREADS = 256


def raise_open_files() -> int:
    """Raise the soft limit on open files to the hard one (where the kernel allows); the soft limit then."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        hard = 1 << 20
    if soft != resource.RLIM_INFINITY and soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            pass
    return int(soft)


def check_open_files(workers: int, local_server: bool) -> None:
    """SetupError when W connections (and the server's ends of them, when it runs here) would pass the limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = workers * (2 if local_server else 1) + SPARE_FDS
    if soft != resource.RLIM_INFINITY and needed > soft:
        where = "the server's ends too, " if local_server else ""
        raise SetupError(
            f"{workers} workers need about {needed} open files ({where}plus {SPARE_FDS} spare) and this process may "
            f"open {soft} (hard limit {hard}): raise it with `ulimit -n {needed}` (as root, or after raising the "
            "hard limit), or use fewer workers"
        )

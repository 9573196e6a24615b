"""Child processes the runner owns for a whole command (the server, toxiproxy): started, waited for until
they are ready, and stopped on every path: SIGTERM, SIGKILL after a grace period, reaped. They also die with
the runner when it dies without cleaning up (PR_SET_PDEATHSIG)."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO

_PR_SET_PDEATHSIG = 1


def child_preexec() -> None:
    """Runs in every child the runner starts, between fork and exec: the kernel sends it SIGTERM when the
    runner dies, so no child outlives a runner that was killed."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        except Exception:
            pass


def pinned(preexec: Callable[[], None], cpus: frozenset[int] | None) -> Callable[[], None]:
    """`preexec`, then (--pin) the child and every thread and process it makes kept to `cpus`."""
    if not cpus:
        return preexec

    def run() -> None:
        preexec()
        os.sched_setaffinity(0, cpus)

    return run


class ManagedProcess:
    """One long-lived child: `with Child(...) as c:` or `start()`/`stop()`.

    A subclass gives its `command()` and `wait_ready()` (raise SetupError when the child does not come up:
    `start` then stops it before re-raising), and releases what else it holds in `release()`. The child's
    output goes to `log` (or nowhere); with `reads_stdout` its stdout is a pipe for the subclass to read
    and only its stderr goes to the log."""

    reads_stdout = False
    #: how long a child gets to exit after SIGTERM before it is killed
    stop_grace_s = 5.0

    def __init__(
        self, log: Path | None, start_timeout: float, inherit_stderr: bool = False, cpus: frozenset[int] | None = None
    ):
        self.cpus = cpus  # --pin: the CPUs the child runs on (None: any)
        self.log_path = log
        self.inherit_stderr = inherit_stderr  # the child's stderr is the runner's (a command in the foreground)
        self.start_timeout = start_timeout
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    def command(self) -> list[str]:
        raise NotImplementedError

    def wait_ready(self) -> None:
        """Return once the child serves; raise when it does not within `start_timeout`."""

    def release(self) -> None:
        """Free what the subclass holds besides the process (called by `stop`, after the child is reaped)."""

    def __enter__(self) -> ManagedProcess:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        try:
            self._log = open(self.log_path or os.devnull, "wb")  # closed by stop()
            self.proc = subprocess.Popen(
                self.command(),
                stdout=subprocess.PIPE if self.reads_stdout else self._log,
                stderr=None if self.inherit_stderr else self._log if self.reads_stdout else subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                preexec_fn=pinned(child_preexec, self.cpus),
            )
            self.wait_ready()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> int | None:
        """Stop the child (if it still runs) and reap it; its exit status, or None when none was started."""
        proc, self.proc = self.proc, None
        code = None
        if proc is not None:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=self.stop_grace_s)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            code = proc.returncode
            if proc.stdout:
                proc.stdout.close()
        self.release()
        if self._log is not None:
            self._log.close()
            self._log = None
        return code

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

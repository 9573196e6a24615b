"""What `clientbench cost` counted, read from the tools' output: callgrind's instructions and allocator calls,
strace's syscalls, each by thread, and the cost of one request as the difference between two request counts
(commands/cost.py runs the tools; docs/cost.md)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# -- the tools' output --------------------------------------------------------------------------------


class CostError(RuntimeError):
    """One measurement of one row failed: the row says why, the other rows are still measured."""


_CALLGRIND_TOTAL = re.compile(r"^(?:summary|totals):\s+(\d+)", re.M)
_CALLGRIND_FN = re.compile(r"^c?fn=\((\d+)\)(?: (.*))?$")
_STRACE_CALL = re.compile(r"^(\d+)\s+([a-z_0-9]+)\(")
#: the allocating functions whose calls are counted (operator new, PyMem_RawMalloc etc. call these)
ALLOCATORS = frozenset({"malloc", "calloc", "realloc", "reallocarray", "posix_memalign", "aligned_alloc", "memalign"})
MAIN = "1"  # the process's first thread, in the threads' order of appearance


def callgrind_instructions(text: str) -> int:
    """The instructions (Ir) of a callgrind output file."""
    m = _CALLGRIND_TOTAL.search(text)
    if m is None:
        raise CostError("callgrind wrote no instruction total")
    return int(m.group(1))


def callgrind_allocations(text: str) -> int:
    """The calls of ALLOCATORS in a callgrind output file (its `calls=` lines under a `cfn=` of one)."""
    names: dict[str, str] = {}  # compressed function names: id -> name
    callee: str | None = None
    calls = 0
    for line in text.splitlines():
        m = _CALLGRIND_FN.match(line)
        if m is not None:
            fid, name = m.groups()
            if name is not None:
                names[fid] = name
            if line.startswith("cfn="):
                callee = names.get(fid)
            continue
        if line.startswith("calls=") and callee in ALLOCATORS:
            calls += int(line[6:].split()[0])
    return calls


def strace_threads(text: str) -> dict[str, dict[str, int]]:
    """Calls by syscall and thread from `strace -f -o`'s trace; the threads numbered 1, 2, ... in the order
    they first appear (1: the traced process itself). A call resumed after another thread's is counted once."""
    threads: dict[str, dict[str, int]] = {}
    order: dict[str, str] = {}
    for line in text.splitlines():
        m = _STRACE_CALL.match(line)
        if m is None:
            continue
        tid, name = m.groups()
        key = order.setdefault(tid, str(len(order) + 1))
        calls = threads.setdefault(key, {})
        calls[name] = calls.get(name, 0) + 1
    if not threads:
        raise CostError("strace traced no syscall")
    return threads


def callgrind_threads(stem: Path, read: Callable[[str], int], counter: str) -> dict[str, dict[str, int]]:
    """`read` of each thread's callgrind file (`<stem>-01`, `<stem>-02`, ...: --separate-threads)."""
    files = sorted(stem.parent.glob(stem.name + "-*"), key=lambda p: int(p.name.rsplit("-", 1)[1]))
    if not files:
        raise CostError("callgrind wrote no output")
    return {str(int(f.name.rsplit("-", 1)[1])): {counter: read(f.read_text())} for f in files}


@dataclass
class Counts:
    """One measure of one row: what the tool counted at each request count, by thread."""

    totals: dict[int, dict[str, dict[str, int]]] = field(default_factory=dict)  # requests -> thread -> counts

    def per_request(self, n: int, m: int, scope: str) -> dict[str, float]:
        """Counter -> count per request, over the request threads (scope "threads") or the whole process."""

        def summed(threads: dict[str, dict[str, int]]) -> dict[str, int]:
            out: dict[str, int] = {}
            for thread, counts in threads.items():
                if scope == "process" or thread != MAIN:
                    for k, v in counts.items():
                        out[k] = out.get(k, 0) + v
            return out

        big, small = summed(self.totals[n]), summed(self.totals[m])
        return {k: (big.get(k, 0) - small.get(k, 0)) / (n - m) for k in sorted(set(big) | set(small))}


def counted_scope(counts: Mapping[str, Counts], n: int, m: int) -> str:
    """ "threads" when the requests ran on threads other than the main thread (they account for more than a tenth
    of what the process counted per request), else "process". Decided on the instructions."""
    measured = [c for c in counts.values() if n in c.totals and m in c.totals]
    if not measured:
        return "process"
    chosen = counts.get("instructions", measured[0])
    if n not in chosen.totals or m not in chosen.totals:
        chosen = measured[0]
    whole = sum(chosen.per_request(n, m, "process").values())
    threads = sum(chosen.per_request(n, m, "threads").values())
    return "threads" if whole > 0 and threads > 0.1 * whole else "process"


def per_request(counts: Mapping[str, Counts], n: int, m: int, scope: str) -> dict[str, Any]:
    """cost.json's figures of one row: instructions, syscalls (in all and by name) and allocations per request."""
    per = {k: c.per_request(n, m, scope) for k, c in counts.items() if n in c.totals and m in c.totals}
    syscalls = per.get("syscalls")
    return {
        "instructions_per_request": per["instructions"]["instructions"] if "instructions" in per else None,
        "syscalls_per_request": sum(syscalls.values()) if syscalls is not None else None,
        "syscalls": {k: v for k, v in syscalls.items() if v} if syscalls is not None else None,
        "allocations_per_request": per["allocations"]["allocations"] if "allocations" in per else None,
    }

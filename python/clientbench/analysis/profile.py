"""What `clientbench profile` sampled, read from folded stacks (`frame;frame;...;leaf weight`, one stack a line,
root first): the top frames by self time, and whose time it was (commands/profile.py runs the profilers;
docs/profile.md).

Every frame is one of three kinds:

- harness: clientbench's own driver loop, python/clientbench/harness/ (with the plugin runner, plugin.py and
  sdk.py), cpp-beast/harness/ (its symbols are in namespace `harness::`) and rust-reqwest/harness/ (the crate
  `reqwest_harness`);
- system: what anyone's code calls: the kernel (`_[k]`), C functions (libc, the interpreter's C code), the C++ and
  Rust standard libraries, Python's standard library, frames a profiler could not name in those libraries or at
  all (an unnamed frame of another library, such as a stripped binding's, is the client's);
- client: everything else, the library under test and what it brings (its runtime, its parser, its TLS).

A sample is the harness's when the innermost frame of its stack that is not a system frame is the harness's (the
clock it reads, the allocator it calls are its time), the client's when that frame is the client's, and outside
both (start-up, the dynamic loader, threads that never enter either) when its stack has system frames only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HARNESS, CLIENT, SYSTEM = "harness", "client", "system"
#: whose time a sample was: HARNESS, CLIENT, or neither
OUTSIDE = "outside"

#: Python files of clientbench's driver loop (paths as shown in the folded stacks, package-relative)
HARNESS_FILES = ("clientbench/harness/", "clientbench/plugin.py", "clientbench/sdk.py")
#: the native harnesses' symbols: the C++ namespace, the Rust crate (also as `<reqwest_harness::X as Trait>`)
HARNESS_SYMBOLS = ("harness::", "reqwest_harness::", "<reqwest_harness::")
#: the C++ and Rust standard libraries' symbols
STD_SYMBOLS = ("std::", "core::", "alloc::", "__gnu_cxx::", "__cxxabiv1::", "<std::", "<core::", "<alloc::")

# `name (where)` or `name (where:line)`: a Python frame (where ends in .py or is <frozen ...>, <string>) or a
# native frame py-spy resolved to a file
_LOCATED = re.compile(r"^(?P<name>.*) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")
_STDLIB = re.compile(r"^python3\.\d+t?/")
# a frame a profiler could not name, shown as its library (`[libc.so.6]`): the system's, or unknown; any other
# library's (an extension module, a stripped binding, OpenSSL) is code the client brought
_SYSTEM_LIBRARY = re.compile(
    r"^(\?|unknown|vdso|kernel.*|ld-.*|libc[.-].*|libpthread.*|libm[.-].*|libdl[.-].*|librt[.-].*|libstdc\+\+.*|"
    r"libgcc_s.*|libpython3.*|python3.*)$"
)


class ProfileError(RuntimeError):
    """A profile could not be read: the row says why, the other rows are still profiled."""


def frame_kind(frame: str) -> str:
    """HARNESS, CLIENT or SYSTEM (see the module's docstring)."""
    m = _LOCATED.match(frame)
    name = frame
    if m is not None:
        where = m["file"]
        if where.endswith(".py") or where.startswith("<"):
            if where.startswith(HARNESS_FILES):
                return HARNESS
            return SYSTEM if _STDLIB.match(where) or where.startswith("<") else CLIENT
        name = m["name"]
    if name.startswith(HARNESS_SYMBOLS):
        return HARNESS
    if name.endswith("_[k]") or name.startswith("0x"):
        return SYSTEM
    if name.startswith("["):  # unnamed code, by its library (`[[vdso]]` when the library is `[vdso]`)
        return SYSTEM if _SYSTEM_LIBRARY.match(name.strip("[]")) else CLIENT
    if name.startswith(STD_SYMBOLS) or "::" not in name:  # a C function, the process or thread name
        return SYSTEM
    return CLIENT


def read_folded(text: str) -> dict[str, int]:
    """Folded stacks by stack; ProfileError for a line that is not `stack weight`."""
    out: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        stack, _, weight = line.rpartition(" ")
        if not stack or not weight.isdigit():
            raise ProfileError(f"line {number} of the folded stacks is not `frame;...;frame weight`: {line[:80]!r}")
        out[stack] = out.get(stack, 0) + int(weight)
    return out


def write_folded(stacks: Mapping[str, int]) -> str:
    return "".join(f"{stack} {weight}\n" for stack, weight in sorted(stacks.items()))


def _decider(frames: Sequence[str]) -> tuple[str, str | None]:
    """Whose time a sample with these frames (root first) was, and the frame that says so."""
    for frame in reversed(frames):
        kind = frame_kind(frame)
        if kind != SYSTEM:
            return kind, frame
    return OUTSIDE, None


def owner(frames: Sequence[str]) -> str:
    """Whose time a sample with these frames (root first) was: HARNESS, CLIENT or OUTSIDE."""
    return _decider(frames)[0]


@dataclass(frozen=True)
class TopFrame:
    frame: str
    kind: str
    weight: int  # self: the samples (or sampled ns) in which it was the leaf


@dataclass(frozen=True)
class Summary:
    total: int
    shares: dict[str, float]  # HARNESS, CLIENT, OUTSIDE -> fraction of the total
    top: list[TopFrame] = field(default_factory=list)
    kernel: bool = False  # whether the stacks hold kernel frames
    #: where the harness's share went: its frames that decided its samples (the innermost of each), by weight
    harness: list[TopFrame] = field(default_factory=list)

    def share(self, weight: int) -> float:
        return weight / self.total if self.total else 0.0


def _ranked(weights: Mapping[str, int], top: int) -> list[TopFrame]:
    best = sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    return [TopFrame(f, frame_kind(f), w) for f, w in best]


def summarize(stacks: Mapping[str, int], top: int = 12) -> Summary:
    """The top frames by self time, the harness's, the client's and the rest's shares, and the harness frames its
    share comes from; ProfileError without samples."""
    total = sum(stacks.values())
    if total <= 0:
        raise ProfileError("the profiler recorded no samples")
    owners = {HARNESS: 0, CLIENT: 0, OUTSIDE: 0}
    leaves: dict[str, int] = {}
    deciders: dict[str, int] = {}
    kernel = False
    for stack, weight in stacks.items():
        frames = stack.split(";")
        kind, decider = _decider(frames)
        owners[kind] += weight
        if kind == HARNESS and decider is not None:
            deciders[decider] = deciders.get(decider, 0) + weight
        leaves[frames[-1]] = leaves.get(frames[-1], 0) + weight
        kernel = kernel or frames[-1].endswith("_[k]")
    shares = {k: v / total for k, v in owners.items()}
    return Summary(total, shares, _ranked(leaves, top), kernel, _ranked(deciders, 5))


def harness_frames(stacks: Iterable[str]) -> list[str]:
    """Every distinct harness frame of these stacks, sorted."""
    return sorted({f for s in stacks for f in s.split(";") if frame_kind(f) == HARNESS})


#: the harness's colour in the flame graphs (inferno's palette map; every other frame keeps the hot palette)
HARNESS_RGB = (70, 130, 220)


def palette_map(frames: Iterable[str]) -> str:
    """inferno's palette.map (`name->rgb(r,g,b)`) giving these frames the harness's colour; a name with `->`
    cannot be written in it, and keeps the palette's colour."""
    r, g, b = HARNESS_RGB
    return "".join(f"{f}->rgb({r},{g},{b})\n" for f in frames if "->" not in f)


# -- perf --------------------------------------------------------------------------------------------------------

# a stack line of `perf script`: address, then a symbol of a C++ anonymous namespace at the top level
_ANONYMOUS = re.compile(r"^(\s*[0-9a-f]+ )\(anonymous namespace\)::")


def perf_script_line(line: str) -> str:
    """A line of `perf script` with a top-level C++ anonymous namespace named `{anonymous}::`, as GCC's messages
    name it: inferno-collapse-perf drops a frame whose name starts with `(` (it takes it for a process name), so
    a driver's own functions (the floor driver's whole client) would go, their time to their callers."""
    return _ANONYMOUS.sub(r"\1{anonymous}::", line)


# -- py-spy ---------------------------------------------------------------------------------------------------


def short_path(file: str, is_package: Callable[[Path], bool] | None = None) -> str:
    """A Python or native file as the folded stacks name it: from the package it is in (py-spy's rule: up to the
    topmost folder with an __init__.py), after site-packages; Python's standard library as `python3.X/...`; a
    library by its file name."""
    if file.startswith("<"):
        return file
    for marker in ("/site-packages/", "/dist-packages/"):
        if marker in file:
            return file.rsplit(marker, 1)[1]
    std = re.search(r"/lib/(python3\.\d+t?/.*)$", file)
    if std is not None:
        return std[1]
    path = Path(file)
    if path.suffix != ".py":
        return path.name
    check = is_package or (lambda d: (d / "__init__.py").is_file())
    top = path.parent
    while top.parent != top and check(top):
        top = top.parent
    return str(path.relative_to(top))


_PROCESS = re.compile(r"^process \d+:")


def _frame_text(frame: Mapping[str, Any], shorten: Callable[[str], str]) -> str | None:
    """A speedscope frame as a folded frame: `name (file:line)`; an address py-spy could not name as its library,
    `[libc.so.6]` (as inferno names it: the address changes every run); None for the frame --subprocesses puts at
    the root of each process (its pid and command line, which change every run too)."""
    name = str(frame.get("name") or "?")
    file = str(frame.get("file") or "")
    if not file:
        return None if _PROCESS.match(name) else name
    if name.startswith("0x"):
        return f"[{Path(file).name.strip('[]')}]"
    line = frame.get("line") or 0
    return f"{name} ({shorten(file)}{f':{line}' if line else ''})"


def _thread_name(profile_name: str) -> str:
    """py-spy names a profile `Process P Thread T "name"`: the thread's name (stable between runs), or python."""
    m = re.search(r'"([^"]*)"\s*$', profile_name)
    return (m[1] if m and m[1] else "python").replace(";", ":")


def speedscope_folded(doc: Any, shorten: Callable[[str], str] = short_path) -> dict[str, int]:
    """py-spy's speedscope document as folded stacks, one sample weighing 1, each stack under its thread's name;
    ProfileError when it is not a sampled speedscope document."""
    try:
        frames = [_frame_text(f, shorten) for f in doc["shared"]["frames"]]
        names = [None if f is None else f.replace(";", ":") for f in frames]
        out: dict[str, int] = {}
        for profile in doc["profiles"]:
            if profile.get("type") != "sampled":
                raise ProfileError(f"a speedscope profile of type {profile.get('type')!r}, not sampled")
            thread = _thread_name(str(profile.get("name", "")))
            for sample in profile["samples"]:
                stack = ";".join([thread, *(n for i in sample if (n := names[i]) is not None)])
                out[stack] = out.get(stack, 0) + 1
    except (KeyError, TypeError, IndexError) as exc:
        raise ProfileError(f"not a speedscope document of py-spy's ({type(exc).__name__}: {exc})") from None
    return out

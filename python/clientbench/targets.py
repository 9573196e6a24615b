"""Many URLs and hosts (`--targets FILE`, `--hosts N`): the requests a worker cycles through.

A targets file lists one request per line, as vegeta's targets do: `METHOD URL` and optionally the file its
body is read from, `@PATH` on the same line or on the next one. `#` starts a comment line. A URL is absolute
(`http://host:port/path`) or a path (`/bytes/1024`) on the run's server; with `--hosts N` a path becomes N
targets, one per origin the server answers on. A body's PATH is relative to the targets file's folder.

The runner resolves the user's file once per endpoint into the drivers' form (`write`): one target per line,
`METHOD URL` or `METHOD URL @/absolute/body/path`, which every harness parses (docs/raw-format.md, "Targets").
Worker w's request k (warm-up and timed alike, each counted from 0) goes to target (w + k) mod T.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from .errors import SetupError
from .workload import MAX_BODY_SIZE, METHODS

#: at most this many targets after the hosts' expansion (each harness keeps them, and their bodies, in memory)
MAX_TARGETS = 100_000
#: the bodies of all targets together (each driver process holds them once)
MAX_BODIES = MAX_BODY_SIZE
#: the origins --hosts serves on: 127.0.0.1 ... 127.0.0.N (all on the loopback interface)
MAX_HOSTS = 64
_HEADER = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+:")


@dataclass(frozen=True)
class Target:
    method: str
    url: str
    body: Path | None = None  # the file the body is read from (None: no body)

    def line(self) -> str:
        return f"{self.method} {self.url}" + (f" @{self.body}" if self.body is not None else "")

    @property
    def body_size(self) -> int:
        return self.body.stat().st_size if self.body is not None else 0


@dataclass(frozen=True)
class Entry:
    """A line of the user's file: its URL may still be a path on the run's server."""

    method: str
    url: str
    body: Path | None
    line: int


def _fail(source: Path, line: int, why: str) -> SetupError:
    return SetupError(f"--targets {source}, line {line}: {why}")


def _body(source: Path, line: int, text: str) -> Path:
    raw = text[1:]
    if not raw:
        raise _fail(source, line, "'@' names no body file")
    path = (source.parent / raw).resolve()
    if not path.is_file():
        raise _fail(source, line, f"no body file {path}")
    if any(c.isspace() for c in str(path)):
        raise _fail(source, line, f"the body file's path has a space, which the drivers' targets cannot carry: {path}")
    if path.stat().st_size > MAX_BODY_SIZE:
        raise _fail(source, line, f"the body file {path} is above 1 GiB")
    return path


def _url(source: Path, line: int, text: str) -> str:
    if text.startswith("/"):
        return text
    parts = urlsplit(text)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise _fail(source, line, f"{text!r} is neither a path (/...) nor an http:// or https:// URL with a host")
    try:
        parts.port  # noqa: B018 (a port out of range raises)
    except ValueError:
        raise _fail(source, line, f"{text!r} has a port out of range") from None
    return text


def parse(source: Path) -> list[Entry]:
    """The entries of a targets file, or a SetupError naming the file and line at fault."""
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SetupError(f"--targets {source}: cannot read it ({exc})") from None
    entries: list[Entry] = []
    for number, raw in enumerate(text.splitlines(), 1):
        fields = raw.split()
        if not fields or fields[0].startswith("#"):
            continue
        if fields[0].startswith("@"):  # vegeta's form: the body on the line after its target
            if len(fields) != 1 or not entries or entries[-1].body is not None or entries[-1].line != number - 1:
                raise _fail(source, number, "a body line (@PATH) belongs right after a target without one")
            last = entries.pop()
            entries.append(Entry(last.method, last.url, _body(source, number, fields[0]), number))
            continue
        if _HEADER.match(fields[0]):
            raise _fail(source, number, "header lines are not supported: every request has the drivers' own headers")
        method = fields[0].upper()
        if method not in METHODS:
            raise _fail(source, number, f"method {fields[0]!r} is not one of {', '.join(METHODS)}")
        if len(fields) < 2:
            raise _fail(source, number, f"{method} needs a URL or a path")
        if len(fields) > 3 or (len(fields) == 3 and not fields[2].startswith("@")):
            raise _fail(source, number, "a target is METHOD URL [@BODYFILE] (a URL has no spaces)")
        body = _body(source, number, fields[2]) if len(fields) == 3 else None
        entries.append(Entry(method, _url(source, number, fields[1]), body, number))
    if not entries:
        raise SetupError(f"--targets {source}: no targets in it (one 'METHOD URL [@BODYFILE]' per line)")
    for e in entries:
        if e.method == "GET" and e.body is not None:
            raise _fail(source, e.line, "a GET sends no body")
    return entries


def resolve(entries: Sequence[Entry], bases: Sequence[str], source: Path) -> list[Target]:
    """The targets of one endpoint: a path becomes one target per base URL (an origin of --hosts), in the
    order of the file, each path's origins next to each other; an absolute URL stays one target."""
    targets = [
        Target(e.method, base + e.url if e.url.startswith("/") else e.url, e.body)
        for e in entries
        for base in (bases if e.url.startswith("/") else bases[:1])
    ]
    if len(targets) > MAX_TARGETS:
        raise SetupError(f"--targets {source}: {len(targets):,} targets, at most {MAX_TARGETS:,}")
    total = sum(body.stat().st_size for body in {t.body for t in targets if t.body is not None})
    if total > MAX_BODIES:
        raise SetupError(f"--targets {source}: the distinct body files add up to {total:,} bytes, at most 1 GiB")
    return targets


def write(targets: Sequence[Target], path: Path) -> Path:
    """The drivers' targets file (one `METHOD URL [@BODY]` per line)."""
    path.write_text("".join(t.line() + "\n" for t in targets), encoding="utf-8")
    return path


def host_urls(base: str, hosts: int) -> list[str]:
    """The run's base URL (`http://127.0.0.1:PORT`) under `hosts` loopback origins: 127.0.0.1 ... 127.0.0.N."""
    parts = urlsplit(base)
    if hosts == 1:
        return [base]
    port = f":{parts.port}" if parts.port else ""
    return [f"{parts.scheme}://127.0.0.{i}{port}" for i in range(1, hosts + 1)]


def per_worker(of: Sequence[int], worker: int, count: int) -> int:
    """Sum of `of` (a figure per target) over worker `worker`'s first `count` requests: target (w + k) mod T."""
    full, rest = divmod(count, len(of))
    return full * sum(of) + sum(of[(worker + k) % len(of)] for k in range(rest))


@dataclass(frozen=True)
class Bodies:
    """What each target moves: its request body's bytes and the response body's bytes the runner's own request
    to it got (None where that is not known: the body-integrity check is then off)."""

    sent: tuple[int, ...]
    received: tuple[int, ...] | None

    def sent_total(self, counts: Sequence[int]) -> int:
        """The request body bytes of workers that sent `counts` requests each."""
        return sum(per_worker(self.sent, w, c) for w, c in enumerate(counts))

    def received_total(self, counts: Sequence[int]) -> int | None:
        if self.received is None:
            return None
        return sum(per_worker(self.received, w, c) for w, c in enumerate(counts))

"""The driver contract's command line (docs/raw-format.md, "Command line"): the flags, their checks (bad
usage exits 2 with one line naming the flag), the upload body and the answer it must get, and the TLS
options as each kind of library takes them."""

from __future__ import annotations

import argparse
import functools
import hashlib
import math
import ssl
import sys
import warnings
from collections.abc import Iterable
from typing import Any, NoReturn
from urllib.parse import urlsplit

from .bodies import ALPHABET, Pattern, load_targets

#: --body-size's largest value (1 GiB): the server's /upload accepts that much
MAX_BODY_SIZE = 1 << 30
#: a worker's schedule may not be finer than 1 µs: R/W at most this many requests/s
MAX_RATE_PER_WORKER = 1_000_000
DEFAULT_REQUESTS = 100
#: --timeout's largest value (a day): a longer latency does not fit the runner's histograms
MAX_TIMEOUT_S = 86_400.0
#: --chunk-size's range and default (a streamed body's chunk)
MAX_CHUNK_SIZE, DEFAULT_CHUNK_SIZE = 16 << 20, 64 << 10
#: --seed's range: SplitMix64's 64-bit state
MAX_SEED = (1 << 64) - 1


class Parser(argparse.ArgumentParser):
    """argparse with the contract's usage errors: one line on stderr (naming the flag), exit status 2, and
    the cross-flag checks and the upload body done by parse_args."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:
        ns = super().parse_args(args, namespace)
        if hasattr(ns, "rate"):  # the contract's flags are there (a probe's parser has none of them)
            finish(self, ns)
        return ns


def parser(description: str, *, gil: bool = False, modes: tuple[str, ...] = ()) -> Parser:
    p = Parser(description=description)
    if modes:
        p.add_argument(
            "--mode", choices=modes, default=modes[0], help=f"the library's native mode to use (default {modes[0]})"
        )
    p.add_argument("--url", required=True, help="URL every request goes to")
    p.add_argument("--workers", type=_positive, default=10, help="workers, each with its own client (default 10)")
    p.add_argument(
        "--requests", type=_positive, default=None, help=f"timed requests per worker (default {DEFAULT_REQUESTS})"
    )
    p.add_argument(
        "--duration", type=_positive_float, default=None, help="open loop: the schedule lasts this many seconds"
    )
    p.add_argument("--warmup", type=_non_negative, default=0, help="untimed requests per worker (default 0)")
    p.add_argument(
        "--timeout", type=_timeout, default=30.0, help="bounds each whole request, s (default 30, at most 86400)"
    )
    p.add_argument(
        "--connection",
        choices=["keep-alive", "new"],
        default="keep-alive",
        help="keep-alive: one connection per worker (default); new: a new client and connection for every request",
    )
    add_tls_options(p)
    p.add_argument(
        "--rate", type=_positive_float, default=None, help="open loop: R requests/s over all workers (default: closed)"
    )
    # defaults filled in by finish(), which refuses them without --rate
    p.add_argument("--arrival", choices=["uniform", "poisson"], default=None, help="open loop arrivals (uniform)")
    p.add_argument(
        "--seed", type=_seed, default=None, help="poisson: worker w's SplitMix64 starts at S + w (default 1)"
    )
    p.add_argument("--method", choices=["GET", "POST", "PUT"], default="GET", help="the request method (default GET)")
    p.add_argument(
        "--body-size", type=_body_size, default=None, help="POST/PUT: the request body's length in bytes (default 0)"
    )
    p.add_argument(
        "--record",
        choices=["samples", "histogram"],
        default="samples",
        help="samples: per-request arrays (default); histogram: latency histograms (long runs)",
    )
    p.add_argument(
        "--client-scope",
        choices=["per-worker", "shared"],
        default="per-worker",
        help="per-worker: a client per worker (default); shared: one client for all workers, with its own pool",
    )
    p.add_argument(
        "--http",
        choices=["1.1", "2", "3"],
        default="1.1",
        help="1.1 (default), 2: HTTP/2 (ALPN h2 over https, prior knowledge over http), or 3: HTTP/3 (QUIC)",
    )
    p.add_argument(
        "--upload",
        choices=["whole", "stream"],
        default="whole",
        help="whole: the body in one buffer (default); stream: as --chunk-size chunks made as they are sent",
    )
    p.add_argument(
        "--download",
        choices=["whole", "stream"],
        default="whole",
        help="whole: the response read into one buffer (default); stream: in chunks of at most --chunk-size",
    )
    p.add_argument(
        "--chunk-size", type=_chunk_size, default=DEFAULT_CHUNK_SIZE, help="a streamed body's chunk (default 65536)"
    )
    p.add_argument("--targets", metavar="FILE", help="cycle through FILE's requests (METHOD URL [@BODYFILE] a line)")
    if gil:
        p.add_argument(
            "--gil",
            choices=["held", "released"],
            default="released",
            help="hold or release the GIL during I/O (default released)",
        )
    return p


def finish(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """The checks between flags, the defaults that depend on other flags, and the upload: `args.body` (the
    bytes every POST/PUT sends; None for GET) and `args.expected` (what /upload answers to it). A --ca-file is
    loaded here, whatever the URL's scheme: one that cannot be used is bad usage, not N failed requests."""
    _check_url(p, args.url)
    for flag, value in (("--arrival", args.arrival), ("--seed", args.seed)):
        if value is not None and args.rate is None:
            p.error(f"{flag} goes with --rate (an open loop)")
    args.arrival = args.arrival or "uniform"
    args.seed = 1 if args.seed is None else args.seed
    if args.duration is not None and args.rate is None:
        p.error("--duration goes with --rate (an open loop)")
    if args.duration is not None and args.requests is not None:
        p.error("--duration and --requests exclude each other")
    if args.duration is None and args.requests is None:
        args.requests = DEFAULT_REQUESTS
    if args.rate is not None and args.rate / args.workers > MAX_RATE_PER_WORKER:
        p.error(
            f"--rate {args.rate:g} over {args.workers} workers is {args.rate / args.workers:g} requests/s per "
            f"worker: finer than 1 µs (at most {MAX_RATE_PER_WORKER:,})"
        )
    if args.connection == "new" and args.client_scope == "shared":
        p.error("--connection new does not go with --client-scope shared (a shared client is made once)")
    if args.method == "GET" and args.body_size:  # 0 is no body: accepted, as by every harness
        p.error("--body-size goes with --method POST or PUT")
    if args.targets is not None and (args.method != "GET" or args.body_size is not None):
        p.error("--targets gives every request its method and body: not with --method or --body-size")
    if args.upload == "stream" and args.method == "GET" and args.targets is None:
        p.error("--upload stream goes with --method POST or PUT, or --targets (a GET sends no body)")
    if args.ca_file is not None:
        try:
            _context(args.ca_file)
        except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError: a file without a certificate
            p.error(f"--ca-file: cannot use {args.ca_file}: {exc}")
    args.body_size = args.body_size or 0
    args.body = args.expected = None
    args.pattern = Pattern(args.chunk_size)
    if args.method != "GET":
        # a streamed upload is made chunk by chunk: only its answer is computed here, from the same chunks
        streamed = args.upload == "stream"
        args.body = None if streamed else upload_body(args.body_size)
        args.expected = upload_answer(args.pattern.chunks(args.body_size) if streamed else args.body)
    args.target_list = None
    if args.targets is not None:
        args.target_list = load_targets(p, args.targets)
        for target in args.target_list:
            _check_url(p, target.url, f"--targets {args.targets}: ")


def _check_url(p: argparse.ArgumentParser, url: str, where: str = "") -> None:
    """--url (or a target's URL): an absolute http:// or https:// URL with a host, and a port from 1 to 65535 if
    it has one (docs/raw-format.md); what a library refuses beyond that is a counted failure (InvalidUrl)."""
    flag = where or "--url "
    if any(c <= " " or c == "\x7f" for c in url):
        p.error(f"{flag}must not contain whitespace or control characters: {url!r}")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        p.error(f"{flag}{url!r} is not a URL: {exc}")
    if parts.scheme.lower() not in ("http", "https"):
        p.error(f"{flag}must be an http:// or https:// URL, got {url!r}")
    if not parts.hostname:
        p.error(f"{flag}has no host: {url!r}")
    if port == 0:
        p.error(f"{flag}the port must be from 1 to 65535, got {url!r}")


def upload_body(size: int) -> bytes:
    """The contract's request body: byte i is 'a' + (i mod 26)."""
    return ALPHABET * (size // len(ALPHABET)) + ALPHABET[: size % len(ALPHABET)]


def upload_answer(body: bytes | Iterable[bytes]) -> bytes:
    """What the server's /upload answers: `<length> <sha256 hex>` (of the bytes, or of the chunks in turn)."""
    if isinstance(body, bytes):
        return f"{len(body)} {hashlib.sha256(body).hexdigest()}".encode()
    digest, length = hashlib.sha256(), 0
    for piece in body:
        digest.update(piece)
        length += len(piece)
    return f"{length} {digest.hexdigest()}".encode()


def add_tls_options(p: argparse.ArgumentParser) -> None:
    """The contract's TLS flags (docs/raw-format.md), also taken by the probes: `--ca-file` or `--insecure`."""
    tls = p.add_mutually_exclusive_group()
    tls.add_argument("--ca-file", metavar="PATH", help="trust the CA certificates in this PEM file (https URLs)")
    tls.add_argument(
        "--insecure", action="store_true", help="do not verify the server's certificate (unsafe; https URLs)"
    )


def verify(args: argparse.Namespace) -> bool | str:
    """requests' convention: False (--insecure), a CA bundle path (--ca-file), or True (the system roots)."""
    if args.insecure:
        # asked for: urllib3's per-request InsecureRequestWarning would only flood the driver's stderr
        warnings.filterwarnings("ignore", message="Unverified HTTPS request")
        return False
    ca_file: str | None = args.ca_file
    return ca_file or True


def ssl_context(args: argparse.Namespace) -> ssl.SSLContext | bool:
    """An SSLContext that trusts --ca-file (or the system roots), or False with --insecure. One per process,
    as an application would keep it: loading the system roots costs ~50 ms of CPU, which a context made per
    client would add to every new connection (plain http ones too)."""
    if args.insecure:
        return False
    return _context(args.ca_file)


@functools.cache
def _context(ca_file: str | None) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=ca_file)


def usage_error(message: str) -> NoReturn:
    """A usage error found after parsing (e.g. a flag this driver cannot honour): one line, exit 2."""
    print(f"{sys.argv[0].rsplit('/', 1)[-1]}: error: {message}", file=sys.stderr)
    sys.exit(2)


def unsupported(what: str) -> NoReturn:
    """The client cannot do what was asked at all (docs/raw-format.md, "Exit status"): nothing on stdout, one
    line `unsupported: ...` on stderr, exit status 3."""
    print(f"unsupported: {what}", file=sys.stderr)
    sys.exit(3)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return value


def _timeout(text: str) -> float:
    value = _positive_float(text)
    if value > MAX_TIMEOUT_S:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_TIMEOUT_S:g} s (a day), got {text!r}")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be between 0 and 2^64 - 1, got {text!r}")
    return value


def _chunk_size(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number of bytes, got {text!r}") from None
    if not 1 <= value <= MAX_CHUNK_SIZE:
        raise argparse.ArgumentTypeError(f"must be between 1 and {MAX_CHUNK_SIZE} (16 MiB), got {value}")
    return value


def _body_size(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number of bytes, got {text!r}") from None
    if not 0 <= value <= MAX_BODY_SIZE:
        raise argparse.ArgumentTypeError(f"must be between 0 and {MAX_BODY_SIZE} (1 GiB), got {value}")
    return value

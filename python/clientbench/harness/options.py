"""The driver contract's command line (docs/raw-format.md, "Command line"), made from its declaration
(schema/contract.json, through contract.py): the flags, their checks (bad usage exits 2 with one line in the
contract's wording), the upload body and the answer it must get, and the TLS options as each kind of library
takes them."""

from __future__ import annotations

import argparse
import functools
import hashlib
import re
import ssl
import sys
import warnings
from collections.abc import Iterable
from typing import Any, NoReturn
from urllib.parse import urlsplit

from .. import contract
from .bodies import ALPHABET, Pattern, load_targets

DEFAULT_REQUESTS: int = contract.flag("--requests").default
#: R/W at most this (the finest schedule: 1 µs per worker)
MAX_RATE_PER_WORKER = float(contract.flag("--rate").per_worker_max or 0)
#: the largest body, of --body-size and of a target's body file
MAX_BODY_SIZE = int(contract.flag("--body-size").maximum or 0)


class Parser(argparse.ArgumentParser):
    """argparse with the contract's usage errors: one line on stderr in the contract's wording (naming the flag),
    exit status 2, and the cross-flag checks and the upload body done by parse_args. No abbreviated flags: a flag
    the contract does not have is bad usage, not a prefix of one it has."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {_worded(message)}\n")

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:
        ns = super().parse_args(args, namespace)
        if hasattr(ns, "rate"):  # the contract's flags are there (a probe's parser has none of them)
            finish(self, ns)
        return ns


def _worded(message: str) -> str:
    """argparse's message in the contract's wording (schema/contract.json): `--flag: ...` first."""
    if m := re.fullmatch(r"argument (-[^/:\s]+)(?:/\S+)?: (.*)", message, re.S):
        flag, rest = m[1], m[2]
        return contract.message("no_value", flag=flag) if rest == "expected one argument" else f"{flag}: {rest}"
    if m := re.fullmatch(r"unrecognized arguments: (\S+).*", message, re.S):
        return contract.message("unknown", flag=m[1])
    if m := re.fullmatch(r"the following arguments are required: ([^,\s]+).*", message, re.S):
        return contract.message("required", flag=m[1])
    return message


def _typed(f: contract.Flag) -> Any:
    """argparse's type= for a flag: its value, or the contract's message (argparse puts `argument FLAG: ` first)."""

    def parse(text: str) -> Any:
        try:
            return f.parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc).removeprefix(f"{f.flag}: ")) from None

    parse.__name__ = f.dest  # argparse names a type in some messages
    return parse


def _help(f: contract.Flag) -> str:
    """The contract's meaning of a flag, as plain text (without the docs' links and marks)."""
    text = re.sub(r"\[([^]]+)\]\([^)]+\)", r"\1", f.meaning).replace("`", "").replace("**", "")
    default = "" if f.default is None or f.type == "switch" else f" (default {f.default})"
    return f"{text}{default}".replace("%", "%%")


def parser(description: str, *, gil: bool = False, modes: tuple[str, ...] = ()) -> Parser:
    """The contract's flags (schema/contract.json), each checked as it is read; finish() checks them together."""
    p = Parser(description=description)
    if modes:
        p.add_argument(
            "--mode", choices=modes, default=modes[0], help=f"the library's native mode to use (default {modes[0]})"
        )
    for f in contract.FLAGS.values():
        if f.type == "switch":
            p.add_argument(f.flag, action="store_true", help=_help(f))
            continue
        metavar = "{" + ",".join(f.choices) + "}" if f.choices else f.dest.upper()
        # every default is filled in by finish(): some depend on other flags, and a flag given is told apart
        p.add_argument(f.flag, type=_typed(f), default=None, required=f.required, metavar=metavar, help=_help(f))
    if gil:
        p.add_argument(
            "--gil",
            choices=["held", "released"],
            default="released",
            help="hold or release the GIL during I/O (default released)",
        )
    return p


def finish(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """The checks between flags (the contract's rules, in its wording), the defaults, and the upload: `args.body`
    (the bytes every POST/PUT sends; None for GET) and `args.expected` (what /upload answers to it). A --ca-file
    and a --targets file are read here, whatever the URL's scheme: one that cannot be used is bad usage, not N failed
    requests. Bad usage is all found here, before a plugin says what it cannot do (exit 3)."""
    rule = contract.rule
    given = {f.dest for f in contract.FLAGS.values() if _given(getattr(args, f.dest, None), f)}
    if (problem := url_problem(args.url)) is not None:
        p.error(problem)
    for f in contract.FLAGS.values():
        if f.default is not None and getattr(args, f.dest) is None:
            setattr(args, f.dest, f.default)
    for name in ("arrival", "seed"):
        if name in given and "rate" not in given:
            p.error(rule(f"{name}-without-rate").message)
    if "duration" in given and "rate" not in given:
        p.error(rule("duration-without-rate").message)
    if "duration" in given and "requests" in given:
        p.error(rule("duration-and-requests").message)
    if "duration" in given:
        args.requests = None
    if args.rate is not None and args.rate / args.workers > MAX_RATE_PER_WORKER:
        p.error(f"{rule('rate-per-worker').message}, got {args.rate:g} over {args.workers} workers")
    if args.connection == "new" and args.client_scope == "shared":
        p.error(rule("new-connection-shared").message)
    if "targets" in given and "method" in given:
        p.error(rule("targets-method").message)
    if "targets" in given and "body_size" in given:
        p.error(rule("targets-body-size").message)
    if args.method == "GET" and args.body_size:  # 0 is no body: accepted, as by every harness
        p.error(rule("body-size-with-get").message)
    if args.upload == "stream" and args.method == "GET" and "targets" not in given:
        p.error(rule("upload-stream-get").message)
    if args.http == "3" and "targets" not in given and not _https(args.url):
        p.error(f"{rule('http3-http').message}, got {args.url!r}")
    if args.ca_file is not None:
        if args.insecure:
            p.error(rule("ca-file-and-insecure").message)
        _check_ca_file(p, args.ca_file)
    args.body = args.expected = None
    args.pattern = Pattern(args.chunk_size)
    if args.method != "GET":
        # a streamed upload is made chunk by chunk: only its answer is computed here, from the same chunks
        streamed = args.upload == "stream"
        args.body = None if streamed else upload_body(args.body_size)
        args.expected = upload_answer(args.pattern.chunks(args.body_size) if streamed else args.body)
    args.target_list = None
    if args.targets is not None:
        args.target_list = load_targets(p, args.targets, url_problem, MAX_BODY_SIZE)
        plain = next((t.url for t in args.target_list if not _https(t.url)), None)
        if args.http == "3" and plain is not None:
            p.error(f"{rule('targets-http3').message}, got {plain!r} in {args.targets}")


def _given(value: object, f: contract.Flag) -> bool:
    return value is True if f.type == "switch" else value is not None


def _https(url: str) -> bool:
    return url[:8].lower() == "https://"


def _check_ca_file(p: argparse.ArgumentParser, path: str) -> None:
    """A --ca-file that cannot be read, or holds no PEM certificate (a CRL alone is none), is bad usage."""
    rule = contract.rule
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        p.error(f"{rule('ca-file-unreadable').text(path=path)} ({exc.strerror or exc})")
    try:
        certificates = _context(path).cert_store_stats()["x509"]
    except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError: a file without a certificate
        p.error(f"{rule('ca-file-no-certificate').text(path=path)} ({exc})")
    if not certificates:
        p.error(rule("ca-file-no-certificate").text(path=path))


def url_problem(url: str) -> str | None:
    """Why `url` is not a usable --url, in the contract's wording (None when it is): an absolute http:// or
    https:// URL with a host, and a port from 1 to 65535 if it has one (an empty port is the scheme's); what a
    library refuses beyond that is a counted failure (InvalidUrl)."""
    rule = contract.rule
    if any(c <= " " or c == "\x7f" for c in url):
        return rule("url-space").text(url=url)
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        return f"--url: is not a URL ({exc}), got {url!r}"
    if parts.scheme.lower() not in ("http", "https") or not url[len(parts.scheme) :].startswith("://"):
        return rule("url-scheme").text(url=url)
    if not parts.hostname:
        return rule("url-host").text(url=url)
    try:
        port = parts.port
    except ValueError:  # not a number, or above 65535
        return rule("url-port").text(url=url)
    if port == 0:
        return rule("url-port").text(url=url)
    return None


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


def unsupported(what: str) -> NoReturn:
    """The client cannot do what was asked at all (docs/raw-format.md, "Exit status"): nothing on stdout, one
    line `unsupported: ...` on stderr, exit status 3."""
    print(f"unsupported: {what}", file=sys.stderr)
    sys.exit(3)

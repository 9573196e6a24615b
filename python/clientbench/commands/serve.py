"""`clientbench serve`: the embedded server on its own, for a second machine (docs/two-machines.md): run `serve`
there and `run --target` here. It serves HTTP/1.1 and HTTP/2 (prior knowledge over http, ALPN h2 over https) on
--listen until Ctrl-C or SIGTERM; with --tls, HTTPS with a throw-away CA whose certificate it prints the path of
(copy it to the client machine for --ca-file), or with a certificate of your own (--tls-cert, --tls-key), and
HTTP/3 over QUIC at the same port over UDP. --listen repeated listens on several addresses with one port."""

from __future__ import annotations

import argparse
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from ..errors import SetupError
from ..execution.server import Server
from ..options.settings import check_serve_tls
from ..options.values import positive

if TYPE_CHECKING:
    from ..arguments import Subparsers
    from . import Command


@dataclass(frozen=True)
class Listen:
    """Where to listen: `host`, and the addresses in `also`, all at `port`."""

    host: str
    port: int
    also: tuple[str, ...] = ()

    @property
    def hosts(self) -> tuple[str, ...]:
        return (self.host, *self.also)

    @classmethod
    def parse(cls, given: str | Sequence[str]) -> Listen:
        """HOST:PORT, [IPv6]:PORT, or :PORT (every address); several (--listen repeated) name one port."""
        texts = [given] if isinstance(given, str) else list(given)
        parsed = [cls._parse_one(t) for t in texts]
        seen: set[str] = set()
        for text, one in zip(texts, parsed, strict=True):
            if one.port != parsed[0].port:
                raise SetupError(f"--listen {text!r}: every --listen takes one port, the first's ({parsed[0].port})")
            if one.host in seen:
                raise SetupError(f"--listen {text!r}: that address is given twice")
            seen.add(one.host)
        return cls(parsed[0].host, parsed[0].port, tuple(one.host for one in parsed[1:]))

    @classmethod
    def _parse_one(cls, text: str) -> Listen:
        host, sep, port = text.rpartition(":")
        if not sep:
            raise SetupError(f"--listen {text!r}: expected HOST:PORT, e.g. 0.0.0.0:8080 or 127.0.0.1:0")
        host = host.strip("[]") or "0.0.0.0"
        try:
            number = int(port)
        except ValueError:
            raise SetupError(f"--listen {text!r}: the port must be a number") from None
        if not 0 <= number <= 65535:
            raise SetupError(f"--listen {text!r}: the port must be within 0 and 65535 (0: any free port)")
        return cls(host, number)


class _Repeated(argparse.Action):
    """A repeatable option whose default (a string) the first use replaces rather than extends (argparse's
    append keeps the default in the list): the value is the default, or the list of what was given."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        given = getattr(namespace, self.dest)
        setattr(namespace, self.dest, [*given, values] if isinstance(given, list) else [values])


class _Stop(Exception):
    pass


def _stop(signum: int, frame: FrameType | None) -> None:
    # once: a second Ctrl-C while the server stops must not interrupt the stopping
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, signal.SIG_IGN)
    raise _Stop()


def protocols(server: Server) -> str:
    """What `server` serves, as its listening line says."""
    if server.http3:
        return "HTTP/1.1, HTTP/2 and HTTP/3: QUIC over UDP at the same port"
    return "HTTP/1.1 and HTTP/2"


def serve(
    listen: Listen,
    *,
    threads: int | None = None,
    tls: bool = False,
    tls_version: str | None = None,
    tls_dir: Path | None = None,
    tls_names: tuple[str, ...] = (),
    tls_cert: Path | None = None,
    tls_key: Path | None = None,
    out: Callable[[str], None] = print,
    ready: Callable[[Server], None] = lambda s: None,
) -> int:
    """Serve until Ctrl-C or SIGTERM (the flags checked by the options layer: check_serve_tls)."""
    if tls_dir is not None:
        tls_dir.mkdir(parents=True, exist_ok=True)
    server = Server(
        threads=threads,
        hosts=listen.hosts,
        port=listen.port,
        start_timeout=20.0,
        tls=tls,
        tls_dir=tls_dir.resolve() if tls_dir else None,
        tls_version=tls_version,
        tls_cert=tls_cert,
        tls_key=tls_key,
        tls_names=tls_names,
        log=None,
        inherit_stderr=True,
    )
    previous = {s: signal.signal(s, _stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        server.start()
        out(f"serving {', '.join(server.urls)} ({protocols(server)}); Ctrl-C stops it")
        scheme, _, rest = server.url.partition("://")
        host, _, port = rest.rpartition(":")
        if host in ("0.0.0.0", "[::]"):  # every address: the client names this machine
            host = "THIS-MACHINE"
        target = f"{scheme}://{host}:{port}"
        if tls and server.ca_file:
            kept = "" if tls_dir else " (removed when the server stops)"
            out(f"the CA to trust: {server.ca_file}{kept}")
            out(f"on the client machine: clientbench run --target {target} --ca-file ca.pem (a copy of it)")
        else:
            out(f"on the client machine: clientbench run --target {target}")
        if host == "THIS-MACHINE":
            names = "a name the certificate holds (--tls-name)" if tls and not tls_cert else "its name or address"
            out(f"(THIS-MACHINE: this machine as the client reaches it, {names})")
        if server.http3:
            out(f"for HTTP/3 add --http 3 (UDP port {port} must reach this machine too)")
        sys.stdout.flush()
        ready(server)
        while server.proc is not None and server.proc.poll() is None:
            time.sleep(0.2)
        code = server.proc.returncode if server.proc is not None else 1
        raise SetupError(f"the server exited with status {code}")
    except _Stop:
        out("stopped")
        return 0
    finally:
        server.stop()
        for s, handler in previous.items():
            signal.signal(s, handler)


def add_parser(sub: Subparsers, command: Command) -> None:
    srv = sub.add_parser(
        command.name,
        help=command.help,
        description="Serve the benchmark's endpoints (HTTP/1.1 and HTTP/2) until Ctrl-C or SIGTERM, so that "
        "`clientbench run --target URL` on another machine measures across a real network "
        "(docs/two-machines.md). With --tls: HTTPS with a throw-away CA (its certificate's path is printed: "
        "copy it to the client for --ca-file), or with your own certificate, and HTTP/3 over QUIC at the same "
        "port over UDP.",
    )
    srv.add_argument(
        "--listen",
        action=_Repeated,
        default="127.0.0.1:8080",
        metavar="HOST:PORT",
        help="where to listen (default 127.0.0.1:8080; 0.0.0.0:8080 for every address, port 0 for any free one); "
        "repeatable with one port, for several addresses (with --tls, each an extra name of the certificate)",
    )
    srv.add_argument("--threads", type=positive, default=None, help="tokio worker threads (default: one per core)")
    st = srv.add_argument_group("https")
    st.add_argument("--tls", action="store_true", help="serve HTTPS")
    st.add_argument("--tls-version", choices=["1.2", "1.3"], default=None, help="accept only this TLS version")
    st.add_argument(
        "--tls-dir", type=Path, metavar="DIR", help="keep the generated CA's ca.pem here (default: removed at exit)"
    )
    st.add_argument(
        "--tls-name",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name or IP address the generated certificate names besides localhost, 127.0.0.1 and ::1 "
        "(the name the client machine uses); repeatable",
    )
    st.add_argument("--tls-cert", type=Path, metavar="PEM", help="serve this certificate chain instead (leaf first)")
    st.add_argument("--tls-key", type=Path, metavar="PEM", help="the private key of --tls-cert")


@dataclass(frozen=True)
class ServeOptions:
    listen: Listen
    threads: int | None = None
    tls: bool = False
    tls_version: str | None = None
    tls_dir: Path | None = None
    tls_names: tuple[str, ...] = ()
    tls_cert: Path | None = None
    tls_key: Path | None = None


def from_args(args: argparse.Namespace, argv: Sequence[str]) -> ServeOptions:
    listen = Listen.parse(args.listen)
    check_serve_tls(
        tls=args.tls,
        tls_version=args.tls_version,
        tls_dir=args.tls_dir,
        tls_names=args.tls_name,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
    )
    return ServeOptions(
        listen,
        args.threads,
        args.tls,
        args.tls_version,
        args.tls_dir,
        tuple(args.tls_name),
        args.tls_cert,
        args.tls_key,
    )


def run(o: ServeOptions) -> int:
    return serve(
        o.listen,
        threads=o.threads,
        tls=o.tls,
        tls_version=o.tls_version,
        tls_dir=o.tls_dir,
        tls_names=o.tls_names,
        tls_cert=o.tls_cert,
        tls_key=o.tls_key,
    )

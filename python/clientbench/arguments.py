"""The parsing layer's shared parts: the option groups several commands take (workload, clients, session, export,
rates), each with the reader that turns argparse's Namespace into what the options layer checks and the commands
take (a Workload, the testbed's Options, the row flags). The value types and every rule between flags are the
options layer's (options/); the Namespace goes no further than this module and each command's `from_args`."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from .network import PRESETS
from .options import Options, Pinning
from .options.rows import RowFlags
from .options.values import (
    body_size,
    chunk_size,
    milliseconds,
    network_spec,
    non_negative,
    positive,
    rate,
    request_path,
    seconds,
)
from .options.workload import command_workload
from .registry import external
from .workload import (
    ARRIVALS,
    CLIENT_SCOPES,
    DEFAULT,
    DEFAULT_CHUNK_SIZE,
    HTTP_VERSIONS,
    MAX_BODY_SIZE,
    MAX_CHUNK_SIZE,
    METHODS,
    OPEN,
    REFERENCE,
    TRANSFERS,
    UPLOAD_PATH,
    Workload,
)

if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]


def add_workload_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("workload")
    # None = not given: resolved once by workload.resolve(), where --reference changes the defaults
    g.add_argument(
        "-w", "--workers", type=positive, default=None, help=f"workers per client (default {DEFAULT.workers})"
    )
    g.add_argument(
        "-n",
        "--requests",
        type=positive,
        default=None,
        help=f"timed sequential requests per worker (default {DEFAULT.requests})",
    )
    g.add_argument(
        "--warmup",
        type=non_negative,
        default=None,
        help=f"untimed requests per worker before timing (default {DEFAULT.warmup})",
    )
    g.add_argument(
        "-r",
        "--repeat",
        type=positive,
        default=None,
        help=f"runs of every client, interleaved round-robin; the table shows medians (default {DEFAULT.repeat})",
    )
    g.add_argument(
        "--reference",
        action="store_true",
        help=f"the reference write-up's method: {REFERENCE.requests} requests per worker, one run, "
        f"no warm-up (-n {REFERENCE.requests} --repeat {REFERENCE.repeat} --warmup "
        f"{REFERENCE.warmup}; flags given explicitly still win)",
    )
    g.add_argument(
        "--timeout",
        dest="timeout_s",
        type=seconds,
        default=None,
        help=f"per-request timeout in s (default {DEFAULT.timeout_s:g})",
    )
    g.add_argument(
        "--path", type=request_path, default=None, help=f"request path on the server (default '{DEFAULT.path}')"
    )
    g.add_argument(
        "--connection",
        choices=["keep-alive", "new"],
        default=None,
        help="keep-alive: one connection per worker (default); new: a new connection for every request",
    )
    g.add_argument(
        "--client-scope",
        dest="client_scope",
        choices=(*CLIENT_SCOPES, "per-request"),
        default=None,
        help="per-worker: every worker makes its own client (default); shared: one client serves all workers, "
        "with the library's own pool (a client that cannot be shared: its row is unsupported); per-request: a new "
        "client (its pool, its TLS context) for every request, what --connection new does",
    )
    g.add_argument(
        "--http",
        choices=HTTP_VERSIONS,
        default=None,
        help="1.1 (default), 2: HTTP/2 (ALPN h2 over https, prior knowledge over http), or 3: HTTP/3 over QUIC "
        "(https only: --tls or --target https://...). A client without it: its row is unsupported; one that fell "
        "back to another version is flagged",
    )
    g.add_argument(
        "--method",
        type=str.upper,
        choices=METHODS,
        default=None,
        help=f"request method (default GET); POST and PUT send --body-size bytes, to {UPLOAD_PATH} unless --path",
    )
    g.add_argument(
        "--body-size",
        dest="body_size",
        type=body_size,
        default=None,
        metavar="BYTES",
        help=f"POST/PUT: request body size in bytes, at most {MAX_BODY_SIZE} (1 GiB) (default 0)",
    )
    g.add_argument(
        "--phases",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="record each request's phases (connect, TLS, send, wait, receive) and the client's own time where the "
        "driver can see them, as table columns (default on; docs/phases.md)",
    )
    b = p.add_argument_group("bodies and targets (docs/bodies.md)")
    b.add_argument(
        "--upload",
        choices=TRANSFERS,
        default=None,
        help="whole: the request body in one buffer (default); stream: handed to the client as --chunk-size "
        "chunks made as they are sent (a client without a streamed body: its row is unsupported)",
    )
    b.add_argument(
        "--download",
        choices=TRANSFERS,
        default=None,
        help="whole: the client reads the response body into one buffer (default); stream: in chunks of at most "
        "--chunk-size, each counted and dropped",
    )
    b.add_argument(
        "--chunk-size",
        dest="chunk_size",
        type=chunk_size,
        default=None,
        metavar="BYTES",
        help=f"with a streamed body: the chunk size, at most {MAX_CHUNK_SIZE} (16 MiB) (default {DEFAULT_CHUNK_SIZE})",
    )
    b.add_argument(
        "--targets",
        metavar="FILE",
        default=None,
        help="cycle through the requests of FILE, one 'METHOD URL-or-/path [@BODYFILE]' per line (vegeta's "
        "targets; a path is on the run's server), worker w's request k going to target (w + k) mod T",
    )
    o = p.add_argument_group("open loop (docs/open-loop.md)")
    o.add_argument(
        "--rate",
        type=rate,
        default=None,
        metavar="R",
        help=f"open loop: R requests/s over all workers, latency counted from each request's intended start "
        f"(default: a closed loop; with --rate the defaults are --duration {OPEN.duration_s:g} --repeat {OPEN.repeat})",
    )
    o.add_argument(
        "--duration",
        dest="duration_s",
        type=seconds,
        default=None,
        metavar="SECONDS",
        help="open loop: the schedule lasts this long (instead of --requests per worker)",
    )
    o.add_argument(
        "--arrival", choices=ARRIVALS, default=None, help="open loop: uniform intervals (default) or poisson arrivals"
    )
    o.add_argument("--seed", type=non_negative, default=None, help="open loop, poisson: the arrivals' seed (default 1)")


def add_selection_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("clients")
    g.add_argument(
        "-c",
        "--clients",
        action="append",
        metavar="NAMES",
        help="comma-separated client names or globs, e.g. 'py-*' (default: the default set; see `clientbench list`)",
    )
    g.add_argument("--all", action="store_true", help="every client, not only the default set")
    add_interpreter_options(g)
    external.add_options(g)


def add_interpreter_options(g: argparse._ArgumentGroup) -> None:
    which = g.add_mutually_exclusive_group()
    which.add_argument(
        "--interpreters",
        metavar="LIST",
        help="run every Python row under each of these interpreters: system (this one), a label built by "
        "`make freethreaded` (e.g. 3.13, 3.13t) or a path to a python; e.g. system,3.13,3.13t",
    )
    which.add_argument("--python", metavar="PATH", help="run the Python rows under this python instead")


def add_session_options(p: argparse.ArgumentParser, row_timeout: bool = True) -> None:
    g = p.add_argument_group("session")
    g.add_argument(
        "--target",
        metavar="URL",
        help="benchmark an already-running server at URL (e.g. http://127.0.0.1:8080) instead of starting server-axum",
    )
    g.add_argument(
        "--hosts",
        type=positive,
        default=1,
        metavar="N",
        help="serve the started server on N loopback origins (127.0.0.1 ... 127.0.0.N, one port): with --targets "
        "every /path target goes to each of them, without it the workers' requests cycle through them (default 1)",
    )
    g.add_argument(
        "--server-threads",
        type=positive,
        default=None,
        help="tokio worker threads of the started server (default: tokio's, one per core)",
    )
    if row_timeout:
        g.add_argument(
            "--row-timeout",
            dest="row_timeout_s",
            type=seconds,
            default=300.0,
            help="kill a driver that runs longer than this many s (default 300)",
        )
    g.add_argument(
        "--network",
        metavar="SPEC",
        type=network_spec,
        default=None,
        help="emulate a network through toxiproxy (`make toxiproxy`): rtt=1ms, rtt=10ms,jitter=1ms, "
        f"rate=100mbit, or a preset ({', '.join(PRESETS)}); rtt=0 measures the proxy alone",
    )
    g.add_argument(
        "--pin",
        metavar="SPEC",
        help="keep the drivers and the server to CPUs of their own: client=CPUS,server=CPUS (e.g. client=0,"
        "server=1; CPUS as 0, 0-3 or 0+2), or auto (the usable CPUs split in two, the first half for the clients); "
        "recorded in results.json",
    )
    g.add_argument("-o", "--out", type=Path, default=None, help="results folder (default: ./results)")
    t = p.add_argument_group("https")
    t.add_argument(
        "--tls",
        action="store_true",
        help="serve HTTPS: the started server makes a throw-away CA and a certificate for localhost, 127.0.0.1 and "
        "::1, and every driver is given that CA",
    )
    t.add_argument(
        "--tls-version",
        choices=["1.2", "1.3"],
        default=None,
        help="with --tls: the only TLS version the server accepts (default: both)",
    )
    trust = t.add_mutually_exclusive_group()
    trust.add_argument(
        "--ca-file", metavar="PATH", type=Path, default=None, help="with --target https://...: the CA (PEM) to trust"
    )
    trust.add_argument(
        "--insecure", action="store_true", help="https: the drivers do not verify the certificate (unsafe)"
    )


#: the dashboard formats --export writes (report/export/: one module each)
DASHBOARDS = ("github-benchmark", "bencher")


def add_export_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--export",
        action="append",
        default=[],
        choices=DASHBOARDS,
        help="also write the tracked figures for a dashboard into the results folder: github-benchmark "
        "(github-action-benchmark's customSmallerIsBetter JSON), bencher (Bencher Metric Format); repeatable",
    )


def add_rate_sweep_options(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--rates",
        metavar="LIST",
        help=f"{what}: comma-separated rates in requests/s (default: doubling from the lowest until every "
        "client saturates)",
    )
    p.add_argument(
        "--slo",
        dest="slo_ms",
        type=milliseconds,
        default=10.0,
        metavar="MS",
        help=f"{what}: a client sustains a rate when it achieves 99%% of it with a corrected P99 within this "
        "many ms (default 10)",
    )


# -- the readers: the Namespace into the options layer --------------------------------------------------------------


def workload(args: argparse.Namespace, *, own_rates: bool = False) -> Workload:
    """The workload of add_workload_options' flags, resolved once (options/workload.py); `own_rates`: the command
    runs open loops at rates of its own (sweep rate, the GIL report)."""
    return command_workload(args.command, vars(args), reference=args.reference, own_rates=own_rates)


def testbed(args: argparse.Namespace) -> Options:
    """add_session_options' flags (and --export, --targets where the command has them), checked together."""
    return Options.checked(
        target=args.target,
        server_threads=args.server_threads,
        row_timeout_s=getattr(args, "row_timeout_s", Options.row_timeout_s),
        out=args.out,
        network=args.network,
        tls=args.tls,
        tls_version=args.tls_version,
        ca_file=args.ca_file,
        insecure=args.insecure,
        pin=Pinning.parse(args.pin, frozenset(os.sched_getaffinity(0))) if args.pin else None,
        exports=exports(args),
        hosts=getattr(args, "hosts", 1),
        targets=Path(args.targets) if getattr(args, "targets", None) else None,
    )


def rows(args: argparse.Namespace) -> RowFlags:
    """What the command's flags say about rows (those it has of -c, --all, external.add_options' and the
    interpreters'), for options.rows.select."""
    return RowFlags(
        clients=tuple(getattr(args, "clients", None) or ()),
        all=getattr(args, "all", False),
        drivers=tuple(getattr(args, "driver", ())),
        plugins=tuple(getattr(args, "plugins", ())),
        clients_files=tuple(getattr(args, "clients_file", ())),
        interpreters=getattr(args, "interpreters", None),
        python=getattr(args, "python", None),
        program=tuple(getattr(args, "driver_command", None) or ()),
    )


def exports(args: argparse.Namespace) -> tuple[str, ...]:
    """--export's formats, each once."""
    return tuple(dict.fromkeys(getattr(args, "export", [])))

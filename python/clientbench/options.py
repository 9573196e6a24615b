"""The options of a command besides its workload (workload.py): where the requests go and how the runner treats
drivers, resolved once from the command line and checked together, each combination that cannot work one
SetupError line naming the flags."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .network import Network


@dataclass(frozen=True)
class Options:
    """Where the requests go and how the runner treats drivers: resolved once from the command line."""

    target: str | None = None  # an already-running server's base URL, instead of starting server-axum
    server_threads: int | None = None
    row_timeout_s: float = 300.0
    out: Path | None = None  # the parent of the results folder (default: results/)
    network: Network | None = None  # emulated through toxiproxy; None: straight to the server (loopback)
    tls: bool = False  # start the server with HTTPS (a throw-away CA), and give the drivers that CA
    tls_version: str | None = None  # "1.2" or "1.3": the only TLS version the started server accepts
    ca_file: str | None = None  # with --target https://...: the CA to trust (default: the system's roots)
    insecure: bool = False  # with --target https://...: do not verify the certificate

    @property
    def scheme(self) -> str:
        if self.target:
            return self.target.split("://", 1)[0].lower()
        return "https" if self.tls else "http"

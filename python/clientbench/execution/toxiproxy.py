"""toxiproxy (a TCP proxy, pinned: network.TOXIPROXY_VERSION) as a child of the runner, and the proxies with a
network's toxics (network.py) that it puts in front of the server."""

from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from ..environment.binaries import require
from ..errors import SetupError
from ..network import Network
from .children import ManagedProcess


def toxiproxy_binary() -> Path:
    """toxiproxy-server, of the checkout's `make toxiproxy` or of clientbench-native; Unavailable saying how to
    get it."""
    return require("toxiproxy-server")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Toxiproxy(ManagedProcess):
    """`with Toxiproxy(log=...) as tp:` runs toxiproxy-server on loopback (execution/children.py: stopped on every
    path, and with the runner)."""

    def __init__(self, log: Path | None = None, start_timeout: float = 10.0, cpus: frozenset[int] | None = None):
        super().__init__(log, start_timeout, cpus=cpus)
        self.binary = toxiproxy_binary()
        self.api = ""

    def __enter__(self) -> Toxiproxy:
        self.start()
        return self

    def command(self) -> list[str]:
        port = _free_port()
        self.api = f"http://127.0.0.1:{port}"
        return [str(self.binary), "-host", "127.0.0.1", "-port", str(port)]

    def wait_ready(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        while True:
            try:
                self._call("GET", "/version")
                return
            except SetupError:
                pass
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise SetupError(f"toxiproxy exited with status {self.proc.returncode}; see its log")
            if time.monotonic() > deadline:
                raise SetupError(f"toxiproxy did not answer on {self.api} within {self.start_timeout:g}s")
            time.sleep(0.05)

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            self.api + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                text = r.read()
        except urllib.error.HTTPError as exc:
            raise SetupError(f"toxiproxy {method} {path}: {exc.code} {exc.read()[:200]!r}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise SetupError(f"toxiproxy {method} {path}: {exc}") from None
        try:
            return json.loads(text) if text.strip() else None
        except ValueError:  # /version answers plain text
            return text.decode("utf-8", "replace")

    def proxy(self, name: str, upstream: str, listen: str = "127.0.0.1:0") -> str:
        """A proxy on `listen` (an ephemeral loopback port by default) to upstream (host:port); its host:port."""
        doc = self._call("POST", "/proxies", {"name": name, "listen": listen, "upstream": upstream, "enabled": True})
        return str(doc["listen"])

    def add_toxic(self, proxy: str, toxic: dict[str, Any]) -> None:
        self._call("POST", f"/proxies/{proxy}/toxics", toxic)


def through(tp: Toxiproxy, base_url: str, network: Network, name: str = "server", listen: str = "127.0.0.1:0") -> str:
    """Put a proxy with the network's toxics in front of base_url (http://host:port); returns its base URL."""
    scheme, _, hostport = base_url.partition("://")
    listen = tp.proxy(name, hostport.split("/", 1)[0], listen)
    for toxic in network.toxics():
        tp.add_toxic(name, toxic)
    return f"{scheme}://{listen}"

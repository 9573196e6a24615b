"""Python `geventhttpclient` (an HTTP/1.1 client with a C parser, on gevent), sync: W greenlets in one OS thread,
one `HTTPClient` (a pool of one connection) per greenlet.

gevent's way is to monkey-patch the standard library before anything imports it: `socket`, `ssl`, `threading` and
`time.sleep` become cooperative, and a thread becomes a greenlet. A driver process has imported all of them (the
harness) before it loads its plugin, and the open loop has bound `time.sleep` already, so patching then would leave a
blocking sleep and threads half patched. So `plugin()`, in the driver process (`python -m clientbench.plugin`),
re-executes that process with gevent's `monkey.patch_all()` first and the same arguments; there the SDK's harness
runs unchanged: its W threads are W greenlets on gevent's hub, its barriers and events cooperative, and each
request's time runs from its start to its body's end, other greenlets' work between its reads included (as for
an async row's tasks on one event loop). The document says so (`client.concurrency`).

What it cannot do: HTTP/2 (HTTP/1.1 only); its timeouts bound the connect and each socket read (`network_timeout`),
not the whole request: the harness counts a request that ended later than --timeout as a TimeoutError. Its
`insecure=True` skips the host name check only (the chain is still verified): with --insecure the plugin gives it
an unverified SSLContext as well.

Streamed bodies: an iterator as `body` is sent chunked by geventhttpclient; the response read by `read(C)`.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Iterator
from typing import Any, NoReturn
from urllib.parse import urlsplit

from .. import sdk

#: what geventhttpclient's parser says, alone, when the connection ends before the response does
INCOMPLETE = "Incomplete response."
#: the re-executed driver process: gevent's patches, then the plugin runner with the same arguments
BOOT = "from gevent import monkey; monkey.patch_all(); import sys, clientbench.plugin as p; sys.exit(p.main())"


def _patched() -> bool:
    from gevent import monkey

    return bool(monkey.is_module_patched("socket") and monkey.is_module_patched("threading"))


def _reexec() -> NoReturn:
    """Replace this driver process (`python [options] -m clientbench.plugin TARGET ARGS`) with one that patches
    first, keeping its interpreter options, arguments, environment, pid and standard streams."""
    main = sys.modules.get("__main__")
    if getattr(getattr(main, "__spec__", None), "name", None) != "clientbench.plugin":
        # in another program (a test, a REPL) the process is not ours to replace
        raise RuntimeError("geventhttpclient's plugin runs as its own driver process: python -m clientbench.plugin")
    # sys.orig_argv = [python, *options, '-m', 'clientbench.plugin' (or '-mclientbench.plugin'), *sys.argv[1:]]
    options = sys.orig_argv[1 : len(sys.orig_argv) - len(sys.argv) - 1]
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, *options, "-c", BOOT, *sys.argv[1:]])


class Client:
    """An `HTTPClient` for the URL's host and port, and the path it requests (geventhttpclient takes a request URI)."""

    def __init__(self, opts: sdk.Options):
        from geventhttpclient import HTTPClient  # (imported after the patches)

        tls: dict[str, Any] = {}
        if opts.insecure:
            tls = {"insecure": True, "ssl_context_factory": _unverified}
        elif opts.ca_file:
            tls = {"ssl_options": {"ca_certs": opts.ca_file}}
        self.url = opts.url
        self.path = _target(opts.url)
        self.http = HTTPClient.from_url(
            opts.url,
            concurrency=sdk.pool_size(opts),  # one connection per greenlet's client, W for the shared one
            connection_timeout=opts.timeout,
            network_timeout=opts.timeout,
            **tls,
        )

    def target(self, url: str) -> str:
        return self.path if url == self.url else _target(url)


def _target(url: str) -> str:
    """The request URI of a URL: its path and query."""
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def _unverified(**_: object) -> Any:
    import gevent.ssl

    context = gevent.ssl.SSLContext(gevent.ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = gevent.ssl.CERT_NONE
    return context


def make_client(opts: sdk.Options) -> Client:
    return Client(opts)


@contextlib.contextmanager
def _classified() -> Iterator[None]:
    from geventhttpclient import HTTPParseError

    try:
        yield
    except HTTPParseError as exc:
        # its parser says "Incomplete response." (and nothing more) when the connection ends before the message
        # does, its other errors name what is malformed: a short body is a ConnectionError (docs/raw-format.md)
        if exc.args == (INCOMPLETE,):
            raise ConnectionError(f"HTTPParseError: {INCOMPLETE} (the connection closed before the end)") from exc
        raise


def _exchange(client: Client, method: str, url: str, body: bytes) -> tuple[int, bytes]:
    with _classified():
        r = client.http.request(method, client.target(url), body=body)
        try:
            return r.status_code, r.read()  # the whole body (by its Content-Length, or its chunks)
        finally:
            r.release()  # the connection back to the pool


def _pieces(r: Any, chunk: int) -> Iterator[bytes]:
    while piece := r.read(chunk):  # at most `chunk` bytes; b"" at the end
        yield piece


@contextlib.contextmanager
def stream(
    client: Client, method: str, url: str, content: bytes | Iterable[bytes] | None, chunk: int | None
) -> Iterator[tuple[int, Iterable[bytes]]]:
    with _classified():
        r = client.http.request(method, client.target(url), body=content)
        try:
            yield r.status_code, _pieces(r, chunk) if chunk else (r.read(),)
        finally:
            r.release()


def request(client: Client, url: str) -> tuple[int, int]:
    status, body = _exchange(client, "GET", url, b"")
    return status, len(body)


def upload(client: Client, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    return _exchange(client, method, url, body)


def close(client: Client) -> None:
    client.http.close()


def plugin() -> sdk.SyncClient[Client]:
    """The plugin, once this driver process is patched (re-executed so, the first time)."""
    if not _patched():
        _reexec()
    from geventhttpclient import __version__

    return sdk.SyncClient(
        "geventhttpclient",
        make_client,
        request,
        upload,
        close,
        version=f"{__version__} (gevent {sdk.installed_version('gevent')})",
        info={"concurrency": "gevent greenlets (monkey-patched threads), one OS thread"},
        stream=stream,
    )

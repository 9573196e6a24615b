"""Python `pycurl` (libcurl), sync: W threads, one reused `Curl` handle (own connection) per thread (a handle
cannot be shared: `--client-scope shared` is unsupported).

Streamed bodies: libcurl's own. A download is driven by a `CurlMulti` of the one handle, step by step as the
harness asks for pieces, each what the WRITEFUNCTION got (at most BUFFERSIZE, set to C where libcurl allows:
1 KiB to 10 MiB); an upload is `UPLOAD` with a READFUNCTION that hands libcurl the iterator's chunks (no size
given: chunked)."""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator

import pycurl

from .. import sdk
from .timings import CURL_TIMES, PHASES, curl_phases

#: libcurl's CURLINFO_HTTP_VERSION values
VERSIONS = {
    pycurl.CURL_HTTP_VERSION_1_0: "HTTP/1.0",
    pycurl.CURL_HTTP_VERSION_1_1: "HTTP/1.1",
    3: "HTTP/2",
    pycurl.CURL_HTTP_VERSION_3: "HTTP/3",
}


class Handle:
    def __init__(
        self, timeout: float, ca_file: str | None = None, insecure: bool = False, http_version: int | None = None
    ):
        self.curl = pycurl.Curl()
        # libcurl offers h2 over TLS by default: ask for exactly the version the row measures
        self.curl.setopt(pycurl.HTTP_VERSION, http_version or pycurl.CURL_HTTP_VERSION_1_1)
        if ca_file:
            self.curl.setopt(pycurl.CAINFO, ca_file)
        if insecure:
            self.curl.setopt(pycurl.SSL_VERIFYPEER, 0)
            self.curl.setopt(pycurl.SSL_VERIFYHOST, 0)
        self.nbytes = 0
        self.chunks: list[bytes] = []
        self.body: bytes | None = None
        self.method = "GET"  # upload()'s method, with its body
        self.multi: pycurl.CurlMulti | None = None  # streamed downloads' (made at the first)
        self.streamed = False  # whether stream() set the handle last
        self.curl.setopt(pycurl.TIMEOUT_MS, int(timeout * 1000))
        self.curl.setopt(pycurl.NOSIGNAL, 1)
        self.curl.setopt(pycurl.TCP_NODELAY, 1)
        self.curl.setopt(pycurl.PROXY, "")  # no proxy from the environment
        self.curl.setopt(pycurl.WRITEFUNCTION, self._write)

    def _write(self, chunk: bytes) -> None:
        self.nbytes += len(chunk)

    def get(self, url: str) -> tuple[int, int]:
        if self.body is not None or self.streamed:  # the handle was set for another request: a GET again
            self.curl.setopt(pycurl.HTTPGET, 1)
            self.curl.unsetopt(pycurl.CUSTOMREQUEST)
            self.curl.setopt(pycurl.WRITEFUNCTION, self._write)
            self.body, self.streamed = None, False
        self.nbytes = 0
        self.curl.setopt(pycurl.URL, url)
        self.curl.perform()  # releases the GIL during the transfer
        if sdk.recording():  # --phases: libcurl's own times of the transfer
            curl_phases([self.curl.getinfo(getattr(pycurl, name)) for name in CURL_TIMES])
        return int(self.curl.getinfo(pycurl.RESPONSE_CODE)), self.nbytes

    def protocol(self, url: str) -> str | None:
        self.get(url)
        return VERSIONS.get(int(self.curl.getinfo(pycurl.INFO_HTTP_VERSION)))

    def upload(self, url: str, method: str, body: bytes) -> tuple[int, bytes]:
        if body is not self.body or method != self.method:  # the same body every time: set once
            self.body, self.method, self.streamed = body, method, False
            self.curl.setopt(pycurl.POSTFIELDSIZE_LARGE, len(body))
            self.curl.setopt(pycurl.POSTFIELDS, body)
            self.curl.setopt(pycurl.CUSTOMREQUEST, method)
            # curl's own additions that the other clients do not send (Expect: 100-continue would also
            # add a round trip to large bodies)
            self.curl.setopt(pycurl.HTTPHEADER, ["Expect:", "Content-Type:"])
            self.curl.setopt(pycurl.WRITEFUNCTION, self.chunks.append)
        self.chunks.clear()
        self.curl.setopt(pycurl.URL, url)
        self.curl.perform()
        return int(self.curl.getinfo(pycurl.RESPONSE_CODE)), b"".join(self.chunks)

    @contextlib.contextmanager
    def stream(
        self, method: str, url: str, content: bytes | Iterable[bytes] | None, chunk: int | None
    ) -> Iterator[tuple[int, Iterable[bytes]]]:
        c = self.curl
        self.body, self.streamed = None, True  # the request's options change here: get() and upload() set theirs
        if content is None:
            c.setopt(pycurl.HTTPGET, 1)
            c.unsetopt(pycurl.CUSTOMREQUEST)
        elif isinstance(content, bytes):
            c.setopt(pycurl.POSTFIELDSIZE_LARGE, len(content))
            c.setopt(pycurl.POSTFIELDS, content)
            c.setopt(pycurl.CUSTOMREQUEST, method)
        else:
            c.setopt(pycurl.UPLOAD, 1)
            c.setopt(pycurl.READFUNCTION, _reader(content))
            c.setopt(pycurl.CUSTOMREQUEST, method)
        c.setopt(pycurl.HTTPHEADER, ["Expect:", "Content-Type:"])
        c.setopt(pycurl.URL, url)
        pieces: deque[bytes] = deque()
        c.setopt(pycurl.WRITEFUNCTION, pieces.append)
        if chunk is None:
            c.perform()
            yield int(c.getinfo(pycurl.RESPONSE_CODE)), (b"".join(pieces),)
            return
        c.setopt(pycurl.BUFFERSIZE, min(max(chunk, 1024), 10 << 20))
        if self.multi is None:
            self.multi = pycurl.CurlMulti()
        multi = self.multi
        multi.add_handle(c)
        try:
            done = False
            while not pieces and not done:  # the status is known by the first piece of the body, or the end
                done = _step(multi)

            def body() -> Iterator[bytes]:
                finished = done
                while True:
                    while pieces:
                        yield pieces.popleft()
                    if finished:
                        return
                    finished = _step(multi)

            yield int(c.getinfo(pycurl.RESPONSE_CODE)), body()
        finally:
            multi.remove_handle(c)  # (a transfer not finished is ended, its connection closed)


def _step(multi: pycurl.CurlMulti) -> bool:
    """Let libcurl work on the transfer, then wait (at most 1 s) for its socket; True once it is over (its error
    raised as perform() raises it)."""
    while True:
        ret, running = multi.perform()
        if ret != pycurl.E_CALL_MULTI_PERFORM:
            break
    if running:
        multi.select(1.0)
        return False
    _, _, failed = multi.info_read()
    if failed:
        _, errno, message = failed[0]
        raise pycurl.error(errno, message)
    return True


def _reader(content: Iterable[bytes]) -> Callable[[int], bytes]:
    """A READFUNCTION: the iterator's chunks, each cut to the size libcurl asks for (b"": the end)."""
    chunks = iter(content)
    rest = b""

    def read(size: int) -> bytes:
        nonlocal rest
        if not rest:
            rest = next(chunks, b"")
        piece, rest = rest[:size], rest[size:]  # (the whole chunk, not a copy, when it fits)
        return piece

    return read


def make_client(opts: sdk.Options) -> Handle:
    version = pycurl.CURL_HTTP_VERSION_1_1
    if sdk.http2(opts):  # ALPN h2 over https, prior knowledge over http
        https = opts.url.startswith("https:")
        version = pycurl.CURL_HTTP_VERSION_2TLS if https else pycurl.CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
    elif sdk.http3(opts):  # QUIC only (the PyPI wheel's libcurl has ngtcp2 and nghttp3): no fallback to TCP
        version = pycurl.CURL_HTTP_VERSION_3ONLY
    return Handle(opts.timeout, opts.ca_file, opts.insecure, version)


SYNC = sdk.SyncClient(
    "pycurl",
    make_client,
    Handle.get,
    Handle.upload,
    lambda h: h.curl.close(),
    version=f"{pycurl.version_info()[1]} (pycurl {getattr(pycurl, '__version__', '?')})",
    # an easy handle does one transfer at a time: a thread each
    shareable=False,
    http2=True,
    http3=True,
    protocol=Handle.protocol,
    stream=Handle.stream,
    phases=PHASES,
)

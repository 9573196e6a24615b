"""Python `pycurl` (libcurl), sync: W threads, one reused `Curl` handle (own connection) per thread (a handle
cannot be shared: `--client-scope shared` is unsupported)."""

from __future__ import annotations

import pycurl

from .. import sdk

#: libcurl's CURLINFO_HTTP_VERSION values
VERSIONS = {pycurl.CURL_HTTP_VERSION_1_0: "HTTP/1.0", pycurl.CURL_HTTP_VERSION_1_1: "HTTP/1.1", 3: "HTTP/2"}


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
        self.curl.setopt(pycurl.TIMEOUT_MS, int(timeout * 1000))
        self.curl.setopt(pycurl.NOSIGNAL, 1)
        self.curl.setopt(pycurl.TCP_NODELAY, 1)
        self.curl.setopt(pycurl.PROXY, "")  # no proxy from the environment
        self.curl.setopt(pycurl.WRITEFUNCTION, self._write)

    def _write(self, chunk: bytes) -> None:
        self.nbytes += len(chunk)

    def get(self, url: str) -> tuple[int, int]:
        self.nbytes = 0
        self.curl.setopt(pycurl.URL, url)
        self.curl.perform()  # releases the GIL during the transfer
        return int(self.curl.getinfo(pycurl.RESPONSE_CODE)), self.nbytes

    def protocol(self, url: str) -> str | None:
        self.get(url)
        return VERSIONS.get(int(self.curl.getinfo(pycurl.INFO_HTTP_VERSION)))

    def upload(self, url: str, method: str, body: bytes) -> tuple[int, bytes]:
        if body is not self.body:  # the same body every time: set once
            self.body = body
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


def make_client(opts: sdk.Options) -> Handle:
    version = pycurl.CURL_HTTP_VERSION_1_1
    if sdk.http2(opts):  # ALPN h2 over https, prior knowledge over http
        https = opts.url.startswith("https:")
        version = pycurl.CURL_HTTP_VERSION_2TLS if https else pycurl.CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
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
    protocol=Handle.protocol,
)

"""Python `pycurl` (libcurl), sync: W threads, one reused `Curl` handle (own connection) per thread."""

from __future__ import annotations

import pycurl

from .. import sdk


class Handle:
    def __init__(self, timeout: float, ca_file: str | None = None, insecure: bool = False):
        self.curl = pycurl.Curl()
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
    return Handle(opts.timeout, opts.ca_file, opts.insecure)


SYNC = sdk.SyncClient(
    "pycurl",
    make_client,
    Handle.get,
    Handle.upload,
    lambda h: h.curl.close(),
    version=f"{pycurl.version_info()[1]} (pycurl {getattr(pycurl, '__version__', '?')})",
)

"""One HTTP/3 request through aioquic, for the runner's probes (probe.py imports this module when a probe speaks
HTTP/3): QUIC to the host's port with ALPN `h3`, one request on aioquic's HTTP/3 connection, its status and body
length; the pattern of aioquic's own example client."""

from __future__ import annotations

import asyncio
import logging
import ssl
from typing import Any

from aioquic.asyncio.client import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import ConnectionTerminated, QuicEvent

# aioquic logs a refused handshake as a warning of its logger "quic": the probe's error says it once, in one line
logging.getLogger("quic").addHandler(logging.NullHandler())


class _Client(QuicConnectionProtocol):
    """A QUIC connection with an HTTP/3 connection on it that sends one request and reads its answer."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._h3 = H3Connection(self._quic)
        self._stream: int | None = None
        self._status = 0
        self._size = 0
        self._done: asyncio.Future[tuple[int, int]] = asyncio.get_running_loop().create_future()

    def quic_event_received(self, event: QuicEvent) -> None:
        if isinstance(event, ConnectionTerminated):
            if not self._done.done():
                why = event.reason_phrase or f"error {event.error_code:#x}"
                self._done.set_exception(ConnectionError(f"QUIC connection closed: {why}"))
        for h3 in self._h3.handle_event(event):
            if isinstance(h3, (HeadersReceived, DataReceived)) and h3.stream_id == self._stream:
                if isinstance(h3, HeadersReceived) and not self._status:
                    self._status = int(dict(h3.headers).get(b":status", b"0"))
                elif isinstance(h3, DataReceived):
                    self._size += len(h3.data)
                if h3.stream_ended and not self._done.done():
                    self._done.set_result((self._status, self._size))

    async def request(self, method: str, authority: str, path: str, body: bytes | None) -> tuple[int, int]:
        self._stream = self._quic.get_next_available_stream_id()
        headers = [(b":method", method.encode()), (b":scheme", b"https"), (b":authority", authority.encode()),
                   (b":path", path.encode()), (b"user-agent", b"clientbench-probe")]  # fmt: skip
        if body is not None:
            headers.append((b"content-length", str(len(body)).encode()))
        self._h3.send_headers(self._stream, headers, end_stream=body is None)
        if body is not None:
            self._h3.send_data(self._stream, body, end_stream=True)
        self.transmit()
        return await self._done


def request(
    host: str,
    port: int,
    authority: str,
    method: str,
    path: str,
    body: bytes | None,
    ca_file: str | None,
    insecure: bool,
    timeout: float,
) -> tuple[int, int]:
    """(status, body bytes) of one request; asyncio.TimeoutError after `timeout` s, ConnectionError when the
    handshake or the connection failed (a refused certificate, a server that closed it)."""
    config = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN)
    if insecure:
        config.verify_mode = ssl.CERT_NONE
    elif ca_file:
        config.load_verify_locations(ca_file)

    async def exchange() -> tuple[int, int]:
        # not aioquic's wait for the handshake (a failed one says no more than ConnectionError there): the request
        # goes at once, waiting in aioquic until the handshake's keys exist, and its answer says why it failed
        async with connect(host, port, configuration=config, create_protocol=_Client, wait_connected=False) as client:
            assert isinstance(client, _Client)
            return await client.request(method, authority, path, body)

    return asyncio.run(asyncio.wait_for(exchange(), timeout))

"""The phases of a request as the peers' libraries report them (`--phases`; docs/phases.md): libcurl's transfer
times (pycurl, curl_cffi) and httpcore's trace events (httpx, httpx2). Each function records through sdk.phase()
what one request's library reported; the plugin calls it after the request, whole body read."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from .. import sdk

#: the keys these libraries let a plugin see (libcurl >= 8.10 and httpcore tell all five apart)
PHASES = ("connect", "tls", "send", "wait", "receive")

#: libcurl's times of a transfer, each in µs from its start (CURLINFO_*_TIME_T), in this order
CURL_TIMES = (
    "NAMELOOKUP_TIME_T",
    "CONNECT_TIME_T",
    "APPCONNECT_TIME_T",
    "PRETRANSFER_TIME_T",
    "POSTTRANSFER_TIME_T",
    "STARTTRANSFER_TIME_T",
    "TOTAL_TIME_T",
)


def curl_phases(times: Sequence[int]) -> None:
    """A libcurl transfer's phases from its CURL_TIMES (µs since the transfer started): connect (the name looked
    up to the TCP connection made; 0 on a reused connection, where libcurl reports no connect), tls (to the TLS
    handshake done; 0 over http), send (the request sent: PRETRANSFER to POSTTRANSFER), wait (to the first response
    byte: STARTTRANSFER), receive (to the transfer's end)."""
    lookup, connect, tls, pre, post, first, total = times
    us = 1000
    if connect:
        sdk.phase("connect", max(0, connect - lookup) * us)
    if tls:
        sdk.phase("tls", max(0, tls - connect) * us)
    sdk.phase("send", max(0, post - pre) * us)
    sdk.phase("wait", max(0, first - post) * us)
    sdk.phase("receive", max(0, total - first) * us)


def curl_info_phases(infos: Mapping[Any, Any], names: Sequence[Any]) -> None:
    """curl_phases() of a response's `infos` (curl_cffi: `curl_infos=names` on the session)."""
    curl_phases([int(infos[n]) for n in names])


#: httpcore's trace events a request's phases are read from (without their "connection."/"http11."/"http2." head)
_CONNECT, _TLS = ("connect_tcp.started", "connect_tcp.complete"), ("start_tls.started", "start_tls.complete")
_SEND0, _SENT_HEAD, _SENT = (
    "send_request_headers.started",
    "send_request_headers.complete",
    "send_request_body.complete",
)
_HEAD, _BODY = "receive_response_headers.complete", "receive_response_body.complete"


def trace_marks() -> tuple[dict[str, int], Callable[[str, Any], None]]:
    """httpcore's `trace` extension for a sync request: (the marks it fills, the callback)."""
    marks: dict[str, int] = {}
    perf = time.perf_counter_ns

    def trace(event: str, info: Any) -> None:
        marks[event.partition(".")[2]] = perf()

    return marks, trace


def async_trace_marks() -> tuple[dict[str, int], Callable[[str, Any], Awaitable[None]]]:
    """trace_marks() for an async request (httpcore awaits the callback)."""
    marks: dict[str, int] = {}
    perf = time.perf_counter_ns

    async def trace(event: str, info: Any) -> None:
        marks[event.partition(".")[2]] = perf()

    return marks, trace


def trace_phases(marks: Mapping[str, int], end: int) -> None:
    """A request's phases from httpcore's events: connect and tls (when it opened a connection), send (the head
    started to the body sent), wait (to the response's head read: httpcore tells when the head is parsed, not its
    first byte; a small head comes in one read), receive (to the body read; `end`, when the plugin read it, where
    httpcore did not say)."""
    for key, (begun, done) in (("connect", _CONNECT), ("tls", _TLS)):
        if begun in marks and done in marks:
            sdk.phase(key, marks[done] - marks[begun])
    if _SEND0 not in marks or _HEAD not in marks:
        return  # not an HTTP exchange httpcore traced (a failed one does not count)
    sent = marks.get(_SENT, marks.get(_SENT_HEAD, marks[_SEND0]))
    sdk.phase("send", sent - marks[_SEND0])
    sdk.phase("wait", marks[_HEAD] - sent)
    sdk.phase("receive", marks.get(_BODY, end) - marks[_HEAD])

"""Network faults through toxiproxy in front of the real axum server (support/toxiproxy.py): a reset
mid-response, a stalled connection, a response sliced into tiny segments, a response cut short, a delayed close
and a latency beyond the timeout. For beast_client.Client, reqwest_client.Client and both AsyncClients:
the documented exception (TimeoutError, ConnectionError or the binding's ProtocolError) within the timeout,
never a hang, never a short success; the bodies that must arrive arrive whole.

The native drivers meet the same faults in python/tests/test_network_faults.py."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from support.binding_clients import binding_of, is_async
from support.toxiproxy import (
    BIG,
    CLOSE_DELAY_MS,
    CUT_AFTER,
    LIMIT,
    RESET_TIMEOUT,
    SLICER,
    N,
    missing,
    pattern,
    reset_proxy,
    toxic,
)

if why := missing():
    pytest.skip(why, allow_module_level=True)

SLACK = 1.5  # an error must arrive within its deadline + SLACK


def ways(client: Any, url: str) -> dict[str, Callable[[], Any]]:
    """Every call that does one GET; each returns what a caller would take as the outcome."""
    return {
        "get": lambda: client.get(url),
        "fetch_len": lambda: client.fetch_len(url),
        "request": lambda: client.request("GET", url),
    }


def raises_within(fn: Callable[[], Any], exc: Any, limit: float, at_least: float = 0.0) -> BaseException:
    t0 = time.monotonic()
    with pytest.raises(exc) as info:
        outcome = fn()
        pytest.fail(f"returned {outcome!r} instead of raising")  # e.g. a short success
    took = time.monotonic() - t0
    assert at_least <= took < limit, f"{info.value!r} after {took:.2f}s"
    return info.value


def later(delay: float, fn: Callable[[], None]) -> threading.Timer:
    timer = threading.Timer(delay, fn)
    timer.daemon = True
    timer.start()
    return timer


# -- 1. reset mid-response (support.toxiproxy.reset_proxy) ------------------------------------------


@pytest.mark.timeout(30)
def test_reset_mid_response(new, proxied, toxiproxy):
    client = new(timeout=RESET_TIMEOUT)
    base, cut = reset_proxy(proxied, toxiproxy)
    timer = later(CUT_AFTER, cut)
    err = raises_within(lambda: client.request("GET", f"{base}/bytes/{BIG}"), ConnectionResetError, CUT_AFTER + SLACK)
    timer.join(5)
    if client.kind == "beast":  # what arrived before the reset is counted: the reset was mid-body
        assert 0 < client.last_body_bytes < BIG, (client.last_body_bytes, err)
    # the proxy now resets every new connection at its first response byte: still a ConnectionError
    for way, fn in ways(client, f"{base}/").items():
        err = raises_within(fn, ConnectionResetError, SLACK)
        assert "127.0.0.1" in str(err), (way, err)


# -- 2. a stalled connection (timeout toxic, timeout=0: data dropped, nothing closes) -------------------


@pytest.mark.timeout(30)
@pytest.mark.parametrize("stream", ["downstream", "upstream"])
def test_stalled_connection_times_out(new, proxied, stream):
    """downstream: the request reached the server, the response never arrives; upstream: the request never
    reaches the server (every call for the first, get() for the second: a second each)."""
    _, base = proxied(toxic("timeout", stream, timeout=0))
    client = new(timeout=1.0)
    calls = ways(client, f"{base}/")
    for way, fn in calls.items() if stream == "downstream" else [("get", calls["get"])]:
        err = raises_within(fn, TimeoutError, 1.0 + SLACK, at_least=0.8)
        assert not isinstance(err, ConnectionError), (way, err)


# -- 3. a response in tiny segments with small delays ------------------------------------------------


@pytest.mark.timeout(60)
def test_sliced_response_arrives_intact(new, proxied):
    _, base = proxied(SLICER)
    client = new(timeout=20.0)
    url = f"{base}/bytes/{N}"
    r = client.request("GET", url)
    assert r.status == 200 and len(r.body) == N and r.body == pattern(N)
    assert client.fetch_len(url) == (200, N)


# -- 4. the response cut short (limit_data), never a short success -----------------------------------


@pytest.mark.timeout(30)
def test_truncated_response_raises(new, proxied):
    _, base = proxied(toxic("limit_data", bytes=LIMIT))
    client = new(timeout=5.0)
    for way, fn in ways(client, f"{base}/bytes/{N}").items():
        err = raises_within(fn, ConnectionError, SLACK)
        assert "complete" in str(err) or binding_of(client.kind) != "beast", (way, err)
    if not is_async(client.kind):
        assert client.last_body_bytes < N


# -- 5. a delayed close: the response is complete (Content-Length) before the close ------------------


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    "path, body", [("/close", b"Hello, World!"), (f"/bytes/{N}", pattern(N))], ids=["close", "bytes"]
)
def test_slow_close_still_succeeds(new, proxied, path, body):
    _, base = proxied(toxic("slow_close", delay=CLOSE_DELAY_MS))
    client = new(timeout=10.0)
    for i in range(3):
        t0 = time.monotonic()
        r = client.request("GET", base + path)
        took = time.monotonic() - t0
        assert r.status == 200 and r.body == body, i
        # not waiting for the (delayed) close of the previous /close connection, nor of this one
        assert took < CLOSE_DELAY_MS / 2000, f"request {i} took {took:.2f}s"


# -- 6. latency beyond the timeout ------------------------------------------------------------------


@pytest.mark.timeout(30)
def test_latency_beyond_the_timeout(new, proxied):
    _, base = proxied(toxic("latency", latency=1500, jitter=0))
    client = new(timeout=0.5)
    for _way, fn in ways(client, f"{base}/").items():
        raises_within(fn, TimeoutError, 0.5 + SLACK, at_least=0.4)

"""What only beast_client has (docs/binding-api.md, documented differences): boost_version, the connection
pool as `_connections_opened` counts it (a connection per request in flight, re-used per scheme + host +
port), and a StreamResponse read by one thread at a time. The API both bindings share is tested in
bindings/tests/ (test_shared_beast.py: one Client shared by many threads)."""

from __future__ import annotations

import threading
import time

import beast_client
import pytest
from clientbench.execution.server import Server
from support.httpapp import App


def test_boost_version() -> None:
    assert beast_client.boost_version.count(".") == 2
    assert "boost_version" in beast_client.__all__


def test_keep_alive_uses_one_connection(server: Server) -> None:
    with beast_client.Client(timeout=5.0) as c:
        assert c.get(server.url + "/") == 200
        assert c.get(server.url + "/bytes/1000000") == 200
        assert c.request("GET", server.url + "/").status == 200
        assert c._connections_opened == 1


def test_keep_alive_reopens_after_connection_close(server: Server) -> None:
    with beast_client.Client(timeout=5.0) as c:
        assert c.get(server.url + "/close") == 200
        assert c.get(server.url + "/") == 200
        assert c.get(server.url + "/") == 200
        assert c._connections_opened == 2


def test_redirects_reuse_the_connection(http_app: App) -> None:
    with beast_client.Client(timeout=5) as c:
        r = c.request("GET", http_app.url + "/redirect/3")
        assert r.status == 200 and r.url == http_app.url + "/anything"
        assert c._connections_opened == 1  # each redirect's body read and dropped: the connection reused


def test_pool_keeps_one_connection_per_host(http_app: App) -> None:
    port = http_app.server_address[1]
    with beast_client.Client(timeout=5) as c:
        for i in range(10):
            host = "localhost" if i % 2 else "127.0.0.1"
            assert c.get(f"http://{host}:{port}/anything") == 200
        assert c._connections_opened == 2


@pytest.mark.parametrize("path", ["/stream", "/gzip"])
def test_a_stream_read_to_the_end_gives_its_connection_back(http_app: App, path: str) -> None:
    with beast_client.Client(timeout=10) as c:
        with c.stream("GET", http_app.url + path) as s:
            assert sum(len(chunk) for chunk in s.iter_bytes()) > 0
        assert c.get(http_app.url + "/anything") == 200
        assert c._connections_opened == 1


def test_a_stream_closed_early_closes_its_connection(http_app: App) -> None:
    with beast_client.Client(timeout=10) as c:
        with c.stream("GET", http_app.url + "/stream") as s:
            next(s.iter_bytes())
        assert c.get(http_app.url + "/anything") == 200
        assert c._connections_opened == 2  # closed before the end: not reused


def test_two_threads_at_once_take_a_connection_each(server: Server) -> None:
    with beast_client.Client(timeout=5.0) as c:
        result: list[object] = []
        t = threading.Thread(target=lambda: result.append(c.get(server.url + "/delay/400")))
        t.start()
        time.sleep(0.15)  # the other thread is inside get(), GIL released
        assert c.get(server.url + "/") == 200
        t.join()
        assert result == [200]
        assert c._connections_opened == 2
        assert c.get(server.url + "/") == 200  # an idle one re-used
        assert c._connections_opened == 2


def test_a_stream_is_read_by_one_thread_at_a_time(server: Server) -> None:
    with beast_client.Client(timeout=5.0) as c, c.stream("GET", server.url + "/drip?bytes=2&duration_ms=800") as s:
        chunks: list[bytes] = []
        t = threading.Thread(target=lambda: chunks.extend(s.iter_bytes()))
        t.start()
        time.sleep(0.15)  # the other thread waits for the first piece, GIL released
        with pytest.raises(RuntimeError, match="another thread"):
            next(s.iter_bytes())
        t.join()
        assert b"".join(chunks) == b"**"

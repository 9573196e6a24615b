"""The server on several loopback addresses with one port (`Server(hosts=N)`, what `run --hosts N` starts): each
address answers over HTTP and HTTPS (the extra ones named in the certificate), `/stats` counts the origins, and
`origins_used` tells how many a stretch of requests used."""

from __future__ import annotations

import socket
import ssl
import urllib.request
from pathlib import Path

import pytest
from clientbench.errors import SetupError
from clientbench.execution.server import Server, loopback_hosts, origins_used


def _get(url: str, context: ssl.SSLContext | None = None) -> bytes:
    with urllib.request.urlopen(url, timeout=10, context=context) as r:
        return bytes(r.read())


def _authority(url: str) -> str:
    return url.partition("://")[2]


def test_four_addresses_answer_on_one_port_and_count_four_origins() -> None:
    with Server(hosts=4) as s:
        port = s.url.rpartition(":")[2]
        assert s.urls == tuple(f"http://127.0.0.{k}:{port}" for k in range(1, 5))
        assert s.url == s.urls[0] and s.local_urls == s.urls and not s.http3
        before = s.stats_document()
        assert before is not None
        for url in s.urls:
            assert _get(url + "/") == b"Hello, World!"
        after = s.stats_document()
        assert after is not None
        assert after["origins"] == 4
        stats = s.stats()
        assert stats is not None and stats["origins"] == 4
        assert "origin_requests" not in stats  # integers only: the runner diffs every key
        # the health check and the /stats reads named the first origin too
        assert set(after["origin_requests"]) == {_authority(u) for u in s.urls}
        assert origins_used(before, after, s.own_authority) == 4
        # two of them: `origins` stays 4 (every origin ever seen), origins_used says 2
        before = s.stats_document()
        for url in s.urls[1:3]:
            assert _get(url + "/bytes/10") == b"abcdefghij"
        after = s.stats_document()
        assert before is not None and after is not None
        assert after["origins"] - before["origins"] == 0
        assert origins_used(before, after, s.own_authority) == 2
        # none: the /stats request that read `after` is not an origin used
        before, after = after, s.stats_document()
        assert after is not None and origins_used(before, after, s.own_authority) == 0


def test_four_addresses_over_tls_each_verified(tmp_path: Path) -> None:
    with Server(hosts=4, tls=True, tls_dir=tmp_path) as s:
        assert s.ca_file and s.http3 and s.udp_addr == _authority(s.url)
        assert s.tls_names_passed == ("127.0.0.2", "127.0.0.3", "127.0.0.4")
        context = ssl.create_default_context(cafile=s.ca_file)  # verifies each address against the certificate
        for url in s.urls:
            assert url.startswith("https://127.0.0.")
            assert _get(url + "/", context) == b"Hello, World!"
        stats = s.stats()
        assert stats is not None and stats["origins"] == 4


def test_addresses_may_be_given_and_a_wildcard_is_no_certificate_name() -> None:
    with Server(hosts=("127.0.0.1", "127.0.0.3")) as s:
        port = s.url.rpartition(":")[2]
        assert s.urls == (f"http://127.0.0.1:{port}", f"http://127.0.0.3:{port}")
        assert _get(s.urls[1] + "/health") == b"ok"
    wide = Server(hosts=("127.0.0.2", "0.0.0.0", "[::1]", "bench.example"), tls=True, tls_names=("bench.example",))
    command = wide.command()
    assert [command[i + 1] for i, a in enumerate(command) if a == "--host"] == [
        "127.0.0.2",
        "0.0.0.0",
        "::1",
        "bench.example",
    ]
    assert wide.tls_names_passed == ("bench.example", "::1")


@pytest.mark.parametrize("hosts", [0, 255, ()])
def test_bad_hosts_are_one_line(hosts: object) -> None:
    with pytest.raises(SetupError, match="hosts: "):
        Server(hosts=hosts)  # type: ignore[arg-type]
    assert loopback_hosts(2) == ("127.0.0.1", "127.0.0.2")


def test_a_port_taken_on_an_extra_address_stops_the_server() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.2", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = Server(hosts=2, port=port)
        with pytest.raises(SetupError, match="server exited with status 1"):
            server.start()
        assert server.proc is None  # stopped and reaped by start()

"""`--network` over QUIC (network.py, execution/udp_relay.py): over HTTPS the testbed puts the workspace's
udp-relay in front of the server's UDP port on the TCP proxy's port number, so an HTTP/3 request goes through
the emulated round trip too; what only a datagram network has (loss=) needs --http 3, and what the relay does
not do (rate=) is refused over QUIC; no relay outlives its testbed. The relay's own delay against its setting
and its loss are measured by udp-relay/tests/relay.rs."""

from __future__ import annotations

import time
import urllib.request
from pathlib import Path

import pytest
from clientbench import cli
from clientbench.execution import testbed
from clientbench.execution.server import https_context
from clientbench.network import Network, parse
from clientbench.options import Options
from support.toxiproxy import alive, missing

if why := missing():
    pytest.skip(why, allow_module_level=True)

curl_cffi = pytest.importorskip("curl_cffi", reason="curl_cffi (make peers) is the outside HTTP/3 client here")


def test_loss_is_a_percentage_of_datagrams() -> None:
    network = parse("rtt=2ms,loss=1.5%")
    assert network is not None and network.loss_pct == 1.5 and network.rtt_ms == 2
    assert network.relay_flags() == ["--delay-ms", "1", "--jitter-ms", "0", "--loss", "1.5"]
    assert "loss 1.5% each way (QUIC)" in network.describe()
    assert Network.from_json(network.to_json()) == network


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--network", "loss=1%", "--tls"], "--network loss= drops datagrams, which only QUIC carries"),
        (["--network", "rate=10mbit", "--tls", "--http", "3"], "--network rate= is not emulated over QUIC"),
        (["--network", "loss=100%", "--tls", "--http", "3"], "below 100"),
        (["--network", "loss=x", "--tls", "--http", "3"], "expected a percentage"),
    ],
)
def test_what_cannot_be_emulated_is_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = cli.main(["run", "-c", "cpp-beast", *argv])
    except SystemExit as exc:  # argparse's own: the spec's value is bad
        code = int(exc.code or 0)
    assert code == 2
    assert message in capsys.readouterr().err


def test_http3_goes_through_the_relay_with_the_round_trip(tmp_path: Path) -> None:
    options = Options.checked(tls=True, network=Network(rtt_ms=20), out=tmp_path)
    with testbed.Testbed(options, ["test"]) as bed:
        assert len(bed.relays) == 1
        relay = bed.relays[0]
        pid = relay.pid
        url = bed.endpoint.url
        assert url.rsplit(":", 1)[1] == str(relay.port_number)  # TCP proxy and UDP relay on one port number
        ca = bed.server_endpoint.ca_file
        server = bed.servers[0]
        before = server.stats()
        assert before is not None
        with curl_cffi.Session() as session:
            session.get(url + "/", verify=ca, http_version=curl_cffi.CurlHttpVersion.V3ONLY, timeout=10)  # handshake
            start = time.perf_counter()
            r = session.get(url + "/bytes/1000", verify=ca, http_version=curl_cffi.CurlHttpVersion.V3ONLY, timeout=10)
            took = time.perf_counter() - start
        assert r.status_code == 200 and len(r.content) == 1000 and r.http_version == curl_cffi.CurlHttpVersion.V3
        assert took >= 0.020  # one round trip at least: 10 ms each way through the relay
        after = server.stats()
        assert after is not None and after["h3_requests"] - before["h3_requests"] == 2
        # TCP still goes through toxiproxy on the same port number
        with urllib.request.urlopen(url + "/", context=https_context(ca), timeout=10) as answer:
            assert answer.read() == b"Hello, World!"
    assert not alive(pid)  # the relay stopped with its testbed


def test_a_testbed_over_http_starts_no_relay(tmp_path: Path) -> None:
    with testbed.Testbed(Options.checked(network=Network(rtt_ms=1), out=tmp_path), ["test"]) as bed:
        assert bed.relays == []

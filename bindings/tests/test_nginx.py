"""Both bindings as a user would try them against software nobody here wrote: Debian's nginx on 127.0.0.1 with a
1 s keep-alive timeout, gzip on, a `return 301`, a chunked (gzipped) response and two Set-Cookie fields, each
result compared with curl's. nginx is started here with its own configuration (support/nginx.py) and stopped
on every path."""

from __future__ import annotations

import time
from collections.abc import Iterator
from types import ModuleType

import pytest
from support.binding_clients import SYNC
from support.nginx import curl, missing, running

if why := missing():
    pytest.skip(why, allow_module_level=True)

pytestmark = pytest.mark.kinds(*SYNC)

T = 20.0
MIB = 1024 * 1024

HTTP = """
    types {{ application/json json; application/octet-stream bin; text/plain txt; }}
    keepalive_timeout 1s;
    gzip on;
    gzip_types application/json text/plain;
    gzip_min_length 0;
    server {{
        listen 127.0.0.1:{port};
        root {dir}/www;
        location = /old {{ return 301 /data.json; }}
        location = /cookies {{
            add_header Set-Cookie "a=1; Path=/";
            add_header Set-Cookie "b=2; Path=/";
            return 200 "two cookies\\n";
        }}
        location = /post {{ return 200 "posted\\n"; }}
    }}
"""


@pytest.fixture(scope="module")
def nginx(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """nginx serving www/ (data.json, big.bin of 1 MiB) on an ephemeral port; yields its base URL."""
    d = tmp_path_factory.mktemp("nginx")
    www = d / "www"
    www.mkdir()
    (www / "data.json").write_text('{"items": [' + ", ".join(f'{{"id": {i}}}' for i in range(2000)) + "]}\n")
    (www / "big.bin").write_bytes(bytes(i % 251 for i in range(MIB)))
    with running(d, HTTP) as port:
        yield f"http://127.0.0.1:{port}"


def curl_headers(url: str, *args: str) -> list[tuple[str, str]]:
    head = curl("-o", "/dev/null", "-D", "-", *args, url).decode("latin-1")
    fields = []
    for line in head.split("\r\n")[1:]:
        if ":" in line:
            name, _, value = line.partition(":")
            fields.append((name.strip().lower(), value.strip()))
    return fields


def test_redirect_is_followed_like_curl(nginx: str, mod: ModuleType) -> None:
    effective = curl("-L", "-o", "/dev/null", "-w", "%{url_effective}", nginx + "/old").decode()
    with mod.Client(timeout=T) as c:
        r = c.request("GET", nginx + "/old")
        assert (r.status, r.url) == (200, effective)
        assert r.body == curl("-L", "--compressed", nginx + "/old")
        r = c.request("GET", nginx + "/old", follow_redirects=False)
        assert r.status == 301 and r.headers["location"].endswith("/data.json")


def test_gzip_is_decoded_like_curl(nginx: str, mod: ModuleType) -> None:
    fields = dict(curl_headers(nginx + "/data.json", "-H", "Accept-Encoding: gzip"))
    assert fields["content-encoding"] == "gzip" and fields["transfer-encoding"] == "chunked"
    expected = curl("--compressed", nginx + "/data.json")
    with mod.Client(timeout=T) as c:
        r = c.request("GET", nginx + "/data.json")
        assert r.status == 200 and r.body == expected
        assert len(r.json()["items"]) == 2000
    with mod.Client(timeout=T, decompress=False) as c:
        raw = c.request("GET", nginx + "/data.json", headers={"Accept-Encoding": "gzip"})
        assert raw.body[:2] == b"\x1f\x8b" and raw.headers["content-encoding"] == "gzip"


def test_post_after_the_idle_close(nginx: str, mod: ModuleType) -> None:
    expected = curl("-X", "POST", "--data-binary", "x", nginx + "/post")
    with mod.Client(timeout=T) as c:
        for method in ("POST", "PUT", "PATCH", "GET"):
            assert c.request(method, nginx + "/post", body=b"x").body == expected
            time.sleep(1.6)  # nginx closes the idle keep-alive connection after 1 s
            r = c.request(method, nginx + "/post", body=b"x")
            assert (r.status, r.body) == (200, expected), method


def test_two_set_cookie_fields_like_curl(nginx: str, mod: ModuleType) -> None:
    expected = [v for k, v in curl_headers(nginx + "/cookies") if k == "set-cookie"]
    assert expected == ["a=1; Path=/", "b=2; Path=/"]
    with mod.Client(timeout=T) as c:
        r = c.request("GET", nginx + "/cookies")
        assert r.headers.get_all("set-cookie") == expected
        assert [v for k, v in r.headers.multi_items() if k == "set-cookie"] == expected


def test_one_mebibyte_streamed_in_chunks(nginx: str, mod: ModuleType) -> None:
    expected = curl(nginx + "/big.bin")
    assert len(expected) == MIB
    with mod.Client(timeout=T) as c, c.stream("GET", nginx + "/big.bin") as s:
        assert s.status == 200
        chunks = list(s.iter_bytes())
    assert len(chunks) > 1
    assert b"".join(chunks) == expected

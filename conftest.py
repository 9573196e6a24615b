"""Registers the fixtures every test suite shares, from python/tests/support (importable as `support` through
pytest.ini's `pythonpath`): `server`, `tls_server`, `http_app`, `closed_port_url`, `raw_server`,
`dual_server` (support/fixtures.py) and the toxiproxy ones, `toxiproxy`, `proxied`, `axum`, `started_pids`
(support/toxiproxy.py)."""

pytest_plugins = ("support.fixtures", "support.toxiproxy")

"""What the test suites share (bindings/tests, bindings/*/tests, python/tests), importable as `support` through
pytest.ini's `pythonpath`; the repository's conftest.py registers its fixture modules for every suite.
- `fixtures`: `server` (the axum server), `tls_server` (the same over HTTPS), `http_app`, `closed_port_url`,
  `raw_server`, `dual_server`;
- `rawserver`: a raw-socket HTTP/1.1 server whose handlers answer, misbehave or count connections on purpose,
  and the catalogue of canned handlers;
- `dualserver`: a raw server that speaks TLS and plain HTTP on one port, and a scripted application (status,
  Location, Set-Cookie from the URL; an echo of the request's headers);
- `httpapp`: an application on Python's own http.server (a server nobody here wrote);
- `binding_clients`: the three binding clients behind one synchronous interface;
- `toxiproxy`: network faults through toxiproxy (fixtures and toxics);
- `nginx`: Debian's nginx started with a private configuration, and curl;
- `freethreaded`: the interpreters of `make freethreaded`;
- `fake_driver.py`, `rows.py`: a driver that sends no request, and synthetic runs and rows, for the runner;
- `browser`: Debian's headless Chromium through Playwright, offline, for the HTML report.
"""

from pathlib import Path

#: the checkout
REPO = Path(__file__).resolve().parents[3]

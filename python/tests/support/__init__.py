"""What the three pytest suites share (python/tests, bindings/beast/tests, bindings/reqwest/tests).

- `rawserver`: a raw-socket HTTP/1.1 server on 127.0.0.1 whose handlers answer, misbehave or count
  connections on purpose, and the catalogue of canned handlers;
- `fixtures`: the pytest fixtures (`server`, `closed_port_url`, `raw_server`), registered in every suite's
  conftest.py with `pytest_plugins = ("support.fixtures",)`;
- `binding_clients`: the three binding clients behind one sync interface (fault and fuzz tests);
- `fake_driver.py`: a driver that sends no request, for the runner's tests.

The bindings' conftest.py put python/ and python/tests/ on sys.path, so `import support` works from every
suite.
"""

from pathlib import Path

#: the checkout
REPO = Path(__file__).resolve().parents[3]

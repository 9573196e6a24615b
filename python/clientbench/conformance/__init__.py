"""The driver contract's conformance suite (`clientbench check-driver`): the checks (checks.py) and the one
raw-socket fault server for the faults the axum server does not make (faults.py; the tests use it too)."""

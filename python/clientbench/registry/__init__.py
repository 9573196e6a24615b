"""The client registry: which rows exist and what runs each. spec.py (a row, selecting rows), shipped.py (the
rows the project ships), external.py (rows from outside the project: --driver, --clients-file, --client, and
the `clientbench.clients` entry points)."""

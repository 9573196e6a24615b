"""Python drivers: one module per client library, all built on `harness` (the workload contract)."""

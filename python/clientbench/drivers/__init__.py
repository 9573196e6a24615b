"""Python drivers: one module per client library, all built on `clientbench.harness` (the workload contract)."""

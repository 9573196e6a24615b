"""Python drivers: one module per client library, all built on `_common` (the workload contract)."""

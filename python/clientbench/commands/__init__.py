"""The commands: `run`, `sweep`, `gil`, `soak`, `compare` (one module each). Each takes resolved options
(a `Workload`, testbed `Options`) and returns the exit status."""

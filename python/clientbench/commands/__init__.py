"""The commands: `run`, `sweep`, `gil`, `soak`, `compare` (one module each). Each takes resolved options
(a `Workload`, testbed `Options`) and returns the exit status. What several commands share lives in
`output` (a run folder's files, the terminal table, the exit status); no command imports another."""

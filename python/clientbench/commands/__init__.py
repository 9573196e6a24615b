"""The commands, one module each: `run`, `sweep`, `gil`, `soak`, `cost`, `compare`, `report`, `check_driver`,
`serve`, `list`. Each takes resolved options (a `Workload`, testbed `Options` or its own settings, from
options.py) and returns the exit status. What several commands share lives in `output` (a run folder's files, the
terminal table, the exit status); no command imports another."""

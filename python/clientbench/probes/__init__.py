"""Probes: programs the commands run that are not drivers (no raw document, no table row): `soak_binding`
(`clientbench soak`'s Python targets), `gc_pause` (the GIL report's stop-the-world pause),
`progress` (the GIL report's Python thread beside the bindings' calls) and `cold_start`
(`clientbench cold`'s one cold start of a Python row, run as a script)."""

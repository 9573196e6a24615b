"""Probes: programs the commands run that are not drivers (no raw document, no table row): `soak_binding`
(`clientbench soak`'s Python targets) and `gc_pause` (the GIL report's stop-the-world pause)."""

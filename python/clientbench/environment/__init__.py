"""What this machine has: the built binaries (binaries.py), other Python interpreters (interpreters.py), and the
description of the machine and software every results.json records (machine.py)."""

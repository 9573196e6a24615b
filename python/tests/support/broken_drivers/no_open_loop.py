"""A correct driver without an open loop: it refuses --rate with a usage error (exit 2, one line)."""

import sys

from base import main

if "--rate" in sys.argv:
    print("no_open_loop.py: error: --rate: this driver has no open loop", file=sys.stderr)
    sys.exit(2)
main()

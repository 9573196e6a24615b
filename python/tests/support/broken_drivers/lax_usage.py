"""Takes an unusable --url and a --ca-file that does not exist or holds no certificate, and ignores --arrival and
--seed without --rate, and runs: every request a counted failure or a closed loop, where the contract wants bad
usage (exit 2) before any request (and before what the driver cannot do: with --http 2 it says unsupported, 3)."""

import ssl
import sys

from base import main
from clientbench.harness import options

options.url_problem = lambda url: None  # type: ignore[assignment]
options._check_ca_file = lambda p, path: None  # type: ignore[assignment]
options._context = lambda ca_file: ssl.create_default_context()  # type: ignore[assignment]
if "--rate" not in sys.argv:  # the open loop's flags, dropped when there is no open loop
    for flag in ("--arrival", "--seed"):
        if flag in sys.argv:
            i = sys.argv.index(flag)
            del sys.argv[i : i + 2]
main()

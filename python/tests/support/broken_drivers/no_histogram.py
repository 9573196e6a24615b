"""Says `unsupported: --record histogram` (exit 3): not a mode a driver may lack."""

import sys

from base import main, plugin
from clientbench import sdk

if sdk.parser(plugin).parse_args(sys.argv[1:]).record == "histogram":
    print("unsupported: --record histogram", file=sys.stderr)
    sys.exit(3)
main()

"""A correct driver without an open loop: bad usage is still exit 2; a valid --rate is exit 3 with one line
`unsupported: ...`."""

import sys

from base import main, plugin
from clientbench import sdk

if sdk.parser(plugin).parse_args(sys.argv[1:]).rate is not None:
    print("unsupported: an open loop (--rate)", file=sys.stderr)
    sys.exit(3)
main()

"""Without an open loop, and says so wrongly: exit 3 with a free-form message instead of `unsupported: ...`."""

import sys

from base import main, plugin
from clientbench import sdk

if sdk.parser(plugin).parse_args(sys.argv[1:]).rate is not None:
    print("sorry,\nno open loop here", file=sys.stderr)
    sys.exit(3)
main()

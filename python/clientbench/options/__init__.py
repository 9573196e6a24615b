"""The options layer, beside the Workload (workload.py): every check of the command line's values and every rule
between its flags, so that a command gets typed options it can trust.

- values.py: the value types (numbers and their ranges, sizes, rates, paths, --network, a list's points)
- workload.py: the workload's flags resolved once into a Workload, and a sweep's points checked against it
- testbed.py: where the requests go (`Options`: --target, --tls, --hosts, --pin, ...), checked together, and what
  the workload asks of them (`check_together`)
- settings.py: the settings of soak, cost and profile, and the rules of serve's, report's and compare's flags
- rows.py: the one row selection every command's -c goes through (names, globs, --all, the rows from outside)

The Workload keeps its own limits, the driver contract's (workload.py): a Workload made anywhere (a flag, a sweep
point, a row's fixed workers) is checked against them when it is made. The parsing layer (cli.py, arguments.py and
each command's `from_args`) reads argparse's Namespace and calls these; no Namespace goes further.
"""

from __future__ import annotations

from .settings import MEASURES, UNSET, CostSettings, ProfileSettings, SoakSettings
from .testbed import Options, Pinning, check_together

__all__ = [
    "MEASURES",
    "UNSET",
    "CostSettings",
    "Options",
    "Pinning",
    "ProfileSettings",
    "SoakSettings",
    "check_together",
]

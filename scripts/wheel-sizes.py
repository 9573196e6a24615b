"""The wheels of a folder (default dist/) and their sizes, as a Markdown table: `make dist` writes it to
dist/sizes.md; results/reference/wheel-sizes/sizes.md is the copy docs/install.md quotes (python/tests checks the wheels
of dist/ against it)."""

from __future__ import annotations

import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    folder = Path(argv[0] if argv else "dist")
    wheels = sorted(w for w in folder.glob("*.whl"))
    if not wheels:
        print(f"wheel-sizes: no wheel in {folder}", file=sys.stderr)
        return 2
    print("| Wheel | Size (MB) |")
    print("| :--- | ---: |")
    for wheel in wheels:
        print(f"| {wheel.name} | {wheel.stat().st_size / 1e6:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

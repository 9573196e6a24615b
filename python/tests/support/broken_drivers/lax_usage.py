"""Takes an unusable --url and a --ca-file that does not exist, and runs: every request a counted failure, where
the contract wants bad usage (exit 2) before any request."""

import ssl

from base import main
from clientbench.harness import options

options._check_url = lambda p, url: None  # type: ignore[assignment]
options._context = lambda ca_file: ssl.create_default_context()  # type: ignore[assignment]
main()

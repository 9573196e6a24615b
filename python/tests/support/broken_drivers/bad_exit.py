"""Exits 1 after printing its document, and 1 (not 2) on bad usage."""

from base import main

main(exit_status=1, usage_status=1)

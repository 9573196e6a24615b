"""Nothing broken: stdlib_plugin's driver as the broken ones run it."""

from base import main

main()

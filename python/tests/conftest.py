"""python/tests: the fixtures shared by the three suites live in support/ (this directory is on sys.path)."""

pytest_plugins = ("support.fixtures",)

"""clientbench: how much does an HTTP client cost, and what does the GIL do to it?"""

__version__ = "0.1.0"

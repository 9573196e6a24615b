"""Readings and verdicts computed from the model, running nothing and writing nothing: the GIL report's reading
(gil.py), sustained open-loop rates (rates.py), the rule that flags a change between two runs (compare.py),
and the cost counts read from valgrind's and strace's output (cost.py)."""

"""The runner's side of a measurement: the testbed (results folder, server, signals, progress), the plan of
rows and repeats, one driver process, the open-loop rate ladder, and the children the runner owns (the
server, toxiproxy), each stopped on every path."""

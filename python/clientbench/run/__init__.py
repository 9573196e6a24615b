"""Running clients: the client registry, the server, the driver processes, the testbed around them."""

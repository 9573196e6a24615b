"""How long a stop-the-world pause waits for a thread that stays attached to the interpreter.

    python -m clientbench.probes.gc_pause --url URL_OF_A_SLOW_RESPONSE [--repeat 5] [--ca-file PATH | --insecure]

One thread makes a slow request through beast_client (e.g. GET /delay/300) with the GIL held or released;
meanwhile the main thread times `gc.collect()`. On a free-threaded build a collection stops the world: it
waits for every thread that is attached to the interpreter, and a C call that holds the GIL (stays
attached) for 300 ms delays it by up to that long. Prints one JSON line: the median pause in ms for
`baseline` (no request in flight), `held` and `released`, and the interpreter.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import threading
import time

from ..harness import add_tls_options, interpreter, verify


def pause_ms(url: str, release_gil: bool | None, trust: bool | str = True) -> float:
    """gc.collect()'s duration in ms while another thread is inside a request (None: no request)."""
    import beast_client

    started = threading.Event()
    thread = None
    if release_gil is not None:
        client = beast_client.Client(timeout=10, verify=trust)

        def request() -> None:
            started.set()
            client.get(url, release_gil=release_gil)

        thread = threading.Thread(target=request)
        thread.start()
        started.wait()
        time.sleep(0.05)  # the request is on the wire, the thread inside the C call
    t0 = time.perf_counter()
    gc.collect()
    elapsed = (time.perf_counter() - t0) * 1e3
    if thread is not None:
        thread.join()
        client.close()
    return elapsed


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", required=True, help="a slow response, e.g. http://127.0.0.1:PORT/delay/300")
    p.add_argument("--repeat", type=int, default=5, help="measurements of each case; the median is printed")
    add_tls_options(p)
    args = p.parse_args(argv)
    trust = verify(args)
    out: dict[str, object] = {}
    for case, release in (("baseline", None), ("held", False), ("released", True)):
        out[f"{case}_ms"] = round(statistics.median(pause_ms(args.url, release, trust) for _ in range(args.repeat)), 3)
    out["python"] = interpreter()
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`clientbench soak`: a million requests through each binding and each native client, bounded in time.

Each target is a subprocess that loops W workers over one client each without storing samples, and prints
one JSON line: requests, failures, RSS after warm-up and at the end. A target passes with all requests done,
0 failures and RSS growth after warm-up under the limit."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from typing import Any, Sequence

from rich.table import Table

from .paths import SetupError, beast_soak, reqwest_soak, require
from .runner import write_atomic
from .session import Session, link_latest
from .server import child_preexec

TARGETS = {
    "py-beast": lambda: [sys.executable, "-m", "clientbench.drivers.soak_binding", "--client", "beast"],
    "py-reqwest": lambda: [sys.executable, "-m", "clientbench.drivers.soak_binding", "--client", "reqwest"],
    "py-reqwest-async": lambda: [sys.executable, "-m", "clientbench.drivers.soak_binding",
                                 "--client", "reqwest-async"],
    "cpp-beast": lambda: [str(require(beast_soak(), "C++ soak executable"))],
    "rust-reqwest": lambda: [str(require(reqwest_soak(), "Rust soak executable"))],
}


def soak(args: argparse.Namespace, argv: Sequence[str]) -> int:
    names = list(TARGETS) if not args.clients else [n.strip() for c in args.clients for n in c.split(",")]
    unknown = [n for n in names if n not in TARGETS]
    if unknown:
        raise SetupError(f"unknown soak target(s) {', '.join(unknown)}; known: {', '.join(TARGETS)}")
    limit_mib = args.max_rss_growth
    results: list[dict[str, Any]] = []
    session = Session(args, argv, kind="soak")
    with session:
        for name in names:
            cmd = [*TARGETS[name](), "--url", session.base_url + "/", "--requests", str(args.requests),
                   "--workers", str(args.workers), "--warmup", str(args.warmup),
                   "--max-seconds", f"{args.max_seconds:g}"]
            with session.console.status(f"soaking {name}: {args.requests} requests"):
                try:
                    out = subprocess.run(cmd, capture_output=True, text=True, timeout=args.max_seconds + 60,
                                         preexec_fn=child_preexec)
                    line = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""
                    doc = json.loads(line) if out.returncode == 0 and line else None
                    error = None if doc else f"exit {out.returncode}: {out.stderr.strip()[-300:]}"
                except subprocess.TimeoutExpired:
                    doc, error = None, "timed out"
                except ValueError as exc:
                    doc, error = None, f"invalid output: {exc}"
            res: dict[str, Any] = {"target": name, "error": error, **(doc or {})}
            if doc:
                growth = (doc["rss_end_kib"] - (doc["rss_warm_kib"] or doc["rss_end_kib"])) / 1024
                res["rss_growth_mib"] = round(growth, 2)
                res["passed"] = (doc["failures"] == 0 and doc["requests"] >= args.requests
                                 and growth < limit_mib)
            else:
                res["passed"] = False
            results.append(res)
            session.console.print(f"  {name:18} {'[green]ok[/]' if res['passed'] else '[red]FAILED[/]'} "
                                  + (json.dumps(doc) if doc else str(error)))
    table = Table(title=f"soak: {args.requests} requests x target, {args.workers} workers, "
                        f"RSS growth limit {limit_mib:g} MiB", header_style="bold")
    for col in ("target", "requests", "failures", "RSS warm (MiB)", "RSS end (MiB)", "growth (MiB)",
                "time (s)", "req/s", "result"):
        table.add_column(col, justify="left" if col in ("target", "result") else "right")
    md = ["| target | requests | failures | RSS warm (MiB) | RSS end (MiB) | growth (MiB) | time (s) | req/s | result |",
          "| :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | :--- |"]
    for r in results:
        if r.get("requests") is not None:
            cells = [r["target"], str(r["requests"]), str(r["failures"]),
                     f"{(r['rss_warm_kib'] or 0) / 1024:.1f}", f"{r['rss_end_kib'] / 1024:.1f}",
                     f"{r['rss_growth_mib']:.2f}", f"{r['elapsed_s']:.1f}",
                     f"{r['requests'] / r['elapsed_s']:.0f}" if r["elapsed_s"] else "-",
                     "pass" if r["passed"] else "FAIL"]
        else:
            cells = [r["target"], *["-"] * 7, f"FAIL: {r['error']}"]
        table.add_row(*cells)
        md.append("| " + " | ".join(cells) + " |")
    write_atomic(session.out / "soak.json", json.dumps({"command": session.argv, "results": results,
                                                       "environment": session.environment}, indent=2) + "\n")
    write_atomic(session.out / "soak.md", "\n".join(md) + "\n")
    link_latest(session.out)
    from rich.console import Console
    Console(width=None if sys.stdout.isatty() else 200).print(table)
    session.console.print(f"results: {session.out}")
    if session.exit_code is not None:
        return session.exit_code
    return 0 if all(r["passed"] for r in results) else 1

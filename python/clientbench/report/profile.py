"""profile.md, `clientbench profile`'s document: per row its flame graph, whose time the samples were (the
harness's, the client's) and the top frames by self time, all computed from the row's folded stacks
(analysis/profile.py); from profile.json's rows and those summaries."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.markup import escape

from ..analysis.profile import CLIENT, HARNESS, HARNESS_RGB, OUTSIDE, Summary
from .base import Block, Column, Heading, Image, Report, Table, Text

TITLE = "Where each row spends its time (clientbench profile)"
#: a frame name longer than this is cut in the tables (C++ templates run to thousands of characters)
FRAME_CHARS = 160
KINDS = {HARNESS: "harness", CLIENT: "client", "system": "system"}
FILES = {"folded": "the folded stacks", "speedscope": "py-spy's speedscope profile"}


def frame_cell(frame: str) -> str:
    """A frame as the table shows it: code, cut at FRAME_CHARS with an ellipsis."""
    shown = frame if len(frame) <= FRAME_CHARS else frame[: FRAME_CHARS - 1] + "…"
    return f"`{shown}`"


def top_table(summary: Summary) -> Table:
    columns = [Column("Self %"), Column("Kind", False), Column("Frame (the leaf of the samples)", False)]
    rows = [[f"{100 * summary.share(t.weight):.1f}", KINDS[t.kind], frame_cell(t.frame)] for t in summary.top]
    return Table(columns, rows)


def _sampled(row: Mapping[str, Any], summary: Summary) -> str:
    if row["unit"] == "ns":
        space = "user space and kernel" if summary.kernel else "user space only"
        return f"{summary.total / 1e6:,.1f} ms of CPU time sampled by perf at {row['rate_hz']} Hz ({space})"
    return f"{summary.total:,} samples by py-spy at {row['rate_hz']} Hz"


def shares(row: Mapping[str, Any], summary: Summary) -> str:
    s = summary.shares
    return (
        f"{_sampled(row, summary)}. The harness's own share: **{100 * s[HARNESS]:.1f}%** (its start-up and loop: "
        f"options, timing, recording, the document, and the clock, allocator and system calls it makes itself); "
        f"the client's: {100 * s[CLIENT]:.1f}% (its imports too); neither's: {100 * s[OUTSIDE]:.1f}% (the "
        "interpreter's or the loader's start-up and exit, threads in neither)."
    )


def method(document: Mapping[str, Any]) -> list[Text]:
    """How the rows were sampled and what the colours and shares mean: a paragraph each."""
    r, g, b = HARNESS_RGB
    paragraphs = [
        f"Each row's driver ran {document['requests']} requests per worker ({document['workers']} worker(s), "
        f"keep-alive GET {document['path']}, no warm-up) under a sampling profiler: py-spy (`record --native`: "
        "Python frames with the C, C++ and Rust frames of extensions and bindings) for the Python rows, perf (`record "
        "-e cpu-clock --call-graph dwarf`, folded by inferno-collapse-perf) for the native ones and any other "
        "program. The whole process is sampled: start-up and exit are in the graphs too.",
        f"In the flame graphs the frames of clientbench's harness (python/clientbench/harness/, cpp-beast/harness/, "
        f"rust-reqwest/harness/) are blue (rgb({r},{g},{b})), the rest in the usual warm colours. A sample counts "
        "as the harness's when the innermost frame of its stack outside the kernel, the C and C++/Rust standard "
        "libraries and Python's standard library is the harness's (docs/profile.md).",
        "perf samples CPU time (a thread waiting for the server is not sampled); py-spy samples the threads it sees "
        "running, and its reading is approximate: stopping the process for each sample (which --native needs) can "
        "show a thread waiting in poll() for the server as running, so a Python row's wait for the answer can "
        "appear as poll and recv frames.",
    ]
    return [Text([p]) for p in paragraphs]


def document(doc: Mapping[str, Any], summaries: Mapping[str, Summary]) -> Report:
    """profile.md of a profile.json and the summaries of its rows' folded stacks (by row name; a row that was
    profiled but has none here says that its stacks are missing)."""
    blocks: list[Block] = [Heading(TITLE), *method(doc)]
    for row in doc["rows"]:
        blocks.append(Heading(f"{row['label']} (`{row['name']}`, {row['tool']})", 2))
        if row["status"] != "ok":
            blocks.append(Text([row["reason"] or row["status"]]))
            continue
        summary = summaries.get(row["name"])
        files = row["files"]
        if summary is None:
            blocks.append(Text([f"Its folded stacks ({files.get('folded', '-')}) are not in this folder."]))
            continue
        blocks.append(Image(f"flame graph of {row['label']}", files["svg"]))
        where = "; ".join(f"{FILES[k]} {v}" for k, v in files.items() if k in FILES)
        blocks.append(Text([shares(row, summary)]))
        if summary.harness:
            spent = ", ".join(f"{frame_cell(t.frame)} {100 * summary.share(t.weight):.1f}%" for t in summary.harness)
            blocks.append(Text([f"The harness's share, by the harness frame each sample was in: {spent}."]))
        blocks.append(Text([f"Files: {where} (speedscope.app opens both kinds)."]))
        blocks.append(top_table(summary))
    return Report("profile", blocks, document=dict(doc))


def overview(doc: Mapping[str, Any], summaries: Mapping[str, Summary]) -> Table:
    """One line per row for the terminal: its profiler, what was sampled, the harness's share, its top frame."""
    columns = [Column("Client", False), Column("Profiler", False), Column("Harness %"), Column("Top frame", False)]
    out = Table(columns, [], title=TITLE)
    for row in doc["rows"]:
        summary = summaries.get(row["name"])
        if row["status"] != "ok" or summary is None:
            out.rows.append([escape(row["name"]), row["tool"], "-", escape(row["reason"] or row["status"])])
            out.styles.append("red" if row["status"] == "failed" else "dim")
            continue
        top = summary.top[0].frame if summary.top else "-"
        shown = top if len(top) <= 70 else top[:69] + "…"
        # escaped: the terminal's tables read rich markup, and `_[k]` would be a style
        out.rows.append([escape(row["name"]), row["tool"], f"{100 * summary.shares[HARNESS]:.1f}", escape(shown)])
        out.styles.append(None)
    return out

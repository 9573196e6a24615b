"""`clientbench profile`: the folded stacks read right (each frame's kind, whose time a sample was, the top frames
by self time, py-spy's speedscope file folded), the command's bad input as one-line errors, and real profiles: a
Python row (py-requests) and a plugin row under py-spy, the C++ Beast row and a --driver program under perf,
against the axum server. Their SVGs are SVG, their folded stacks hold the client's own frames and the harness's,
profile.md's top frames are the folded stacks' own leaves, and report.html (written by the command, and by
`clientbench report` from the folders read back) embeds every flame graph, which draws in a real browser."""

from __future__ import annotations

import base64
import json
import os
import re
import sys
import sysconfig
from pathlib import Path

import pytest
from clientbench import cli
from clientbench.analysis.profile import (
    CLIENT,
    HARNESS,
    OUTSIDE,
    SYSTEM,
    ProfileError,
    frame_kind,
    owner,
    palette_map,
    perf_script_line,
    read_folded,
    short_path,
    speedscope_folded,
    summarize,
)
from clientbench.commands.profile import find_tool, perf_failure
from clientbench.errors import SetupError
from clientbench.schema import validate_document
from support import REPO
from support.browser import chromium, skip_reason, visit

# -- reading the stacks ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("frame", "kind"),
    [
        ("harness::(anonymous namespace)::perform", HARNESS),  # the C++ harness
        ("reqwest_harness::run::request::{{closure}}", HARNESS),  # the Rust harness
        ("<reqwest_harness::run::ThreadClock as reqwest_harness::schedule::Clock>::now", HARNESS),
        ("SyncDriver._timed_loop (clientbench/harness/workers.py:149)", HARNESS),  # the Python harness
        ("main (clientbench/plugin.py:62)", HARNESS),
        ("beast_client::Client::Impl::roundtrip", CLIENT),
        ("tokio::runtime::task::harness::Harness<T,S>::poll", CLIENT),  # tokio's `harness` is not ours
        ("<reqwest_driver::Plugin as reqwest_harness::Client>::get", CLIENT),  # the driver's side of the trait
        ("{anonymous}::FloorClient::get", CLIENT),
        ("Session.request (requests/sessions.py:557)", CLIENT),
        ("request (clientbench/drivers/requests_driver.py:22)", CLIENT),  # a driver's adapter is the client's
        ("beast_client::Client::get (_core.cpython-311-x86_64-linux-gnu.so)", CLIENT),  # a binding under py-spy
        ("tcp_sendmsg_[k]", SYSTEM),
        ("clock_gettime@@GLIBC_2.17", SYSTEM),
        ("std::chrono::_V2::steady_clock::now", SYSTEM),
        ("<alloc::vec::Vec<T,A> as core::ops::drop::Drop>::drop", SYSTEM),
        ("[libstdc++.so.6.0.30]", SYSTEM),  # a frame the profiler could not name, by its library
        ("[libc.so.6]", SYSTEM),
        ("[libpython3.11.so.1.0]", SYSTEM),
        ("[?]", SYSTEM),
        ("[[vdso]]", SYSTEM),  # inferno's name of an unnamed frame in the vDSO
        ("[_core.cpython-311-x86_64-linux-gnu.so]", CLIENT),  # a stripped binding's code
        ("[libcrypto.so.3]", CLIENT),  # what the client brought: its TLS
        ("Condition.wait (python3.11/threading.py:320)", SYSTEM),  # Python's standard library
        ("_find_and_load (<frozen importlib._bootstrap>:1165)", SYSTEM),
        ("sock_recv_into (socketmodule.c:3631)", SYSTEM),
        ("poll (libc.so.6)", SYSTEM),
        ("Thread-1 (work)", SYSTEM),  # a thread's name, at the root
        ("beast-driver", SYSTEM),  # a process's name, at the root
    ],
)
def test_every_frame_has_its_kind(frame, kind):
    assert frame_kind(frame) == kind


def test_a_sample_is_whose_innermost_frame_outside_the_system_is():
    loop = ["beast-driver", "start_thread", "harness::(anonymous namespace)::run_worker"]
    assert owner([*loop, "harness::(anonymous namespace)::perform", "clock_gettime", "__vdso_clock_gettime_[k]"]) == (
        HARNESS  # the clock the harness reads is its time
    )
    assert owner([*loop, "beast_client::Client::get", "__libc_recv", "tcp_recvmsg_[k]"]) == CLIENT
    assert owner(["beast-driver", "_start", "_dl_start", "_dl_relocate_object"]) == OUTSIDE
    python = ["MainThread", "work (clientbench/harness/workers.py:196)", "wait (python3.11/threading.py:320)"]
    assert owner(python) == HARNESS  # the harness waiting at its barrier: the standard library is skipped
    binding = ["Thread-1 (work)", "SyncDriver._timed_loop (clientbench/harness/workers.py:149)", "[?]"]
    assert owner([*binding, "[_core.cpython-311-x86_64-linux-gnu.so]", "epoll_wait (libc.so.6)"]) == CLIENT


FOLDED = """\
drv;start_thread;harness::run;beast_client::get;recv_[k] 60
drv;start_thread;harness::run;beast_client::get;beast_client::parse 25
drv;start_thread;harness::run;clock_gettime 10
drv;_start;_dl_relocate_object 5
"""


def test_the_top_frames_are_the_leaves_by_weight_and_the_shares_add_up():
    s = summarize(read_folded(FOLDED))
    assert s.total == 100
    assert [(t.frame, t.kind, t.weight) for t in s.top] == [
        ("recv_[k]", SYSTEM, 60),
        ("beast_client::parse", CLIENT, 25),
        ("clock_gettime", SYSTEM, 10),
        ("_dl_relocate_object", SYSTEM, 5),
    ]
    assert s.shares == {HARNESS: 0.10, CLIENT: 0.85, OUTSIDE: 0.05}
    assert [(t.frame, t.weight) for t in s.harness] == [("harness::run", 10)]  # where the harness's share went
    assert s.kernel
    assert [t.frame for t in summarize(read_folded(FOLDED), top=2).top] == ["recv_[k]", "beast_client::parse"]


def test_bad_folded_stacks_are_an_error():
    with pytest.raises(ProfileError, match="line 2"):
        read_folded("a;b 3\nno weight here\n")
    with pytest.raises(ProfileError, match="no samples"):
        summarize(read_folded("\n"))


def test_perf_script_lines_keep_a_top_level_anonymous_namespace():
    # inferno-collapse-perf drops a frame whose name starts with "(": it must not see one
    line = "\t           1bdf1 (anonymous namespace)::BeastClient::get+0x51 (/build/beast-driver)"
    assert perf_script_line(line) == "\t           1bdf1 {anonymous}::BeastClient::get+0x51 (/build/beast-driver)"
    inner = "\t1dc33 harness::(anonymous namespace)::perform+0x93 (/build/beast-driver)"
    assert perf_script_line(inner) == inner


def test_the_palette_map_colours_the_frames_it_can():
    assert palette_map(["harness::run", "harness::Ptr::operator->"]) == "harness::run->rgb(70,130,220)\n"


def test_paths_are_shown_from_their_package(tmp_path):
    package = tmp_path / "src" / "pkg" / "sub"
    package.mkdir(parents=True)
    for d in (package, package.parent):
        (d / "__init__.py").write_text("")
    assert short_path(str(package / "mod.py")) == "pkg/sub/mod.py"
    assert short_path(str(tmp_path / "script.py")) == "script.py"
    assert short_path("/venv/lib/python3.11/site-packages/requests/sessions.py") == "requests/sessions.py"
    assert short_path("/opt/python/lib/python3.13t/threading.py") == "python3.13t/threading.py"
    assert short_path("/usr/lib/x86_64-linux-gnu/libc.so.6") == "libc.so.6"
    assert short_path("<frozen importlib._bootstrap>") == "<frozen importlib._bootstrap>"


def test_a_speedscope_file_is_folded_by_thread():
    doc = {
        "shared": {
            "frames": [
                {"name": 'process 41:"/bin/sh -c exec python x"', "file": "", "line": 0},
                {"name": "0x7f18dc9278ec", "file": "/usr/lib/libc.so.6", "line": 0},
                {"name": "work", "file": "/site-packages/clientbench/harness/workers.py", "line": 196},
                {"name": "Session.get", "file": "/site-packages/requests/sessions.py", "line": 655},
                {"name": "send", "file": "/usr/lib/libc.so.6", "line": 0},
                {"name": "0x7ffc1a2b3c4d", "file": "[vdso]", "line": 0},
            ]
        },
        "profiles": [
            {"type": "sampled", "name": 'Process 41 Thread 43 "Thread-1 (work)"', "samples": [[0, 1, 2, 3, 4, 5]] * 3},
            {"type": "sampled", "name": 'Process 41 Thread 41 ""', "samples": [[0, 1, 2]]},
        ],
    }
    worker = "[libc.so.6];work (clientbench/harness/workers.py:196)"
    assert speedscope_folded(doc) == {
        f"Thread-1 (work);{worker};Session.get (requests/sessions.py:655);send (libc.so.6);[vdso]": 3,
        f"python;{worker}": 1,
    }
    with pytest.raises(ProfileError):
        speedscope_folded({"profiles": []})


# -- the command line --------------------------------------------------------------------------------------------


def _error(capsys, argv: list[str]) -> str:
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def test_an_unknown_row_is_a_one_line_error(capsys, tmp_path):
    err = _error(capsys, ["profile", "-c", "no-such-client", "-o", str(tmp_path)])
    assert err.startswith("clientbench: error: no client matches 'no-such-client'")
    assert not list(tmp_path.iterdir())


def test_a_missing_profiler_is_a_one_line_error(capsys, tmp_path, monkeypatch):
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # no perf: the native row cannot be sampled
    err = _error(capsys, ["profile", "-c", "cpp-beast", "-o", str(tmp_path / "out")])
    assert err == (
        "clientbench: error: perf is not installed (it samples the native rows): "
        "apt-get install linux-perf (Debian; elsewhere the perf package)"
    )
    assert not (tmp_path / "out").exists()  # nothing started


PERF_REFUSES = """\
Error:
Access to performance monitoring and observability operations is limited.
Consider adjusting /proc/sys/kernel/perf_event_paranoid setting to open
"""


def test_a_perf_that_cannot_sample_here_is_a_one_line_error(capsys, tmp_path, monkeypatch):
    refusing = tmp_path / "bin" / "perf"  # a perf as a machine that forbids perf_event_open has it
    refusing.parent.mkdir()
    refusing.write_text(f"#!/bin/sh\ncat >&2 <<'EOF'\n{PERF_REFUSES}EOF\nexit 255\n")
    refusing.chmod(0o755)
    monkeypatch.setenv("PATH", f"{refusing.parent}:{os.environ['PATH']}")
    err = _error(capsys, ["profile", "-c", "cpp-beast", "-o", str(tmp_path / "out")])
    assert err.startswith(
        "clientbench: error: perf cannot sample here: Access to performance monitoring and observability "
        "operations is limited. (perf record -e cpu-clock failed; kernel.perf_event_paranoid is "
    )
    assert not (tmp_path / "out").exists()
    assert (
        perf_failure("", 1, None)
        == "perf cannot sample here: it exited with status 1 (perf record -e cpu-clock failed)"
    )


def test_a_rate_out_of_range_is_a_usage_error(capsys):
    for rate in ("0", "100001", "2.5"):
        with pytest.raises(SystemExit) as exc:
            cli.main(["profile", "-c", "cpp-beast", "--rate-hz", rate])
        assert exc.value.code == 2
        assert "--rate-hz" in capsys.readouterr().err


# -- real profiles -----------------------------------------------------------------------------------------------

PYSPY_ROWS = {"py-requests": "py-spy", "ext-requests": "py-spy"}
PERF_ROWS = {"cpp-beast": "perf", "ext-beast": "perf"}


def _profile(out: Path, argv: list[str]) -> Path:
    before = set(out.iterdir()) if out.exists() else set()
    assert cli.main(["profile", *argv, "-o", str(out)]) == 0
    (folder,) = [p for p in set(out.iterdir()) - before if p.is_dir() and not p.is_symlink()]
    return folder


@pytest.fixture(scope="module")
def profiled(tmp_path_factory) -> dict[str, Path]:
    """Two profile folders side by side: py-spy's rows (a shipped one, a --client plugin) at 500 Hz over 300
    requests, perf's (the shipped C++ row, the same program as a --driver) at 20 kHz over 2000 requests: a
    Beast request takes a few microseconds of CPU, so that many are needed for a few hundred samples."""
    base = tmp_path_factory.mktemp("profiles")
    plugin = "ext-requests=clientbench.drivers.requests_driver:SYNC"
    python = _profile(base, ["-c", "py-requests,ext-requests", "--client", plugin, "-n", "300", "--rate-hz", "500"])
    beast = f"ext-beast={REPO / 'build' / 'cpp-beast' / 'beast-driver'}"
    native = _profile(base, ["-c", "cpp-beast,ext-beast", "--driver", beast, "-n", "2000", "--rate-hz", "20000"])
    return {"py-spy": python, "perf": native}


def _rows(folder: Path) -> dict[str, dict]:
    doc = json.loads((folder / "profile.json").read_text())
    validate_document(doc)
    return {r["name"]: r for r in doc["rows"]}


def _folded(folder: Path, name: str) -> dict[str, int]:
    return read_folded((folder / "profile" / f"{name}.folded").read_text())


def _frames(stacks: dict[str, int]) -> set[str]:
    return {f for s in stacks for f in s.split(";")}


def test_each_row_has_an_svg_flame_graph_and_its_folded_stacks(profiled):
    for tool, folder in profiled.items():
        rows = _rows(folder)
        expected = PYSPY_ROWS if tool == "py-spy" else PERF_ROWS
        assert {n: r["tool"] for n, r in rows.items()} == expected
        for name, row in rows.items():
            assert row["status"] == "ok", row["reason"]
            svg = (folder / row["files"]["svg"]).read_text()
            assert svg.startswith("<?xml") and "<svg" in svg[:400] and svg.rstrip().endswith("</svg>")
            assert "rgb(70,130,220)" in svg  # the harness's frames, in blue
            assert sum(_folded(folder, name).values()) > 0
        assert not list((folder / "raw").glob("*.perf.data*"))  # perf's samples are in the folded stacks now


def test_the_python_rows_stacks_hold_requests_and_the_harness(profiled):
    folder = profiled["py-spy"]
    for name in PYSPY_ROWS:
        frames = _frames(_folded(folder, name))
        assert any(re.search(r"\(requests/sessions\.py:\d+\)$", f) for f in frames), name  # requests' own code
        assert any(f.startswith("SyncDriver._timed_loop (clientbench/harness/workers.py:") for f in frames), name
        assert any(frame_kind(f) == CLIENT for f in frames) and any(frame_kind(f) == HARNESS for f in frames)
        speedscope = json.loads((folder / "profile" / f"{name}.speedscope.json").read_text())
        assert speedscope_folded(speedscope) == _folded(folder, name)  # the folded stacks are py-spy's samples


def test_the_native_rows_stacks_hold_beast_and_the_harness(profiled):
    folder = profiled["perf"]
    for name in PERF_ROWS:
        frames = _frames(_folded(folder, name))
        assert any(f.startswith("beast_client::Client::") for f in frames), name
        assert "harness::(anonymous namespace)::run_worker" in frames, name
        assert not any(f.startswith("(") for f in frames)  # no frame lost to inferno's process-name rule


def _sections(markdown: str) -> dict[str, str]:
    """profile.md's row sections by the row's name (`## Label (`name`, tool)`)."""
    parts = re.split(r"^## .*\(`([^`]+)`, [a-z-]+\)$", markdown, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_profile_md_top_frames_are_the_leaves_of_the_folded_stacks(profiled):
    for folder in profiled.values():
        sections = _sections((folder / "profile.md").read_text())
        assert set(sections) == set(_rows(folder))
        for name, text in sections.items():
            stacks = _folded(folder, name)
            leaves: dict[str, int] = {}
            for stack, weight in stacks.items():
                leaf = stack.split(";")[-1]
                leaves[leaf] = leaves.get(leaf, 0) + weight
            total = sum(leaves.values())
            table = re.findall(r"^\| ([\d.]+) \| (\w+) \| `(.+)` \|$", text, flags=re.M)
            assert len(table) >= 3, text
            shown = []
            for percent, kind, frame in table:
                frame = frame.replace("\\|", "|")
                named = [f for f in leaves if f == frame or (frame.endswith("…") and f.startswith(frame[:-1]))]
                (weight,) = {
                    leaves[f]
                    for f in named
                    if abs(float(percent) - 100 * leaves[f] / total) <= 0.051 and kind == frame_kind(f)
                }
                shown.append(weight)
            assert shown == sorted(shown, reverse=True) and shown[0] == max(leaves.values())
            harness = sum(w for s, w in stacks.items() if owner(s.split(";")) == HARNESS)
            assert f"**{100 * harness / total:.1f}%**" in text


def _embedded(html: str) -> list[bytes]:
    return [base64.b64decode(m) for m in re.findall(r'<iframe [^>]*src="data:image/svg\+xml;base64,([^"]+)"', html)]


def test_report_html_embeds_every_flame_graph(profiled):
    for folder in profiled.values():
        svgs = {(folder / r["files"]["svg"]).read_bytes() for r in _rows(folder).values()}
        assert set(_embedded((folder / "report.html").read_text())) == svgs


def test_the_report_of_the_folders_read_back_shows_them_all(profiled, tmp_path):
    parent = profiled["perf"].parent  # both runs' folders are below it
    out = tmp_path / "both.html"
    assert cli.main(["report", str(parent), "-o", str(out)]) == 0
    html = out.read_text()
    svgs = {(f / r["files"]["svg"]).read_bytes() for f in profiled.values() for r in _rows(f).values()}
    assert set(_embedded(html)) == svgs and len(svgs) == 4
    for folder in profiled.values():  # the same top frames as the command's own page
        own = (folder / "report.html").read_text()
        for cell in re.findall(r"<code>[^<]+</code>", own):
            assert cell in html


def test_the_flame_graphs_draw_in_a_browser(profiled, tmp_path):
    if skip_reason():
        pytest.skip(skip_reason() or "")
    with chromium(tmp_path / "chromium") as context:
        v = visit(context, profiled["perf"] / "report.html", ready="figure.flame iframe")
        frames = [f for f in v.page.frames if f.url.startswith("data:image/svg+xml")]
        assert len(frames) == len(PERF_ROWS)
        for frame in frames:
            frame.wait_for_selector("#frames g", state="attached", timeout=60_000)
            assert frame.locator('rect[fill="rgb(70,130,220)"]').count() > 0  # the harness, in blue
        assert v.console_errors == [] and v.outside == []


def test_a_row_its_profiler_cannot_sample_fails_saying_why(tmp_path, capsys):
    # py-spy finds no Python in the C++ driver: the row fails with py-spy's words, the command exits 1
    assert cli.main(["profile", "-c", "cpp-beast", "--profiler", "py-spy", "-n", "50", "-o", str(tmp_path)]) == 1
    (folder,) = [p for p in tmp_path.iterdir() if not p.is_symlink()]
    (row,) = _rows(folder).values()
    assert row["status"] == "failed" and row["files"] == {}
    assert row["reason"].startswith("py-spy: No python processes found in process ")
    assert not list((folder / "profile").iterdir())  # no file of a row without a profile
    assert row["reason"] in (folder / "profile.md").read_text()


def test_the_tools_are_found_where_the_project_puts_them_off_path(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert Path(find_tool("py-spy")).parent in {Path(sysconfig.get_path("scripts")), Path(sys.executable).parent}
    assert Path(find_tool("inferno-flamegraph")) == REPO / "build" / "bin" / "inferno-flamegraph"
    with pytest.raises(SetupError, match="^perf is not installed"):
        find_tool("perf")

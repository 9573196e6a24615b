"""`clientbench check-driver`, the contract's conformance suite: every shipped driver passes it (the native
ones, each Python row incl. the bindings, and a plugin on http.client); deliberately broken drivers
(support/broken_drivers/) fail it, and the output names the check they fail; the command's own usage."""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from clientbench import contract
from clientbench.cli import main
from clientbench.conformance import checks
from clientbench.conformance.checks import FAIL, NEW, PASS, SKIP, Outcome, Servers, Suite, check
from clientbench.conformance.faults import RESET_SENT, TRUNCATED_SENT, FaultServer
from clientbench.conformance.suite import versioned
from clientbench.execution.server import Server
from clientbench.registry.external import program_spec
from clientbench.registry.shipped import CLIENTS
from clientbench.registry.spec import ClientSpec
from support.conformance import checked, installed
from support.pools import pool_race
from support.streams import STREAM_CHECKS, unstreamed

ROOT = Path(__file__).resolve().parents[2]
BROKEN = Path(__file__).resolve().parent / "support" / "broken_drivers"
#: how many checks check-driver makes (docs/bring-your-own-client.md's table)
CHECKS = 48
#: what a shipped row's library cannot do, by library and check, and why (docs/peers.md): these checks fail or
#: are unsupported for its rows, every other one passes
KNOWN: dict[str, dict[str, str]] = {
    "httpr": {
        # its exceptions keep reqwest's top-level message only and drop the cause (httpr 0.7.8)
        "fault: untrusted CA": "an untrusted certificate raises the ConnectError a refused connection raises",
        "fault: reset mid-body": "a reset mid-body raises DecodingError ('error decoding response body')",
        "fault: truncated body": "a body cut short raises DecodingError ('error decoding response body')",
    },
}


# session-wide: conftest.py spreads this module's long tests through the run, and a module fixture would
# start its four servers again each time a worker came back to the module
@pytest.fixture(scope="session")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}/"
    tls = tmp_path_factory.mktemp("check-tls")
    with Server() as http, Server() as counting, Server(tls=True, tls_dir=tls) as https, FaultServer() as faults:
        yield Servers(http, counting, https, faults, closed, row_timeout_s=60)


# the peers' loop variants but two (support/conformance.py)
SHIPPED = [pytest.param(s, id=s.name) for s in CLIENTS if installed(s) and checked(s)]


def _script(name: str) -> ClientSpec:
    return program_spec(name, [sys.executable, str(BROKEN / f"{name}.py")])


def _by_check(outcomes: list[Outcome]) -> dict[str, Outcome]:
    return {o.check: o for o in outcomes}


@pytest.mark.long(15)
@pytest.mark.timeout(300)
@pytest.mark.parametrize("spec", SHIPPED)
def test_every_shipped_driver_passes(spec: ClientSpec, bed: Servers) -> None:
    outcomes = check(spec, bed, jobs=2)
    assert len(outcomes) == CHECKS
    race = pool_race(spec)  # check-driver is right to fail them then; the one check they may fail
    library = spec.client.library.split("+", 1)[0]
    known = KNOWN.get(library, {})
    may_skip = _unstreamed(spec)
    failed = [
        f"{o.check}: {o.why}"
        for o in outcomes
        if o.status != PASS
        and not (race and o.check == "connections: keep-alive" and "expected 2" in o.why)
        and not any(o.check.startswith(k) for k in known)
        and not (o.check.startswith(may_skip) and _unsupported(o))
    ]
    # none fails, and every one is supported (uploads, streams, targets, the open loop) but the streamed directions
    # UNSTREAMED names
    assert not failed, failed
    # and what a library cannot do still fails, or is unsupported: when it starts to work, the entry goes
    assert all(any(o.check.startswith(k) and o.status != PASS for o in outcomes) for k in known), known
    assert all(any(o.check.startswith(c) and _unsupported(o) for o in outcomes) for c in may_skip), may_skip


def _unstreamed(spec: ClientSpec) -> tuple[str, ...]:
    """The stream checks a shipped Python row may find unsupported (support/streams.py's UNSTREAMED)."""
    return tuple(check for direction in unstreamed(spec) for check in STREAM_CHECKS[direction])


def _unsupported(o: Outcome) -> bool:
    """Skipped because the driver said `unsupported: --upload stream ...` (exit 3), not for a refused flag."""
    return o.status == SKIP and any(f"unsupported: --{d} stream" in o.why for d in ("upload", "download"))


def test_the_base_of_the_broken_drivers_passes(bed: Servers) -> None:
    outcomes = check(_script("good"), bed, jobs=2)
    assert [f"{o.check}: {o.why}" for o in outcomes if o.status != PASS] == []


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "script, failing",
    [
        ("wrong_count", {"valid document", "samples"}),
        ("dropped_failures", {"fault: status 500", "fault: reset mid-body", "upload: a wrong answer counted"}),
        ("wrong_class", {"fault: stall past --timeout 1", "fault: truncated body", "fault: untrusted CA"}),
        ("bad_exit", {"exit status 0", "usage: --rate 0", "usage: an unknown flag"}),
        ("invalid_json", {"valid document", "fault: status 500", "open loop: --rate 200 --requests 4"}),
    ],
)
def test_a_broken_driver_fails_the_check_it_breaks(script: str, failing: set[str], bed: Servers) -> None:
    outcomes = _by_check(check(_script(script), bed, jobs=2))
    assert {name for name in failing if outcomes[name].status == FAIL} == failing, {
        name: outcomes[name].why for name in failing
    }
    if script in ("wrong_class", "dropped_failures"):  # what it does not break still passes
        assert outcomes["samples"].status == outcomes["body integrity: GET /bytes/100000"].status == PASS
        assert outcomes["fault: connection refused"].status == FAIL
    if script == "wrong_class":
        assert outcomes["fault: status 500"].status == PASS
        assert "expected 'TimeoutError'" in outcomes["fault: stall past --timeout 1"].why


def test_the_wrong_count_is_named(bed: Servers) -> None:
    outcomes = _by_check(check(_script("wrong_count"), bed, jobs=2))
    assert "requests 4 (asked 5)" in outcomes["valid document"].why
    assert outcomes["usage: --rate 0"].status == PASS


def test_unsupported_without_its_line_fails(bed: Servers) -> None:
    outcomes = _by_check(check(_script("unsupported_badly"), bed, jobs=2))
    assert outcomes["open loop: --rate 200 --requests 4"].status == FAIL
    assert "exit 3 without one line 'unsupported: ...'" in outcomes["open loop: --rate 200 --requests 4"].why


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "script, group, failing",
    [
        # docs/raw-format.md's rules, each broken by one driver that keeps the others
        ("no_histogram", checks.new_connections, {"connections: --connection new", "--record histogram"}),
        ("histogram_of_all", checks.histogram_failures, {"--record histogram: failures left out"}),
        (
            "old_schedule",
            checks.open_loop,
            {"open loop: --rate 200 --requests 4", "open loop: --arrival poisson --seed 7"},
        ),
        ("late_by_start", checks.open_loop, {"open loop: late starts"}),
        ("no_client_python", checks.closed_loop, {"document: client.python"}),
        (
            "lax_usage",
            checks.usage_errors,
            {
                "usage: --url not http(s)",
                "usage: --ca-file that does not exist",
                "usage: --ca-file without a certificate",
                "usage: --arrival without --rate",
                "usage: --seed without --rate",
                "usage: bad usage before what the driver cannot do",
            },
        ),
        ("per_read_timeout", checks.faults, {"fault: a body trickling past --timeout 1"}),
        ("digest_first", checks.uploads, {"upload: a non-200 answer is its status"}),
    ],
)
def test_a_driver_that_breaks_a_rule_fails_that_check_only(
    script: str, group: checks.Check, failing: set[str], bed: Servers, tmp_path: Path
) -> None:
    outcomes = _by_check(list(group(Suite(_script(script), bed, tmp_path))))
    assert {name for name, o in outcomes.items() if o.status == FAIL} == failing, {
        name: o.why for name, o in outcomes.items()
    }
    if script == "no_histogram":  # exit 3 is not a way out of histograms
        assert "every driver records histograms" in outcomes["--record histogram"].why
    if script == "old_schedule":
        assert "seed" in outcomes["open loop: --rate 200 --requests 4"].why
        assert "not the contract's poisson schedule" in outcomes["open loop: --arrival poisson --seed 7"].why


#: a driver from outside, written from raw-format.md as it was at clientbench.raw/2 (support/raw2_driver.py)
RAW2 = Path(__file__).resolve().parent / "support" / "raw2_driver.py"
#: the checks of raw/3's rules it does not meet: each new in raw/3 (docs/raw-format.md, "Versions"), not failed
NEW_IN_RAW3 = {
    "usage: --workers 0",
    "usage: --timeout 0",
    "usage: --arrival without --rate",
    "usage: --seed without --rate",
    "usage: --url not http(s)",
    "usage: --ca-file that does not exist",
    "usage: --ca-file without a certificate",
    "usage: bad usage before what the driver cannot do",
    "upload: POST /echo, the body answered back",
    "upload: a non-200 answer is its status",
    "fault: a body trickling past --timeout 1",
    "open loop: --rate 200 --requests 4",
    "open loop: --arrival poisson --seed 7",
    "stream: --upload stream, 1048576 bytes to /upload",
    "stream: --download stream, GET /bytes/1048576",
    "stream: both ways, POST /echo 1048576 bytes",
    "stream: a wrong answer read in chunks counted",
    "targets: each worker cycles through the file",
}
#: and of raw/4's (it refuses --phases as an unknown flag)
NEW_IN_RAW4 = {"phases: --phases accepted, its sums consistent"}


@pytest.mark.long(30)
@pytest.mark.timeout(600)
def test_a_raw_2_driver_is_held_to_raw_2s_rules_and_told_what_raw_3_added(capsys: pytest.CaptureFixture[str]) -> None:
    """A driver written from the page as it was at raw/2 passes raw/2's rules; check-driver says which version it
    checks, that the driver declares raw/2, and which checks are of rules raw/3 added (each in the page's changelog)."""
    code = main(["check-driver", "--jobs", "2", "--", sys.executable, str(RAW2)])
    lines = capsys.readouterr().out.splitlines()
    assert code == 0, "\n".join(lines)
    assert lines[0] == f"check-driver: the driver contract {contract.schema_id()} (docs/raw-format.md)"
    shown = [ln for ln in lines if ln.startswith("  ")]
    assert len(shown) == CHECKS and not [ln for ln in shown if ln.startswith(("  FAIL", "  skip"))], shown
    new = {name for name in NEW_IN_RAW3 if any(ln.startswith(f"  new   {name}: new in raw/3: ") for ln in shown)}
    newer = {name for name in NEW_IN_RAW4 if any(ln.startswith(f"  new   {name}: new in raw/4: ") for ln in shown)}
    later = len(NEW_IN_RAW3) + len(NEW_IN_RAW4)
    assert new == NEW_IN_RAW3 and newer == NEW_IN_RAW4 and sum(ln.startswith("  new ") for ln in shown) == later, shown
    assert lines[-2] == (
        f"driver: {CHECKS - later} passed, 0 failed, 0 not supported, {later} new in {contract.schema_id()}"
    )
    assert lines[-1].startswith("driver: its documents declare clientbench.raw/2: checked by that version's rules")
    versions = " ".join((ROOT / "docs" / "raw-format.md").read_text().split("## Versions", 1)[1].split())
    assert [name for name in NEW_IN_RAW3 | NEW_IN_RAW4 if f"`{name}`" not in versions] == []


def test_a_rule_newer_than_the_declared_version_is_new_not_failed() -> None:
    failed = Outcome("usage: --workers 0", FAIL, "exit status 0, expected 2", since=3)
    assert versioned(failed, 2) == Outcome("usage: --workers 0", NEW, "new in raw/3: exit status 0, expected 2", 3)
    assert versioned(failed, 3) == failed and versioned(failed, None) == failed
    assert versioned(Outcome("x", FAIL, "y", since=2), 2).status == FAIL
    assert versioned(Outcome("x", PASS, "y", since=3), 2).status == PASS


def test_an_open_loop_refused_is_not_supported_not_failed(bed: Servers) -> None:
    outcomes = _by_check(check(_script("no_open_loop"), bed, jobs=2))
    assert outcomes["open loop: --rate 200 --requests 4"].status == SKIP
    assert outcomes["open loop: --rate 200 --requests 4"].why == "unsupported: an open loop (--rate)"
    assert [o.check for o in outcomes.values() if o.status == FAIL] == []


# -- the command ---------------------------------------------------------------------------------------


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "clientbench", *argv], capture_output=True, text=True, timeout=600, check=False
    )


@pytest.mark.long(30)
@pytest.mark.timeout(600)
def test_the_command_prints_one_line_per_check_and_fails_on_a_failure() -> None:
    good = _cli("check-driver", "--", sys.executable, str(BROKEN / "no_open_loop.py"))
    assert good.returncode == 0, good.stdout + good.stderr
    lines = good.stdout.splitlines()
    assert lines[0] == f"check-driver: the driver contract {contract.schema_id()} (docs/raw-format.md)"
    assert lines[1].startswith("driver: ") and lines[-1] == f"driver: {CHECKS - 4} passed, 0 failed, 4 not supported"
    shown = [ln for ln in lines if ln.startswith("  ")]
    assert len(shown) == CHECKS and all(ln.startswith(("  pass  ", "  skip  ")) for ln in shown), shown
    assert "  skip  open loop: --duration 0.5: not supported: no open loop" in shown

    bad = _cli("check-driver", "--driver", "broken=" + f"{sys.executable} {BROKEN / 'dropped_failures.py'}")
    assert bad.returncode == 1
    assert any(
        ln.startswith("  FAIL  fault: status 500: 0 of 4 requests counted as failed") for ln in bad.stdout.splitlines()
    )
    assert bad.stdout.splitlines()[-1] == "check-driver: broken failed the contract"


@pytest.mark.long(30)
def test_the_command_checks_a_plugin() -> None:
    proc = _cli("check-driver", "--client", "clientbench.drivers.requests_driver:SYNC", "--jobs", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == f"py-requests-driver: {CHECKS} passed, 0 failed, 0 not supported"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["check-driver"], "give the driver"),
        (["check-driver", "--client", "no-colon"], "is not MODULE:OBJECT"),
        (["check-driver", "-c", "no-such-row"], "no client matches 'no-such-row'"),
        (["check-driver", "--driver", "x"], "expected NAME='COMMAND ARGS'"),
    ],
)
def test_usage_errors_of_the_command(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


def test_a_program_that_does_not_exist_fails_every_check(
    bed: Servers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    outcomes = check(program_spec("nothing", ["/no/such/driver"]), bed)
    assert outcomes and all(o.status == FAIL for o in outcomes)
    assert "command not found: /no/such/driver" in outcomes[0].why
    assert list(tmp_path.iterdir()) == []  # the suite's folder of logs is gone with it


def test_every_check_has_its_own_name(bed: Servers) -> None:
    names = [o.check for o in check(program_spec("nothing", ["/no/such/driver"]), bed)]
    assert len(names) == len(set(names)) == CHECKS


# -- the fault server ----------------------------------------------------------------------------------


@pytest.mark.parametrize("path, sent, ending", [("/reset", RESET_SENT, "reset"), ("/truncated", TRUNCATED_SENT, "eof")])
def test_the_fault_server_cuts_bodies_short(path: str, sent: int, ending: str) -> None:
    with FaultServer() as f:
        host, port = f.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=5) as s:
            s.sendall(f"GET http://{host}:{port}{path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())  # absolute-form
            data = b""
            try:
                while chunk := s.recv(65536):
                    data += chunk
                got = "eof"
            except ConnectionResetError:
                got = "reset"
        head, _, body = data.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200 OK") and got == ending
        assert len(body) == sent or (got == "reset" and len(body) <= sent)

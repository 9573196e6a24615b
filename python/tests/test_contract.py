"""The driver contract declared once (schema/contract.json, contract.py): docs/raw-format.md's tables are written
from it, the runner's limits and the Python harness come from it, and every harness of the project, run as the
runner runs it (Rust, C++ and its floor, the Python harness, the Go and Node examples), meets each of its cases:
the value just outside a limit, and each rule, exits 2 with one line in the contract's wording; the value at the
limit is accepted. A limit changed in the contract fails every language that still says the old one."""

from __future__ import annotations

import json
import math
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from clientbench import contract
from clientbench.registry.shipped import CLIENTS
from clientbench.workload import Workload, WorkloadError

ROOT = Path(__file__).resolve().parents[2]
RAW_FORMAT = ROOT / "docs" / "raw-format.md"
NODE_DEPS = ROOT / "examples" / "node-fetch" / "node_modules" / ".package-lock.json"
#: every harness, by the row (or example) that runs it
HARNESSES = ("rust-reqwest", "cpp-beast", "cpp-floor", "py-floor", "go-nethttp", "node-fetch")


def _command(name: str) -> list[str]:
    if name == "go-nethttp":
        built = ROOT / "build" / "bin" / "go-nethttp-driver"
        if not built.exists():
            pytest.fail("build/bin/go-nethttp-driver is missing: `make examples` builds it")
        return [str(built)]
    if name == "node-fetch":
        if not NODE_DEPS.exists():
            pytest.fail("examples/node-fetch/node_modules is missing: `make examples` installs it")
        return ["node", str(ROOT / "examples" / "node-fetch" / "driver.mjs")]
    spec = next(s for s in CLIENTS if s.name == name)
    return spec.argv()  # Unavailable (a SetupError) names the make target that builds it


# -- the declaration and what comes from it ---------------------------------------------------------------


def test_the_docs_tables_are_the_contracts() -> None:
    page = RAW_FORMAT.read_text(encoding="utf-8")
    assert contract.rewrite(page) == page, "docs/raw-format.md: run `python -m clientbench.contract docs/raw-format.md`"
    for flag in contract.FLAGS:
        assert f"| `{flag}` |" in page


def test_the_contract_has_the_22_flags_of_the_synopsis_and_every_rule_names_one() -> None:
    page = RAW_FORMAT.read_text(encoding="utf-8")
    synopsis = page.split("```", 2)[1]
    assert set(re.findall(r"--[a-z-]+", synopsis)) == set(contract.FLAGS) and len(contract.FLAGS) == 22
    for r in contract.RULES.values():
        named = r.flag.split("|")
        assert any(f in r.message for f in named), r.id
        assert all(f in contract.FLAGS or f == "--no-such-flag" for f in named), r.id
        assert r.since <= contract.VERSION
    # a limit's wording says the limit: change one and its message changes with it
    for f in contract.FLAGS.values():
        for value in f.outside():
            text = f.rule(value)
            assert text.startswith(f"{f.flag}: ") and f"got '{value}'" in text
            if f.maximum is not None:
                assert f"{f.maximum:g}" in text or str(f.maximum) in text


def test_every_usage_case_names_its_flag_and_has_a_version() -> None:
    cases = contract.cases()
    names = [c.name for c in cases]
    assert len(names) == len(set(names))
    for case in cases:
        assert 1 <= case.since <= contract.VERSION
        if not case.accepted:
            assert any(f in (case.message or "") for f in case.flag.split("|")), case.name
    assert [c.check for c in contract.check_cases()] == [c.check for c in cases if c.check]


def test_the_runner_takes_the_limits_of_the_contract() -> None:
    """The Workload refuses what the drivers would refuse, at the contract's limits (workload.py's constants are the
    contract's; this ties its checks to them)."""
    fields = {"--workers": "workers", "--timeout": "timeout_s", "--rate": "rate", "--body-size": "body_size",
              "--chunk-size": "chunk_size", "--duration": "duration_s"}  # fmt: skip
    context = {"--body-size": {"method": "POST"}, "--chunk-size": {"upload": "stream", "method": "POST"},
               "--duration": {"rate": 10.0}}  # fmt: skip
    for name, field in fields.items():
        f = contract.flag(name)
        kind = int if f.type == "integer" else float
        for value in f.inside():
            Workload(**{**context.get(name, {}), field: kind(value)})
        for value in f.outside():
            with pytest.raises(WorkloadError, match=re.escape(name)):
                Workload(**{**context.get(name, {}), field: kind(value)})
    per_worker = contract.flag("--rate").per_worker_max
    assert per_worker is not None
    Workload(workers=2, rate=2 * per_worker)
    with pytest.raises(WorkloadError, match="--rate"):
        Workload(workers=2, rate=2 * per_worker + 1)


def test_the_python_harness_takes_every_case_in_the_contracts_wording(files: dict[str, str]) -> None:
    """Parsing alone (test_every_harness_meets_every_case runs it as a process too)."""
    import contextlib
    import io

    from clientbench.harness.options import parser

    for case in contract.cases():
        err = io.StringIO()
        code: object = 0
        try:
            with contextlib.redirect_stderr(err):
                parser("t").parse_args(contract.argv(case, files))
        except SystemExit as exc:
            code = exc.code
        line = err.getvalue()
        if case.accepted:
            assert code == 0, (case.name, line)
        else:
            assert code == 2 and line.count("\n") == 1, (case.name, line)
            assert contract.expected(case, files) in line, (case.name, line)


# -- every harness, each case ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The cases' files, {url} a port nobody listens on (an accepted case's requests fail at once: exit 0 all the
    same), {ca} a self-signed certificate and {crl} a CRL of it, alone, in PEM (openssl)."""
    folder = tmp_path_factory.mktemp("contract")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/"
    yield contract.write_files(folder, url, _pem(folder))


def _pem(folder: Path) -> dict[str, str]:
    ca, key, crl = folder / "ca.pem", folder / "ca.key", folder / "crl.pem"
    (folder / "index.txt").write_text("")
    (folder / "crlnumber").write_text("01\n")
    config = folder / "ca.cnf"
    config.write_text(
        "[ca]\ndefault_ca = x\n[x]\ndatabase = index.txt\ncrlnumber = crlnumber\ndefault_md = sha256\n"
        "default_crl_days = 2\n"
    )
    for argv in (
        ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", str(key),
         "-out", str(ca), "-subj", "/CN=contract test CA", "-days", "2"],
        ["ca", "-gencrl", "-config", str(config), "-keyfile", str(key), "-cert", str(ca), "-out", str(crl)],
    ):  # fmt: skip
        subprocess.run(["openssl", *argv], cwd=folder, check=True, capture_output=True, timeout=60)
    assert "BEGIN X509 CRL" in crl.read_text() and "CERTIFICATE" not in crl.read_text()
    return {"ca": str(ca), "crl": str(crl)}


def _run(name: str, args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*_command(name), *args], capture_output=True, text=True, timeout=120, check=False, stdin=subprocess.DEVNULL
    )


CASES = [pytest.param(h, c, id=f"{h}-{c.name}") for h in HARNESSES for c in contract.cases()]


@pytest.mark.parametrize("harness, case", CASES)
def test_every_harness_meets_every_case(harness: str, case: contract.Case, files: dict[str, str]) -> None:
    proc = _run(harness, contract.argv(case, files))
    lines = proc.stderr.splitlines()
    if case.accepted:
        assert proc.returncode == contract.EXIT_DOCUMENT, (case.name, proc.stderr[-500:])
        assert proc.stdout.startswith("{"), proc.stdout[:200]
        return
    assert proc.returncode == contract.EXIT_USAGE and proc.stdout == "", (proc.returncode, proc.stdout[:200])
    assert len(lines) == 1, proc.stderr
    assert ": error: " in lines[0] and contract.expected(case, files) in lines[0], lines[0]


@pytest.mark.parametrize("harness", HARNESSES)
def test_what_a_harness_cannot_do_is_exit_3_and_never_bad_usage(harness: str, files: dict[str, str]) -> None:
    """--http 3 over https://, a good command line: a driver without HTTP/3 answers exit 3, `unsupported: ...`; one
    with it runs (its requests fail: nobody listens)."""
    https = files["url"].replace("http://", "https://")
    proc = _run(harness, ["--url", https, "--http", "3", "--workers", "1", "--requests", "1", "--timeout", "1"])
    if proc.returncode == contract.EXIT_UNSUPPORTED:
        assert proc.stdout == "" and proc.stderr.startswith("unsupported: HTTP/3") and proc.stderr.count("\n") == 1
    else:
        assert proc.returncode == contract.EXIT_DOCUMENT, proc.stderr[-500:]


@pytest.mark.parametrize("harness", HARNESSES)
def test_every_harness_takes_phases_and_writes_them_only_when_asked(harness: str, files: dict[str, str]) -> None:
    """raw/4: --phases is accepted (nobody listens: every request fails, so no phases are summed) and a document
    without it has no phases keys."""
    args = ["--url", files["url"], "--workers", "2", "--requests", "2", "--timeout", "1"]
    for phases in (False, True):
        proc = _run(harness, [*args, *(["--phases"] if phases else [])])
        assert proc.returncode == contract.EXIT_DOCUMENT, proc.stderr[-500:]
        doc = json.loads(proc.stdout)
        assert doc["schema"] == contract.schema_id() == "clientbench.raw/4"
        keys = doc["client"].get("phases")
        if not phases:
            assert keys is None and all("phases" not in w for w in doc["workers"]), doc["client"]
        elif keys is not None:  # a client that records some: every worker sums each, over no successful request
            assert all(w["phases"] == {"count": 0, "latency_ns": 0, "sum_ns": dict.fromkeys(keys, 0)}
                       for w in doc["workers"]), doc["workers"]  # fmt: skip


#: a uniform schedule of one worker whose request 1 is due at 1,000,999,999 ns: before D = round(1.001e9 ns) =
#: 1,001,000,000, though 1.001 * 1e9 is 1,000,999,999.9999999 in binary64 (truncated, D would exclude it)
D_RATE = 1e9 / 1_000_999_999


@pytest.mark.parametrize("harness", HARNESSES)
def test_duration_is_whole_ns_rounded_as_the_schedule(harness: str, files: dict[str, str]) -> None:
    assert round((0 + 1 * 1) / D_RATE * 1e9) == 1_000_999_999 and math.floor(1.001 * 1e9) == 1_000_999_999
    args = ["--url", files["url"], "--workers", "1", "--timeout", "1", "--rate", repr(D_RATE), "--duration", "1.001"]
    proc = _run(harness, args)
    assert proc.returncode == 0, proc.stderr[-500:]
    worker = json.loads(proc.stdout)["workers"][0]
    assert worker["count"] + worker["missed"] == 2, worker


def test_check_driver_says_the_version_it_checks() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "clientbench", "check-driver", "--", "/no/such/driver"],
        capture_output=True, text=True, timeout=300, check=False, cwd=ROOT,
    )  # fmt: skip
    first = out.stdout.splitlines()[0]
    assert first == f"check-driver: the driver contract {contract.schema_id()} (docs/raw-format.md)"

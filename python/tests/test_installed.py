"""clientbench as users get it (#30): its distributions of dist/ (`make dist`; `make test` builds the x86-64 ones),
installed with pip into fresh venvs outside the checkout and run from an empty folder, with CLIENTBENCH_ROOT
unset and nothing on PYTHONPATH.

The first venv has what `pip install "clientbench[native,bindings]"` gives: the runner, clientbench-native and
both bindings, from dist/, and the runner's dependencies at python/requirements.txt's pins, from build/wheelhouse
(`make wheelhouse`), with no index and wheels only. There `clientbench run` runs every default row (ok, no
errors, ./results written), `clientbench gil` in short and `clientbench report` read what it wrote,
`clientbench check-driver` passes the Go example driver and a plugin written into the empty folder, and
`clientbench serve` serves a `clientbench run --target`. The second venv has the runner alone: run against that
server, the native and binding rows are unavailable and name the extra that brings them, and a row named with
-c that is not installed fails the run.

The venvs are made once per session, shared by the pytest-xdist workers under a lock. Each command runs in a
process group of its own, killed whatever happens, so that nothing a command started outlives it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from clientbench import __version__
from clientbench.environment.binaries import EXECUTABLES
from clientbench.registry.shipped import CLIENTS
from packaging.utils import parse_wheel_filename
from support.wheels import MAX_GLIBC_MINOR, auditwheel_platform, check_documented_sizes, manylinux_minor

REPO = Path(__file__).resolve().parents[2]
DIST = REPO / "dist"
WHEELHOUSE = REPO / "build" / "wheelhouse"
GO_DRIVER = REPO / "build" / "bin" / "go-nethttp-driver"
PINS = REPO / "python" / "requirements.txt"
DEFAULT_ROWS = [c.name for c in CLIENTS if c.default]
BINDING_ROWS = [c.name for c in CLIENTS if c.extra == "bindings"]
CORE_ROWS = [c.name for c in CLIENTS if c.extra == "core"]
DEFAULT_CORE_ROWS = [name for name in CORE_ROWS if name in DEFAULT_ROWS]
NATIVE_ROWS = [c.name for c in CLIENTS if c.extra == "native" and c.default]
SHORT = ["-n", "20", "-r", "1"]

#: a user's plugin, as docs/bring-your-own-client.md writes one (urllib3 comes with requests)
PLUGIN = """
import urllib3
from clientbench import sdk


def make_client(opts):
    tls = {"cert_reqs": "CERT_NONE"} if opts.insecure else {"ca_certs": opts.ca_file}
    return urllib3.PoolManager(maxsize=1, timeout=urllib3.Timeout(total=opts.timeout), retries=False, **tls)


def request(pool, url):
    r = pool.request("GET", url)
    return r.status, len(r.data)


def upload(pool, url, method, body):
    r = pool.request(method, url, body=body)
    return r.status, r.data


plugin = sdk.SyncClient("urllib3", make_client, request, upload, close=urllib3.PoolManager.clear)
"""

#: run by a venv's python: where each package comes from, its version, and what the runner finds
WHERE = r"""
import importlib, json, sys
from importlib import metadata
from clientbench.environment import binaries
out = {"prefix": sys.prefix, "checkout": str(binaries.checkout()), "dists": {}, "modules": {}, "found": {}}
for d in metadata.distributions():
    out["dists"][d.metadata["Name"].lower().replace("_", "-")] = d.version
for name in sys.argv[1:]:
    try:
        m = importlib.import_module(name)
    except ImportError:
        continue
    out["modules"][name] = [m.__file__, getattr(m, "__version__", None)]
for exe in binaries.EXECUTABLES:
    out["found"][exe] = str(binaries.find(exe))
print(json.dumps(out))
"""
MODULES = ["clientbench", "clientbench_native", "beast_client", "reqwest_client"]


@dataclass(frozen=True)
class Venv:
    root: Path

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    def env(self, home: Path, **extra: str) -> dict[str, str]:
        """A user's environment: the venv's bin/ first on PATH, no CLIENTBENCH_ROOT, no PYTHONPATH; wide lines,
        so that a message is not wrapped in the middle of a word."""
        return {"PATH": f"{self.root / 'bin'}:/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
                "COLUMNS": "250", "PYTHONUNBUFFERED": "1", **extra}  # fmt: skip


def _stop(proc: subprocess.Popen[str]) -> None:
    """The process and whatever it left in its group, killed and reaped."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=30)


def cli(venv: Venv, args: list[str], cwd: Path, timeout: float = 900, **env: str) -> tuple[int, str]:
    """`clientbench ARGS` from the venv, in cwd: its exit status and its output (stdout and stderr), one line
    per line with whitespace runs made one space."""
    proc = subprocess.Popen(
        [str(venv.root / "bin" / "clientbench"), *args], cwd=cwd, env=venv.env(cwd.parent / "home", **env),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        out, _ = proc.communicate(timeout=timeout)
    finally:
        _stop(proc)
    return proc.returncode, "\n".join(" ".join(line.split()) for line in out.splitlines())


def _wheels(pattern: str) -> list[Path]:
    found = sorted(DIST.glob(pattern))
    if not found:
        pytest.fail(f"no dist/{pattern}: run `make dist` (or `make native-wheel-x86_64 clientbench-dist`)")
    return found


def _installed(base: Path, name: str, requirement: str) -> Venv:
    """A venv with `requirement` installed from dist/ and the wheelhouse alone, made once under a lock."""
    root = base / name
    with open(base / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / ".complete").exists():
            shutil.rmtree(root, ignore_errors=True)
            subprocess.run([sys.executable, "-m", "venv", str(root)], check=True, capture_output=True, timeout=300)
            venv = Venv(root)
            done = subprocess.run(
                [str(venv.python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-cache-dir",
                 "--no-index", "--only-binary=:all:", "--find-links", str(DIST), "--find-links", str(WHEELHOUSE),
                 requirement],
                env=venv.env(base), capture_output=True, text=True, timeout=900,
            )  # fmt: skip
            assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
            (root / ".complete").touch()
    return Venv(root)


@pytest.fixture(scope="session")
def venvs_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the venvs go: outside the checkout, one folder for all the xdist workers of this session."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    base = base / "installed"
    base.mkdir(exist_ok=True)
    assert REPO not in base.resolve().parents
    if not WHEELHOUSE.is_dir():
        pytest.fail(f"no {WHEELHOUSE} (the runner's pinned dependencies): run `make wheelhouse`")
    _wheels(f"clientbench-{__version__}-py3-none-any.whl")
    _wheels(f"clientbench_native-{__version__}-*_x86_64.whl")
    return base


@pytest.fixture(scope="session")
def full(venvs_base: Path) -> Venv:
    return _installed(venvs_base, "full", "clientbench[native,bindings]")


@pytest.fixture(scope="session")
def bare(venvs_base: Path) -> Venv:
    return _installed(venvs_base, "bare", "clientbench")


@pytest.fixture()
def empty(tmp_path: Path) -> Path:
    """An empty folder outside the checkout, the user's current folder (its parent holds HOME)."""
    folder = tmp_path / "work"
    folder.mkdir()
    (tmp_path / "home").mkdir()
    assert REPO not in folder.resolve().parents
    return folder


@contextlib.contextmanager
def serving(venv: Venv, cwd: Path) -> Iterator[str]:
    """`clientbench serve --listen 127.0.0.1:0` from the venv: its URL, until it is stopped (SIGTERM, as a service
    manager would; then its whole group is killed)."""
    proc = subprocess.Popen(
        [str(venv.root / "bin" / "clientbench"), "serve", "--listen", "127.0.0.1:0"], cwd=cwd,
        env=venv.env(cwd.parent / "home"), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )  # fmt: skip
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        stdout = proc.stdout
        reader = threading.Thread(target=lambda: lines.extend(iter(stdout.readline, "")), daemon=True)
        reader.start()
        url = None
        for _ in range(600):  # 60 s
            found = next((m for line in list(lines) if (m := re.match(r"serving (http://[\d.]+:\d+) ", line))), None)
            if found or proc.poll() is not None:
                url = found[1] if found else None
                break
            reader.join(0.1)
        assert url, f"clientbench serve printed no URL: {lines}"
        yield url
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        reader.join(10)
        assert proc.returncode == 0 and "stopped" in (line.strip() for line in lines), lines
    finally:
        _stop(proc)


def _rows(results: Path) -> dict[str, dict[str, object]]:
    doc = json.loads((results / "results.json").read_text())
    return {r["client"]["name"]: r for r in doc["rows"]}


def _ok(row: dict[str, object], requests: int) -> bool:
    runs = row["runs"]
    assert isinstance(runs, list) and runs, row
    return row["status"] == "ok" and all(r["stats"]["errors"] == 0 and r["stats"]["requests"] == requests for r in runs)


def test_the_wheels_are_what_pip_installs_and_the_versions_agree(full: Venv, empty: Path) -> None:
    # the runner's wheel is pure; clientbench-native's is manylinux_2_28 (or older) x86-64, for any CPython 3
    (runner,) = _wheels(f"clientbench-{__version__}-py3-none-any.whl")
    (native,) = _wheels(f"clientbench_native-{__version__}-*_x86_64.whl")
    tags = parse_wheel_filename(native.name)[3]
    assert {(t.interpreter, t.abi) for t in tags} == {("py3", "none")}, native.name
    assert all(manylinux_minor(t.platform) <= MAX_GLIBC_MINOR for t in tags), native.name
    assert manylinux_minor(auditwheel_platform(native)) <= MAX_GLIBC_MINOR, native.name
    assert str(parse_wheel_filename(runner.name)[1]) == __version__

    out = subprocess.run(
        [str(full.python), "-c", WHERE, *MODULES], cwd=empty, env=full.env(empty.parent / "home"),
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    seen = json.loads(out.stdout)
    prefix = Path(seen["prefix"]).resolve()
    assert prefix == full.root.resolve() and seen["checkout"] == "None"  # an installed runner, not the checkout
    for module in MODULES:
        file, version = seen["modules"][module]
        assert prefix in Path(file).resolve().parents, (module, file)
        assert version == __version__, (module, version)
    for dist in ("clientbench", "clientbench-native", "beast-client", "reqwest-client"):
        assert seen["dists"][dist] == __version__, dist
    bin_dir = Path(seen["modules"]["clientbench_native"][0]).parent / "bin"
    assert seen["found"] == {exe: str(bin_dir / exe) for exe in EXECUTABLES}
    # the runner's dependencies at the pins of requirements.txt
    lines = (line.split("#", 1)[0].strip() for line in PINS.read_text().splitlines())
    pins = dict(line.split("==", 1) for line in lines if "==" in line)
    pinned = {name.lower(): pins[name] for name in pins if name.lower() in seen["dists"]}
    assert {"numpy", "rich", "matplotlib", "jsonschema", "plotly", "aiohttp", "requests"} <= set(pinned)
    assert {name: seen["dists"][name] for name in pinned} == pinned


def test_the_wheels_are_the_sizes_docs_install_gives() -> None:
    """The wheel sizes docs/install.md quotes (results/reference/wheel-sizes/sizes.md): each pure and x86-64 wheel of
    dist/ within 25% of its size there (the aarch64 ones: bindings/tests/test_wheels_aarch64.py, once their
    background build is done)."""
    assert check_documented_sizes(None) + check_documented_sizes("x86_64") == []


@pytest.mark.timeout(1800)
def test_the_installed_runner_runs_every_default_row_then_reads_its_results(full: Venv, empty: Path) -> None:
    code, out = cli(full, ["run", *SHORT], empty)
    assert code == 0, out[-4000:]
    run = (empty / "results" / "latest").resolve()
    assert run.parent == empty / "results"
    rows = _rows(run)
    assert list(rows) == DEFAULT_ROWS
    assert [name for name, row in rows.items() if not _ok(row, 10 * 20)] == [], out[-4000:]

    written = (run / "report.html").stat().st_mtime_ns
    code, out = cli(full, ["report", "results/latest"], empty)
    assert code == 0, out[-4000:]
    assert (run / "report.html").stat().st_mtime_ns > written

    # the GIL report's phases without toxiproxy, the open loop or the shared client
    gil = ["gil", "-n", "10", "-r", "1", "--rtt", "0", "--open-loop-duration", "0", "--no-shared-client"]
    code, out = cli(full, gil, empty)
    assert code == 0, out[-4000:]
    report = (empty / "results" / "latest").resolve()
    assert report != run and (report / "gil.md").is_file()
    phase = _rows(report)
    # the bindings' uvloop rows need uvloop, which [native,bindings] does not bring: unavailable, saying what does
    on_uvloop = {name for name in phase if name.endswith("-uvloop")}
    assert on_uvloop == {"py-beast-uvloop", "py-reqwest-uvloop"}, sorted(phase)
    assert all(
        phase[name]["status"] == "unavailable" and 'pip install "clientbench[bindings,peers]"' in phase[name]["reason"]
        for name in on_uvloop
    ), out[-4000:]
    assert phase and [n for n, row in phase.items() if n not in on_uvloop and not _ok(row, 10 * 10)] == [], out[-4000:]


@pytest.mark.timeout(1800)
def test_the_installed_check_driver_passes_a_go_driver_and_a_plugin_of_the_current_folder(
    full: Venv, empty: Path
) -> None:
    if not GO_DRIVER.is_file():
        pytest.fail(f"no {GO_DRIVER}: run `make examples`")
    code, out = cli(full, ["check-driver", "--", str(GO_DRIVER)], empty)
    assert code == 0, out[-4000:]

    (empty / "mybench.py").write_text(PLUGIN)
    code, out = cli(full, ["check-driver", "--client", "mybench:plugin"], empty, PYTHONPATH=str(empty))
    assert code == 0, out[-4000:]
    assert "py-mybench" in out


@pytest.mark.timeout(1200)
def test_the_installed_server_serves_a_run_from_elsewhere(full: Venv, empty: Path) -> None:
    with serving(full, empty) as url:
        code, out = cli(full, ["run", "--target", url, "-c", "py-*", *SHORT], empty)
    assert code == 0, out[-4000:]
    rows = _rows((empty / "results" / "latest").resolve())
    assert set(CORE_ROWS + BINDING_ROWS) <= set(rows)
    assert [name for name in CORE_ROWS + BINDING_ROWS if not _ok(rows[name], 10 * 20)] == [], out[-4000:]
    # the peers are no part of [native,bindings]: a peer's row runs when its library came with the runner's
    # dependencies (urllib3 with requests, httpx for the probe), else it is unavailable and says which extra brings it
    others = {name: row for name, row in rows.items() if name not in CORE_ROWS + BINDING_ROWS}
    assert "py-pyreqwest-sync" in others and "py-reqwest-uvloop" in others
    hinted = {name for name, row in others.items() if 'pip install "clientbench[' in str(row["reason"])}
    wrong = {
        name: (row["status"], row["reason"])
        for name, row in others.items()
        if not _ok(row, 10 * 20) and not (row["status"] == "unavailable" and name in hinted)
    }
    assert wrong == {}
    assert 'pip install "clientbench[peers]"' in str(rows["py-pyreqwest-sync"]["reason"])
    assert _ok(rows["py-httpx-sync"], 10 * 20)  # httpx is the runner's own dependency (the protocol probe)


@pytest.mark.timeout(1200)
def test_the_runner_alone_runs_the_python_rows_and_says_how_to_get_the_others(
    full: Venv, bare: Venv, empty: Path
) -> None:
    seen = subprocess.run(
        [str(bare.python), "-c", WHERE, *MODULES], cwd=empty, env=bare.env(empty.parent / "home"),
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert list(json.loads(seen.stdout)["modules"]) == ["clientbench"]  # no native package, no binding

    with serving(full, empty) as url:
        code, out = cli(bare, ["run", "--target", url, *SHORT], empty)
        assert code == 0, out[-4000:]
        rows = _rows((empty / "results" / "latest").resolve())
        assert list(rows) == DEFAULT_ROWS
        for names, extra in ((NATIVE_ROWS, "native"), (BINDING_ROWS, "bindings")):
            for name in names:
                assert rows[name]["status"] == "unavailable", (name, rows[name]["status"])
                assert f'pip install "clientbench[{extra}]"' in str(rows[name]["reason"]), rows[name]["reason"]
        assert all(_ok(rows[name], 10 * 20) for name in DEFAULT_CORE_ROWS), out[-4000:]

        code, out = cli(bare, ["run", "--target", url, "-c", "py-*", *SHORT], empty)
        assert code == 0, out[-4000:]
        rows = _rows((empty / "results" / "latest").resolve())
        assert all(rows[name]["status"] == "unavailable" for name in BINDING_ROWS)
        assert all(_ok(rows[name], 10 * 20) for name in CORE_ROWS), out[-4000:]

        # named exactly, a row that is not installed fails the run
        code, out = cli(bare, ["run", "--target", url, "-c", "cpp-beast", *SHORT], empty)
        assert code == 1 and "not installed here, though named with -c: cpp-beast" in out, out[-4000:]

    # without --target there is no server to start either: one line says so, and what brings it
    code, out = cli(bare, ["run", "-c", "cpp-beast", *SHORT], empty)
    assert code not in (0, None) and "not installed" in out and 'pip install "clientbench[native]"' in out, out

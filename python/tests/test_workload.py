"""The workload (workload.py): its defaults, the driver flags, JSON, and resolve() (options/workload.py:
--reference, explicit values win), also as each command's parsing resolves it (its from_args)."""

from __future__ import annotations

import dataclasses

import pytest
from clientbench import cli
from clientbench.commands import command
from clientbench.errors import SetupError
from clientbench.options.workload import resolve
from clientbench.workload import DEFAULT, OPEN, REFERENCE, SWEEP_RATE, Workload, WorkloadError

NOTHING_GIVEN = {f.name: None for f in dataclasses.fields(Workload)}


def resolved(argv: list[str]) -> Workload:
    """The workload a command line gives its command (the command's typed options)."""
    args = cli.build_parser().parse_args(argv)
    options = command(args.command).load().from_args(args, argv)
    workload: Workload = options.workload
    return workload


def test_defaults_and_the_reference_method():
    assert DEFAULT == Workload(
        workers=10, requests=100, warmup=10, timeout_s=30.0, path="/", connection="keep-alive", repeat=10, phases=True
    )
    assert "--phases" in DEFAULT.flags("http://h/") and "--phases" not in Workload().flags("http://h/")
    # the reference write-up: 10 x 100, one run, no warm-up; everything else as the defaults
    assert REFERENCE == DEFAULT.replace(repeat=1, warmup=0)


def test_workload_is_frozen_and_checks_the_connection():
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT.workers = 3  # type: ignore[misc]
    with pytest.raises(ValueError, match="connection"):
        Workload(connection="sometimes")
    changed = DEFAULT.replace(workers=3)
    assert changed.workers == 3 and DEFAULT.workers == 10 and changed.requests == DEFAULT.requests  # a new one


def test_flags_are_the_driver_contract():
    assert Workload(2, 3, 0, 1.5).flags("http://h/") == [
        "--url", "http://h/", "--workers", "2", "--requests", "3", "--warmup", "0", "--timeout", "1.5",
    ]  # fmt: skip
    new = Workload(2, 3, 0, 30.0, connection="new", repeat=4).flags("http://h/")
    assert new[new.index("--connection") + 1] == "new" and "--timeout" in new and "30" in new
    assert "--repeat" not in new  # repeats are the runner's business


def test_json_round_trip_and_results_1():
    wl = Workload(workers=3, requests=7, warmup=2, timeout_s=2.5, path="/bytes/9", connection="new", repeat=4)
    assert Workload.from_json(wl.to_json()) == wl
    old = wl.to_json()
    del old["connection"]  # results/1 did not record it: it was always keep-alive
    assert Workload.from_json(old) == wl.replace(connection="keep-alive")


def test_describe():
    assert DEFAULT.describe() == "10 workers x 100 requests, GET /, median of 10 run(s), warmup 10"
    assert "a new client per request" in DEFAULT.replace(connection="new").describe()


@pytest.mark.parametrize(
    "given, reference, expected",
    [
        ({}, False, DEFAULT),
        ({}, True, REFERENCE),
        ({"requests": 50, "repeat": 3}, True, REFERENCE.replace(requests=50, repeat=3)),  # explicit values win
        ({"warmup": 5}, True, REFERENCE.replace(warmup=5)),
        ({"warmup": 0}, False, DEFAULT.replace(warmup=0)),  # 0 is a value, not "not given"
        ({"connection": "new", "path": "/x", "timeout_s": 2.0}, False,
         DEFAULT.replace(connection="new", path="/x", timeout_s=2.0)),
    ],
)  # fmt: skip
def test_resolve(given, reference, expected):
    assert resolve({**NOTHING_GIVEN, **given}, reference=reference) == expected
    assert resolve(given, reference=reference) == expected  # options not mentioned at all are not given


def test_resolve_ignores_other_options():
    assert resolve({"workers": 2, "clients": ["x"], "command": "run", "reference": True}) == DEFAULT.replace(workers=2)


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["run"], DEFAULT),
        (["gil"], DEFAULT),
        (["sweep", "workers"], DEFAULT),
        (["run", "--reference"], REFERENCE),  # the reference write-up: 10 x 100, one run, no warm-up
        (["gil", "--reference"], REFERENCE),
        (["run", "--reference", "-r", "3", "-n", "50"], REFERENCE.replace(repeat=3, requests=50)),  # flags win
        (["run", "--reference", "--warmup", "2"], REFERENCE.replace(warmup=2)),
        (["run", "-w", "4", "-n", "7", "--warmup", "0", "-r", "2"], DEFAULT.replace(workers=4, requests=7, warmup=0,
                                                                                  repeat=2)),
        (["run", "--timeout", "2.5", "--path", "/bytes/10", "--connection", "new"],
         DEFAULT.replace(timeout_s=2.5, path="/bytes/10", connection="new")),
    ],
)  # fmt: skip
def test_the_command_line_resolves_the_workload_once(argv, expected):
    assert resolved(argv) == expected


# -- the open loop and request bodies --------------------------------------------------------------


def test_an_open_loop_passes_its_schedule_to_the_drivers():
    wl = Workload(workers=4, warmup=0, timeout_s=2.0, rate=2000.0, duration_s=1.5, arrival="poisson", seed=7)
    assert wl.flags("http://h/") == [
        "--url", "http://h/", "--workers", "4", "--duration", "1.5", "--warmup", "0", "--timeout", "2",
        "--rate", "2000", "--arrival", "poisson", "--seed", "7",
    ]  # fmt: skip
    assert wl.open and wl.schedule_s == 1.5 and wl.expected_requests() == 3000
    by_count = Workload(workers=4, requests=50, rate=100.0)  # an open loop of N requests per worker
    assert by_count.flags("u")[4:6] == ["--requests", "50"] and by_count.schedule_s == 2.0
    assert Workload(rate=0.5).flags("u")[-6:-4] == ["--rate", "0.5"]  # a fraction is written exactly


def test_a_body_goes_with_its_method():
    wl = Workload(method="POST", body_size=1024, path="/upload")
    assert wl.flags("u")[-4:] == ["--method", "POST", "--body-size", "1024"]
    assert wl.request() == "POST /upload with a 1024-byte body"
    assert "POST /upload with a 1024-byte body" in wl.describe()
    assert "--method" not in DEFAULT.flags("u") and "--body-size" not in DEFAULT.flags("u")


@pytest.mark.parametrize(
    "workload, expected_requests, record",
    [
        (Workload(workers=10, requests=20_000), 200_000, "samples"),
        (Workload(workers=10, requests=20_001), 200_010, "histogram"),
        (Workload(rate=20_000.0, duration_s=60.0), 1_200_000, "histogram"),
        (Workload(rate=20_000.0, duration_s=10.0), 200_000, "samples"),
    ],
)
def test_long_rows_record_histograms(workload, expected_requests, record):
    assert workload.expected_requests() == expected_requests
    assert workload.record == record
    assert ("--record" in workload.flags("u")) == (record == "histogram")
    if record == "histogram":
        assert workload.flags("u")[-2:] == ["--record", "histogram"]


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"rate": 0.0}, "--rate must be a positive number"),
        ({"rate": -5.0}, "--rate must be a positive number"),
        ({"rate": float("nan")}, "--rate must be a positive number"),
        ({"rate": 10_000_001.0, "workers": 10}, "finer than the drivers keep"),
        ({"duration_s": 0.0, "rate": 1.0}, "--duration must be a positive number"),
        ({"arrival": "bursty"}, "--arrival must be one of uniform, poisson"),
        ({"method": "DELETE"}, "--method must be one of GET, POST, PUT"),
        ({"method": "POST", "body_size": -1}, "--body-size must be within 0 and 1073741824"),
        ({"method": "POST", "body_size": (1 << 30) + 1}, "--body-size must be within 0 and 1073741824"),
        ({"body_size": 10}, "--body-size 10 goes with --method POST or PUT"),
    ],
)
def test_a_workload_that_cannot_run_names_the_flag(changes, message):
    with pytest.raises(WorkloadError, match=message):
        Workload(**changes)


def test_the_finest_schedule_is_one_request_per_microsecond_per_worker():
    Workload(workers=10, rate=10_000_000.0)  # 1,000,000/s per worker: allowed
    with pytest.raises(WorkloadError, match="at most 1,000,000 requests/s with 1 worker"):
        Workload(workers=1, rate=1_000_001.0)


def test_open_loop_json_round_trip_and_results_2():
    wl = Workload(workers=3, rate=1500.0, duration_s=4.0, arrival="poisson", seed=3, method="PUT", body_size=9,
                  path="/upload")  # fmt: skip
    doc = wl.to_json()
    assert doc["requests"] is None and doc["loop"] == "open" and doc["rate"] == 1500.0
    assert Workload.from_json(doc) == wl.replace(requests=DEFAULT.requests)
    closed = DEFAULT.to_json()
    assert closed["loop"] == "closed" and closed["rate"] is None and closed["arrival"] is None
    old = {k: closed[k] for k in ("workers", "requests", "warmup", "timeout_s", "path", "connection", "repeat")}
    # results/2 had none of the open loop's knobs, and results before raw/4 no phases
    assert Workload.from_json(old) == DEFAULT.replace(phases=False)


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["run", "--rate", "2000"], OPEN.replace(rate=2000.0)),  # a 10 s schedule, 3 repeats
        (["run", "--rate", "500", "-n", "20"], OPEN.replace(rate=500.0, requests=20, duration_s=None)),
        (["run", "--rate", "500", "--duration", "3", "-r", "5", "--arrival", "poisson", "--seed", "4"],
         OPEN.replace(rate=500.0, duration_s=3.0, repeat=5, arrival="poisson", seed=4)),
        (["run", "--method", "post", "--body-size", "100"], DEFAULT.replace(method="POST", body_size=100,
                                                                           path="/upload")),
        (["run", "--method", "PUT", "--path", "/echo"], DEFAULT.replace(method="PUT", path="/echo")),
        (["sweep", "rate"], SWEEP_RATE),
        (["sweep", "rate", "--duration", "2", "-r", "2"], SWEEP_RATE.replace(duration_s=2.0, repeat=2)),
    ],
)  # fmt: skip
def test_the_command_line_resolves_the_open_loop(argv, expected):
    assert resolved(argv) == expected


@pytest.mark.parametrize(
    "given, message",
    [
        ({"duration_s": 5.0, "requests": 10, "rate": 1.0}, "--duration and --requests exclude each other"),
        ({"duration_s": 5.0}, "--duration goes with --rate"),
    ],
)
def test_resolve_refuses_what_does_not_fit(given, message):
    with pytest.raises(WorkloadError, match=message):
        resolve(given)
    with pytest.raises(WorkloadError, match="--reference is the closed-loop reference method"):
        resolve({"rate": 5.0}, reference=True)


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"workers": 0}, "--workers must be at least 1"),
        ({"timeout_s": 0.0}, "--timeout must be within 0 and 86400"),
        ({"timeout_s": 86_401.0}, "--timeout must be within 0 and 86400"),  # what every driver refuses (exit 2)
        ({"timeout_s": float("nan")}, "--timeout must be within"),
    ],
)
def test_a_workload_the_drivers_would_refuse_is_refused_first(changes, message):
    with pytest.raises(WorkloadError, match=message):
        Workload(**changes)


# -- streamed bodies, a client per request, targets (docs/bodies.md) ---------------------------------------------


def test_streamed_bodies_pass_their_chunk_size_and_whole_ones_pass_nothing():
    whole = Workload(2, 3, 0, 5.0, method="POST", body_size=10, path="/upload")
    assert not {"--upload", "--download", "--chunk-size", "--targets"} & set(whole.flags("http://h/"))
    streamed = whole.replace(upload="stream", download="stream", chunk_size=4096).flags("http://h/")
    assert streamed[-6:] == ["--upload", "stream", "--download", "stream", "--chunk-size", "4096"]
    assert "download streamed in 8-byte chunks" in DEFAULT.replace(download="stream", chunk_size=8).describe()
    wl = whole.replace(upload="stream", chunk_size=1 << 20)
    assert Workload.from_json(wl.to_json()) == wl


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"upload": "stream"}, "--upload stream goes with --method POST or PUT, or --targets"),
        ({"download": "sometimes"}, "--download must be one of whole, stream"),
        ({"chunk_size": 0}, "--chunk-size must be within 1 and 16777216"),
        ({"download": "stream", "chunk_size": (16 << 20) + 1}, "--chunk-size must be within"),
        ({"chunk_size": 4096}, "--chunk-size goes with --upload stream or --download stream"),
        ({"targets": "t.txt", "method": "POST"}, "--targets gives every request its method and body"),
    ],
)
def test_bodies_that_cannot_run_name_the_flag(changes, message):
    with pytest.raises(WorkloadError, match=message):
        Workload(**changes)


def test_the_command_line_resolves_bodies_and_the_client_scope():
    def run(*argv: str) -> Workload:
        return resolved(["run", *argv])

    # a streamed upload needs a body: POST to /upload unless --method or --path say otherwise
    assert run("--upload", "stream", "--body-size", "9").method == "POST"
    assert run("--upload", "stream", "--body-size", "9").path == "/upload"
    # a client per request is what --connection new makes in every harness
    assert run("--client-scope", "per-request") == DEFAULT.replace(connection="new")
    with pytest.raises(SetupError, match="--client-scope per-request makes a new connection"):
        run("--client-scope", "per-request", "--connection", "keep-alive")

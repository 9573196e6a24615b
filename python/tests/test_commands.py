"""The commands (commands/): run's exit status and the peers' crash policy (fake drivers, the real server),
compare, the sweep's points and summary, sweep rate end to end (simulated drivers), and the GIL report's
document, generated from figures given."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from clientbench.analysis.gil import GilFigures, open_loop_reading, reading
from clientbench.commands.compare import compare
from clientbench.commands.run import RunOptions, run
from clientbench.commands.sweep import sweep
from clientbench.dimensions import DIMENSIONS
from clientbench.environment.binaries import Unavailable
from clientbench.errors import SetupError
from clientbench.model import DriverRun, Row, RunStatus
from clientbench.options import Options
from clientbench.options.rows import RowFlags, select
from clientbench.options.workload import sweep_points
from clientbench.registry.shipped import CLIENTS
from clientbench.report import Heading, Image, Text
from clientbench.report.export.markdown import render
from clientbench.report.gil import document
from clientbench.report.sweep import summary
from clientbench.schema import validate_results
from clientbench.stats import row_stats
from clientbench.workload import Workload
from support import fake_driver
from support.rows import client, crashed_run, open_row, raw, results, row

# -- run: the exit status and the peers' crash policy ------------------------------------------

THREE = Workload(workers=2, requests=3, warmup=0, timeout_s=5, repeat=3)


def run_fakes(tmp_path, *specs):
    code = run(RunOptions(specs, THREE, Options(out=tmp_path, row_timeout_s=30), ("run",)))
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir() and not p.is_symlink()]
    doc = json.loads((run_dir / "results.json").read_text())
    validate_results(doc)
    return code, {r["client"]["name"]: r for r in doc["rows"]}, run_dir


@pytest.mark.slow
def test_a_peer_that_crashes_in_one_repeat_keeps_its_row(tmp_path):
    code, rows, run_dir = run_fakes(
        tmp_path, fake_driver.spec("ours"), fake_driver.spec("peer", "--crash-on-repeat", "1", optional=True)
    )
    assert code == 0
    assert rows["ours"]["status"] == "ok"
    peer = rows["peer"]
    assert peer["status"] == "crashed"
    assert peer["reason"] == "crashed 1/3: driver exited with status 3: boom (repeat 1)"
    assert [r["status"] for r in peer["runs"]] == ["ok", "failed", "ok"]
    assert peer["aggregate"]["repeats"] == 2 and peer["aggregate"]["median"]["requests"] == 2 * 2 * 3
    assert "crashed 1/3" in (run_dir / "table.md").read_text()
    # reading.md: the generated reading under the line that says which run, commit and machine it comes from
    reading = (run_dir / "reading.md").read_text().splitlines()
    assert reading[0].startswith("Measured by `clientbench run` at commit ") and "usable cores" in reading[0]
    assert "## Reading (generated from the figures below)" in reading


def test_the_provenance_line_names_the_commit_and_machine_and_says_what_it_does_not_know():
    from clientbench.report.parts import provenance

    env = {
        "git": {"commit": "0123456789abcdef", "dirty": True},
        "cpu": {"model": "Some CPU", "usable_cores": 2},
        "memory_gib": 23.5,
        "os": "Debian GNU/Linux 12 (bookworm)",
        "kernel": "6.1.0",
        "python": {"implementation": "CPython", "version": "3.11.7"},
        "load_average": [0.4, 0.5, 0.6],
    }
    doc = results([row("x")])
    doc.environment, doc.command, doc.created = env, ["clientbench", "run", "-r", "3"], "2026-11-29T12:00:00+00:00"
    assert provenance(doc) == (
        "Measured by `clientbench run -r 3` at commit 0123456 (with local changes) on 2026-11-29: Some CPU (2 usable "
        "cores), 23.5 GiB, Debian GNU/Linux 12 (bookworm), kernel 6.1.0; CPython 3.11.7; load average 0.40 when it "
        "started."
    )
    doc.environment = {}
    assert provenance(doc) == (
        "Measured by `clientbench run -r 3` at an unknown commit on 2026-11-29: an unknown CPU (? usable "
        "cores); an unknown Python."
    )


@pytest.mark.slow
def test_one_of_our_rows_crashing_once_fails_the_run(tmp_path, capsys):
    code, rows, _ = run_fakes(
        tmp_path, fake_driver.spec("ours", "--crash-on-repeat", "1"), fake_driver.spec("peer", optional=True)
    )
    assert code == 1
    assert rows["ours"]["status"] == "failed" and rows["peer"]["status"] == "ok"
    assert "1 row(s) failed: ours" in capsys.readouterr().err


@pytest.mark.slow
def test_a_peer_that_crashes_every_time_fails_the_run(tmp_path, capsys):
    code, rows, _ = run_fakes(
        tmp_path, fake_driver.spec("ours"), fake_driver.spec("peer", "--crash-always", optional=True)
    )
    assert code == 1
    assert rows["peer"]["status"] == "failed" and rows["peer"]["aggregate"] is None
    assert [r["status"] for r in rows["peer"]["runs"]] == ["failed"] * 3
    assert "1 row(s) failed: peer" in capsys.readouterr().err


def _not_installed(name: str, explicit: bool):
    def missing() -> list[str]:
        raise Unavailable('the thing is not installed: pip install "clientbench[native]"')

    spec = fake_driver.spec(name)
    return dataclasses.replace(spec, command=missing, explicit=explicit)


@pytest.mark.slow
def test_a_row_that_is_not_installed_is_shown_and_fails_the_run_only_when_named(tmp_path, capsys):
    code, rows, run_dir = run_fakes(tmp_path / "a", fake_driver.spec("ours"), _not_installed("native", False))
    assert code == 0
    assert rows["native"]["status"] == "unavailable" and len(rows["native"]["runs"]) == 1  # not tried again
    assert rows["native"]["reason"] == 'unavailable: the thing is not installed: pip install "clientbench[native]"'
    assert (
        'unavailable: the thing is not installed: pip install "clientbench[native]"'
        in (run_dir / "table.md").read_text()
    )
    code, rows, _ = run_fakes(tmp_path / "b", fake_driver.spec("ours"), _not_installed("native", True))
    assert code == 1 and rows["ours"]["status"] == "ok"
    assert "not installed here, though named with -c: native" in capsys.readouterr().err


def test_rows_named_exactly_are_explicit_and_globs_are_not():
    picked = {s.name: s.explicit for s in select(RowFlags(("cpp-beast,py-beast-*",)), CLIENTS)}
    assert picked == {"cpp-beast": True, "py-beast-held": False, "py-beast-released": False, "py-beast-async": False,
                      "py-beast-uvloop": False}  # fmt: skip


# -- compare -------------------------------------------------------------------------------------


def _results(tmp_path, name, benches):
    d = tmp_path / name
    d.mkdir()
    (d / "results.json").write_text(json.dumps(results([row(benches=benches)]).to_json()))
    return d


def test_compare_flags_only_changes_beyond_noise(tmp_path, capsys):
    a = _results(tmp_path, "a", (10.0, 11.0, 11.0, 12.0))
    same = _results(tmp_path, "same", (10.5, 11.5, 11.0, 11.0))
    slow = _results(tmp_path, "slow", (20.0, 21.0, 21.0, 22.0))
    assert compare(a, same) == 0
    out = capsys.readouterr().out
    assert "0 row(s) changed" in out
    assert "largest difference of median Bench: 0.0% (py-x)" in out  # medians 11.0 and 11.0
    compare(a, slow)
    out = capsys.readouterr().out
    assert "1 row(s) changed" in out and "slower" in out


def test_compare_needs_enough_repeats_for_a_verdict(tmp_path, capsys):
    """2 + 2 repeats of an unchanged row have disjoint ranges one time in three: no verdict from so few."""
    a = _results(tmp_path, "a", (10.0, 10.1))
    b = _results(tmp_path, "b", (20.0, 20.1))
    compare(a, b)
    out = capsys.readouterr().out
    assert "0 row(s) changed" in out and "too few repeats" in out
    assert "largest difference of median Bench: 99.5% (py-x)" in out  # the ratio is still printed


def test_compare_reads_results_1(tmp_path, capsys):
    from support import REPO

    reference = REPO / "results" / "reference" / "run-e13771f"  # a clientbench.results/1 document
    assert compare(reference, reference / "results.json") == 0
    out = capsys.readouterr().out
    assert "0 row(s) changed" in out and "largest difference of median Bench: 0.0%" in out


@pytest.mark.parametrize("reference", ["run-e13771f", "freethreaded"])  # results/1, results/2
def test_compare_works_across_results_versions(tmp_path, capsys, reference):
    from clientbench.model import SCHEMA_ID, Results
    from support import REPO

    old = REPO / "results" / "reference" / reference
    new = tmp_path / "results.json"
    doc = Results.load(old).to_json()
    assert doc["schema"] == SCHEMA_ID and json.loads((old / "results.json").read_text())["schema"] != SCHEMA_ID
    new.write_text(json.dumps(doc))
    assert compare(old, new) == 0
    assert "largest difference of median Bench: 0.0%" in capsys.readouterr().out


def test_compare_pools_the_repeats_of_several_folders_a_side(tmp_path, capsys):
    """Runs taken in turns (A B A B): each side's folders pooled, 2 + 2 repeats become 4 a side, enough for a
    verdict; the table shows each side's range over the pooled repeats, and -o writes it as compare.md."""
    a1, a2 = _results(tmp_path, "a1", (10.0, 11.0)), _results(tmp_path, "a2", (11.0, 12.0))
    b1, b2 = _results(tmp_path, "b1", (20.0, 21.0)), _results(tmp_path, "b2", (21.0, 22.0))
    out_dir = tmp_path / "cmp"
    assert compare(Path(f"{a1},{a2}"), Path(f"{b1},{b2}"), out=out_dir) == 0
    out = capsys.readouterr().out
    assert "1 row(s) changed" in out and "slower (beyond noise)" in out and "too few repeats" not in out
    table = (out_dir / "compare.md").read_text()
    assert "| py-x | 11.00 | 10.00-12.00 (4 runs) | 21.00 | 20.00-22.00 (4 runs) | 1.91 |" in table


def test_compare_pools_only_runs_of_one_workload(tmp_path):
    a1 = _results(tmp_path, "a1", (10.0, 11.0))
    other = tmp_path / "other"
    other.mkdir()
    doc = results([row(benches=(10.0, 11.0))]).to_json()
    doc["workload"]["workers"] += 1
    (other / "results.json").write_text(json.dumps(doc))
    with pytest.raises(SetupError, match="only runs of one workload pool"):
        compare(Path(f"{a1},{other}"), a1)


def test_the_pinning_reference_is_what_compare_computes_from_its_runs(tmp_path, capsys):
    """docs/stability.md's before/after (results/reference/pin/compare.md): `make stability-pin`'s runs, taken in
    turns, unpinned and with --pin auto, pooled per side; recomputed here from their results.json, byte for byte."""
    from support import REPO

    ref = REPO / "results" / "reference" / "pin"
    sides = {side: sorted((ref / side).iterdir(), key=lambda p: int(p.name)) for side in ("unpinned", "pinned")}
    assert len(sides["unpinned"]) == len(sides["pinned"]) >= 3
    for side, folders in sides.items():
        for folder in folders:
            pin = json.loads((folder / "results.json").read_text()).get("pin")
            assert (pin is not None and pin["auto"]) if side == "pinned" else pin is None, folder
    a, b = (Path(",".join(str(f) for f in sides[s])) for s in ("unpinned", "pinned"))
    compare(a, b, out=tmp_path)
    assert (tmp_path / "compare.md").read_text() == (ref / "compare.md").read_text()


def test_compare_missing_file_is_a_setup_error(tmp_path):
    with pytest.raises(SetupError, match="no results"):
        compare(tmp_path / "nope", tmp_path / "nope2")


# -- sweep ---------------------------------------------------------------------------------------


def test_sweep_summary():
    failed = row("py-y", gil="released", benches=(10.0,))
    failed.add(crashed_run(failed.client))
    report = summary(DIMENSIONS["workers"], [(1, [row(benches=(10.0,)), failed]), (2, [row(benches=(20.0, 30.0))])], 1)
    text = render(report)
    assert text.startswith("# Sweep over workers\n\n## Bench (ms, median over repeats)\n")
    bench, rps = report.tables[:2]
    assert [c.label for c in bench.columns] == ["Client", "workers=1", "workers=2"]
    assert bench.rows == [
        ["Python x (sync, GIL held)", "10.00", "25.00"],
        ["Python x (sync, GIL released)", "failed", "-"],
    ]  # a failed row, a row not run
    assert rps.rows[0][0] == "Python x (sync, GIL held)" and float(rps.rows[0][1]) > float(rps.rows[0][2]) > 0
    assert rps.rows[1][1:] == ["failed", "-"]


def test_a_scenario_sweep_reads_what_http3_costs_against_2_and_1_1():
    def cpu_row(cpu_ns: int) -> Row:
        r = Row(client("rust-x", None))
        doc = raw(n=10)  # 2 workers x 10 requests: CPU per request is cpu_ns / 20
        doc["cpu_ns"] = cpu_ns
        r.add(DriverRun(r.client, RunStatus.OK, raw=doc, stats=row_stats(doc), returncode=0))
        return r

    points = [
        ("long-5KB-h1.1", [cpu_row(200_000)]),
        ("long-5KB-h2", [cpu_row(400_000)]),
        ("long-5KB-h3", [cpu_row(800_000)]),
        ("short-1KB-h2", [cpu_row(1_000_000)]),
        ("short-1KB-h3", [cpu_row(1_500_000)]),
    ]
    text = render(summary(DIMENSIONS["scenario"], points, 1))
    assert "| Python x (sync) | 2.00 | 4.00 | 1.50 | - |" in text  # long-5KB vs h2, vs h1.1; short-1KB
    assert (
        "- Python x (sync): over HTTP/3 a request costs 2.00x HTTP/2's and 4.00x HTTP/1.1's on long connections "
        "(the median over their sizes); 1.50x HTTP/2's on short ones in client CPU."
    ) in text
    # a sweep without HTTP/3 says nothing of it
    assert "HTTP/3's client CPU" not in render(summary(DIMENSIONS["scenario"], points[:2], 1))


# -- the GIL report's reading --------------------------------------------------------------------


def test_gil_reading_follows_the_figures():
    def rows(held_wall, released_wall):
        held = row("py-beast-held", "held", (held_wall,) * 3)
        released = row("py-beast-released", "released", (released_wall,) * 3)
        return [held, released]

    lmean = rows(1, 1)[0].aggregate.median.lmean_ms
    serialized = reading([], rows(lmean * 8, lmean * 1.05), workers=10)
    assert "serialized the workers" in serialized[0]
    overlapped = reading([], rows(lmean * 1.05, lmean * 1.05), workers=10)
    assert "serialized the workers" not in overlapped[0]
    assert "did not slow" in overlapped[0] or "not fully serialized" in overlapped[0]
    assert "no complete held/released pair" in overlapped[1]  # reqwest rows absent: says so, no claim


def _pair(suffix: str, held_ms: float, released_ms: float) -> list:
    return [
        row(f"py-beast-held{suffix}", "held", (held_ms,) * 3),
        row(f"py-beast-released{suffix}", "released", (released_ms,) * 3),
    ]


def test_gil_document_from_figures_given():
    """Every phase measured (serial, W workers, a 1 ms round trip, two interpreters, the gc pause): the
    document's sections in order, and the sentences carry the figures given."""
    native = row("cpp-beast", None, (5.0,) * 3)
    figures = GilFigures(
        workload=Workload(workers=10, requests=100, warmup=10, repeat=3),
        serial_requests=1000,
        serial=_pair("", 50.0, 50.0),
        parallel=[native, *_pair("", 80.0, 10.0), *_pair("@3.13t", 12.0, 10.0)],
        network="loopback",
        command="clientbench gil -r 3",
        rtt_ms=1,
        rtt_network="rtt 1 ms (toxiproxy)",
        at_rtt=[*_pair("", 100.0, 10.0), *_pair("@3.13t", 11.0, 10.0)],
        interpreters=[None, "3.13t"],
        pauses={"3.13t": {"held_ms": 250.0, "released_ms": 1.5, "baseline_ms": 1.0, "python": {"free_threaded": True}}},
    )
    report = document(figures)
    assert [(b.level, b.text) for b in report.blocks if isinstance(b, Heading)] == [
        (1, "The GIL report"),
        (2, "Reading (generated from the figures below)"),
        (2, "At a 1 ms round trip (generated from the figures below)"),
        (2, "Without the GIL: the free-threaded build (generated from the figures below)"),
        (2, "10 workers (loopback)"),
        (2, "10 workers at rtt 1 ms (rtt 1 ms (toxiproxy))"),
        (2, "Serial baseline (1 worker x 1000 requests)"),
        (2, "Timeline"),
        (2, "Timeline at rtt 1 ms"),
    ]  # fmt: skip
    assert [b.path for b in report.blocks if isinstance(b, Image)] == [
        "plots/timeline.png",
        "rtt/plots/timeline-rtt.png",
    ]
    text = "\n".join(line for b in report.blocks if isinstance(b, Text) for line in b.lines)
    assert text.startswith(
        "Workload: 10 workers x 100 sequential GET /, warmup 10, median of 3 run(s), network: loopback. "
        "Generated by `clientbench gil -r 3`.\n"
    )
    assert "the group took 8.0x as long as with the GIL released" in text
    assert "that of the same client used natively, Python x (sync) (5.00 ms)" in text
    assert (
        "- **beast** at rtt 1 ms: GIL held Bench 100.0 ms, released 10.0 ms: held/released = 10.0x "
        "(10x = fully serialized): the workers waited on the network one after another."
    ) in text
    assert "- **beast on the runner's Python**: Bench held / released = 8.0x on loopback, 10.0x on rtt 1 ms" in text
    assert (
        "- **beast on Python 3.13t**: Bench held / released = 1.2x on loopback, 1.1x on rtt 1 ms (10x = fully "
        "serialized): holding the GIL no longer serialized anything"
    ) in text
    assert (
        "a `gc.collect()` in another thread took 250.0 ms while a 300 ms call held the GIL (stayed attached to "
        "the interpreter), 1.5 ms while the call had released it, 1.0 ms with no call in flight"
    ) in text
    # the reqwest rows were not given: the report says so instead of making a claim
    assert "- **reqwest** at rtt 1 ms: no complete held/released pair in this run." in text


def test_gil_document_without_the_optional_phases():
    """No round-trip phase, one interpreter: neither section, nor the second timeline."""
    figures = GilFigures(
        workload=Workload(workers=4, requests=10),
        serial_requests=40,
        serial=[],
        parallel=_pair("", 40.0, 10.0),
        network="lan: rtt 1 ms (toxiproxy)",
        command="clientbench gil --network lan",
    )
    report = document(figures)
    headings = [b.text for b in report.blocks if isinstance(b, Heading)]
    assert headings == [
        "The GIL report",
        "Reading (generated from the figures below)",
        "4 workers (lan: rtt 1 ms (toxiproxy))",
        "Serial baseline (1 worker x 40 requests)",
        "Timeline",
    ]
    assert [b.path for b in report.blocks if isinstance(b, Image)] == ["plots/timeline.png"]


# -- sweep rate, end to end with simulated drivers -------------------------------------------------


def _rate_sweep(tmp_path, rates):
    """Two simulated clients of 2 workers: `fast` takes 0.1 ms a request (keeps up to 20,000/s), `slow`
    0.5 ms (keeps up to 4,000/s); the real server is only probed."""
    specs = [
        fake_driver.spec("fast", "--synthetic", "--service-us", "100"),
        fake_driver.spec("slow", "--synthetic", "--service-us", "500"),
    ]
    base = Workload(workers=2, warmup=0, timeout_s=5, duration_s=0.5, repeat=1)
    dim = DIMENSIONS["rate"]
    points = sweep_points(dim, None, rates, base)
    options = Options(out=tmp_path, row_timeout_s=30)
    code = sweep(dim, points, specs, base, options, ["sweep", "rate"], every_rate=rates is not None)
    return code, tmp_path / "latest"


@pytest.mark.slow
def test_sweep_rate_climbs_until_each_client_saturates(tmp_path):
    code, out = _rate_sweep(tmp_path, None)
    assert code == 0  # saturating is a finding, not a failure
    text = (out / "sweep.md").read_text()
    assert "- **Python fake (sync)** sustains **16,000 requests/s**" in text  # fast: 32,000/s is past it
    assert "- **Python fake (sync)** sustains **4,000 requests/s**" in text  # slow
    ran = {
        p.name: sorted(r["client"]["name"] for r in json.loads((p / "results.json").read_text())["rows"])
        for p in (out / "points").iterdir()
    }
    # the ladder doubles from 250/s; a client leaves after its first saturated rate, the ladder after the last
    assert ran == {
        **{f"rate-{r}": ["fast", "slow"] for r in (250, 500, 1000, 2000, 4000, 8000)},
        "rate-16000": ["fast"],
        "rate-32000": ["fast"],
    }
    point = json.loads((out / "points" / "rate-8000" / "results.json").read_text())
    validate_results(point)
    assert point["workload"]["rate"] == 8000 and point["workload"]["loop"] == "open"
    assert point["sweep"] == {"dimension": "rate", "value": 8000.0}
    slow = next(r for r in point["rows"] if r["client"]["name"] == "slow")
    assert slow["status"] == "ok" and slow["aggregate"]["median"]["saturated"] is True
    assert "Saturated" in (out / "points" / "rate-8000" / "table.md").read_text()
    for name in ("rate-fast.png", "rate-slow.png"):
        assert (out / "plots" / name).stat().st_size > 10_000


@pytest.mark.slow
def test_sweep_rate_with_rates_given_runs_every_client_at_every_rate(tmp_path):
    code, out = _rate_sweep(tmp_path, "64000,1000")
    assert code == 0
    assert sorted(p.name for p in (out / "points").iterdir()) == ["rate-1000", "rate-64000"]
    text = (out / "sweep.md").read_text()
    assert "every client at every rate given" in text
    assert "sustains **1,000 requests/s**" in text and "at 64,000 requests/s it achieved" in text


# -- the GIL report's open-loop reading ------------------------------------------------------------


def test_gil_open_loop_reading_from_figures_given():
    """Simulated bindings: released takes 0.1 ms a request, held 1 ms (2 workers): released sustains up to
    16,000/s here, held 2,000/s; at 8,000/s (half of 16,000) held is saturated."""
    ladder = (1000, 2000, 4000, 8000, 16000, 32000)
    points = [
        (float(r), [open_row("py-beast-held", r, 1000, gil="held"), open_row("py-beast-released", r, 100)])
        for r in ladder
    ]
    (beast, reqwest) = open_loop_reading(points, slo_ms=10.0)
    assert beast.startswith(
        "- **beast, open loop** (P99 within 10 ms, achieved >= 99% of offered): with the GIL released the binding "
        "sustains 16,000 requests/s, with it held 2,000 requests/s (8.0x as much released). At 8,000 requests/s "
        "(within 50% of what the released binding sustains) the corrected P99 is 0.10 ms released and "
    )
    assert "ms, saturated: achieved 2,000 requests/s held: " in beast and beast.endswith("x with the GIL held.")
    assert reqwest == "- **reqwest, open loop**: the held and released rows did not both run."
    figures = GilFigures(
        workload=Workload(workers=2, requests=10),
        serial_requests=20,
        serial=[],
        parallel=[],
        network="loopback",
        command="clientbench gil",
        open_points=points,
        open_workload=Workload(workers=2, duration_s=0.5, repeat=1),
    )
    report = document(figures)
    headings = [b.text for b in report.blocks if isinstance(b, Heading)]
    assert "Open loop: the rate each binding sustains (generated from the figures below)" in headings
    assert beast in render(report)

"""The commands (commands/): run's exit status and the peers' crash policy (fake drivers, the real server),
compare, the sweep's points and summary, and the GIL report's document, generated from figures given."""

from __future__ import annotations

import json

import pytest
from clientbench.commands.compare import compare
from clientbench.commands.run import run
from clientbench.commands.sweep import points, summary, workload_at
from clientbench.errors import SetupError
from clientbench.report import Heading, Image, Text
from clientbench.report.gil import GilFigures, document, reading
from clientbench.report.markdown import render
from clientbench.run.testbed import Options
from clientbench.schema import validate_results
from clientbench.workload import Workload
from support import fake_driver
from support.rows import crashed_run, results, row

# -- run: the exit status and the peers' crash policy ------------------------------------------

THREE = Workload(workers=2, requests=3, warmup=0, timeout_s=5, repeat=3)


def run_fakes(tmp_path, *specs):
    code = run(list(specs), THREE, Options(out=tmp_path, row_timeout_s=30), ["run"])
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir() and not p.is_symlink()]
    doc = json.loads((run_dir / "results.json").read_text())
    validate_results(doc)
    return code, {r["client"]["name"]: r for r in doc["rows"]}, run_dir


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


def test_one_of_our_rows_crashing_once_fails_the_run(tmp_path, capsys):
    code, rows, _ = run_fakes(
        tmp_path, fake_driver.spec("ours", "--crash-on-repeat", "1"), fake_driver.spec("peer", optional=True)
    )
    assert code == 1
    assert rows["ours"]["status"] == "failed" and rows["peer"]["status"] == "ok"
    assert "1 row(s) failed: ours" in capsys.readouterr().err


def test_a_peer_that_crashes_every_time_fails_the_run(tmp_path, capsys):
    code, rows, _ = run_fakes(
        tmp_path, fake_driver.spec("ours"), fake_driver.spec("peer", "--crash-always", optional=True)
    )
    assert code == 1
    assert rows["peer"]["status"] == "failed" and rows["peer"]["aggregate"] is None
    assert [r["status"] for r in rows["peer"]["runs"]] == ["failed"] * 3
    assert "1 row(s) failed: peer" in capsys.readouterr().err


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

    reference = REPO / "results" / "reference" / "run"
    assert compare(reference, reference / "results.json") == 0
    out = capsys.readouterr().out
    assert "0 row(s) changed" in out and "largest difference of median Bench: 0.0%" in out


def test_compare_missing_file_is_a_setup_error(tmp_path):
    with pytest.raises(SetupError, match="no results"):
        compare(tmp_path / "nope", tmp_path / "nope2")


# -- sweep ---------------------------------------------------------------------------------------


def test_sweep_points():
    assert points("workers", None) == [1, 2, 4, 8, 10, 16, 32]
    assert points("payload", "13, 1024") == [13, 1024]
    assert points("connection", None) == ["keep-alive", "new"]
    for dim, values in (("workers", "0"), ("payload", "x"), ("connection", "both"), ("delay", " , ")):
        with pytest.raises(SetupError):
            points(dim, values)


def test_sweep_workload_at_each_point():
    base = Workload(workers=3, requests=7, repeat=2)
    assert workload_at(base, "workers", 8) == base.replace(workers=8)
    assert workload_at(base, "payload", 1024) == base.replace(path="/bytes/1024")
    assert workload_at(base, "delay", 5) == base.replace(path="/delay/5")
    assert workload_at(base, "connection", "new") == base.replace(connection="new")


def test_sweep_summary():
    failed = row("py-y", gil="released", benches=(10.0,))
    failed.add(crashed_run(failed.client))
    report = summary("workers", [(1, [row(benches=(10.0,)), failed]), (2, [row(benches=(20.0, 30.0))])])
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

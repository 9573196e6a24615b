"""--targets and --hosts (targets.py): the user's file read as vegeta writes it, resolved against the run's
origins into the drivers' form, and what each worker's cycle moves."""

from __future__ import annotations

from pathlib import Path

import pytest
from clientbench.errors import SetupError
from clientbench.targets import Bodies, Entry, host_urls, parse, per_worker, resolve, write


def _file(tmp_path: Path, text: str) -> Path:
    (tmp_path / "body.bin").write_bytes(b"x" * 10)
    path = tmp_path / "targets.txt"
    path.write_text(text)
    return path


def test_both_of_vegetas_forms_and_comments(tmp_path: Path) -> None:
    path = _file(tmp_path, "# many hosts\nGET /bytes/10\n\npost /upload @body.bin\nPUT http://h:81/upload\n@body.bin\n")
    body = (tmp_path / "body.bin").resolve()
    assert [(e.method, e.url, e.body) for e in parse(path)] == [
        ("GET", "/bytes/10", None),
        ("POST", "/upload", body),  # a body's path is relative to the targets file's folder
        ("PUT", "http://h:81/upload", body),  # vegeta's form: the body on the next line
    ]


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "no targets in it"),
        ("# only a comment\n", "no targets in it"),
        ("DELETE /x\n", "line 1: method 'DELETE' is not one of GET, POST, PUT"),
        ("GET\n", "line 1: GET needs a URL or a path"),
        ("GET x/y\n", "line 1: 'x/y' is neither a path"),
        ("GET ftp://h/x\n", "neither a path"),
        ("GET http://h:99999/\n", "port out of range"),
        ("GET / @body.bin\n", "line 1: a GET sends no body"),
        ("POST / @missing.bin\n", "line 1: no body file"),
        ("POST / body.bin\n", "line 1: a target is METHOD URL"),
        ("GET /\nContent-Type: text/plain\n", "line 2: header lines are not supported"),
        ("@body.bin\n", "line 1: a body line"),
        ("POST /\n\n@body.bin\n", "line 3: a body line"),  # not right after its target
    ],
)
def test_a_bad_line_is_one_error_naming_it(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(SetupError, match=message):
        parse(_file(tmp_path, text))


def test_an_unreadable_file_is_one_error(tmp_path: Path) -> None:
    with pytest.raises(SetupError, match="cannot read it"):
        parse(tmp_path / "nothing.txt")


def test_paths_go_to_every_origin_and_urls_stay_one(tmp_path: Path) -> None:
    entries = [Entry("GET", "/a", None, 1), Entry("GET", "http://other:8/b", None, 2)]
    bases = host_urls("https://127.0.0.1:4000", 3)
    assert bases == ["https://127.0.0.1:4000", "https://127.0.0.2:4000", "https://127.0.0.3:4000"]
    targets = resolve(entries, bases, tmp_path / "t")
    assert [t.url for t in targets] == [
        "https://127.0.0.1:4000/a", "https://127.0.0.2:4000/a", "https://127.0.0.3:4000/a", "http://other:8/b",
    ]  # fmt: skip
    assert host_urls("http://127.0.0.1:80", 1) == ["http://127.0.0.1:80"]
    written = write(targets, tmp_path / "drivers.txt").read_text().splitlines()
    assert written[0] == "GET https://127.0.0.1:4000/a" and len(written) == 4


def test_each_worker_cycles_from_its_own_target() -> None:
    sizes = [1, 10, 100]
    assert per_worker(sizes, 0, 4) == 1 + 10 + 100 + 1  # targets 0, 1, 2, 0
    assert per_worker(sizes, 2, 2) == 100 + 1  # worker 2 starts at target 2
    assert per_worker(sizes, 1, 0) == 0
    bodies = Bodies(sent=(0, 5), received=(13, 70))
    assert bodies.sent_total([3, 2]) == (0 + 5 + 0) + (5 + 0)
    assert bodies.received_total([1, 1]) == 13 + 70
    assert Bodies(sent=(0,), received=None).received_total([4]) is None


def test_a_run_cycles_targets_over_four_origins(tmp_path: Path) -> None:
    """`run --targets FILE --hosts 4`: every request right, the bytes each worker's cycle makes (the runner's
    integrity check), the server's counts show four origins per row, and the drivers' targets file is kept."""
    import json

    from clientbench import cli

    (tmp_path / "body.bin").write_bytes(b"b" * 3000)
    (tmp_path / "targets.txt").write_text("GET /bytes/1024\nPOST /upload @body.bin\nGET /\n")
    code = cli.main(["run", "--targets", str(tmp_path / "targets.txt"), "--hosts", "4", "-c", "py-requests,py-floor",
                     "-w", "2", "-n", "12", "--warmup", "1", "-r", "1", "-o", str(tmp_path / "out")])  # fmt: skip
    assert code == 0
    folder = tmp_path / "out" / "latest"
    results = json.loads((folder / "results.json").read_text())
    for row in results["rows"]:
        assert row["status"] == "ok", row
        run = row["runs"][0]
        assert run["server_counts"]["origins"] == 4 and run["stats"]["errors"] == 0
        assert run["stats"]["sent_bytes"] == 2 * 4 * 3000  # one turn of the 12 targets each: 4 uploads
    table = [ln.strip("|").split("|") for ln in (folder / "table.md").read_text().splitlines() if ln.startswith("| ")]
    column = [c.strip() for c in table[0]].index("Origins")  # shown: a row used more than one origin
    assert [r[column].strip() for r in table[2:]] == ["4", "4"]
    lines = (folder / "targets.txt").read_text().splitlines()
    assert len(lines) == 3 * 4 and lines[4].startswith("POST http://127.0.0.1:") and lines[4].endswith("body.bin")

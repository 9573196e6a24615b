"""The house's rules, checked against the tree: docs/architecture.md's layout block names what exists (every folder
of the checkout, every package and module of the runner, nothing that is gone); no hand-written source file is
over 600 lines, no test file over 800; no test asserts a constant. (The import graph has no cycle:
test_cli.py.)"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "python" / "clientbench"
ARCHITECTURE = REPO / "docs" / "architecture.md"
#: an entry line of the layout block: up to 8 columns of indentation, then a name (a folder ends with /)
ENTRY = re.compile(r"^( {0,8})([\w.\-/]+)(?:\s{2,}|$)(.*)$")


def layout() -> list[tuple[str, str]]:
    """(path, its description) of every entry of the layout block, the path built from the indentation."""
    text = ARCHITECTURE.read_text()
    block = text.split("## The layout", 1)[1].split("```", 2)[1]
    entries: list[tuple[str, str]] = []
    parents: list[tuple[int, str]] = []
    for line in block.splitlines()[1:]:
        m = ENTRY.match(line)
        if m is None:
            if entries and line.strip():  # a continuation of the last entry's description
                entries[-1] = (entries[-1][0], entries[-1][1] + " " + line.strip())
            continue
        indent, name, description = len(m[1]), m[2], m[3]
        while parents and parents[-1][0] >= indent:
            parents.pop()
        path = "".join(p for _, p in parents) + name
        entries.append((path, description))
        if name.endswith("/"):
            parents.append((indent, name))
    return entries


def tracked() -> list[str]:
    out = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if (REPO / line).exists()]


def test_the_layout_block_is_read():
    paths = [p for p, _ in layout()]
    assert {"server-axum/", "python/clientbench/", "python/clientbench/report/export/", "scripts/"} <= set(paths)
    assert len(paths) > 40


def test_every_entry_of_the_layout_exists():
    missing = [p for p, _ in layout() if not (REPO / p).exists()]
    assert missing == [], f"docs/architecture.md names what is not in the tree: {missing}"


def test_every_folder_of_the_checkout_is_in_the_layout():
    listed = [p for p, _ in layout()]
    folders = {f.split("/", 1)[0] + "/" for f in tracked() if "/" in f}
    missing = {f for f in folders if not any(p.startswith(f) for p in listed)}
    assert missing == set(), f"top-level folders missing from docs/architecture.md: {missing}"


def test_every_package_and_module_of_the_runner_is_in_the_layout():
    """Each top-level module of python/clientbench is an entry; each module of a package is named on the line of
    the nearest package that is an entry (with the sub-packages between, e.g. `html/` on export/'s line)."""
    entries = dict(layout())
    base = "python/clientbench/"
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if len(rel.parts) == 1:
            if rel.name not in ("__init__.py", "__main__.py"):
                assert base + rel.name in entries, f"{rel} is not in docs/architecture.md's layout"
            continue
        packages = rel.parts[:-1]
        depth = next((i for i in range(len(packages), 0, -1) if base + "/".join(packages[:i]) + "/" in entries), 0)
        if depth == 0:
            pytest.fail(f"package {packages[0]} is not in docs/architecture.md's layout")
        described = entries[base + "/".join(packages[:depth]) + "/"]
        for inner in packages[depth:]:
            assert f"{inner}/" in described, f"{rel}: {inner}/ is not named on its package's line"
        if rel.name == "__init__.py" or packages[0] in ("drivers", "harness", "probes"):
            continue  # the drivers and the harness are described by kind, not module by module
        if packages == ("commands",) and rel.stem != "output":
            continue  # a command's module: the command table lists them (test_cli.py checks it against commands/)
        assert re.search(rf"\b{re.escape(rel.stem)}\b", described), (
            f"{rel}: its package's line in docs/architecture.md does not name it"
        )


#: what is not written by hand: lock files, vendored licenses, generated and recorded files
NOT_HAND_WRITTEN = re.compile(r"(^results/|\.lock$|/licenses/|package-lock\.json$|\.png$|^docs/img/|go\.sum$)")
SOURCE = (".py", ".rs", ".cpp", ".hpp", ".h", ".go", ".mjs", ".js", ".sh", ".j2", ".css", ".toml", ".cmake")


def _lines(path: str) -> int:
    return len((REPO / path).read_text(encoding="utf-8", errors="replace").splitlines())


def test_no_hand_written_source_file_is_over_600_lines_and_no_test_file_over_800():
    too_long = []
    for path in tracked():
        if NOT_HAND_WRITTEN.search(path) or not path.endswith(SOURCE) and Path(path).name != "Makefile":
            continue
        is_test = "/tests/" in f"/{path}" or Path(path).name.startswith("test_")
        limit = 800 if is_test else 600
        if (n := _lines(path)) > limit:
            too_long.append(f"{path}: {n} lines (at most {limit})")
    assert too_long == []


def _test_files() -> list[Path]:
    return sorted({*REPO.glob("python/tests/**/test_*.py"), *REPO.glob("bindings/**/test_*.py")})


@pytest.mark.parametrize("path", _test_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_no_test_asserts_a_constant(path):
    """`assert "a sentence"` is always true: a test that cannot fail."""
    constant = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Assert):
            continue
        try:
            ast.literal_eval(node.test)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        constant.append(f"line {node.lineno}: assert {ast.unparse(node.test)[:60]}")
    assert constant == []

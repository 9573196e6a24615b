"""The clients' constructor options are one list: src/config.rs's client_pymethods! writes the constructor of
Client and of RawAsyncClient, and the stubs' _ClientOptions types RawAsyncClient's and AsyncClient's
**options. What still spells them out is checked against it here: Client's stub (bindings/tests/test_api.py
compares its text with beast_client's, so it cannot take **options) and AsyncClient's forwarding. Also the
formatting of the macro-wrapped #[pymethods] blocks, which cargo fmt does not see."""

from __future__ import annotations

import ast
import inspect
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from reqwest_client import AsyncClient, Client
from reqwest_client._core import RawAsyncClient

PACKAGE = Path(__file__).resolve().parents[1]
STUB = PACKAGE / "python/reqwest_client/_core.pyi"


def _stub_class(name: str) -> ast.ClassDef:
    for node in ast.parse(STUB.read_text()).body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    raise AssertionError(f"{name} is not in {STUB}")


def _stub_new(name: str) -> ast.arguments:
    for item in _stub_class(name).body:
        if isinstance(item, ast.FunctionDef) and item.name == "__new__":
            return item.args
    raise AssertionError(f"{name}.__new__ is not in {STUB}")


def _typed(args: list[ast.arg]) -> list[tuple[str, str]]:
    return [(a.arg, ast.unparse(a.annotation) if a.annotation else "") for a in args]


def test_rust_classes_share_the_constructor() -> None:
    assert Client.__text_signature__ == RawAsyncClient.__text_signature__
    assert inspect.signature(Client) == inspect.signature(RawAsyncClient)


def test_stub_options_are_clients() -> None:
    client, raw = _stub_new("Client"), _stub_new("RawAsyncClient")
    options = [
        (n.target.id, ast.unparse(n.annotation))
        for n in _stub_class("_ClientOptions").body
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
    ]
    assert options == _typed(client.kwonlyargs)
    # RawAsyncClient: Client's positional parameters (cls, timeout, verify), then the options
    assert _typed(raw.args) == _typed(client.args)
    assert [ast.unparse(d) for d in raw.defaults] == [ast.unparse(d) for d in client.defaults]
    assert not raw.kwonlyargs and raw.kwarg is not None and raw.kwarg.annotation is not None
    assert ast.unparse(raw.kwarg.annotation) == "Unpack[_ClientOptions]"


def test_async_client_takes_the_options() -> None:
    client = inspect.signature(Client).parameters.values()
    *positional, options = inspect.signature(AsyncClient).parameters.values()
    assert [(p.name, p.default) for p in positional] == [
        (p.name, p.default) for p in client if p.kind is p.POSITIONAL_OR_KEYWORD
    ]
    assert options.kind is inspect.Parameter.VAR_KEYWORD
    # each option reaches the same check as Client's (a wrong type: a TypeError naming it)
    constructors: tuple[Any, ...] = (Client, AsyncClient)
    for p in client:
        errors = []
        for cls in constructors:
            with pytest.raises(TypeError) as caught:
                cls(**{p.name: object()})
            errors.append(str(caught.value))
        assert errors[0] == errors[1] and p.name in errors[0], errors
    defaults = {p.name: p.default for p in client if p.kind is p.KEYWORD_ONLY}
    a = AsyncClient(**{**defaults, "connect_timeout": 1.5, "read_timeout": 2.5})
    assert (a.timeout, a.connect_timeout, a.read_timeout, a.verify) == (None, 1.5, 2.5, True)
    a.close()
    with pytest.raises(TypeError, match="unexpected keyword argument 'tiemout'"):
        AsyncClient(tiemout=1.0)  # type: ignore[call-arg]


RUSTFMT = shutil.which("rustfmt")


@pytest.mark.skipif(RUSTFMT is None, reason="no rustfmt on PATH")
@pytest.mark.parametrize("source", ["client.rs", "aio.rs"])
def test_pymethods_blocks_are_formatted(source: str, tmp_path: Path) -> None:
    """rustfmt leaves a macro's body alone: the `client_pymethods! { impl X { ... } }` block must be what
    rustfmt makes of it one indentation level deeper (the workspace's rustfmt.toml, 4 columns narrower)."""
    assert RUSTFMT is not None
    text = (PACKAGE / "src" / source).read_text()
    start = text.index("client_pymethods! {\n") + len("client_pymethods! {\n")
    end = text.index("\n}\n", start)  # the macro's closing brace, in column 0
    body = text[start:end].split("\n")
    assert all(not line or line.startswith("    ") for line in body)
    dedented = "\n".join(line.removeprefix("    ") for line in body) + "\n"
    config = (PACKAGE.parents[1] / "rustfmt.toml").read_text()
    width = int(next(line for line in config.splitlines() if line.startswith("max_width")).split("=")[1])
    lines = [line for line in config.splitlines() if not line.startswith("max_width")]
    (tmp_path / "rustfmt.toml").write_text("\n".join([*lines, f"max_width = {width - 4}", ""]))
    formatted = subprocess.run(
        [RUSTFMT, "--edition", "2021", "--config-path", str(tmp_path / "rustfmt.toml"), "--emit", "stdout", "-q"],
        input=dedented,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert formatted.rstrip("\n").split("\n") == [line.removeprefix("    ") for line in body]

"""What a shipped Python row cannot stream (docs/peers.md): test_check_driver's allowed skips and test_drivers'
streamed runs read it from here."""

from __future__ import annotations

from clientbench.registry.spec import ClientSpec

#: the check-driver checks of a direction (docs/raw-format.md, "Streamed bodies")
STREAM_CHECKS = {"upload": ("stream: --upload stream", "stream: both ways")}
_BYTES_ONLY = "its content is bytes only: an iterator is a TypeError"
#: the streamed directions a shipped Python row's library cannot do, by library and mode, and why: its rows say
#: `unsupported: --upload stream ...` (exit 3), and nothing else may be skipped; when the library gains the
#: direction, its entry goes
UNSTREAMED: dict[tuple[str, str], dict[str, str]] = {
    ("primp", "sync"): {"upload": _BYTES_ONLY},
    ("primp", "async"): {"upload": _BYTES_ONLY},
    ("httpr", "sync"): {"upload": _BYTES_ONLY},
    ("httpr", "async"): {"upload": _BYTES_ONLY},
    # rnet 2.4.2 sends 180224 of 1048576 bytes of an async generator body, and no error
    ("rnet", "async"): {"upload": "its async client sends an async generator body in part"},
}


def unstreamed(spec: ClientSpec) -> dict[str, str]:
    """The directions this row cannot stream, each with why (none for a row that is not Python's)."""
    if spec.client.language != "Python":
        return {}
    return UNSTREAMED.get((spec.client.library.split("+", 1)[0], spec.client.mode), {})

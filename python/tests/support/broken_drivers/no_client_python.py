"""A Python driver whose document does not say which interpreter it ran on (client.python)."""

from typing import Any

from base import main


def drop(doc: dict[str, Any]) -> None:
    del doc["client"]["python"]


main(drop)

"""Python `requests`, sync: W threads, one `requests.Session` (own keep-alive connection) per thread."""

from __future__ import annotations

import argparse

import requests

from .. import harness


def make_client(args: argparse.Namespace) -> requests.Session:
    session = requests.Session()
    session.trust_env = False
    session.verify = harness.verify(args)  # no proxy / netrc lookups: measure the client, not the environment
    session.timeout = args.timeout  # type: ignore[attr-defined]  # read back in request()
    return session


def request(session: requests.Session, url: str) -> tuple[int, int]:
    r = session.get(url, timeout=session.timeout)  # type: ignore[attr-defined]
    return r.status_code, len(r.content)  # .content reads the whole body


def upload(session: requests.Session, url: str, method: str, body: bytes) -> tuple[int, bytes]:
    r = session.request(method, url, data=body, timeout=session.timeout)  # type: ignore[attr-defined]
    return r.status_code, r.content


def main(argv: list[str] | None = None) -> None:
    args = harness.parser(__doc__ or "").parse_args(argv)
    info = {
        "language": "Python",
        "library": "requests",
        "library_version": requests.__version__,
        "gil": None,
    }
    harness.run(args, info, harness.SyncDriver(make_client, request, lambda s: s.close(), upload))


if __name__ == "__main__":
    main()

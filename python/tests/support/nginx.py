"""Debian's nginx (`nginx-light`) as a server nobody here wrote, started by the tests only, each time with a
configuration of their own: in the foreground, one process, listening only on 127.0.0.1 at an ephemeral port,
its prefix, configuration, pid file, logs and temporary files all in a private folder. The package's own
service and its configuration (/etc/nginx, port 80) are never used. `make test` installs nginx and curl."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
CURL = shutil.which("curl")
MISSING = "nginx or curl is not installed (`apt-get install nginx-light curl`; `make test` installs them)"

CONF = """
master_process off;
worker_processes 1;
error_log {dir}/error.log warn;
pid {dir}/nginx.pid;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {dir}/tmp/body;
    proxy_temp_path {dir}/tmp/proxy;
    fastcgi_temp_path {dir}/tmp/fastcgi;
    uwsgi_temp_path {dir}/tmp/uwsgi;
    scgi_temp_path {dir}/tmp/scgi;
{http}
}}
"""


def missing() -> str | None:
    """Why the nginx tests cannot run here (they skip with it), or None. curl is the reference every test
    compares the bindings with, so it is needed as much as nginx."""
    return MISSING if NGINX is None or CURL is None else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running(folder: Path, http: str) -> Iterator[int]:
    """nginx with `http` (the directives of the http block, `{port}` standing for its port and `{dir}` for
    `folder`; every `listen` must be `127.0.0.1:{port}`) until the block ends; yields the port."""
    assert NGINX is not None, MISSING
    port = _free_port()
    (folder / "tmp").mkdir(parents=True, exist_ok=True)
    conf = folder / "nginx.conf"
    conf.write_text(CONF.format(dir=folder, http=http.format(dir=folder, port=port)))
    listens = [line.split() for line in conf.read_text().splitlines() if line.split()[:1] == ["listen"]]
    assert listens and all(words[1].rstrip(";") == f"127.0.0.1:{port}" for words in listens), listens
    # -p: the prefix; -e: the log used before the configuration is read (else the compiled-in /var/log/nginx)
    proc = subprocess.Popen(
        [NGINX, "-p", str(folder), "-e", str(folder / "error.log"), "-c", str(conf), "-g", "daemon off;"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            if proc.poll() is not None:
                err = proc.stderr.read().decode() if proc.stderr else ""
                log = (folder / "error.log").read_text() if (folder / "error.log").exists() else ""
                pytest.fail(f"nginx exited with {proc.returncode}: {err} {log}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("nginx did not start listening within 10 s")
                time.sleep(0.05)
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        if proc.stderr:
            proc.stderr.close()


def curl(*args: str) -> bytes:
    """curl's output (-sS, at most 20 s); a failure fails the test."""
    assert CURL is not None, MISSING
    return subprocess.run([CURL, "-sS", "--max-time", "20", *args], check=True, capture_output=True, timeout=30).stdout

"""The driver harness: the workload contract (docs/raw-format.md), once, for every Python driver.

A driver module supplies only how to make a client, how to do one GET and how to do one upload; this package
runs W workers (threads for sync libraries, tasks on one event loop for async ones) in a closed or an open
loop, times them and prints the raw document. Statistics are not computed here: the runner does that.

- options: the command line, its usage errors, the upload body, the TLS options;
- forms: the request a worker sends (the GET, the checked upload, the streamed form, a cycle of targets);
  bodies: the streamed body's chunks, an answer checked in pieces, the targets file;
- schedule: the open loop's intended start times and the loops that keep to them;
- record: what a worker measured, as samples or HdrHistogram buckets;
- failures: failure reasons with the classes the three languages share;
- workers: SyncDriver, AsyncDriver (the W workers), the document and `run`, a driver's main; info: versions,
  the interpreter, printing.
"""

from .failures import FAILURE_CLASSES, DigestMismatch, describe, failure_class
from .forms import AsyncRequest, AsyncStream, AsyncUpload, SyncRequest, SyncStream, SyncUpload
from .info import emit, interpreter, peak_rss_kib, skip_teardown, version
from .options import add_tls_options, parser, ssl_context, upload_answer, upload_body, verify
from .record import Worker, histogram, lowest_equivalent
from .schedule import intended_ns, open_loop, open_loop_async
from .workers import SCHEMA_ID, AsyncDriver, AsyncProtocol, SyncDriver, SyncProtocol, document, run

__all__ = [
    "FAILURE_CLASSES",
    "SCHEMA_ID",
    "AsyncDriver",
    "AsyncProtocol",
    "AsyncRequest",
    "AsyncStream",
    "AsyncUpload",
    "DigestMismatch",
    "SyncDriver",
    "SyncProtocol",
    "SyncRequest",
    "SyncStream",
    "SyncUpload",
    "Worker",
    "add_tls_options",
    "describe",
    "document",
    "emit",
    "failure_class",
    "histogram",
    "intended_ns",
    "interpreter",
    "lowest_equivalent",
    "open_loop",
    "open_loop_async",
    "parser",
    "peak_rss_kib",
    "run",
    "skip_teardown",
    "ssl_context",
    "upload_answer",
    "upload_body",
    "verify",
    "version",
]

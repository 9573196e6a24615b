"""HTTP/1.1 client on Boost.Beast (C++), bound with pybind11; the GIL is released during I/O.

    import beast_client

    with beast_client.Client(timeout=10.0) as client:
        r = client.request("GET", "https://example.org/search", params={"q": "caf\u00e9 au lait"})
        r.status, r.url, r.headers.get_all("set-cookie"), r.text()
        r = client.request("POST", "http://127.0.0.1:8080/anything", json={"a": 1})
        r.json()
        with client.stream("GET", "http://127.0.0.1:8080/bytes/1000000") as s:
            for chunk in s.iter_bytes():  # the GIL is released while each chunk is awaited
                ...
        status = client.get("http://127.0.0.1:8080/")  # the lean benchmark path: whole body read, not kept
        nbytes = client.last_body_bytes

Errors: ValueError (invalid URL, bad method/header/argument value), TypeError (argument of the wrong type),
TimeoutError, beast_client.TLSError (a ConnectionError: untrusted, expired or wrong-host certificate, failed
handshake), ConnectionError (its subclasses ConnectionRefusedError / ConnectionResetError where that is
clearly what happened), beast_client.ProtocolError (an OSError: malformed response, undecodable gzip/deflate
body, a redirect to an unsupported URL), beast_client.BodyTooLarge (a ProtocolError: a body over
max_body_size), beast_client.TooManyRedirects (an OSError), RuntimeError (a closed Client). Non-2xx statuses
are returned, not raised.

A Client may be shared by threads, as a requests.Session is: each request takes a keep-alive connection of its
own from the client's pool (``max_connections`` bounds them per origin), with the GIL released while it waits
(docs/binding-api.md, "Threads").

``cookies=True`` gives a client a cookie jar (request/stream only); ``max_body_size`` bounds what
``request()`` keeps. Clients are fork-safe: in a child made by ``fork()`` they open their own connections at
their first request there, never using the parent's.
"""

from collections.abc import Mapping

from ._core import (
    BodyTooLarge,
    Client,
    Headers,
    ProtocolError,
    Response,
    StreamResponse,
    TLSError,
    TooManyRedirects,
    __version__,
    boost_version,
)

Mapping.register(Headers)

__all__ = [
    "BodyTooLarge",
    "Client",
    "Headers",
    "ProtocolError",
    "Response",
    "StreamResponse",
    "TLSError",
    "TooManyRedirects",
    "__version__",
    "boost_version",
]

"""HTTP/1.1 client on Boost.Beast (C++), bound with pybind11; the GIL is released during I/O.

    import beast_client

    with beast_client.Client(timeout=5.0) as client:
        status = client.get("http://127.0.0.1:8080/")        # whole body read, not kept
        nbytes = client.last_body_bytes
        r = client.request("POST", "http://127.0.0.1:8080/echo",
                           headers={"Content-Type": "text/plain"}, body=b"hi")
        r.status, r.headers, r.body

    # HTTPS (Boost.Asio SSL / OpenSSL): verify= as in requests (True, a CA bundle path, or False)
    with beast_client.Client(verify="ca.pem") as client:
        client.get("https://localhost:8443/")
        client.tls_info                                      # {'version': 'TLSv1.3', 'cipher': ...}

Errors: ValueError (invalid URL, bad method/header), TimeoutError, beast_client.TLSError (a ConnectionError:
untrusted, expired or wrong-host certificate, failed handshake), ConnectionError (its subclasses
ConnectionRefusedError / ConnectionResetError where that is clearly what happened),
beast_client.ProtocolError (an OSError: malformed response), RuntimeError (a closed Client, or one used by
two threads at once). Non-2xx statuses are returned, not raised.
"""

from ._core import Client, ProtocolError, Response, TLSError, __version__, boost_version

__all__ = ["Client", "ProtocolError", "Response", "TLSError", "__version__", "boost_version"]

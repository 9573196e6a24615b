"""The ASGI app Hypercorn serves in the outside-QUIC tests (support/quicserver.py): the few routes the rows and the
checks use, written for Hypercorn, not for the project's server. GET / is "Hello, World!", GET /bytes/N is N bytes
of b"x", POST or PUT /echo answers its body; anything else is 404. Runs in build/quic-server's interpreter."""


async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    method, path = scope["method"], scope["path"]
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    status, answer = 404, b"not found"
    if method == "GET" and path == "/":
        status, answer = 200, b"Hello, World!"
    elif method == "GET" and path.startswith("/bytes/") and path[7:].isdigit():
        status, answer = 200, b"x" * int(path[7:])
    elif method in ("POST", "PUT") and path == "/echo":
        status, answer = 200, body
    headers = [(b"content-length", str(len(answer)).encode()), (b"content-type", b"application/octet-stream")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": answer})

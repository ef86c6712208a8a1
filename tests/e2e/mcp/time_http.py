"""mcp-server-time served over streamable HTTP at http://127.0.0.1:PORT/mcp, for livenote's
test of `url` servers (server/tests/mcp.rs).

Usage: time_http.py PORT [NAME=VALUE ...]: with headers given, every HTTP request must carry
each of them exactly, or it is answered 401 (a server behind a token, like a hosted one)."""

import sys

import uvicorn
from mcp_server_time.server import create_server

port = int(sys.argv[1])
required = [arg.split("=", 1) for arg in sys.argv[2:]]
app = create_server("UTC").streamable_http_app()


async def guarded(scope, receive, send):
    if scope["type"] == "http":
        got = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if any(got.get(name.lower()) != value for name, value in required):
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
    await app(scope, receive, send)


uvicorn.run(guarded, host="127.0.0.1", port=port, log_level="warning")

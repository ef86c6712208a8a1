"""mcp-server-time served over streamable HTTP at http://127.0.0.1:PORT/mcp, for livenote's
test of `url` servers (server/tests/mcp.rs). Usage: time_http.py PORT."""

import sys

from mcp_server_time.server import create_server

create_server("UTC").run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))

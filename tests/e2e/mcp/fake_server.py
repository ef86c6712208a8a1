"""A misbehaving MCP server for livenote's fault tests (server/tests/mcp.rs), on the official
Python SDK (`mcp`, installed by install.sh).

At start it writes `started-<pid>` (holding its process group id) into $FAKE_MCP_DIR and
starts a grandchild (`sleep`) in its process group, so a test can tell that killing the server
ends the whole group. Tools:
- `echo {text}`: answers the text;
- `hang`: writes `hang-<pid>`, then never answers;
- `exit`: the server process exits at once, mid-call.
"""

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

from mcp.server.mcpserver import MCPServer

marks = Path(os.environ["FAKE_MCP_DIR"])
server = MCPServer("fake")


@server.tool()
def echo(text: str) -> str:
    """Answers the text it is given."""
    return text


@server.tool()
async def hang() -> str:
    """Never answers."""
    (marks / f"hang-{os.getpid()}").write_text(str(os.getpgrp()))
    while True:
        await asyncio.sleep(3600)


@server.tool()
def exit() -> str:
    """Ends the server process at once."""
    sys.stderr.write("fake: exiting mid-call\n")
    sys.stderr.flush()
    os._exit(3)


if __name__ == "__main__":
    # A server that is slow to start (FAKE_MCP_START_DELAY seconds), as one in a cold venv or
    # through npx is.
    time.sleep(float(os.environ.get("FAKE_MCP_START_DELAY", "0")))
    subprocess.Popen(
        ["sleep", "100000"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    (marks / f"started-{os.getpid()}").write_text(str(os.getpgrp()))
    server.run()

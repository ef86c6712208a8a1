"""Drive an MCP server over stdio with the official Python SDK (`mcp` on PyPI) through a list of
steps, and print one JSON line per step with what the server answered.

    python drive.py STEPS.json WORKSPACE -- COMMAND [ARGS...]

STEPS.json is a list of objects, each one of:
    {"tools": true}                      -> {"tools": [{"name", "inputSchema"}...]}
    {"prompts": true}                    -> {"prompts": [{"name", "arguments": [{"name", "required"}]}]}
    {"prompt": NAME, "args": {...}}      -> {"messages": [{"role", "text"}]} or {"protocolError"}
    {"resources": true}                  -> {"resources": [{"uri", "name", "title", "mimeType"}]}
    {"read": URI}                        -> {"contents": [{"uri", "mimeType", "text"}]} or {"protocolError"}
    {"call": TOOL, "args": {...}}        -> {"isError", "text"} or {"protocolError"}
Every result also has "unchanged": whether every file under WORKSPACE (livenote's own
`.livenote/` included) has the same bytes after the step as before it.

The server gets the environment variables the SDK passes on by default plus LIVENOTE_* and TZ, so
a test can point livenote at its own data folder (trust store) and clock. Used by
server/tests/mcp_server.rs; see docs/mcp.md.
"""

import asyncio
import hashlib
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError


def tree_digest(root):
    """SHA-256 over every file's path and bytes (and every link's target) under root."""
    h = hashlib.sha256()
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]):
            path = os.path.join(folder, name)
            h.update(os.path.relpath(path, root).encode())
            if os.path.islink(path):
                h.update(b"->" + os.readlink(path).encode())
            else:
                with open(path, "rb") as f:
                    h.update(hashlib.sha256(f.read()).digest())
    return h.hexdigest()


def text_of(content):
    return "\n".join(c.text for c in content if getattr(c, "type", None) == "text")


async def step(session, s):
    if s.get("tools"):
        tools = await session.list_tools()
        return {"tools": [{"name": t.name, "inputSchema": t.input_schema} for t in tools.tools]}
    if s.get("prompts"):
        prompts = await session.list_prompts()
        return {
            "prompts": [
                {"name": p.name, "arguments": [{"name": a.name, "required": bool(a.required)} for a in p.arguments or []]}
                for p in prompts.prompts
            ]
        }
    if s.get("resources"):
        res = await session.list_resources()
        return {
            "resources": [
                {"uri": str(r.uri), "name": r.name, "title": r.title, "mimeType": r.mime_type} for r in res.resources
            ]
        }
    if "prompt" in s:
        p = await session.get_prompt(s["prompt"], s.get("args") or {})
        return {"messages": [{"role": m.role, "text": m.content.text} for m in p.messages]}
    if "read" in s:
        r = await session.read_resource(s["read"])
        return {"contents": [{"uri": str(c.uri), "mimeType": c.mime_type, "text": c.text} for c in r.contents]}
    if "call" in s:
        r = await session.call_tool(s["call"], s.get("args") or {})
        return {"isError": bool(r.is_error), "text": text_of(r.content)}
    raise ValueError(f"unknown step {s!r}")


async def main(steps_file, workspace, command):
    with open(steps_file) as f:
        steps = json.load(f)
    env = {k: v for k, v in os.environ.items() if k.startswith("LIVENOTE_") or k == "TZ"}
    server = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=workspace)
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            print(json.dumps({"server": init.server_info.name, "protocol": init.protocol_version}), flush=True)
            for s in steps:
                before = tree_digest(workspace)
                try:
                    result = await step(session, s)
                except MCPError as e:
                    result = {"protocolError": str(e)}
                result["unchanged"] = tree_digest(workspace) == before
                result["step"] = s
                print(json.dumps(result), flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        sys.exit(__doc__)
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[4:]))

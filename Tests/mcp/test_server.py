#!/usr/bin/env python3
"""The MCP servers ParleyMCPTests talk to, in one file.

  --http PORT      the official Python SDK's server (`mcp` on PyPI) over Streamable HTTP on 127.0.0.1:PORT/mcp
  --stdio          the same server over stdio
  --scripted PORT  a tiny hand-written Streamable HTTP server (http.server, no SDK) for what the SDK will not
                   do on demand: answer `initialize` with --version V, list tools in three pages
                   (nextCursor), forget its session once after --expire-after N requests (404), and
                   refuse `server/discover` as an older server does.

The SDK server's tools: lookup (readOnlyHint), delete_item (destructiveHint), fail (isError), stats
(structured content with an output schema), slow (sleeps, sends progress unless quiet, writes "cancelled <seconds>"
to $MCP_TEST_CANCEL_FILE when cancelled), image (a 1x1 PNG), grow (adds a tool `grown` and tells the
client the list changed), crash (exits at once with status 3 after a line on stderr).
Every request the scripted server receives is appended as one JSON line to $MCP_TEST_LOG when set.
"""
import argparse
import base64
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


def sdk_server():
    import anyio
    from mcp.server.mcpserver import Context, Image, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp_types import ToolAnnotations
    from typing import TypedDict

    server = MCPServer("parley-test")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def lookup(key: str) -> str:
        """Looks a key up."""
        return f"value of {key}"

    @server.tool(annotations=ToolAnnotations(destructive_hint=True))
    def delete_item(item: str) -> str:
        """Deletes an item."""
        return f"deleted {item}"

    @server.tool()
    def fail() -> str:
        """Always fails."""
        raise ToolError("this tool always fails")

    class Stats(TypedDict):
        count: int
        mean: float

    @server.tool()
    def stats() -> Stats:
        """Structured numbers."""
        return {"count": 3, "mean": 1.5}

    @server.tool()
    async def slow(seconds: float, ctx: Context, quiet: bool = False) -> str:
        """Sleeps, reporting progress every 0.2 s (unless quiet)."""
        steps = max(1, int(seconds / 0.2))
        try:
            for step in range(steps):
                await anyio.sleep(seconds / steps)
                if not quiet:
                    await ctx.report_progress(step + 1, steps)
        except BaseException:
            path = os.environ.get("MCP_TEST_CANCEL_FILE")
            if path:
                with open(path, "a") as handle:
                    handle.write(f"cancelled {seconds}\n")
            raise
        return f"slept {seconds}"

    @server.tool()
    def image() -> Image:
        """A tiny PNG."""
        return Image(data=PNG, format="png")

    @server.tool()
    async def grow(ctx: Context) -> str:
        """Adds the tool `grown` and says the list changed."""
        def grown() -> str:
            return "grown"
        server.add_tool(grown, name="grown")
        await ctx.session.send_tool_list_changed()
        return "grew"

    @server.tool()
    def crash() -> str:
        """Exits the process at once."""
        print("crashing on purpose", file=sys.stderr, flush=True)
        os._exit(3)

    return server


class Scripted:
    """State of the hand-written server."""

    def __init__(self, version, expire_after):
        self.version = version
        self.expire_after = expire_after
        self.session = None
        self.sessions = 0
        self.requests = 0
        self.lock = threading.Lock()


def scripted_handler(state):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def answer(self, status, body=None, headers=()):
            data = json.dumps(body).encode() if body is not None else b""
            self.send_response(status)
            if body is not None:
                self.send_header("Content-Type", "application/json")
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_DELETE(self):
            self.record({"delete": self.headers.get("Mcp-Session-Id")})
            self.answer(200)

        def record(self, entry):
            path = os.environ.get("MCP_TEST_LOG")
            if path:
                with open(path, "a") as handle:
                    handle.write(json.dumps(entry) + "\n")

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            method, rid = body.get("method"), body.get("id")
            self.record({"method": method, "session": self.headers.get("Mcp-Session-Id"),
                         "version": self.headers.get("MCP-Protocol-Version"), "params": body.get("params")})
            with state.lock:
                state.requests += 1
                if method == "server/discover":
                    return self.answer(400, {"jsonrpc": "2.0", "id": None,
                                             "error": {"code": -32600, "message": "Bad Request: Missing session ID"}})
                if method == "initialize":
                    state.sessions += 1
                    state.session = f"session-{state.sessions}"
                    return self.answer(200, {"jsonrpc": "2.0", "id": rid, "result": {
                        "protocolVersion": state.version, "capabilities": {"tools": {"listChanged": True}},
                        "serverInfo": {"name": "scripted", "version": "1"}}}, [("Mcp-Session-Id", state.session)])
                if self.headers.get("Mcp-Session-Id") != state.session:
                    return self.answer(404, {"jsonrpc": "2.0", "id": rid, "error": {"code": -32001, "message": "Session not found"}})
                if state.expire_after and state.requests >= state.expire_after and state.sessions == 1:
                    state.session = "forgotten"
                    return self.answer(404, {"jsonrpc": "2.0", "id": rid, "error": {"code": -32001, "message": "Session not found"}})
            if rid is None:
                return self.answer(202)
            if method == "tools/list":
                cursor = (body.get("params") or {}).get("cursor")
                page = {None: 0, "page-2": 1, "page-3": 2}.get(cursor, 0)
                tools = [{"name": f"tool{page * 2 + i}", "inputSchema": {"type": "object"}} for i in range(2)]
                result = {"tools": tools}
                if page < 2:
                    result["nextCursor"] = f"page-{page + 2}"
                return self.answer(200, {"jsonrpc": "2.0", "id": rid, "result": result})
            if method == "tools/call":
                name = body["params"]["name"]
                return self.answer(200, {"jsonrpc": "2.0", "id": rid, "result": {
                    "content": [{"type": "text", "text": f"called {name}"}], "isError": False}})
            self.answer(200, {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}})

    return Handler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int)
    parser.add_argument("--stdio", action="store_true")
    parser.add_argument("--scripted", type=int)
    parser.add_argument("--version", default="2025-06-18")
    parser.add_argument("--expire-after", type=int, default=0)
    args = parser.parse_args()
    if args.scripted is not None:
        server = ThreadingHTTPServer(("127.0.0.1", args.scripted), scripted_handler(Scripted(args.version, args.expire_after)))
        server.daemon_threads = True
        print(f"listening on {server.server_address[1]}", flush=True)
        server.serve_forever()
    elif args.http is not None:
        sdk_server().run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        sdk_server().run("stdio")


if __name__ == "__main__":
    main()

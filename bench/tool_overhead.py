"""Parley tool-call overhead bench (issue 20): the time Parley adds around one MCP tool call.

Standard library only (uvloop when installed, as in the bench venv `make bench` makes). Everything runs
on 127.0.0.1, is bounded in count and time, and every process it starts is stopped at the end.

It starts three processes of its own (this file with --role) and one Parley:

- a fake OpenAI-compatible upstream (--role upstream). A chat request without tool results streams a
  short text, then one tool call whose arguments are `{"text":"<token>"}`: the first argument bytes at
  once, the rest (`"}`) --split-ms later in one write with the `finish_reason: "tool_calls"` chunk,
  `data: [DONE]` and the end of the chunked body; t0 = CLOCK_MONOTONIC right after that write. A request
  holding the tool result (a `role: "tool"` message) records t3 = when its first bytes arrived, and
  answers a short text. The token is the bench's own: the user message carries it, the model puts it in
  the arguments, the tool echoes it back, so the second request carries it too.
- a minimal MCP server over Streamable HTTP (--role mcp; 2025-11-25, JSON answers, no SSE). It refuses
  `server/discover` as a pre-2026 server does, answers `initialize` (with a session id),
  `notifications/initialized`, `tools/list` (one tool, `echo`, `readOnlyHint`) and `tools/call`:
  t1 = when the call's first bytes arrived, t2 = just before it writes the result (the token).
  The official SDK server takes milliseconds per call by itself, too slow for this figure.
- Parley (`$PARLEY_BIN`, a release build) with `PARLEY_MCP_CONFIG` naming that server as `bench`
  (`"approval": "never"`), `PARLEY_OPENAI_BASE_URL` at the fake upstream and caps far above the load.

The client (this process) creates one conversation per reply with `"tools": ["bench/echo"]`, sends
the message and reads the reply's event stream (`?mode=text`) to `done`. --levels lists runs as
IN_FLIGHT:MODEL_MS (default 1:100,50:0,50:1000): that many replies kept in flight until --replies
(--replies-1 at 1) or --seconds, the first --warmup of each not counted. MODEL_MS is the model's time
before each answer's first byte (drawn from 0.5-1.5x per answer, so replies started together drift
apart), outside every measured span: 0 is a closed loop that saturates Parley (the figures are then
mostly queueing behind other replies' work), 1000 keeps 50 replies in flight the way people do.
The database is in a temporary directory under $TMPDIR (TMPDIR=/dev/shm takes the disk's fsyncs out).
Per reply:

    call latency   = t1 − t0   model's last argument byte written → tools/call at the MCP server
    answer latency = t3 − t2   tool result about to be written   → next model request at the upstream

Both include the loopback hops and the fake servers' own event-loop delays (an upper bound of
Parley's share); the table also gives t2 − t1, the MCP server's own time per call, and Parley's CPU
(utime+stime) per reply, for the whole reply. The goal (issue 20):
p50 ≤ 2 ms and p99 ≤ 10 ms for both, at 50 concurrent tool-using replies. Prints a Markdown table and
writes it to bench/tool-results.md (git-ignored).
"""

import argparse
import asyncio
import json
import os
import platform
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

GOAL_P50_MS = 2.0
GOAL_P99_MS = 10.0
GOAL_CONCURRENCY = 50
PROTOCOL_VERSION = "2025-11-25"
TOKEN = re.compile(r"tok-[a-z0-9]+-\d+")
MODEL_MS = re.compile(r"model_ms=(\d+)")
MAX_REQUEST_BYTES = 8 * 1024 * 1024


# MARK: - The fake servers (--role upstream | mcp): raw asyncio protocols, so that a request's arrival
# is stamped on the first bytes, before any parsing.


def decode_chunked(buffer, start):
    """(body, end) of a complete chunked body starting at `start`, or None when more is needed."""
    body, at = bytearray(), start
    while True:
        end = buffer.find(b"\r\n", at)
        if end < 0:
            return None
        size = int(bytes(buffer[at:end]).split(b";")[0], 16)
        at = end + 2
        if size == 0:
            trailer = buffer.find(b"\r\n", at)
            return (bytes(body), trailer + 2) if trailer >= 0 else None
        if len(buffer) < at + size + 2:
            return None
        body += buffer[at:at + size]
        at += size + 2


class HTTPServerProtocol(asyncio.Protocol):
    """HTTP/1.1 keep-alive requests; calls `app.handle(self, method, path, headers, body, arrived_ns)`."""

    def __init__(self, app):
        self.app = app
        self.buffer = bytearray()
        self.arrived = None
        self.transport = None

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        if not self.buffer:
            self.arrived = time.monotonic_ns()
        self.buffer += data
        while self.buffer:
            head_end = self.buffer.find(b"\r\n\r\n")
            if head_end < 0:
                return
            lines = bytes(self.buffer[:head_end]).decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            headers = {}
            for line in lines[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            start = head_end + 4
            if headers.get("transfer-encoding", "").lower() == "chunked":
                decoded = decode_chunked(self.buffer, start)
                if decoded is None:
                    return
                body, end = decoded
            else:
                length = int(headers.get("content-length", "0"))
                if len(self.buffer) < start + length:
                    if length > MAX_REQUEST_BYTES:
                        self.transport.close()
                    return
                body, end = bytes(self.buffer[start:start + length]), start + length
            arrived = self.arrived
            del self.buffer[:end]
            self.arrived = time.monotonic_ns() if self.buffer else None
            self.app.handle(self, method, path, headers, body, arrived)

    def write(self, data):
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)


def response(status, body=b"", content_type=b"application/json", extra=b""):
    reason = {200: b"OK", 202: b"Accepted", 400: b"Bad Request", 404: b"Not Found", 405: b"Method Not Allowed"}
    head = b"HTTP/1.1 %d %s\r\n" % (status, reason.get(status, b"Error"))
    if body:
        head += b"Content-Type: " + content_type + b"\r\n"
    return head + extra + b"Content-Length: %d\r\n\r\n" % len(body) + body


def json_response(status, value, extra=b""):
    return response(status, json.dumps(value, separators=(",", ":")).encode(), extra=extra)


def sse_chunk(value):
    """One HTTP chunk holding one SSE event."""
    data = b"data: " + (value if isinstance(value, bytes) else json.dumps(value, separators=(",", ":")).encode()) + b"\n\n"
    return b"%x\r\n%s\r\n" % (len(data), data)


class Recorder:
    """Times by token, and `GET /bench/times` to read them (and clear them)."""

    def __init__(self):
        self.times = {}

    def stats_route(self, connection, method, path):
        if method == "GET" and path == "/bench/times":
            connection.write(json_response(200, self.times))
            self.times = {}
            return True
        return False


class Upstream(Recorder):
    def __init__(self, split_ms):
        super().__init__()
        self.split_s = split_ms / 1000.0
        self.loop = asyncio.get_event_loop()

    def handle(self, connection, method, path, headers, body, arrived):
        if self.stats_route(connection, method, path):
            return
        if method == "GET" and path.endswith("/models"):
            connection.write(json_response(200, {"object": "list", "data": [
                {"id": "bench", "object": "model", "created": 0, "owned_by": "bench"}]}))
            return
        if method != "POST" or not path.endswith("/chat/completions"):
            connection.write(json_response(404, {"error": {"message": "not found"}}))
            return
        request = json.loads(body or b"{}")
        messages = request.get("messages") or []
        results = [m for m in messages if isinstance(m, dict) and m.get("role") == "tool"]
        users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
        asked = str(users[-1].get("content")) if users else ""
        model_ms = MODEL_MS.search(asked)
        # Each answer's model time is drawn uniformly from 0.5-1.5x the level's, so that replies started
        # together do not stay in lockstep (50 calls in the same millisecond are a burst, not 50 users).
        delay = int(model_ms.group(1)) / 1000.0 * random.uniform(0.5, 1.5) if model_ms else 0.0
        if results:
            found = TOKEN.search(str(results[-1].get("content")))
            if found:
                self.times.setdefault(found.group(0), {})["t3"] = arrived
        found = TOKEN.search(asked)
        token = found.group(0) if found else "tok-none-0"
        if delay > 0:  # the model's time to its first byte, outside every measured span
            self.loop.call_later(delay, self.answer, connection, request, bool(results), token)
        else:
            self.answer(connection, request, bool(results), token)

    def answer(self, connection, request, after_result, token):
        usage = (request.get("stream_options") or {}).get("include_usage")
        head = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n")
        if after_result:
            connection.write(head + self.text("All done.") + self.end("stop", usage))
            return
        tools = request.get("tools") or [{}]
        name = (tools[0].get("function") or {}).get("name", "echo")
        arguments = json.dumps({"text": token}, separators=(",", ":"))
        first, last = arguments[:-2], arguments[-2:]
        connection.write(head + self.text("Let me call the tool. ") + sse_chunk(self.chunk({"tool_calls": [
            {"index": 0, "id": "call_" + token, "type": "function",
             "function": {"name": name, "arguments": first}}]})))
        self.loop.call_later(self.split_s, self.finish_call, connection, token, last, usage)

    def finish_call(self, connection, token, last, usage):
        connection.write(sse_chunk(self.chunk({"tool_calls": [{"index": 0, "function": {"arguments": last}}]}))
                         + self.end("tool_calls", usage))
        self.times.setdefault(token, {})["t0"] = time.monotonic_ns()

    @staticmethod
    def chunk(delta, finish=None):
        return {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "model": "bench",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    def text(self, words):
        return sse_chunk(self.chunk({"role": "assistant", "content": words}))

    def end(self, reason, usage):
        out = sse_chunk(self.chunk({}, reason))
        if usage:
            out += sse_chunk({"id": "chatcmpl-bench", "object": "chat.completion.chunk", "model": "bench",
                              "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}})
        return out + sse_chunk(b"[DONE]") + b"0\r\n\r\n"


ECHO_TOOL = {"name": "echo", "description": "Echoes its text.",
             "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
             "annotations": {"readOnlyHint": True}}


class MCPServer(Recorder):
    """The MCP server: one session at a time is enough (Parley keeps one per server)."""

    def __init__(self):
        super().__init__()
        self.session = None
        self.sessions = 0

    def handle(self, connection, method, path, headers, body, arrived):
        if self.stats_route(connection, method, path):
            return
        if method == "DELETE":
            connection.write(response(200))
            return
        if method != "POST":
            connection.write(response(405))
            return
        message = json.loads(body)
        name, rid = message.get("method"), message.get("id")
        if name == "server/discover":
            connection.write(json_response(400, {"jsonrpc": "2.0", "id": None,
                                                 "error": {"code": -32600, "message": "Bad Request: Missing session ID"}}))
            return
        if name == "initialize":
            self.sessions += 1
            self.session = "bench-%d" % self.sessions
            connection.write(json_response(200, {"jsonrpc": "2.0", "id": rid, "result": {
                "protocolVersion": PROTOCOL_VERSION, "capabilities": {"tools": {}},
                "serverInfo": {"name": "bench", "version": "1"}}},
                extra=b"Mcp-Session-Id: " + self.session.encode() + b"\r\n"))
            return
        if headers.get("mcp-session-id") != self.session:
            connection.write(json_response(404, {"jsonrpc": "2.0", "id": rid,
                                                 "error": {"code": -32001, "message": "Session not found"}}))
            return
        if rid is None:
            connection.write(response(202))
        elif name == "tools/list":
            connection.write(json_response(200, {"jsonrpc": "2.0", "id": rid, "result": {"tools": [ECHO_TOOL]}}))
        elif name == "tools/call":
            text = str(((message.get("params") or {}).get("arguments") or {}).get("text", ""))
            data = json.dumps({"jsonrpc": "2.0", "id": rid, "result": {
                "content": [{"type": "text", "text": text}], "isError": False}}, separators=(",", ":")).encode()
            entry = self.times.setdefault(text, {})
            entry["t1"] = arrived
            entry["t2"] = time.monotonic_ns()
            connection.write(response(200, data))
        elif name == "ping":
            connection.write(json_response(200, {"jsonrpc": "2.0", "id": rid, "result": {}}))
        else:
            connection.write(json_response(200, {"jsonrpc": "2.0", "id": rid,
                                                 "error": {"code": -32601, "message": "Method not found"}}))


async def serve(role, split_ms):
    app = Upstream(split_ms) if role == "upstream" else MCPServer()
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: HTTPServerProtocol(app), "127.0.0.1", 0, backlog=1024)
    print("port %d" % server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


# MARK: - The client


def start_server(processes, role, workdir, split_ms):
    import bench
    process = processes.start(role, [sys.executable, os.path.abspath(__file__), "--role", role,
                                     "--split-ms", str(split_ms)],
                              stdout=subprocess.PIPE, stderr=open(os.path.join(workdir, role + ".log"), "wb"))
    line = bench.read_line(process, bench.START_TIMEOUT_S, "the fake %s" % role)
    match = re.fullmatch(r"port (\d+)", line)
    if not match:
        raise bench.BenchError("the fake %s printed %r" % (role, line))
    return process, int(match.group(1))


def start_parley(processes, binary, workdir, upstream_port, mcp_port):
    import bench
    config = os.path.join(workdir, "mcp.json")
    with open(config, "w") as handle:
        json.dump({"mcpServers": {"bench": {"url": "http://127.0.0.1:%d/mcp" % mcp_port, "approval": "never"}}}, handle)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PARLEY_")}
    env.update({
        "PARLEY_AUTH": "off",
        "PARLEY_MCP_CONFIG": config,
        "PARLEY_OPENAI_BASE_URL": "http://127.0.0.1:%d/v1" % upstream_port,
        "PARLEY_OPENAI_MODELS": "bench",
        "PARLEY_TITLES": "off",  # no title request after each first answer
        "PARLEY_MAX_GENERATIONS": "1000",
        "PARLEY_MAX_GENERATIONS_PER_USER": "1000",
        "PARLEY_MAX_STREAMS_PER_USER": "1000",
        "PARLEY_USER_MESSAGES_PER_MINUTE": "1000000",
    })
    log_path = os.path.join(workdir, "parley.log")
    argv = [binary, "--port", "0", "--db", os.path.join(workdir, "parley.db"), "--public", os.path.join(bench.REPO, "Public")]
    process = processes.start("parley", argv, env=env, stdout=subprocess.PIPE, stderr=open(log_path, "wb"))
    try:
        line = bench.read_line(process, bench.START_TIMEOUT_S, "parley")
    except bench.BenchError as error:
        raise bench.BenchError("%s; its log ends with:\n%s" % (error, bench.tail_of(log_path)))
    match = re.fullmatch(r"listening on http://[^:]+:(\d+)", line)
    if not match:
        raise bench.BenchError("parley printed %r instead of `listening on http://HOST:PORT`" % line)
    return process, int(match.group(1)), log_path


async def wait_for_tool(port, deadline_s=20.0):
    import bench
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        listed = await bench.request_json(port, "GET", "/api/tools")
        if any(item["id"] == "bench/echo" and item["available"] for item in listed["items"]):
            return
        await asyncio.sleep(0.1)
    raise bench.BenchError("parley did not list bench/echo as available within %.0f s" % deadline_s)


async def one_reply(port, token, model_ms):
    """A conversation with the tool enabled, one message, its event stream to `done`. Returns the status."""
    import bench
    conversation = await bench.request_json(port, "POST", "/api/conversations",
                                            {"title": "tools bench", "model": "openai:bench", "tools": ["bench/echo"]})
    created = await bench.request_json(port, "POST", "/api/conversations/%s/messages" % conversation["id"],
                                       {"content": "Echo %s please. model_ms=%d" % (token, model_ms), "model": "openai:bench"})
    path = "/api/messages/%s/stream?mode=text" % created["assistant_message"]["id"]
    status, headers, reader, writer = await bench.open_http(port, "GET", path)
    done = {}
    try:
        if status != 200:
            raise bench.BenchError("GET %s answered %d" % (path, status))

        def on_events(events, _received):
            for name, data in events:
                if name == "error":
                    raise bench.BenchError("parley reported a failed reply: %s" % data.decode(errors="replace"))
                if name == "done":
                    done.update(json.loads(data))
                    return True
            return False

        await bench.read_events(reader, headers, on_events)
    finally:
        writer.close()
    return done.get("status"), done.get("finish_reason")


async def level(port, upstream_port, mcp_port, concurrency, model_ms, replies, warmup, seconds, tag, parley_pid):
    """Runs `warmup + replies` replies, `concurrency` at a time (at most `seconds`); returns the
    per-reply times of the counted ones and how many replies ended otherwise than complete."""
    import bench
    total = warmup + replies
    issued, failures = [0], []
    end = time.monotonic() + seconds

    async def worker():
        while issued[0] < total and time.monotonic() < end:
            index = issued[0]
            issued[0] += 1
            token = "tok-%s-%d" % (tag, index)
            status, finish = await one_reply(port, token, model_ms)
            if status != "complete" or finish != "stop":
                failures.append((token, status, finish))

    meter = bench.CPUMeter(parley_pid)
    meter.start()
    started = time.monotonic()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.monotonic() - started
    cpu_ms = meter.stop()[1]
    upstream = await bench.request_json(upstream_port, "GET", "/bench/times")
    mcp = await bench.request_json(mcp_port, "GET", "/bench/times")
    rows = []
    for index in range(warmup, issued[0]):
        token = "tok-%s-%d" % (tag, index)
        a, b = upstream.get(token, {}), mcp.get(token, {})
        if all(key in a for key in ("t0", "t3")) and all(key in b for key in ("t1", "t2")):
            rows.append((a["t0"], b["t1"], b["t2"], a["t3"]))
    return {"rows": rows, "issued": issued[0], "failures": failures, "elapsed": elapsed, "cpu_ms": cpu_ms}


def quantiles(values):
    import bench
    if not values:
        return None
    return {name: bench.percentile(values, q) for name, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99))} | {"max": max(values)}


def summarize(result):
    rows = result["rows"]
    return {
        "call": quantiles([(t1 - t0) / 1e6 for t0, t1, _, _ in rows]),
        "answer": quantiles([(t3 - t2) / 1e6 for _, _, t2, t3 in rows]),
        "server": quantiles([(t2 - t1) / 1e6 for _, t1, t2, _ in rows]),
        "count": len(rows),
    }


def report(args, env, results):
    def ms(value):
        return "—" if value is None else ("%.2f" % value if value < 10 else "%.1f" % value)

    lines = ["Tool-call overhead (issue 20): Parley %s, %s, %s, %d cores, load %s at start; client and fake "
             "servers on %s" % (env["commit"], time.strftime("%Y-%m-%d"), platform.machine(), os.cpu_count(),
                                env["load"], env["loop"]), "",
             "| replies in flight | model time per answer | replies timed | call latency t1−t0 p50 / p90 / p99 / max (ms) "
             "| answer latency t3−t2 p50 / p90 / p99 / max (ms) | MCP server's own t2−t1 p50 / p99 (ms) | replies/s | Parley CPU per reply, share of one core |",
             "|---|---|---|---|---|---|---|---|"]
    verdicts = []
    for concurrency, model_ms, result in results:
        s = summarize(result)
        call, answer, server = s["call"], s["answer"], s["server"]
        if call is None:
            lines.append("| %d | %d ms | 0 | — | — | — | — | — |" % (concurrency, model_ms))
            continue
        lines.append("| %d | %d ms | %d | %s / %s / %s / %s | %s / %s / %s / %s | %s / %s | %.0f | %.1f ms, %.0f%% |" % (
            concurrency, model_ms, s["count"], ms(call["p50"]), ms(call["p90"]), ms(call["p99"]), ms(call["max"]),
            ms(answer["p50"]), ms(answer["p90"]), ms(answer["p99"]), ms(answer["max"]),
            ms(server["p50"]), ms(server["p99"]), result["issued"] / result["elapsed"],
            result["cpu_ms"] / result["issued"], 100 * result["cpu_ms"] / 1000 / result["elapsed"]))
        if concurrency == GOAL_CONCURRENCY:
            met = all(q["p50"] <= GOAL_P50_MS and q["p99"] <= GOAL_P99_MS for q in (call, answer))
            verdicts.append("Goal (p50 ≤ %g ms and p99 ≤ %g ms for both, at %d in flight), model time %d ms: %s."
                            % (GOAL_P50_MS, GOAL_P99_MS, GOAL_CONCURRENCY, model_ms, "met" if met else "**not met**"))
        if result["failures"]:
            verdicts.append("%d replies at %d in flight (model %d ms) did not end complete/stop (first: %s)."
                            % (len(result["failures"]), concurrency, model_ms, result["failures"][0]))
    return "\n".join(lines + [""] + verdicts) + "\n"


def levels(text):
    out = []
    for item in text.split(","):
        concurrency, _, model_ms = item.partition(":")
        out.append((int(concurrency), int(model_ms or 0)))
    return out


def parse_args():
    import bench
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--role", choices=("upstream", "mcp"), help=argparse.SUPPRESS)
    parser.add_argument("--split-ms", type=float, default=5.0,
                        help="the upstream's pause between a tool call's first argument bytes and its last (ms)")
    parser.add_argument("--levels", default="1:100,50:0,50:1000",
                        help="comma-separated IN_FLIGHT:MODEL_MS, one run each: replies kept in flight, and the "
                             "model's time before each answer's first byte (0: the closed loop saturates Parley)")
    parser.add_argument("--replies", type=int, default=1000, help="replies timed per level (at most)")
    parser.add_argument("--replies-1", type=int, default=100, help="replies timed at concurrency 1 (at most)")
    parser.add_argument("--warmup", type=int, default=20, help="replies per level before timing")
    parser.add_argument("--seconds", type=float, default=30.0, help="longest time of one level")
    parser.add_argument("--time-limit", type=float, default=170)
    parser.add_argument("--parley-bin", default=os.environ.get("PARLEY_BIN",
                                                               os.path.join(bench.REPO, ".build/release/parley")))
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs, database)")
    parser.add_argument("--out", default=os.path.join(HERE, "tool-results.md"))
    return parser.parse_args()


def install_uvloop():
    try:
        import uvloop
        uvloop.install()
        return "uvloop %s" % uvloop.__version__
    except ImportError:
        return "asyncio"


def main():
    args = parse_args()
    loop_name = install_uvloop()
    if args.role:
        try:
            asyncio.run(serve(args.role, args.split_ms))
        except KeyboardInterrupt:
            pass
        return 0
    import bench
    log = lambda text: print(text, file=sys.stderr, flush=True)
    if not os.access(args.parley_bin, os.X_OK):
        log("tools bench: no parley binary at %s; run `swift build -c release` or set PARLEY_BIN" % args.parley_bin)
        return 2
    if loop_name == "asyncio":
        log("tools bench: uvloop is not installed (make bench makes a venv with it): plain asyncio")

    def on_signal(number, _frame):
        raise KeyboardInterrupt("signal %d" % number)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGALRM, on_signal)
    signal.alarm(int(args.time_limit))
    processes = bench.Processes()
    workdir = tempfile.mkdtemp(prefix="parley-tools-bench-")
    started = time.monotonic()
    try:
        _, upstream_port = start_server(processes, "upstream", workdir, args.split_ms)
        _, mcp_port = start_server(processes, "mcp", workdir, args.split_ms)
        parley, port, log_path = start_parley(processes, args.parley_bin, workdir, upstream_port, mcp_port)
        env = {"commit": bench.binary_commit(args.parley_bin), "loop": loop_name,
               "load": "%.1f" % os.getloadavg()[0], "parley_pid": parley.pid}
        log("tools bench: upstream :%d, MCP server :%d, parley :%d, in %s" % (upstream_port, mcp_port, port, workdir))

        async def run():
            await wait_for_tool(port)
            results = []
            for concurrency, model_ms in levels(args.levels):
                replies = args.replies_1 if concurrency == 1 else args.replies
                result = await level(port, upstream_port, mcp_port, concurrency, model_ms, replies, args.warmup,
                                     args.seconds, "c%dm%d" % (concurrency, model_ms), parley.pid)
                log("tools bench: %d in flight, model %d ms: %d replies in %.1f s, %d timed"
                    % (concurrency, model_ms, result["issued"], result["elapsed"], len(result["rows"])))
                results.append((concurrency, model_ms, result))
            return results

        results = asyncio.run(run())
        text = report(args, env, results)
        print(text)
        with open(args.out, "w") as handle:
            handle.write(text)
        log("tools bench: done in %.0f s; written to %s" % (time.monotonic() - started, args.out))
        return 0
    except bench.BenchError as error:
        log("tools bench: %s" % error)
        return 1
    except KeyboardInterrupt as interrupt:
        log("tools bench: stopped (%s) after %.0f s" % (interrupt or "interrupted", time.monotonic() - started))
        return 1
    finally:
        signal.alarm(0)
        processes.stop_all()
        if args.keep:
            log("tools bench: kept %s" % workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

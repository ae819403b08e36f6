"""A fake OpenAI-compatible upstream for the Parley bench (standard library only).

Serves on 127.0.0.1 (port 0 unless --port) and prints `port N` on stdout once listening.

  POST /v1/chat/completions  streams `data: {"choices":[{"delta":{"content":"..."},"index":0}]}` chunks,
                             then a finish_reason chunk (and a usage chunk when asked for), then
                             `data: [DONE]`; chunked transfer encoding, keep-alive.
  GET  /v1/models            {"object":"list","data":[{"id":"bench",...}]}
  POST /bench/release/KEY    opens the gate KEY (see below); 200 {"released":"KEY"}

What to stream is read from the last user message, so a client drives it through any relay:

  bench chunks=2000 interval_ms=0 gate=KEY

- chunks: content chunks to send (default 20).
- interval_ms: pacing; 0 sends as fast as the socket takes them. Chunk i is sent at start + i*interval,
  so pacing does not drift.
- gate: hold the body (headers are sent at once) until POST /bench/release/KEY, at most
  GATE_TIMEOUT_S (or hold_s=SECONDS). Lets every subscriber attach before the first chunk.
- a request's `max_tokens` caps the chunks (one chunk is one token), as a model stops at its limit
  (finish_reason `length`): Parley's title request after a first answer asks for 24 and quotes the
  question, directive included, so it gets 24 chunks at the question's pace.

GET /bench/stats answers {"streams": started, "finished": ended (sent to the end or cut), "chunks_sent"}:
the bench waits on `finished` for the title requests a run caused before it reads the server's CPU.

Each content chunk is `w<monotonic_ns at send> ` (every 16th ends a paragraph with `.\\n\\n`), so a
client computes relay latency as receive time minus the embedded send time. time.monotonic_ns is
CLOCK_MONOTONIC, shared by every process on the machine.
"""

import argparse
import asyncio
import json
import re
import sys
import time

GATE_TIMEOUT_S = 30.0
MAX_HEADER_BYTES = 64 * 1024
MAX_BODY_BYTES = 8 * 1024 * 1024
DRAIN_EVERY = 64  # unpaced: let the socket buffer drain every this many chunks
PARAGRAPH_EVERY = 16
DIRECTIVE = re.compile(r"(chunks|interval_ms|gate|hold_s)=([A-Za-z0-9_.-]+)")


class Gates:
    """Named one-shot events, created by whichever side (request or release) comes first."""

    def __init__(self):
        self.events = {}

    def get(self, key):
        event = self.events.get(key)
        if event is None:
            event = asyncio.Event()
            self.events[key] = event
        return event


def parse_directive(body):
    """The stream parameters from the last user message of a chat request."""
    params = {"chunks": 20, "interval_ms": 0.0, "gate": None, "hold_s": GATE_TIMEOUT_S}
    try:
        request = json.loads(body or b"{}")
    except ValueError:
        return params, {}
    text = ""
    for message in request.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):  # content parts
                content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
            if isinstance(content, str):
                text = content
    for name, value in DIRECTIVE.findall(text):
        if name == "chunks":
            params["chunks"] = max(0, min(int(float(value)), 1_000_000))
        elif name == "interval_ms":
            params["interval_ms"] = max(0.0, float(value))
        elif name == "hold_s":
            params["hold_s"] = max(0.0, min(float(value), 3600.0))
        else:
            params["gate"] = value
    return params, request


def chunk(payload):
    """One HTTP/1.1 chunk holding one SSE event."""
    data = b"data: " + payload + b"\n\n"
    return b"%x\r\n%s\r\n" % (len(data), data)


def content_event(index):
    text = "w%d%s" % (time.monotonic_ns(), ".\n\n" if index % PARAGRAPH_EVERY == PARAGRAPH_EVERY - 1 else " ")
    return chunk(b'{"id":"chatcmpl-bench","object":"chat.completion.chunk","model":"bench",'
                 b'"choices":[{"delta":{"content":' + json.dumps(text).encode() + b'},"index":0}]}')


class Upstream:
    def __init__(self):
        self.gates = Gates()
        self.streams = 0
        self.finished = 0
        self.chunks_sent = 0

    async def handle(self, reader, writer):
        try:
            while True:
                request = await read_request(reader)
                if request is None:
                    break
                method, path, headers, body = request
                keep_alive = headers.get("connection", "").lower() != "close"
                await self.route(method, path, body, writer)
                if not keep_alive:
                    break
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            writer.close()

    async def route(self, method, path, body, writer):
        path = path.split("?", 1)[0]
        if method == "POST" and path == "/v1/chat/completions":
            await self.stream(body, writer)
        elif method == "GET" and path == "/v1/models":
            send_json(writer, 200, {"object": "list", "data": [
                {"id": "bench", "object": "model", "created": 0, "owned_by": "bench"}]})
        elif method == "POST" and path.startswith("/bench/release/"):
            key = path[len("/bench/release/"):]
            self.gates.get(key).set()
            send_json(writer, 200, {"released": key})
        elif method == "GET" and path == "/bench/stats":
            send_json(writer, 200, {"streams": self.streams, "finished": self.finished,
                                    "chunks_sent": self.chunks_sent})
        else:
            send_json(writer, 404, {"error": {"message": "not found", "type": "invalid_request_error"}})
        await writer.drain()

    async def stream(self, body, writer):
        self.streams += 1
        try:
            await self.send_stream(body, writer)
        finally:
            self.finished += 1

    async def send_stream(self, body, writer):
        params, request = parse_directive(body)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n")
        await writer.drain()
        if params["gate"]:
            event = self.gates.get(params["gate"])
            try:
                await asyncio.wait_for(event.wait(), params["hold_s"])
            except asyncio.TimeoutError:
                pass
            self.gates.events.pop(params["gate"], None)
        count, interval = params["chunks"], params["interval_ms"] / 1000.0
        limit = request.get("max_tokens") or request.get("max_completion_tokens")
        finish = b"stop"
        if isinstance(limit, int) and 0 < limit < count:
            count, finish = limit, b"length"
        start = time.monotonic()
        for index in range(count):
            if interval > 0:
                delay = start + index * interval - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                writer.write(content_event(index))
                await writer.drain()
            else:
                writer.write(content_event(index))
                if index % DRAIN_EVERY == DRAIN_EVERY - 1:
                    await writer.drain()
            self.chunks_sent += 1
        writer.write(chunk(b'{"id":"chatcmpl-bench","object":"chat.completion.chunk","model":"bench",'
                           b'"choices":[{"delta":{},"index":0,"finish_reason":"' + finish + b'"}]}'))
        if (request.get("stream_options") or {}).get("include_usage"):
            writer.write(chunk(b'{"id":"chatcmpl-bench","object":"chat.completion.chunk","model":"bench",'
                               b'"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":%d,'
                               b'"total_tokens":%d}}' % (count, count + 1)))
        writer.write(chunk(b"[DONE]") + b"0\r\n\r\n")


def send_json(writer, status, value):
    body = json.dumps(value).encode()
    reason = {200: "OK", 404: "Not Found"}.get(status, "Error")
    writer.write(b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                 % (status, reason.encode(), len(body), body))


async def read_request(reader):
    """(method, path, headers, body) of the next request, or None at a clean end of the connection."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as error:
        if error.partial.strip():
            raise
        return None
    except asyncio.LimitOverrunError:
        raise ValueError("header too large")
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    body = b""
    if headers.get("transfer-encoding", "").lower() == "chunked":
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                break
            body += await reader.readexactly(size + 2)
            body = body[:-2]
            if len(body) > MAX_BODY_BYTES:
                raise ValueError("body too large")
    else:
        length = int(headers.get("content-length", "0"))
        if length > MAX_BODY_BYTES:
            raise ValueError("body too large")
        body = await reader.readexactly(length)
    return method, path, headers, body


async def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    upstream = Upstream()
    server = await asyncio.start_server(upstream.handle, "127.0.0.1", args.port,
                                        limit=MAX_HEADER_BYTES, backlog=4096)
    print("port %d" % server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # a stream per client at 1,000 streams
    except (ImportError, ValueError, OSError):
        pass
    try:
        import uvloop  # from the bench's venv (make bench); plain asyncio otherwise
        uvloop.install()
    except ImportError:
        pass
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)

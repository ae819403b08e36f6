"""A tiny OpenAI-compatible upstream on 127.0.0.1 for the browser tests.

`mode` decides what POST /v1/chat/completions answers: "fail" -> HTTP 500 with an OpenAI-style error
body, "ok" -> a streamed SSE answer in a few chunks, "reasoning" -> first a few `reasoning_content`
chunks (as DeepSeek R1 or Qwen3 send them), then the same answer. With `reasoning_gate` set to a
threading.Event, a "reasoning" reply waits for it between its reasoning and its answer, so a test can
look at the page while the model is still thinking. `answer` replaces the answer's chunks,
`chunk_delay` (seconds) spaces them, and with `answer_gate` set the answer waits for it before chunk
`answer_gate_index` (a code block's closing fence, say). `first_delay` (seconds) holds the first byte
of the answer back after the headers (a model that is slow to start). Thread-safe enough for one test at a time;
a test that sets these puts them back with `reset()`.
"""
import time
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ANSWER_CHUNKS = ["# Fake ", "answer\n\n", "The upstream ", "recovered.\n"]
# Plain text that would look different if parsed as HTML or Markdown.
REASONING_CHUNKS = ["Let me think. ", "The user wants <b>a fake</b>\n", "**answer**, so ", "I give one."]
GATE_TIMEOUT_S = 20


class FakeUpstream:
    def __init__(self):
        self.mode = "fail"
        self.requests = 0
        self.reasoning_gate = None
        self.reset()
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _json(self, status, payload):
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _chunk(self, delta):
                chunk = {"id": "c1", "object": "chat.completion.chunk", "model": "fake",
                         "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()

            def do_GET(self):
                if self.path.endswith("/models"):
                    self._json(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
                else:
                    self._json(404, {"error": {"message": "not found"}})

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                upstream.requests += 1
                if upstream.mode == "fail":
                    self._json(500, {"error": {"message": "The fake upstream failed on purpose.",
                                               "type": "server_error"}})
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.flush()
                if upstream.first_delay:
                    time.sleep(upstream.first_delay)
                if upstream.mode == "reasoning":
                    for piece in REASONING_CHUNKS:
                        self._chunk({"reasoning_content": piece})
                    gate = upstream.reasoning_gate
                    if gate is not None:
                        gate.wait(GATE_TIMEOUT_S)
                for index, piece in enumerate(upstream.answer or ANSWER_CHUNKS):
                    if upstream.answer_gate is not None and index == upstream.answer_gate_index:
                        upstream.answer_gate.wait(GATE_TIMEOUT_S)
                    if upstream.chunk_delay and index > 0:
                        time.sleep(upstream.chunk_delay)
                    self._chunk({"content": piece})
                final = {"id": "c1", "object": "chat.completion.chunk", "model": "fake",
                         "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
                self.wfile.write(f"data: {json.dumps(final)}\n\ndata: [DONE]\n\n".encode())
                self.wfile.flush()
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def reset(self):
        """The answer back to ANSWER_CHUNKS, sent at once with no gate and no delay."""
        self.answer = None
        self.chunk_delay = 0
        self.first_delay = 0
        self.answer_gate = None
        self.answer_gate_index = None

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

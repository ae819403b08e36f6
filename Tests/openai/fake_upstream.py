"""A small OpenAI-compatible upstream on 127.0.0.1 for the OpenAI client tests.

POST /v1/chat/completions streams "Hello from the fake." in a few chunks, or, when the last user
message contains "slow", one chunk every 50 ms for up to 30 s: the time for a client to hang up.
Every request body is recorded (`requests`), and a client that disconnects mid-answer is recorded
(`aborted` is set): that is how a test sees that Parley aborted its upstream call.
"""
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ANSWER = ["Hello ", "from ", "the ", "fake."]
SLOW_CHUNK_S = 0.05
SLOW_CHUNKS = 600


class FakeUpstream:
    def __init__(self):
        self.requests = []
        self.aborted = threading.Event()
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _send(self, payload):
                self.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
                self.wfile.flush()

            def _chunk(self, delta, finish=None):
                self._send({"id": "c1", "object": "chat.completion.chunk", "model": "fake",
                            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

            def do_GET(self):
                body = json.dumps({"object": "list", "data": [{"id": "fake", "object": "model"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                request = json.loads(self.rfile.read(length) or b"{}")
                upstream.requests.append(request)
                slow = "slow" in (request.get("messages") or [{}])[-1].get("content", "")
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                try:
                    self._chunk({"role": "assistant"})
                    if slow:
                        for index in range(SLOW_CHUNKS):
                            self._chunk({"content": f"word{index} "})
                            threading.Event().wait(SLOW_CHUNK_S)
                    else:
                        for piece in ANSWER:
                            self._chunk({"content": piece})
                    self._chunk({}, "stop")
                    self._send({"id": "c1", "object": "chat.completion.chunk", "choices": [],
                                "usage": {"prompt_tokens": 11, "completion_tokens": 4, "total_tokens": 15}})
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    upstream.aborted.set()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

"""The OpenAI-compatible upstream of the Python suites (Tests/browser, Tests/openai): a real HTTP server
on 127.0.0.1 that answers GET /v1/models and streams POST /v1/chat/completions as real SSE, scripted by
the test that uses it.

What POST /v1/chat/completions answers:
- `mode` "fail": HTTP 500 with an OpenAI-style error body.
- `mode` "ok": a role chunk, the answer's chunks (`answer`, else the instance's default), a `stop`
  chunk, the usage chunk when `usage` is set, then `data: [DONE]`.
- `mode` "reasoning": first the REASONING_CHUNKS as `reasoning_content` (as DeepSeek R1 or Qwen3
  send them), then the same answer; with `reasoning_gate` set (a threading.Event) it waits for it
  between the two, so a test can look at the page while the model is still thinking.
- A last user message containing `slow_word` (when set): one chunk every SLOW_CHUNK_S for up to
  SLOW_CHUNKS chunks, the time for a client to hang up.
- Structured output, as a model that honours it: a request whose `response_format` is `json_schema`
  is answered with an instance of its schema (`example`), one that is `json_object` with
  `json_object_answer` (JSON); a request with `tools` whose `tool_choice` is `required` or names a
  function is answered with one call of it (the first tool for `required`), its arguments an instance
  of the function's parameters sent in two fragments, and `finish_reason: "tool_calls"`.
- Client tools, as a model that uses them: a request with `tools` (`tool_choice` absent or `auto`)
  whose last message is a user message is answered with a call of the first tool, as above; one whose
  last messages are tool results is answered `TOOL_ANSWER_PREFIX` and those results joined by "; "
  (what the client's tools returned, read back).
  With `call_word` set, a user message containing it forces that call (`required`) too.
- Scripted rounds of a tool-calling model (`rounds`, a list a test fills; each request takes the first
  one left): {"text": [chunks], "calls": [(provider id, function name, [argument fragments])],
  "gate": threading.Event or None, "hold": (fragment index, threading.Event) or None}: the text
  chunks, then each call (its id and name first, then its argument fragments), waiting for `gate`
  (when set) before the calls' fragments and for `hold`'s event before that fragment of the first
  call (a call cut in the middle of its arguments), and
  `finish_reason: "tool_calls"` when it has calls (else `stop`). Scripted rounds come
  first: with `rounds` empty, the rest applies.
Log probabilities, as a model that honours `logprobs: true`: each content chunk then carries
`logprobs.content`, one item per chunk (`logprob_item`: its token, a logprob from its position, its
UTF-8 bytes, and `top_logprobs` alternatives of it).
Per answer: `chunk_delay` (seconds) spaces the chunks, `first_delay` holds the first chunk back after
the headers (a model slow to start), and with `answer_gate` set the answer waits for it before chunk
`answer_gate_index` (a code block's closing fence, say). `reset()` puts these back.

What a test can observe: `requests` holds every request body in order, and `aborted` is set when a
client hangs up mid-answer (how a test sees that Parley aborted its upstream call). One test at a
time changes the script; the server itself answers requests concurrently.
"""
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ANSWER_CHUNKS = ["# Fake ", "answer\n\n", "The upstream ", "recovered.\n"]
# Plain text that would look different if parsed as HTML or Markdown.
REASONING_CHUNKS = ["Let me think. ", "The user wants <b>a fake</b>\n", "**answer**, so ", "I give one."]
TOOL_ANSWER_PREFIX = "The tools said: "
GATE_TIMEOUT_S = 20
SLOW_CHUNK_S = 0.05
SLOW_CHUNKS = 600


class FakeUpstream:
    """Started on a free port when made; `base_url` is its http://127.0.0.1:PORT/v1.

    `mode`, `answer` (the default answer's chunks), `usage` (the usage chunk's counts, or None for an
    upstream that sends none, so Parley estimates it) and `slow_word` are described above."""

    def __init__(self, mode="ok", answer=None, usage=None, slow_word=None, call_word=None):
        self.mode = mode
        self.call_word = call_word
        self.default_answer = list(answer or ANSWER_CHUNKS)
        self.usage = usage
        self.slow_word = slow_word
        self.requests = []
        self.aborted = threading.Event()
        self.reasoning_gate = None
        self.reset()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.port}/v1"

    def reset(self):
        """The answer back to the default, sent at once with no gate and no delay."""
        self.answer = None
        self.chunk_delay = 0
        self.first_delay = 0
        self.answer_gate = None
        self.answer_gate_index = None
        self.json_object_answer = {}
        self.rounds = []

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    # MARK: - Answering

    def _chunks(self, request):
        """The (delta, finish_reason) pairs of one streamed answer, produced as it is sent (gates and
        delays are waited for between them)."""
        yield {"role": "assistant"}, None
        messages = request.get("messages") or [{}]
        last = messages[-1].get("content") if isinstance(messages[-1], dict) else None
        if self.slow_word and isinstance(last, str) and self.slow_word in last:
            for index in range(SLOW_CHUNKS):
                yield {"content": f"word{index} "}, None
                time.sleep(SLOW_CHUNK_S)
            yield {}, "stop"
            return
        if self.rounds:
            yield from self._round(self.rounds.pop(0))
            return
        if self.mode == "reasoning":
            for piece in REASONING_CHUNKS:
                yield {"reasoning_content": piece}, None
            gate = self.reasoning_gate
            if gate is not None:
                gate.wait(GATE_TIMEOUT_S)
        results = self._tool_results(request)
        if results:
            yield {"content": TOOL_ANSWER_PREFIX}, None
            yield {"content": "; ".join(results)}, None
            yield {}, "stop"
            return
        call = self._forced_call(request)
        if call is not None:
            name, arguments = call
            half = len(arguments) // 2
            yield {"tool_calls": [{"index": 0, "id": "call_fake0", "type": "function",
                                   "function": {"name": name, "arguments": ""}}]}, None
            for fragment in (arguments[:half], arguments[half:]):
                yield {"tool_calls": [{"index": 0, "function": {"arguments": fragment}}]}, None
            yield {}, "tool_calls"
            return
        structured = self._structured_answer(request)
        answer = [structured[:len(structured) // 2], structured[len(structured) // 2:]] if structured else None
        for index, piece in enumerate(answer or self.answer or self.default_answer):
            if self.answer_gate is not None and index == self.answer_gate_index:
                self.answer_gate.wait(GATE_TIMEOUT_S)
            if self.chunk_delay and index > 0:
                time.sleep(self.chunk_delay)
            yield {"content": piece}, None
        yield {}, "stop"

    def _round(self, script):
        """One scripted round of a tool-calling model (see `rounds` above)."""
        for index, piece in enumerate(script.get("text") or []):
            if self.chunk_delay and index > 0:
                time.sleep(self.chunk_delay)
            yield {"content": piece}, None
        calls = script.get("calls") or []
        for index, (call_id, name, _) in enumerate(calls):
            yield {"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                   "function": {"name": name, "arguments": ""}}]}, None
        if script.get("gate") is not None:
            script["gate"].wait(GATE_TIMEOUT_S)
        hold = script.get("hold")
        for index, (_, _, fragments) in enumerate(calls):
            for number, fragment in enumerate(fragments):
                if hold is not None and index == 0 and number == hold[0]:
                    hold[1].wait(GATE_TIMEOUT_S)
                if self.chunk_delay:
                    time.sleep(self.chunk_delay)
                yield {"tool_calls": [{"index": index, "function": {"arguments": fragment}}]}, None
        yield {}, "tool_calls" if calls else "stop"

    def _structured_answer(self, request):
        """The JSON text asked for by `response_format`, or None when it asks for none."""
        response_format = request.get("response_format") or {}
        if response_format.get("type") == "json_schema":
            return json.dumps(example((response_format.get("json_schema") or {}).get("schema") or {}))
        if response_format.get("type") == "json_object":
            return json.dumps(self.json_object_answer)
        return None

    @staticmethod
    def _tool_results(request):
        """The contents of the tool results that end a request's messages (none when it ends otherwise)."""
        results = []
        for message in reversed(request.get("messages") or []):
            if not isinstance(message, dict) or message.get("role") != "tool":
                break
            results.insert(0, message.get("content") if isinstance(message.get("content"), str) else "")
        return results

    def _forced_call(self, request):
        """(name, arguments JSON) of the call a request's `tool_choice` forces (or, `auto` or absent, that
        a user message last asks for), or None."""
        tools = [tool.get("function") or {} for tool in request.get("tools") or []]
        choice = request.get("tool_choice")
        messages = request.get("messages") or [{}]
        last = messages[-1]
        user_last = isinstance(last, dict) and last.get("role") == "user"
        if tools and self.call_word and choice != "none" and user_last and isinstance(last.get("content"), str) \
                and self.call_word in last["content"]:
            choice = "required"
        if not tools or choice == "none" or (choice in (None, "auto") and not user_last):
            return None
        name = choice["function"]["name"] if isinstance(choice, dict) else tools[0].get("name")
        function = next((tool for tool in tools if tool.get("name") == name), tools[0])
        return name, json.dumps(example(function.get("parameters") or {}))

    def _handler(self):
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

            def _event(self, payload):
                data = payload if isinstance(payload, str) else json.dumps(payload)
                self.wfile.write(f"data: {data}\n\n".encode())
                self.wfile.flush()

            def do_GET(self):
                if self.path.endswith("/models"):
                    self._json(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
                else:
                    self._json(404, {"error": {"message": "not found"}})

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                request = json.loads(self.rfile.read(length) or b"{}")
                upstream.requests.append(request)
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
                self.close_connection = True
                try:
                    if upstream.first_delay:
                        time.sleep(upstream.first_delay)
                    position = 0
                    for delta, finish in upstream._chunks(request):
                        choice = {"index": 0, "delta": delta, "finish_reason": finish}
                        if request.get("logprobs") is True and delta.get("content"):
                            item = logprob_item(delta["content"], position, request.get("top_logprobs") or 0)
                            choice["logprobs"] = {"content": [item], "refusal": None}
                            position += 1
                        self._event({"id": "c1", "object": "chat.completion.chunk", "model": "fake",
                                     "choices": [choice]})
                    if upstream.usage is not None:
                        self._event({"id": "c1", "object": "chat.completion.chunk", "model": "fake",
                                     "choices": [], "usage": upstream.usage})
                    self._event("[DONE]")
                except (BrokenPipeError, ConnectionResetError):
                    upstream.aborted.set()

        return Handler


def logprob_item(token, position, top):
    """The `logprobs.content` item the fake sends for the chunk `token` at `position` (0, 1, …), with `top`
    alternatives: the token itself first, then "alt1", "alt2", … less likely."""
    logprob = -0.25 * (position + 1)
    alternatives = [{"token": token, "logprob": logprob, "bytes": list(token.encode())}]
    alternatives += [{"token": f"alt{n}", "logprob": logprob - n, "bytes": list(f"alt{n}".encode())}
                     for n in range(1, top)]
    return {"token": token, "logprob": logprob, "bytes": list(token.encode()), "top_logprobs": alternatives[:top]}


def example(schema, defs=None):
    """A value that satisfies a JSON Schema of the simple kind tools and structured output use (objects
    with properties, arrays, enums, anyOf, `$ref` into `$defs`), as a model that honours it would write."""
    defs = schema.get("$defs", defs or {})
    if "$ref" in schema:
        return example(defs[schema["$ref"].split("/")[-1]], defs)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            choices = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return example(choices[0], defs)
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        return {name: example(sub, defs) for name, sub in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [example(schema.get("items") or {}, defs)]
    return {"string": "example", "integer": 1, "number": 1.5, "boolean": True, "null": None}.get(kind)

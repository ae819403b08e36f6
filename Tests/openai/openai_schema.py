"""OpenAI's own JSON Schemas of what /v1/chat/completions answers (openai_chat_schema.json, cut out of
github.com/openai/openai-openapi by extract_schema.py), and an httpx transport that records every chat
completion answer a client receives so that conftest.py can check each one against them: a call without
`stream` against `CreateChatCompletionResponse`, every chunk of a stream against
`CreateChatCompletionStreamResponse`. Refusals (4xx, 5xx) and a stream's error chunk are OpenAI's error
shape, which these schemas do not cover."""
import json
from pathlib import Path

import httpx
from jsonschema import Draft202012Validator

DEFS = json.loads((Path(__file__).resolve().parent / "openai_chat_schema.json").read_text())["$defs"]


def validator(name):
    schema = {"$ref": f"#/$defs/{name}", "$defs": DEFS}
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


# Every chat completion answer received through `http_client`, in order (conftest.py checks them).
ANSWERS = []

COMPLETION = validator("CreateChatCompletionResponse")
CHUNK = validator("CreateChatCompletionStreamResponse")


def stream_events(body):
    """The `data:` payloads of the complete events of an event stream (a cut-off last event is left out)."""
    events = body.replace(b"\r\n", b"\n").split(b"\n\n")
    for event in events[:-1]:
        data = [line[5:].removeprefix(b" ") for line in event.split(b"\n") if line.startswith(b"data:")]
        if data:
            yield b"\n".join(data).decode()


def problems(answer):
    """What in one recorded answer (status, content type, body) breaks OpenAI's schemas, as messages."""
    status, content_type, body = answer
    if status != 200:
        return []
    found = []
    if content_type.startswith("text/event-stream"):
        for data in stream_events(body):
            if data == "[DONE]":
                continue
            chunk = json.loads(data)
            if "error" in chunk:
                continue
            found += [f"chunk {data}: {error.message} at {list(error.absolute_path)}" for error in CHUNK.iter_errors(chunk)]
    else:
        completion = json.loads(body)
        found += [f"completion {body[:200]!r}: {error.message} at {list(error.absolute_path)}"
                  for error in COMPLETION.iter_errors(completion)]
    return found


class RecordingTransport(httpx.HTTPTransport):
    """An httpx transport that appends (status, content type, body) of every answer to a chat
    completion to `records`, once the client has read it (all of it, or as much as it read before
    closing a stream)."""

    def __init__(self, records, **options):
        super().__init__(**options)
        self.records = records

    def handle_request(self, request):
        response = super().handle_request(request)
        if request.method == "POST" and request.url.path.endswith("/chat/completions"):
            response.stream = _Tee(response.stream, response.status_code,
                                   response.headers.get("content-type", ""), self.records)
        return response


class _Tee(httpx.SyncByteStream):
    def __init__(self, inner, status, content_type, records):
        self.inner, self.status, self.content_type, self.records = inner, status, content_type, records
        self.body = bytearray()
        self.recorded = False

    def __iter__(self):
        for piece in self.inner:
            self.body += piece
            yield piece
        self._record()

    def close(self):
        self._record()
        self.inner.close()

    def _record(self):
        if not self.recorded:
            self.recorded = True
            self.records.append((self.status, self.content_type, bytes(self.body)))


def http_client(records=ANSWERS, timeout=30):
    """An httpx client for `openai.OpenAI(http_client=…)` or `ChatOpenAI(http_client=…)` that records."""
    return httpx.Client(transport=RecordingTransport(records), timeout=timeout)

"""Fixtures for the OpenAPI tests: real `parley` processes (PARLEY_BIN) in local and team mode, and
docs/openapi.json with a validator that checks a response against the schema the document gives for
its operation and status."""
import json
import sys
from pathlib import Path

import jsonschema
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pytools"))
from parley_process import ROOT, ParleyProcess  # noqa: E402
from server_sent_events import parse_events  # noqa: E402

TEAM = {"PARLEY_AUTH": "on", "PARLEY_ADMIN_USER": "ada", "PARLEY_ADMIN_PASSWORD": "correct horse battery",
        "PARLEY_PASSWORD_MEMORY_KIB": "64"}
DOCUMENT = json.loads((ROOT / "docs" / "openapi.json").read_text(encoding="utf-8"))


def start_parley(name, env=None):
    """A real server with instant demo answers and no generated titles; `env` adds to that."""
    return ParleyProcess({"PARLEY_DEMO_TOKENS_PER_SECOND": "0", "PARLEY_TITLES": "off", **(env or {})},
                         name=f"openapi-{name}")


def response_schema(template, method, status, media="application/json"):
    """The schema docs/openapi.json gives for this operation's answer (its status, else `default`)."""
    operation = DOCUMENT["paths"][template][method.lower()]
    responses = operation["responses"]
    response = responses.get(str(status)) or responses.get("default")
    assert response is not None, f"{method} {template}: status {status} is not documented"
    content = response.get("content")
    assert content is not None and media in content, f"{method} {template} {status}: no {media} body documented"
    return content[media]["schema"]


def validate(reply, method, template):
    """Checks a real answer against the document; returns its JSON (None for an empty body)."""
    operation = DOCUMENT["paths"][template][method.lower()]
    if not reply.raw:
        assert str(reply.status) in operation["responses"], f"{method} {template}: {reply.status} undocumented"
        assert "content" not in operation["responses"][str(reply.status)]
        return None
    media = reply.headers.get("Content-Type", "").split(";")[0].strip()
    schema = response_schema(template, method, reply.status, media)
    # The schema may $ref components: validate it as part of the whole document.
    root = {"$schema": "https://json-schema.org/draft/2020-12/schema", "components": DOCUMENT["components"],
            "allOf": [schema]}
    validator = jsonschema.Draft202012Validator(root)
    if media == "text/event-stream":
        events = parse_events(reply.raw.decode())
        assert events, f"{method} {template}: no events"
        for event in events:
            validator.validate(event)
            if "allOf" in schema:  # each event's data is JSON with a schema of its own
                data_schema = event_data_schema(schema, event["event"])
                assert data_schema is not None, f"{method} {template}: event {event['event']} has no data schema"
                jsonschema.Draft202012Validator(data_schema).validate(json.loads(event["data"]))
        return reply.raw.decode()
    if media != "application/json":
        return reply.raw.decode()
    value = reply.json
    validator.validate(value)
    return value


def event_data_schema(stream_schema, name):
    """The `contentSchema` the document gives the `data` of event `name` (an `if`/`then` per event)."""
    for rule in stream_schema.get("allOf", []):
        if rule["if"]["properties"]["event"].get("const") == name:
            return rule["then"]["properties"]["data"]["contentSchema"]
    return None


@pytest.fixture(scope="session")
def local():
    parley = start_parley("local")
    yield parley
    parley.stop()


@pytest.fixture(scope="session")
def team():
    parley = start_parley("team", TEAM)
    yield parley
    parley.stop()

"""Parley's A2UI messages against the official A2UI v0.9 schemas: a real `parley` (PARLEY_BIN) in front of
the fake upstream (Tests/pytools/fake_upstream.py), whose model calls `parley/render_ui` with a surface of
every accepted component and some hostile messages. Every message the stream sends (`surface` events,
snapshot parts), every message stored (`surface` parts) and every action stored (`action` parts, in their
envelope) must validate; the hostile ones must be nowhere."""
import json
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "pytools"))
from fake_upstream import FakeUpstream  # noqa: E402
from parley_process import ParleyProcess  # noqa: E402

BASE = "https://a2ui.org/specification/v0_9/"
CATALOG = BASE + "catalogs/basic/catalog.json"


def _schema(name):
    return json.loads((HERE / "schemas" / name).read_text(encoding="utf-8"))


def _validators():
    catalog = _schema("basic_catalog.json")
    resources = [(BASE + "server_to_client.json", _schema("server_to_client.json")),
                 (BASE + "common_types.json", _schema("common_types.json")),
                 (BASE + "catalog.json", catalog), (CATALOG, catalog)]
    registry = Registry().with_resources((uri, Resource.from_contents(contents)) for uri, contents in resources)
    agent = Draft202012Validator(_schema("server_to_client.json"), registry=registry)
    client = Draft202012Validator({**_schema("client_to_server.json"), "$id": BASE + "client_to_server.json"},
                                  registry=registry)
    return agent, client


AGENT, CLIENT = _validators()


def message(kind, body):
    return {"version": "v0.9", kind: body}


COMPONENTS = [
    {"id": "root", "component": "Column", "children": ["title", "icon", "row", "list", "card", "tabs", "modal",
                                                        "divider", "book", "name", "agree", "pick", "seats", "when"]},
    {"id": "title", "component": "Text", "text": "Trip", "variant": "h2"},
    {"id": "icon", "component": "Icon", "name": "star"},
    {"id": "row", "component": "Row", "children": {"componentId": "item", "path": "/items"}, "justify": "start"},
    {"id": "item", "component": "Text", "text": {"path": "label"}},
    {"id": "list", "component": "List", "children": ["l1"], "direction": "vertical"},
    {"id": "l1", "component": "Text", "text": "one"},
    {"id": "card", "component": "Card", "child": "c1"},
    {"id": "c1", "component": "Text", "text": {"call": "formatString", "args": {"value": "Hi ${/form/name}"},
                                              "returnType": "string"}},
    {"id": "tabs", "component": "Tabs", "tabs": [{"title": "A", "child": "t1"}]},
    {"id": "t1", "component": "Text", "text": "tab"},
    {"id": "modal", "component": "Modal", "trigger": "m1", "content": "m2"},
    {"id": "m1", "component": "Text", "text": "open"},
    {"id": "m2", "component": "Text", "text": "inside"},
    {"id": "divider", "component": "Divider", "axis": "horizontal"},
    {"id": "book", "component": "Button", "child": "b1", "variant": "primary",
     "action": {"event": {"name": "book", "context": {"name": {"path": "/form/name"}}}}},
    {"id": "b1", "component": "Text", "text": "Book"},
    {"id": "name", "component": "TextField", "label": "Name", "value": {"path": "/form/name"},
     "checks": [{"condition": {"call": "required", "args": {"value": {"path": "/form/name"}}}, "message": "Needed"}]},
    {"id": "agree", "component": "CheckBox", "label": "OK", "value": {"path": "/form/ok"}},
    {"id": "pick", "component": "ChoicePicker", "options": [{"label": "A", "value": "a"}], "value": {"path": "/form/pick"}},
    {"id": "seats", "component": "Slider", "value": {"path": "/form/seats"}, "max": 9},
    {"id": "when", "component": "DateTimeInput", "value": {"path": "/form/when"}, "enableDate": True},
]
VALID = [
    message("createSurface", {"surfaceId": "trip", "catalogId": CATALOG}),
    message("updateComponents", {"surfaceId": "trip", "components": COMPONENTS[:8]}),
    message("updateComponents", {"surfaceId": "trip", "components": COMPONENTS[8:]}),
    message("updateDataModel", {"surfaceId": "trip", "path": "/form",
                                "value": {"name": "Ada", "ok": True, "pick": ["a"], "seats": 2, "when": "2027-01-01"}}),
    message("updateDataModel", {"surfaceId": "trip", "path": "/items", "value": [{"label": "x"}]}),
]
HOSTILE = [
    message("updateComponents", {"surfaceId": "trip", "components": [
        {"id": "root", "component": "Image", "url": "javascript:alert(1)"}]}),
    message("updateComponents", {"surfaceId": "trip", "components": [{"id": "v", "component": "Video", "url": "x"}]}),
    message("updateDataModel", {"surfaceId": "trip", "path": "/__proto__/x", "value": 1}),
    {"version": "v0.8", "createSurface": {"surfaceId": "old", "catalogId": CATALOG}},
]


@pytest.fixture(scope="module")
def parley():
    upstream = FakeUpstream()
    arguments = json.dumps({"messages": VALID + HOSTILE})
    upstream.rounds = [{"text": ["Here:"], "calls": [("c1", "parley__render_ui",
                                                      [arguments[i:i + 9] for i in range(0, len(arguments), 9)])]}]
    server = ParleyProcess({"PARLEY_OPENAI_BASE_URL": upstream.base_url, "PARLEY_OPENAI_MODELS": "fake"}, name="a2ui")
    server.upstream = upstream
    yield server
    server.stop()
    upstream.stop()


def test_every_message_sent_and_stored_and_every_action_validates(parley):
    conversation = parley.api("POST", "/api/conversations", {"model": "openai:fake", "tools": ["parley/render_ui"]})
    sent = parley.api("POST", f"/api/conversations/{conversation['id']}/messages", {"content": "plan it"})
    reply = sent["assistant_message"]["id"]
    seen = []
    for event in parley.events(f"/api/messages/{reply}/stream"):
        data = json.loads(event["data"]) if event.get("data") else {}
        if event["event"] == "surface":
            seen.append(data["message"])
        if event["event"] == "snapshot":
            seen += [m for part in data.get("parts", []) if part.get("type") == "surface" for m in part["messages"]]
        if event["event"] == "done":
            break
    stored = parley.wait_finished(reply)
    kept = [m for part in stored["parts"] if part["type"] == "surface" for m in part["messages"]]
    assert kept == VALID, json.dumps(stored["parts"])[:2000]
    late = next(e for e in parley.events(f"/api/messages/{reply}/stream") if e["event"] == "snapshot")
    seen += [m for part in json.loads(late["data"])["parts"] if part.get("type") == "surface" for m in part["messages"]]
    assert seen, "no message was sent"
    for item in seen + kept:
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in AGENT.iter_errors(item)]
        assert not errors, f"{json.dumps(item)[:300]}: {errors[:3]}"
        assert item not in HOSTILE
    for item in HOSTILE[:3]:
        assert list(AGENT.iter_errors(item)) or item not in kept

    action = {"name": "book", "surfaceId": "trip", "sourceComponentId": "book",
              "timestamp": "2026-12-05T08:00:00Z", "context": {"name": "Ada"}}
    assert not list(CLIENT.iter_errors({"version": "v0.9", "action": action}))
    turn = parley.api("POST", f"/api/messages/{reply}/surfaces/trip/actions", action)
    parley.wait_finished(turn["assistant_message"]["id"])
    user = parley.api("GET", f"/api/messages/{turn['user_message']['id']}")
    actions = [part["action"] for part in user["parts"] if part["type"] == "action"]
    assert actions == [action]
    for stored_action in actions:
        errors = [e.message for e in CLIENT.iter_errors({"version": "v0.9", "action": stored_action})]
        assert not errors, errors

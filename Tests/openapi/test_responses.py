"""Real answers of a real server, each validated against the schema docs/openapi.json gives for its
operation and status (`validate` in conftest.py): every resource, list and error shape, in local and
team mode."""
import json

import pytest

from conftest import start_parley, validate
from fake_upstream import FakeUpstream

CALL_WORD = "look it up"


def wait_finished(parley, message_id):
    """Follows the reply's event stream to its end, then checks the finished message's shape."""
    parley.wait_finished(message_id)
    return validate(parley.call("GET", f"/api/messages/{message_id}"), "GET", "/api/messages/{id}")


def test_local_mode_resources(local):
    assert validate(local.call("GET", "/api/health"), "GET", "/api/health") == {"status": "ok"}
    document = validate(local.call("GET", "/api/openapi.json"), "GET", "/api/openapi.json")
    assert document["openapi"] == "3.1.0"
    models = validate(local.call("GET", "/api/models"), "GET", "/api/models")
    assert any(model["id"] == "demo" for model in models["models"])
    me = validate(local.call("GET", "/api/auth/me"), "GET", "/api/auth/me")
    assert me["mode"] == "local"

    created = local.call("POST", "/api/conversations", {"title": "Schemas", "system_prompt": "Be brief.",
                                                        "temperature": 0.5, "max_tokens": 100})
    assert created.status == 201
    conversation = validate(created, "POST", "/api/conversations")
    cid = conversation["id"]
    sent = local.call("POST", f"/api/conversations/{cid}/messages", {"content": "Hello **there**"})
    assert sent.status == 201
    turn = validate(sent, "POST", "/api/conversations/{id}/messages")
    assert turn["assistant_message"]["status"] == "streaming"
    answer = wait_finished(local, turn["assistant_message"]["id"])
    assert answer["usage"] is not None and "html" in answer

    regenerated = local.call("POST", f"/api/messages/{answer['id']}/regenerate", {})
    assert regenerated.status == 201
    sibling = validate(regenerated, "POST", "/api/messages/{id}/regenerate")
    stopped = validate(local.call("POST", f"/api/messages/{sibling['id']}/stop"), "POST", "/api/messages/{id}/stop")
    assert stopped["status"] != "streaming"
    continued = local.call("POST", f"/api/messages/{sibling['id']}/continue")
    assert continued.status == 200
    validate(continued, "POST", "/api/messages/{id}/continue")
    wait_finished(local, sibling["id"])

    shown = validate(local.call("GET", f"/api/conversations/{cid}"), "GET", "/api/conversations/{id}")
    assert [m["role"] for m in shown["messages"]] == ["user", "assistant"]
    assert shown["messages"][1]["siblings"]["count"] == 2
    switched = validate(local.call("PUT", f"/api/conversations/{cid}/current", {"message_id": answer["id"]}),
                        "PUT", "/api/conversations/{id}/current")
    assert switched["current_leaf_id"] == answer["id"]
    patched = validate(local.call("PATCH", f"/api/conversations/{cid}", {"pinned": True, "top_p": None}),
                       "PATCH", "/api/conversations/{id}")
    assert patched["pinned"] is True
    fork = local.call("POST", f"/api/conversations/{cid}/fork", {"message_id": answer["id"]})
    assert fork.status == 201
    validate(fork, "POST", "/api/conversations/{id}/fork")

    page = validate(local.call("GET", "/api/conversations?limit=1"), "GET", "/api/conversations")
    assert len(page["items"]) == 1 and page["next_cursor"] is not None
    hits = validate(local.call("GET", "/api/conversations?q=there"), "GET", "/api/conversations")
    assert hits["order"] in ("relevance", "newest") and hits["items"]

    exported = local.call("GET", f"/api/conversations/{cid}/export")
    one = validate(exported, "GET", "/api/conversations/{id}/export")
    assert len(one["messages"]) == 3
    markdown = validate(local.call("GET", f"/api/conversations/{cid}/export?format=md"),
                        "GET", "/api/conversations/{id}/export")
    assert markdown.startswith("# Schemas")
    everything = validate(local.call("GET", "/api/export"), "GET", "/api/export")
    assert len(everything["conversations"]) == 2
    imported = local.call("POST", "/api/import", raw=exported.raw)
    assert imported.status == 201
    validate(imported, "POST", "/api/import")

    usage = validate(local.call("GET", "/api/usage"), "GET", "/api/usage")
    assert usage["total"]["replies"] >= 1

    deleted = local.call("DELETE", f"/api/conversations/{fork.json['id']}")
    assert deleted.status == 204
    validate(deleted, "DELETE", "/api/conversations/{id}")


def test_a_conversation_started_with_its_first_message(local):
    started = local.call("POST", "/api/conversations", {"title": "One request", "message": {"content": "Hello"}})
    assert started.status == 201
    start = validate(started, "POST", "/api/conversations")
    assert set(start) == {"conversation", "user_message", "assistant_message"}
    assert start["conversation"]["current_leaf_id"] == start["assistant_message"]["id"]
    assert start["assistant_message"]["status"] == "streaming"
    wait_finished(local, start["assistant_message"]["id"])
    for bad in ({"message": "Hello"}, {"message": {"content": 5}}, {"message": {"content": ""}}):
        refused = local.call("POST", "/api/conversations", bad)
        assert refused.status == 400
        validate(refused, "POST", "/api/conversations")
    unknown = local.call("POST", "/api/conversations", {"message": {"content": "hi", "attachments": ["f_nope"]}})
    assert unknown.status == 404
    validate(unknown, "POST", "/api/conversations")


def test_local_mode_errors(local):
    for method, path, template, body, status in [
        ("GET", "/api/conversations/nope", "/api/conversations/{id}", None, 404),
        ("GET", "/api/messages/nope", "/api/messages/{id}", None, 404),
        ("POST", "/api/conversations", "/api/conversations", {"title": 5}, 400),
        ("GET", "/api/conversations?q=(abc", "/api/conversations", None, 400),
        ("GET", "/api/usage?from=2026-13-01", "/api/usage", None, 400),
        ("GET", "/api/users", "/api/users", None, 404),
        ("POST", "/api/import", "/api/import", {"parley_export": 2}, 400),
    ]:
        reply = local.call(method, path, body)
        assert reply.status == status, (path, reply.raw)
        assert set(validate(reply, method, template)["error"]) == {"code", "message"}
    not_json = local.call("POST", "/api/conversations", raw=b"{}", headers={"Content-Type": "text/plain"})
    assert not_json.status == 415
    validate(not_json, "POST", "/api/conversations")


def test_openai_compatible_answers(local):
    models = validate(local.call("GET", "/v1/models"), "GET", "/v1/models")
    assert models["object"] == "list"
    body = {"model": "demo", "messages": [{"role": "user", "content": "Hi"}]}
    completion = validate(local.call("POST", "/v1/chat/completions", body), "POST", "/v1/chat/completions")
    assert completion["choices"][0]["message"]["role"] == "assistant"
    streamed = local.call("POST", "/v1/chat/completions", dict(body, stream=True))
    assert streamed.headers["Content-Type"].startswith("text/event-stream")
    text = validate(streamed, "POST", "/v1/chat/completions")
    assert text.rstrip().endswith("data: [DONE]")
    wrong = local.call("POST", "/v1/chat/completions", dict(body, model="no-such-model"))
    assert wrong.status == 404
    error = validate(wrong, "POST", "/v1/chat/completions")["error"]
    assert error["code"] == "model_not_found"


def test_event_streams_are_documented_as_event_streams(local):
    cid = local.call("POST", "/api/conversations", {}).json["id"]
    turn = local.call("POST", f"/api/conversations/{cid}/messages", {"content": "Stream me"}).json
    wait_finished(local, turn["assistant_message"]["id"])
    stream = local.call("GET", f"/api/messages/{turn['assistant_message']['id']}/stream?mode=text")
    assert stream.headers["Content-Type"].startswith("text/event-stream")
    assert "event: done" in validate(stream, "GET", "/api/messages/{id}/stream")


def test_user_event_stream_events_match_their_schemas(local):
    """GET /api/events: each notification's data, and a followed reply's events, against the schema the
    document gives that event."""
    made = {}

    def changes():
        made["id"] = local.call("POST", "/api/conversations", {"title": "Events"}).json["id"]
        turn = local.call("POST", f"/api/conversations/{made['id']}/messages", {"content": "Hello"}).json
        made["reply"] = turn["assistant_message"]["id"]
        wait_finished(local, made["reply"])
        assert local.call("PATCH", f"/api/conversations/{made['id']}", {"pinned": True}).status == 200
        assert local.call("DELETE", f"/api/conversations/{made['id']}").status == 204

    notifications = local.read_stream_until("/api/events", b"event: conversation_deleted", start=changes)
    text = validate(notifications, "GET", "/api/events")
    for name in ("ready", "conversation_created", "turn", "reply_started", "reply_finished",
                 "conversation_updated", "conversation_deleted"):
        assert f"event: {name}\n" in text, name

    cid = local.call("POST", "/api/conversations", {}).json["id"]
    reply = local.call("POST", f"/api/conversations/{cid}/messages", {"content": "Follow me"}).json
    followed_id = reply["assistant_message"]["id"]
    wait_finished(local, followed_id)
    for mode in ("html", "text"):
        followed = local.read_stream_until(f"/api/events?follow={followed_id}&mode={mode}", b"event: done")
        text = validate(followed, "GET", "/api/events")
        assert "event: snapshot\n" in text and "event: done\n" in text


def test_team_mode_resources(team):
    assert validate(team.call("GET", "/api/openapi.json"), "GET", "/api/openapi.json")["openapi"] == "3.1.0"
    unauthenticated = team.call("GET", "/api/conversations")
    assert unauthenticated.status == 401
    validate(unauthenticated, "GET", "/api/conversations")
    bad_login = team.call("POST", "/api/auth/login", {"username": "ada", "password": "wrong password"})
    assert bad_login.status == 401
    validate(bad_login, "POST", "/api/auth/login")

    login = team.call("POST", "/api/auth/login", {"username": "ada", "password": "correct horse battery"})
    me = validate(login, "POST", "/api/auth/login")
    assert me["mode"] == "team" and me["user"]["role"] == "admin"
    admin = {"Cookie": login.headers["Set-Cookie"].split(";")[0]}
    validate(team.call("GET", "/api/auth/me", headers=admin), "GET", "/api/auth/me")
    sessions = validate(team.call("GET", "/api/auth/sessions", headers=admin), "GET", "/api/auth/sessions")
    assert any(session["current"] for session in sessions["items"])

    created = team.call("POST", "/api/tokens", {"name": "script"}, headers=admin)
    assert created.status == 201
    token = validate(created, "POST", "/api/tokens")
    assert token["token"].startswith("pt_")
    listed = validate(team.call("GET", "/api/tokens", headers=admin), "GET", "/api/tokens")
    assert all("token" not in item for item in listed["items"])

    user = team.call("POST", "/api/users", {"username": "bob", "password": "bob password 1"}, headers=admin)
    assert user.status == 201
    bob = validate(user, "POST", "/api/users")
    validate(team.call("GET", "/api/users", headers=admin), "GET", "/api/users")
    validate(team.call("PATCH", f"/api/users/{bob['id']}", {"display_name": "Bob"}, headers=admin),
             "PATCH", "/api/users/{id}")
    validate(team.call("GET", f"/api/users/{bob['id']}/usage", headers=admin), "GET", "/api/users/{id}/usage")

    bob_login = team.call("POST", "/api/auth/login", {"username": "bob", "password": "bob password 1"})
    bob_auth = {"Cookie": bob_login.headers["Set-Cookie"].split(";")[0]}
    forbidden = team.call("GET", "/api/users", headers=bob_auth)
    assert forbidden.status == 403
    validate(forbidden, "GET", "/api/users")
    # Another user's ids answer 404 in the documented error shape.
    script = {"Authorization": f"Bearer {token['token']}"}
    cid = validate(team.call("POST", "/api/conversations", {}, headers=script), "POST", "/api/conversations")["id"]
    foreign = team.call("GET", f"/api/conversations/{cid}", headers=bob_auth)
    assert foreign.status == 404
    validate(foreign, "GET", "/api/conversations/{id}")
    foreign_token = team.call("DELETE", f"/api/tokens/{token['id']}", headers=bob_auth)
    assert foreign_token.status == 404
    validate(foreign_token, "DELETE", "/api/tokens/{id}")
    bad_key = team.call("GET", "/v1/models", headers={"Authorization": "Bearer pt_wrong"})
    assert bad_key.status == 401
    assert validate(bad_key, "GET", "/v1/models")["error"]["code"] == "invalid_api_key"

    revoked = team.call("DELETE", f"/api/tokens/{token['id']}", headers=admin)
    assert revoked.status == 204
    validate(revoked, "DELETE", "/api/tokens/{id}")
    logout = team.call("POST", "/api/auth/logout", headers=bob_auth)
    assert logout.status == 204
    validate(logout, "POST", "/api/auth/logout")


@pytest.fixture(scope="module")
def tooled():
    """A local-mode server whose model (the fake upstream) calls the first tool offered when the question
    holds CALL_WORD: the built-in parley/search_history, which runs without asking."""
    upstream = FakeUpstream(answer=["Found ", "it."], call_word=CALL_WORD)
    parley = start_parley("tools", {"PARLEY_OPENAI_BASE_URL": upstream.base_url, "PARLEY_OPENAI_MODELS": "fake"})
    parley.upstream = upstream
    yield parley
    parley.stop()
    upstream.stop()


def test_tools_policies_and_a_conversations_tools(tooled):
    tools = validate(tooled.call("GET", "/api/tools"), "GET", "/api/tools")
    assert any(tool["id"] == "parley/search_history" for tool in tools["items"])
    assert validate(tooled.call("GET", "/api/tool_policies"), "GET", "/api/tool_policies") == {"items": []}
    for path, status in [("/api/tool_policies", 400), ("/api/tool_policies?tool=", 400),
                         ("/api/tool_policies?tool=parley%2Fsearch_history", 404)]:
        reply = tooled.call("DELETE", path)
        assert reply.status == status, (path, reply.raw)
        validate(reply, "DELETE", "/api/tool_policies")

    created = tooled.call("POST", "/api/conversations", {"tools": ["parley/search_history", "parley/*"]})
    assert created.status == 201
    cid = validate(created, "POST", "/api/conversations")["id"]
    assert created.json["tools"] == ["parley/search_history", "parley/*"]
    unknown = tooled.call("POST", "/api/conversations", {"tools": ["nowhere/thing"]})
    assert unknown.status == 400 and unknown.json["error"]["code"] == "unknown_tool"
    validate(unknown, "POST", "/api/conversations")
    cleared = validate(tooled.call("PATCH", f"/api/conversations/{cid}", {"tools": []}),
                       "PATCH", "/api/conversations/{id}")
    assert cleared["tools"] == []
    refused = tooled.call("PATCH", f"/api/conversations/{cid}", {"tools": ["nowhere/*"]})
    assert refused.status == 400
    validate(refused, "PATCH", "/api/conversations/{id}")


def test_a_reply_with_a_tool_call_its_parts_events_and_decisions(tooled):
    model = next(m["id"] for m in tooled.api("GET", "/api/models")["models"] if m["id"].endswith("fake"))
    cid = tooled.api("POST", "/api/conversations", {"model": model, "tools": ["parley/search_history"]})["id"]
    # Each model answer starts late enough for the stream to be open before the call's first event.
    tooled.upstream.first_delay = 1
    try:
        turn = tooled.api("POST", f"/api/conversations/{cid}/messages", {"content": f"Please {CALL_WORD}."})
        reply_id = turn["assistant_message"]["id"]
        live = tooled.call("GET", f"/api/messages/{reply_id}/stream?mode=text", timeout=30)
    finally:
        tooled.upstream.reset()
    # The call's events live (text mode), then replayed after the first snapshot in html mode.
    text = validate(live, "GET", "/api/messages/{id}/stream")
    first_id = text.split("\n", 1)[0].removeprefix("id: ")
    replayed = tooled.call("GET", f"/api/messages/{reply_id}/stream?mode=html&last_event_id={first_id}")
    for mode, text in (("text", text), ("html", validate(replayed, "GET", "/api/messages/{id}/stream"))):
        for name in ("tool_call", "tool_call_delta", "tool_result", "done"):
            assert f"event: {name}\n" in text, (mode, name, text[:3000])
    message = validate(tooled.call("GET", f"/api/messages/{reply_id}"), "GET", "/api/messages/{id}")
    assert message["status"] == "complete", message
    assert [part["type"] for part in message["parts"]] == ["tool_call", "text"]
    call = message["parts"][0]
    assert call["tool"] == "parley/search_history" and call["status"] == "complete" and call["result"]
    # The fake model reads the tool's result back (fake_upstream.TOOL_ANSWER_PREFIX).
    assert message["content"].startswith("The tools said: ") and message["parts"][1]["html"] == message["html"]

    late = tooled.call("GET", f"/api/messages/{reply_id}/stream")
    assert '"parts":[' in validate(late, "GET", "/api/messages/{id}/stream")

    decide = f"/api/messages/{reply_id}/tool_calls/{call['id']}"
    for path, body, status in [(decide, {"decision": "approve"}, 409),
                               (decide, {"decision": "maybe"}, 400),
                               (decide, {"decision": "deny", "remember": "yes"}, 400),
                               (f"/api/messages/{reply_id}/tool_calls/nope", {"decision": "deny"}, 404),
                               (f"/api/messages/nope/tool_calls/{call['id']}", {"decision": "deny"}, 404)]:
        reply = tooled.call("POST", path, body)
        assert reply.status == status, (path, body, reply.raw)
        validate(reply, "POST", "/api/messages/{id}/tool_calls/{call_id}")
    template = "/api/messages/{id}/tool_calls/{call_id}/content/{index}"
    for index, status in [("0", 404), ("x", 400), ("-1", 400)]:
        reply = tooled.call("GET", f"{decide}/content/{index}")
        assert reply.status == status, (index, reply.raw)
        validate(reply, "GET", template)

    exported = tooled.call("GET", f"/api/conversations/{cid}/export")
    document = validate(exported, "GET", "/api/conversations/{id}/export")
    assert document["tools"] == ["parley/search_history"]
    assert [part["type"] for part in document["messages"][1]["parts"]] == ["tool_call", "text"]
    imported = tooled.call("POST", "/api/import", raw=exported.raw)
    assert imported.status == 201
    copy = validate(imported, "POST", "/api/import")["items"][0]
    shown = validate(tooled.call("GET", f"/api/conversations/{copy['id']}"), "GET", "/api/conversations/{id}")
    assert [part["type"] for part in shown["messages"][1]["parts"]] == ["tool_call", "text"]


def test_a_reply_that_draws_a_surface_and_an_action_on_it(tooled):
    """parley/render_ui (issue 22): the `surface` events, the `surface` part, the action route's answers."""
    model = next(m["id"] for m in tooled.api("GET", "/api/models")["models"] if m["id"].endswith("fake"))
    cid = tooled.api("POST", "/api/conversations", {"model": model, "tools": ["parley/render_ui"]})["id"]
    catalog = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"
    arguments = json.dumps({"messages": [
        {"version": "v0.9", "createSurface": {"surfaceId": "s", "catalogId": catalog}},
        {"version": "v0.9", "updateComponents": {"surfaceId": "s", "components": [
            {"id": "root", "component": "Button", "child": "label", "action": {"event": {"name": "go"}}},
            {"id": "label", "component": "Text", "text": "Go"}]}}]})
    tooled.upstream.rounds = [{"calls": [("c1", "parley__render_ui", [arguments[:40], arguments[40:]])]}]
    try:
        turn = tooled.api("POST", f"/api/conversations/{cid}/messages", {"content": "draw"})
        reply_id = turn["assistant_message"]["id"]
        tooled.wait_finished(reply_id)
    finally:
        tooled.upstream.reset()
    message = validate(tooled.call("GET", f"/api/messages/{reply_id}"), "GET", "/api/messages/{id}")
    assert [part["type"] for part in message["parts"]][:2] == ["tool_call", "surface"], message["parts"]
    stream = validate(tooled.call("GET", f"/api/messages/{reply_id}/stream"), "GET", "/api/messages/{id}/stream")
    assert '"type":"surface"' in stream

    path = "/api/messages/{id}/surfaces/{surface_id}/actions"
    action = {"name": "go", "surfaceId": "s", "sourceComponentId": "root", "timestamp": "2026-12-05T08:00:00Z",
              "context": {}}
    for url, body, status in [(f"/api/messages/nope/surfaces/s/actions", action, 404),
                              (f"/api/messages/{reply_id}/surfaces/s/actions", {"name": "go"}, 400),
                              (f"/api/messages/{reply_id}/surfaces/other/actions", {**action, "surfaceId": "other"}, 400),
                              (f"/api/messages/{reply_id}/surfaces/s/actions", {**action, "sourceComponentId": "x"}, 400)]:
        reply = tooled.call("POST", url, body)
        assert reply.status == status, (url, body, reply.raw)
        validate(reply, "POST", path)
    sent = tooled.call("POST", f"/api/messages/{reply_id}/surfaces/s/actions", {"version": "v0.9", "action": action})
    assert sent.status == 201, sent.raw
    answer = validate(sent, "POST", path)
    assert answer["user_message"]["parts"][0]["type"] == "action"
    tooled.wait_finished(answer["assistant_message"]["id"])

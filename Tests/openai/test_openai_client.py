"""Parley's OpenAI-compatible endpoint driven by the official `openai` Python package: the client
scripts already use, against a real parley process (see conftest.py)."""
import openai
import pytest
from openai_schema import http_client

DEMO_PREFIX = "## Demo answer"


def client(server, key="anything"):
    # No retries: a refusal must surface as the exception the status maps to.
    # Every answer is recorded and checked against OpenAI's schemas (conftest.py).
    return openai.OpenAI(base_url=server.base + "/v1", api_key=key, max_retries=0, timeout=30,
                         http_client=http_client())


def test_model_list(parley):
    models = list(client(parley).models.list())
    assert [model.id for model in models] == ["openai:fake"]  # the demo model is listed only without providers
    assert models[0].object == "model" and models[0].owned_by == "openai"


def test_non_streaming(parley):
    raw = client(parley).chat.completions.with_raw_response.create(
        model="demo", messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hello"}])
    completion = raw.parse()
    assert completion.object == "chat.completion"
    assert completion.choices[0].message.role == "assistant"
    assert completion.choices[0].message.content.startswith(DEMO_PREFIX)
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage.total_tokens == completion.usage.prompt_tokens + completion.usage.completion_tokens > 0
    conversation = parley.api("GET", f"/api/conversations/{raw.headers['x-parley-conversation']}")
    assert conversation["system_prompt"] == "Be brief."
    assert [m["content"] for m in conversation["messages"]] == ["hello", completion.choices[0].message.content]


def test_streaming_with_usage(parley):
    stream = client(parley).chat.completions.create(
        model="openai:fake", stream=True, stream_options={"include_usage": True},
        messages=[{"role": "user", "content": "hi"}])
    chunks = list(stream)
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Hello from the fake."
    reasons = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert reasons == ["stop"]
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (11, 4)
    assert all(c.usage is None for c in chunks[:-1])
    assert len({c.id for c in chunks}) == 1


def test_settings_reach_the_upstream(parley, upstream):
    client(parley).chat.completions.create(model="openai:fake", temperature=0.4, top_p=0.5, max_tokens=20,
                                           messages=[{"role": "user", "content": "settings"}])
    sent = upstream.requests[-1]
    assert (sent["temperature"], sent["top_p"], sent["max_tokens"]) == (0.4, 0.5, 20)


def test_invalid_model(parley):
    with pytest.raises(openai.NotFoundError) as caught:
        client(parley).chat.completions.create(model="no-such-model", messages=[{"role": "user", "content": "x"}])
    assert caught.value.code == "model_not_found"
    assert caught.value.body["param"] == "model"


def test_invalid_request(parley):
    with pytest.raises(openai.BadRequestError) as caught:
        client(parley).chat.completions.create(model="demo", temperature=5,
                                               messages=[{"role": "user", "content": "x"}])
    assert caught.value.body["param"] == "temperature"


def test_bad_token(team):
    with pytest.raises(openai.AuthenticationError) as caught:
        client(team, key="pt_not-a-real-token").models.list()
    assert caught.value.code == "invalid_api_key"
    with pytest.raises(openai.AuthenticationError):
        client(team, key="pt_not-a-real-token").chat.completions.create(
            model="demo", messages=[{"role": "user", "content": "x"}])
    completion = client(team, key=team.tokens["alice"]).chat.completions.create(
        model="demo", messages=[{"role": "user", "content": "x"}])
    assert completion.choices[0].message.content.startswith(DEMO_PREFIX)


def test_conversation_header_appends_and_refuses_a_foreign_one(team):
    alice = client(team, key=team.tokens["alice"])
    first = alice.chat.completions.with_raw_response.create(
        model="demo", messages=[{"role": "user", "content": "one"}])
    conversation = first.headers["x-parley-conversation"]
    alice.chat.completions.create(model="demo", messages=[{"role": "user", "content": "two"}],
                                  extra_headers={"X-Parley-Conversation": conversation})
    shown = team.with_token(team.tokens["alice"]).api("GET", f"/api/conversations/{conversation}")
    assert [m["content"] for m in shown["messages"] if m["role"] == "user"] == ["one", "two"]
    with pytest.raises(openai.NotFoundError):
        client(team, key=team.tokens["bob"]).chat.completions.create(
            model="demo", messages=[{"role": "user", "content": "x"}],
            extra_headers={"X-Parley-Conversation": conversation})


def test_disconnect_mid_stream_aborts_the_upstream(parley, upstream):
    upstream.aborted.clear()
    stream = client(parley).chat.completions.create(
        model="openai:fake", stream=True, messages=[{"role": "user", "content": "slow please"}])
    message_id = None
    for chunk in stream:
        message_id = chunk.id.removeprefix("chatcmpl-")
        if chunk.choices and chunk.choices[0].delta.content:
            break
    stream.close()  # hang up mid-answer
    assert upstream.aborted.wait(15), "Parley aborted its upstream call"
    message = parley.wait_finished(message_id, timeout=15)
    assert message["status"] == "stopped"
    assert message["content"].startswith("word0 ")


def test_options_reach_the_upstream(parley, upstream):
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    response_format = {"type": "json_schema", "json_schema": {"name": "reply", "strict": True, "schema": schema}}
    client(parley).chat.completions.create(
        model="openai:fake", stop=["END", "\n\n"], seed=7, presence_penalty=0.5, frequency_penalty=-1,
        user="script-1", response_format=response_format, messages=[{"role": "user", "content": "options"}])
    sent = upstream.requests[-1]
    assert sent["stop"] == ["END", "\n\n"] and sent["seed"] == 7
    assert (sent["presence_penalty"], sent["frequency_penalty"]) == (0.5, -1)
    assert sent["user"] == "script-1" and sent["response_format"] == response_format


def test_refused_options_name_their_parameter(parley):
    tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
    for param, options in [("tools", {"model": "demo", "tools": tools}),
                           ("tools[0].function.name", {"tools": [{"type": "function", "function": {"name": "a b"}}]}),
                           ("logprobs", {"model": "demo", "logprobs": True}), ("seed", {"model": "demo", "seed": 1}),
                           ("stop", {"stop": ["a", "b", "c", "d", "e"]})]:
        arguments = {"model": "openai:fake", "messages": [{"role": "user", "content": "x"}], **options}
        with pytest.raises(openai.BadRequestError) as caught:
            client(parley).chat.completions.create(**arguments)
        assert caught.value.body["param"] == param

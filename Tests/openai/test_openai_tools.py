"""Client-side tools through Parley with the official `openai` package, as agent frameworks use them: the
model asks to call `get_weather`, the client runs it and sends the result as a `role: tool` message, the
model answers from it. Parley relays the calls and never runs them (the fake upstream plays the model,
Tests/pytools/fake_upstream.py); every answer is checked against OpenAI's schemas (conftest.py)."""
import json

import pytest
from fake_upstream import TOOL_ANSWER_PREFIX
from test_openai_client import client

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}


def get_weather(city):
    """The client's own tool: Parley never runs it."""
    return f"Sunny, 21 °C in {city}"


def streamed_call(stream):
    """The text, the tool calls (from their fragments) and the finish reason of a streamed answer."""
    text, calls, reasons = "", {}, []
    for chunk in stream:
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        text += choice.delta.content or ""
        for call in choice.delta.tool_calls or []:
            entry = calls.setdefault(call.index, {"id": None, "name": None, "arguments": ""})
            if call.id:
                entry["id"], entry["name"] = call.id, call.function.name
            entry["arguments"] += call.function.arguments or ""
        if choice.finish_reason:
            reasons.append(choice.finish_reason)
    return text, [calls[index] for index in sorted(calls)], reasons


@pytest.mark.parametrize("stream", [False, True])
def test_tool_calling_round_trip(parley, upstream, stream):
    openai_client = client(parley)
    messages = [{"role": "user", "content": "What is the weather in Paris?"}]
    first = openai_client.chat.completions.with_raw_response.create(
        model="openai:fake", messages=messages, tools=[WEATHER], stream=stream)
    if stream:
        _, calls, reasons = streamed_call(first.parse())
        assert reasons == ["tool_calls"]
    else:
        completion = first.parse()
        assert completion.choices[0].finish_reason == "tool_calls"
        calls = [{"id": call.id, "name": call.function.name, "arguments": call.function.arguments}
                 for call in completion.choices[0].message.tool_calls]
    assert [call["name"] for call in calls] == ["get_weather"]
    assert calls[0]["id"] == "call_fake0"
    assert json.loads(calls[0]["arguments"]) == {"city": "example"}
    assert len([r for r in upstream.requests if r.get("tools")]) >= 1
    asked = len(upstream.requests)

    # The client runs its tool and sends the result back; the model answers from it.
    result = get_weather(**json.loads(calls[0]["arguments"]))
    messages += [{"role": "assistant", "content": None, "tool_calls": [
                     {"id": call["id"], "type": "function",
                      "function": {"name": call["name"], "arguments": call["arguments"]}} for call in calls]},
                 {"role": "tool", "tool_call_id": calls[0]["id"], "content": result}]
    second = openai_client.chat.completions.with_raw_response.create(
        model="openai:fake", messages=messages, tools=[WEATHER], stream=stream)
    if stream:
        text, more_calls, reasons = streamed_call(second.parse())
        assert more_calls == [] and reasons == ["stop"]
    else:
        answer = second.parse().choices[0]
        text = answer.message.content
        assert answer.finish_reason == "stop" and not answer.message.tool_calls
    assert text == TOOL_ANSWER_PREFIX + result
    assert len(upstream.requests) == asked + 1, "one model call per request: Parley ran no tool itself"
    sent = upstream.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assert sent[1]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert sent[2]["tool_call_id"] == sent[1]["tool_calls"][0]["id"] and sent[2]["content"] == result

    # Stored as Parley's own conversation: the question, and one reply holding the call and the answer.
    conversation = parley.api("GET", f"/api/conversations/{second.headers['x-parley-conversation']}")
    assert [m["role"] for m in conversation["messages"]] == ["user", "assistant"]
    assert conversation["messages"][1]["content"] == text

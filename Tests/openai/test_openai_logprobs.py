"""`logprobs=True` with `top_logprobs` through the official `openai` client: forwarded to the
OpenAI-compatible upstream, and its log probabilities relayed in OpenAI's shape, streaming and not
(every answer is also checked against OpenAI's schemas, conftest.py)."""
from conftest import ANSWER
from fake_upstream import logprob_item
from test_openai_client import client

# What the fake upstream sends for ANSWER: one item per chunk, two alternatives each.
EXPECTED = [logprob_item(token, position, 2) for position, token in enumerate(ANSWER)]


def as_dicts(items):
    return [item.model_dump(exclude_unset=False) for item in items]


def test_logprobs_round_trip_without_stream(parley, upstream):
    completion = client(parley).chat.completions.create(
        model="openai:fake", logprobs=True, top_logprobs=2, messages=[{"role": "user", "content": "probabilities"}])
    sent = upstream.requests[-1]
    assert sent["logprobs"] is True and sent["top_logprobs"] == 2
    choice = completion.choices[0]
    assert choice.message.content == "".join(ANSWER)
    assert choice.logprobs is not None and choice.logprobs.refusal is None
    assert as_dicts(choice.logprobs.content) == EXPECTED
    assert [len(item.top_logprobs) for item in choice.logprobs.content] == [2] * len(ANSWER)


def test_logprobs_round_trip_streaming(parley, upstream):
    stream = client(parley).chat.completions.create(
        model="openai:fake", stream=True, stream_options={"include_usage": True}, logprobs=True, top_logprobs=2,
        messages=[{"role": "user", "content": "probabilities, streamed"}])
    text, tokens, items = "", "", []
    for chunk in stream:
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        text += choice.delta.content or ""
        if choice.logprobs is not None:
            items += choice.logprobs.content
            tokens += "".join(item.token for item in choice.logprobs.content)
            assert text.startswith(tokens), "each item comes after the text it describes"
    sent = upstream.requests[-1]
    assert sent["logprobs"] is True and sent["top_logprobs"] == 2
    assert text == "".join(ANSWER)
    assert as_dicts(items) == EXPECTED


def test_without_logprobs_none_are_relayed(parley, upstream):
    completion = client(parley).chat.completions.create(
        model="openai:fake", messages=[{"role": "user", "content": "no probabilities"}])
    assert "logprobs" not in upstream.requests[-1]
    assert completion.choices[0].logprobs is None

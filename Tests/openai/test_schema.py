"""The schema check of conftest.py is not vacuous: the recorder sees the answers, and OpenAI's schemas
(openai_chat_schema.json) refuse what OpenAI would never send."""
import openai

from openai_schema import problems, http_client

HEAD = b'{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m",'


def test_answers_are_recorded_and_valid(parley):
    records = []
    client = openai.OpenAI(base_url=parley.base + "/v1", api_key="x", max_retries=0, http_client=http_client(records))
    client.chat.completions.create(model="openai:fake", messages=[{"role": "user", "content": "plain"}])
    chunks = list(client.chat.completions.create(model="openai:fake", stream=True, stream_options={"include_usage": True},
                                                 messages=[{"role": "user", "content": "streamed"}]))
    assert len(records) == 2 and records[0][0] == 200
    assert records[1][1].startswith("text/event-stream") and records[1][2].count(b"data: ") == len(chunks) + 1
    assert [problem for answer in records for problem in problems(answer)] == []


def test_the_schemas_refuse_what_openai_never_sends():
    stream = "text/event-stream"
    bad_reason = b'data: ' + HEAD + b'"choices":[{"index":0,"delta":{},"finish_reason":"done"}]}\n\n'
    no_index = b'data: ' + HEAD + b'"choices":[{"delta":{"content":"a"},"finish_reason":null}]}\n\n'
    bad_call = b'data: ' + HEAD + b'"choices":[{"index":0,"delta":{"tool_calls":[{"id":"c"}]},"finish_reason":null}]}\n\n'
    good = b'data: ' + HEAD + b'"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{"}}]},' \
        + b'"logprobs":null,"finish_reason":null}]}\n\ndata: [DONE]\n\n'
    for body in (bad_reason, no_index, bad_call):
        assert problems((200, stream, body)), body
    assert problems((200, stream, good)) == []
    completion = b'{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,' \
        b'"message":{"role":"assistant","content":null,"refusal":null},"logprobs":null,"finish_reason":"stop"}]}'
    assert problems((200, "application/json", completion)) == []
    assert problems((200, "application/json", completion.replace(b'"refusal":null', b'"refusal":1')))
    assert problems((200, "application/json", completion.replace(b'"created":1,', b'')))

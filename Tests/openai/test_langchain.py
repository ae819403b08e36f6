"""LangChain's structured output through Parley: `ChatOpenAI(...).with_structured_output(Schema,
method=m)` with the fake upstream answering as a model that honours `response_format` and
`tool_choice` (Tests/pytools/fake_upstream.py); `function_calling` goes through /v1's client tools."""
import pytest
from langchain_openai import ChatOpenAI
from pydantic import BaseModel

from openai_schema import http_client


class Weather(BaseModel):
    """The weather in a city."""
    city: str
    temperature_c: float
    sunny: bool


# What the fake upstream writes for Weather's schema (fake_upstream.example), and its json_object answer.
EXAMPLE = Weather(city="example", temperature_c=1.5, sunny=True)
PARIS = {"city": "Paris", "temperature_c": 21.5, "sunny": True}


@pytest.mark.parametrize("method", [
    "json_schema",
    "json_mode",
    "function_calling",
])
def test_structured_output(parley, upstream, method):
    model = ChatOpenAI(model="openai:fake", base_url=parley.base + "/v1", api_key="anything", max_retries=0,
                       timeout=30, http_client=http_client())
    upstream.json_object_answer = PARIS
    try:
        result = model.with_structured_output(Weather, method=method).invoke(
            "What is the weather in Paris? Answer in JSON with city, temperature_c and sunny.")
    finally:
        upstream.reset()
    sent = upstream.requests[-1]
    if method == "json_schema":
        assert sent["response_format"]["type"] == "json_schema"
        assert sent["response_format"]["json_schema"]["name"] == "Weather"
        assert result == EXAMPLE
    elif method == "json_mode":
        assert sent["response_format"] == {"type": "json_object"}
        assert result == Weather(**PARIS)
    else:
        assert [tool["function"]["name"] for tool in sent["tools"]] == ["Weather"]
        assert result == EXAMPLE

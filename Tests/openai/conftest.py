"""Fixtures for the OpenAI client tests: real `parley` processes (PARLEY_BIN) in local and team mode,
in front of the fake OpenAI-compatible upstream (Tests/pytools/fake_upstream.py), which records what it
was sent and when a client hung up on it. Every chat completion answer a test receives through
`openai_schema.http_client` is checked against OpenAI's own schemas after the test."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pytools"))
from fake_upstream import FakeUpstream  # noqa: E402
from parley_process import ParleyProcess  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from openai_schema import ANSWERS, problems  # noqa: E402

TEAM_ADMIN = ("ada", "correct horse battery")
# What the upstream answers, and the usage it reports for it.
ANSWER = ["Hello ", "from ", "the ", "fake."]
USAGE = {"prompt_tokens": 11, "completion_tokens": 4, "total_tokens": 15}


@pytest.fixture(autouse=True)
def answers_match_openais_schema():
    """Fails the test if an answer it received breaks OpenAI's CreateChatCompletion(Stream)Response."""
    start = len(ANSWERS)
    yield
    found = [problem for answer in ANSWERS[start:] for problem in problems(answer)]
    assert not found, "answers outside OpenAI's schema:\n" + "\n".join(found)


@pytest.fixture(scope="session")
def upstream():
    """Answers ANSWER with USAGE; a last user message containing "slow" streams for up to 30 s."""
    fake = FakeUpstream(answer=ANSWER, usage=USAGE, slow_word="slow")
    yield fake
    fake.stop()


def _upstream_env(upstream):
    return {"PARLEY_OPENAI_BASE_URL": upstream.base_url, "PARLEY_OPENAI_MODELS": "fake",
            "PARLEY_DEMO_TOKENS_PER_SECOND": "0"}


@pytest.fixture(scope="session")
def parley(upstream):
    server = ParleyProcess(_upstream_env(upstream), name="openai")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def team(upstream):
    """A team-mode Parley and API tokens of two members, made through the REST API."""
    server = ParleyProcess({**_upstream_env(upstream), "PARLEY_AUTH": "on", "PARLEY_ADMIN_USER": TEAM_ADMIN[0],
                            "PARLEY_ADMIN_PASSWORD": TEAM_ADMIN[1], "PARLEY_PASSWORD_MEMORY_KIB": "64"},
                           name="openai-team")
    admin = server.session(*TEAM_ADMIN)
    tokens = {}
    for name in ("alice", "bob"):
        admin.api("POST", "/api/users", {"username": name, "password": f"{name} password 123"})
        member = server.session(name, f"{name} password 123")
        tokens[name] = member.api("POST", "/api/tokens", {"name": "openai tests"})["token"]
    server.tokens = tokens
    yield server
    server.stop()

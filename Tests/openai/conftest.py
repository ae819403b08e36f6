"""Fixtures for the OpenAI client tests: real `parley` processes (PARLEY_BIN) in local and team mode,
in front of a small fake OpenAI-compatible upstream (fake_upstream.py) that records what it was sent
and when a client hung up on it."""
import json
import sys
import urllib.request
from pathlib import Path

import pytest

from fake_upstream import FakeUpstream

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pytools"))
from parley_process import PARLEY_BIN, ROOT, ParleyProcess  # noqa: E402
TEAM_ADMIN = ("ada", "correct horse battery")


class Parley(ParleyProcess):
    """One real server process; `base` is its http://127.0.0.1:PORT."""

    def __init__(self, env):
        super().__init__(env, prefix="parley-openai-")

    def api(self, method, path, body=None, headers=None, timeout=10):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method,
                                         headers={"Content-Type": "application/json", **(headers or {})})
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read()
            return json.loads(raw) if raw else None



@pytest.fixture(scope="session")
def upstream():
    fake = FakeUpstream()
    yield fake
    fake.stop()


def _upstream_env(upstream):
    return {"PARLEY_OPENAI_BASE_URL": upstream.base_url, "PARLEY_OPENAI_MODELS": "fake",
            "PARLEY_DEMO_TOKENS_PER_SECOND": "0"}


@pytest.fixture(scope="session")
def parley(upstream):
    if not Path(PARLEY_BIN).is_file():
        pytest.fail(f"PARLEY_BIN {PARLEY_BIN} does not exist: build parley first")
    server = Parley(_upstream_env(upstream))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def team(upstream):
    """A team-mode Parley and API tokens of two members, made through the REST API."""
    server = Parley({**_upstream_env(upstream), "PARLEY_AUTH": "on", "PARLEY_ADMIN_USER": TEAM_ADMIN[0],
                     "PARLEY_ADMIN_PASSWORD": TEAM_ADMIN[1], "PARLEY_PASSWORD_MEMORY_KIB": "64"})
    request = urllib.request.Request(server.base + "/api/auth/login", method="POST",
                                     data=json.dumps({"username": TEAM_ADMIN[0], "password": TEAM_ADMIN[1]}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        cookie = response.headers["Set-Cookie"].split(";")[0]
    admin = {"Cookie": cookie}
    tokens = {}
    for name in ("alice", "bob"):
        server.api("POST", "/api/users", {"username": name, "password": f"{name} password 123"}, headers=admin)
        login = urllib.request.Request(server.base + "/api/auth/login", method="POST",
                                       data=json.dumps({"username": name, "password": f"{name} password 123"}).encode(),
                                       headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(login, timeout=10) as response:
            member = {"Cookie": response.headers["Set-Cookie"].split(";")[0]}
        tokens[name] = server.api("POST", "/api/tokens", {"name": "openai tests"}, headers=member)["token"]
    server.tokens = tokens
    yield server
    server.stop()

"""Fixtures for the OpenAI client tests: real `parley` processes (PARLEY_BIN) in local and team mode,
in front of a small fake OpenAI-compatible upstream (fake_upstream.py) that records what it was sent
and when a client hung up on it."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import urllib.request
from pathlib import Path

import pytest

from fake_upstream import FakeUpstream

ROOT = Path(__file__).resolve().parents[2]
PARLEY_BIN = os.environ.get("PARLEY_BIN", str(ROOT / ".build" / "debug" / "parley"))
STARTUP_TIMEOUT_S = 20
TEAM_ADMIN = ("ada", "correct horse battery")


class Parley:
    """One real server process; `base` is its http://127.0.0.1:PORT."""

    def __init__(self, env):
        self.dir = tempfile.mkdtemp(prefix="parley-openai-")
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("PARLEY_")}
        full_env.update(env)
        self.log = open(Path(self.dir) / "server.log", "w")
        self.process = subprocess.Popen(
            [PARLEY_BIN, "--port", "0", "--db", str(Path(self.dir) / "parley.db"),
             "--public", str(ROOT / "Public")],
            stdout=subprocess.PIPE, stderr=self.log, env=full_env, text=True, bufsize=1)
        found = {}

        def read():
            for line in self.process.stdout:
                match = re.search(r"listening on (http://\S+)", line)
                if match:
                    found["base"] = match.group(1).rstrip("/")
                    break
            for _ in self.process.stdout:  # keep draining: the server never blocks on a full pipe
                pass

        threading.Thread(target=read, daemon=True).start()
        for _ in range(STARTUP_TIMEOUT_S * 20):
            if "base" in found or self.process.poll() is not None:
                break
            threading.Event().wait(0.05)
        if "base" not in found:
            self.stop()
            raise RuntimeError(f"parley did not start: {(Path(self.dir) / 'server.log').read_text()[-3000:]}")
        self.base = found["base"]

    def api(self, method, path, body=None, headers=None, timeout=10):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method,
                                         headers={"Content-Type": "application/json", **(headers or {})})
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read()
            return json.loads(raw) if raw else None

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


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

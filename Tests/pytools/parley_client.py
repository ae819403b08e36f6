"""HTTP calls to a Parley server from the Python suites: JSON calls, signing in (session cookies, API
tokens) and reading event streams. Standard library only, so every suite's venv can use it."""
import codecs
import http.client
import json
import time
import urllib.error
import urllib.request
from urllib.parse import urlsplit

from server_sent_events import EventReader

SIGN_IN_PATH = "/api/auth/login"


class Reply:
    """An answer whatever its status: `status`, `headers`, the body's bytes (`raw`) and its `json`."""

    def __init__(self, status, headers, raw):
        self.status = status
        self.headers = headers
        self.raw = raw

    @property
    def json(self):
        return json.loads(self.raw)


class ParleyClient:
    """One caller of the server at `base` (http://127.0.0.1:PORT): `headers` (a session's Cookie, a
    token's Authorization) go with every request it makes, before the headers a call adds."""

    def __init__(self, base, headers=None):
        self.base = base
        self.headers = dict(headers or {})

    # MARK: - Callers

    def with_headers(self, headers):
        """The same server called with `headers` as well (a Cookie, an Authorization)."""
        return ParleyClient(self.base, {**self.headers, **headers})

    def with_token(self, token):
        """The same server called with an API token (`Authorization: Bearer`)."""
        return self.with_headers({"Authorization": f"Bearer {token}"})

    def sign_in(self, username, password, agent=None):
        """Signs in over the API and returns the session's `Cookie` header value (name=value);
        `agent`: the User-Agent the session is listed with. A refusal raises urllib.error.HTTPError."""
        headers = {"User-Agent": agent} if agent else {}
        request = self._request("POST", SIGN_IN_PATH, {"username": username, "password": password}, headers)
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.headers["Set-Cookie"].split(";")[0]

    def session(self, username, password):
        """The same server called as `username`, signed in with a session cookie."""
        return self.with_headers({"Cookie": self.sign_in(username, password)})

    # MARK: - JSON calls

    def api(self, method, path, body=None, timeout=10, headers=None):
        """A JSON call that must succeed: the answer's JSON (None for an empty body); a status of 400 or
        more raises urllib.error.HTTPError (its `code` is the status)."""
        with urllib.request.urlopen(self._request(method, path, body, headers), timeout=timeout) as response:
            raw = response.read()
            return json.loads(raw) if raw else None

    def call(self, method, path, body=None, headers=None, raw=None, timeout=15):
        """A call whose every answer is returned as a Reply, errors included; `raw`: the body's bytes
        as they are (Content-Type application/json unless `headers` says otherwise)."""
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        all_headers = {**self.headers, **(headers or {})}
        if data is not None:
            all_headers.setdefault("Content-Type", "application/json")
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=all_headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return Reply(response.status, response.headers, response.read())
        except urllib.error.HTTPError as error:
            return Reply(error.code, error.headers, error.read())

    def _request(self, method, path, body, headers):
        data = None if body is None else json.dumps(body).encode()
        return urllib.request.Request(self.base + path, data=data, method=method,
                                      headers={"Content-Type": "application/json", **self.headers,
                                               **(headers or {})})

    # MARK: - Event streams

    def events(self, path, timeout=30):
        """The events of the event stream at `path`, as they arrive (see server_sent_events.py); the
        connection closes when the caller stops iterating. `timeout`: the longest wait for any bytes."""
        request = urllib.request.Request(self.base + path, headers={"Accept": "text/event-stream", **self.headers})
        with urllib.request.urlopen(request, timeout=timeout) as response:
            reader, decoder = EventReader(), codecs.getincrementaldecoder("utf-8")()
            while chunk := response.read1(65536):
                yield from reader.feed(decoder.decode(chunk))

    def read_stream_until(self, path, marker, start=None, timeout=15):
        """Reads an event stream (one that may never end) until the bytes `marker` have arrived, running
        `start` once the response has begun, then closes it; returns a Reply holding what was read."""
        connection = http.client.HTTPConnection(urlsplit(self.base).netloc, timeout=timeout)
        connection.request("GET", path, headers={"Accept": "text/event-stream", **self.headers})
        try:
            response = connection.getresponse()
            assert response.status == 200, response.status
            if start:
                start()
            raw, deadline = b"", time.monotonic() + timeout
            while marker not in raw:
                assert time.monotonic() < deadline, f"{path}: no {marker!r} in {raw[-500:]!r}"
                raw += response.read1(65536)
            return Reply(response.status, response.headers, raw)
        finally:
            connection.close()

    def wait_finished(self, message_id, timeout=30):
        """Follows the message's event stream (text mode) to its `done` event, with no polling; returns
        the message as GET /api/messages/{id} then gives it."""
        for event in self.events(f"/api/messages/{message_id}/stream?mode=text", timeout=timeout):
            if event["event"] == "done":
                break
        return self.api("GET", f"/api/messages/{message_id}")

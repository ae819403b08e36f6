"""schemathesis fuzzes every operation of docs/openapi.json against a live Parley, in local mode and in
team mode (as the admin, with an API token): examples,
boundary values, random data and chains of calls linked by the ids answers carry. It passes when no
answer is a 5xx, every answer matches the document's schema for its status, and no request takes
longer than REQUEST_TIMEOUT_S (a hang). Bounded: OPENAPI_FUZZ_SECONDS (default 60) of generation per mode."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, TEAM, start_parley

FUZZ_SECONDS = int(os.environ.get("OPENAPI_FUZZ_SECONDS", "60"))
REQUEST_TIMEOUT_S = 10
# Streams that never end by design (the user event stream stays open; a live reply's stream lasts as
# long as the reply): their answers are tested in test_responses.py instead.
ENDLESS = ["/api/events", "/api/messages/{id}/stream"]
# Not excluded: POST /api/files (multipart/form-data with a `format: binary` `file`, or a raw
# application/octet-stream body: schemathesis sends random bytes, which Parley must refuse with a 4xx
# such as 415 `unsupported_file`, never a 5xx) and GET /api/files/{id} (its `Range` header and every
# media type it serves are documented). Its 503 `busy` only answers concurrent uploads or a full media
# queue, and schemathesis sends one request at a time.


@pytest.fixture(params=["local", "team"])
def fuzzed(request):
    """A fresh server and the headers its requests carry (team mode: the admin's API token)."""
    parley = start_parley(f"fuzzed-{request.param}", TEAM if request.param == "team" else {})
    headers = []
    if request.param == "team":
        admin = parley.session("ada", TEAM["PARLEY_ADMIN_PASSWORD"])
        token = admin.api("POST", "/api/tokens", {"name": "schemathesis"})["token"]
        headers = ["-H", f"Authorization: Bearer {token}"]
    yield parley, headers
    parley.stop()


def test_schemathesis_finds_no_server_error_schema_violation_or_hang(fuzzed):
    fuzzed, headers = fuzzed
    schemathesis = Path(sys.executable).parent / "schemathesis"
    command = [str(schemathesis), "run", str(ROOT / "docs" / "openapi.json"), "--url", fuzzed.base,
               "--checks", "not_a_server_error,response_schema_conformance",
               "--max-examples", "20", "--max-time", str(FUZZ_SECONDS),
               "--request-timeout", str(REQUEST_TIMEOUT_S), "--no-color", "--warnings", "off",
               "--generation-database", "none"] + headers
    for path in ENDLESS:
        command += ["--exclude-path", path]
    try:
        # In the server's temporary folder: schemathesis keeps caches in its working directory.
        run = subprocess.run(command, capture_output=True, text=True, timeout=FUZZ_SECONDS + 90, cwd=fuzzed.dir)
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"schemathesis still running after {FUZZ_SECONDS + 90} s: {str(error.stdout)[-3000:]}")
    assert fuzzed.process.poll() is None, "the server died:\n" + fuzzed.server_log()[-3000:]
    summary = run.stdout[-6000:]
    print(summary)
    assert run.returncode == 0, f"schemathesis failed ({run.returncode}):\n{summary}\n{run.stderr[-2000:]}"

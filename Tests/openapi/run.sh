#!/usr/bin/env bash
# docs/openapi.json tested against a real parley binary (PARLEY_BIN, default .build/debug/parley): real
# answers validated against its schemas (jsonschema), then a bounded schemathesis run
# (OPENAPI_FUZZ_SECONDS). PYTHON is the venv's python that `make test` makes under .build/openapi-venv
# (pip: schemathesis, jsonschema, pytest).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
PYTHON="${PYTHON:-$root/.build/openapi-venv/bin/python}"
export PARLEY_BIN="${PARLEY_BIN:-$root/.build/debug/parley}"
set +e
"$PYTHON" -m pytest "$here" -p no:cacheprovider -q -s "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "openapi tests: no tests were collected" >&2
  exit 1
fi
exit "$status"

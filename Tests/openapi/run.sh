#!/usr/bin/env bash
# docs/openapi.json tested against a real parley binary (PARLEY_BIN, default .build/debug/parley): real
# answers validated against its schemas (jsonschema), then a bounded schemathesis run
# (OPENAPI_FUZZ_SECONDS). PYTHON is the venv's python that `make test` makes under .build/openapi-venv
# (pip: schemathesis, jsonschema, pytest).
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/../pytools/run-suite.sh" "$here" openapi-venv "openapi tests" -s "$@"

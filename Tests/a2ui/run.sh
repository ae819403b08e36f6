#!/usr/bin/env bash
# Every A2UI message a real Parley (PARLEY_BIN, default .build/debug/parley) sends and stores, and every
# action it stores, validated against the official A2UI v0.9 JSON schemas (schemas/, see SOURCE.md) with
# `jsonschema`. PYTHON is the venv's python that `make test` makes under .build/a2ui-venv.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
PYTHON="${PYTHON:-$root/.build/a2ui-venv/bin/python}"
export PARLEY_BIN="${PARLEY_BIN:-$root/.build/debug/parley}"
set +e
"$PYTHON" -m pytest "$here" -p no:cacheprovider -q "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "a2ui schema tests: no tests were collected" >&2
  exit 1
fi
exit "$status"

#!/usr/bin/env bash
# Parley's OpenAI-compatible endpoint tested with the official `openai` Python package as the client,
# against a real parley binary (PARLEY_BIN, default .build/debug/parley). PYTHON is the venv's python
# that `make test` makes under .build/openai-venv (pip: openai, pytest, jsonschema, langchain-openai).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
PYTHON="${PYTHON:-$root/.build/openai-venv/bin/python}"
export PARLEY_BIN="${PARLEY_BIN:-$root/.build/debug/parley}"
set +e
"$PYTHON" -m pytest "$here" -p no:cacheprovider -q "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "openai client tests: no tests were collected" >&2
  exit 1
fi
exit "$status"

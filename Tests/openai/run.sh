#!/usr/bin/env bash
# Parley's OpenAI-compatible endpoint tested with the official `openai` Python package as the client,
# against a real parley binary (PARLEY_BIN, default .build/debug/parley). PYTHON is the venv's python
# that `make test` makes under .build/openai-venv (pip: openai, pytest, jsonschema, langchain-openai).
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/../pytools/run-suite.sh" "$here" openai-venv "openai client tests" "$@"

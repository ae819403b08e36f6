#!/usr/bin/env bash
# Every A2UI message a real Parley (PARLEY_BIN, default .build/debug/parley) sends and stores, and every
# action it stores, validated against the official A2UI v0.9 JSON schemas (schemas/, see SOURCE.md) with
# `jsonschema`. PYTHON is the venv's python that `make test` makes under .build/a2ui-venv.
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/../pytools/run-suite.sh" "$here" a2ui-venv "a2ui schema tests" "$@"

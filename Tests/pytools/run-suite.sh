#!/usr/bin/env bash
# Runs one Python test suite (a folder of Tests/) with pytest against a real parley binary
# (PARLEY_BIN, default .build/debug/parley). Usage: run-suite.sh FOLDER VENV LABEL [pytest args...]
# PYTHON overrides the venv's python (`make test` makes each venv under .build/). A run that collects
# no test fails: a suite that silently ran nothing would pass while testing nothing.
set -euo pipefail
here="$1"; venv="$2"; label="$3"; shift 3
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
PYTHON="${PYTHON:-$root/.build/$venv/bin/python}"
export PARLEY_BIN="${PARLEY_BIN:-$root/.build/debug/parley}"
set +e
"$PYTHON" -m pytest "$here" -p no:cacheprovider -q "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "$label: no tests were collected" >&2
  exit 1
fi
exit "$status"

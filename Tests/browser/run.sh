#!/usr/bin/env bash
# Runs Parley's browser tests: headless Chromium (Debian packages chromium, chromium-driver) driven by
# Python selenium + pytest against a real parley binary (PARLEY_BIN, default .build/debug/parley).
# Installs missing pip packages only; never downloads a browser or a driver.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

PYTHON="${PYTHON:-python3}"
for tool in /usr/bin/chromium /usr/bin/chromedriver; do
  [ -x "$tool" ] || { echo "missing $tool: apt-get install -y chromium chromium-driver" >&2; exit 1; }
done
missing=()
"$PYTHON" -c "import selenium" 2>/dev/null || missing+=(selenium)
"$PYTHON" -c "import pytest" 2>/dev/null || missing+=(pytest)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  # A Debian system Python refuses plain pip installs (PEP 668); fall back to --break-system-packages.
  "$PYTHON" -m pip install --quiet "${missing[@]}" 2>/dev/null \
    || "$PYTHON" -m pip install --quiet --break-system-packages "${missing[@]}"
fi

export PARLEY_BIN="${PARLEY_BIN:-$root/.build/debug/parley}"
export ARTIFACTS_DIR="${ARTIFACTS_DIR:-$here/artifacts}"
# Selenium Manager must never fetch anything: the driver path is given explicitly.
export SE_OFFLINE=true
mkdir -p "$ARTIFACTS_DIR"

set +e
"$PYTHON" -m pytest "$here" -p no:cacheprovider -q -s "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "browser tests: no tests were collected" >&2
  exit 1
fi
exit "$status"

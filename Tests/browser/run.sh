#!/usr/bin/env bash
# Runs Parley's browser tests: headless Chromium (Debian packages chromium, chromium-driver) driven by
# Python selenium + pytest against a real parley binary (PARLEY_BIN, default .build/debug/parley), with
# axe-core 4 for the accessibility checks. Installs pip packages only, in a venv; never downloads a
# browser or a driver.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
# PyPI packages; the Makefile's BROWSER_PACKAGES and BROWSER_AXE_CORE say the same. Both pins decide
# which rules judge the page: axe-selenium-python 2.1.6 (the newest PyPI serves) injects the script,
# but the axe-core it bundles is 3.1.1 from 2018; axe-playwright-python 0.1.8 is installed with
# --no-deps (no playwright) only for the axe-core 4.12.1 axe.min.js it ships (axe_check.py).
BROWSER_PACKAGES="${BROWSER_PACKAGES:-selenium pytest axe-selenium-python==2.1.6}"
BROWSER_AXE_CORE="${BROWSER_AXE_CORE:-axe-playwright-python==0.1.8}"
VENV_OK="import selenium, pytest, axe_selenium_python, importlib.metadata as m
assert 'axe-playwright-python==' + m.version('axe-playwright-python') == '$BROWSER_AXE_CORE'"

for tool in /usr/bin/chromium /usr/bin/chromedriver; do
  [ -x "$tool" ] || { echo "missing $tool: apt-get install -y chromium chromium-driver" >&2; exit 1; }
done
# The Python side (selenium, pytest, axe-selenium-python and axe-core 4) lives in the venv that
# `make test` makes (BROWSER_VENV); run directly, this script makes the same venv, or brings one
# without the pinned axe-core up to date. PYTHON overrides it: an interpreter that already has them.
venv="$root/.build/browser-venv"
PYTHON="${PYTHON:-$venv/bin/python}"
if ! "$PYTHON" -c "$VENV_OK" 2>/dev/null; then
  if [ "$(realpath -ms "$PYTHON")" != "$(realpath -ms "$venv/bin/python")" ]; then
    echo "$PYTHON lacks selenium, pytest, axe_selenium_python or $BROWSER_AXE_CORE" >&2
    echo "(pip install $BROWSER_PACKAGES && pip install --no-deps $BROWSER_AXE_CORE)" >&2
    exit 1
  fi
  echo "making $venv: $BROWSER_PACKAGES, $BROWSER_AXE_CORE"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet $BROWSER_PACKAGES
  "$venv/bin/pip" install --quiet --no-deps "$BROWSER_AXE_CORE"
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

#!/usr/bin/env bash
# Runs Parley's browser tests: headless Chromium (Debian packages chromium, chromium-driver) driven by
# Python selenium + pytest against a real parley binary (PARLEY_BIN, default .build/debug/parley), with
# axe-core (PyPI axe-selenium-python) for the accessibility checks. Installs pip packages only, in a
# venv; never downloads a browser or a driver.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
# PyPI packages; the Makefile's BROWSER_PACKAGES says the same. axe-selenium-python is pinned: the
# axe-core it bundles (3.1.1) decides which rules judge the page.
BROWSER_PACKAGES="${BROWSER_PACKAGES:-selenium pytest axe-selenium-python==2.1.6}"

for tool in /usr/bin/chromium /usr/bin/chromedriver; do
  [ -x "$tool" ] || { echo "missing $tool: apt-get install -y chromium chromium-driver" >&2; exit 1; }
done
# The Python side (selenium, pytest, and axe-selenium-python for the accessibility checks) lives in
# the venv that `make test` makes (BROWSER_VENV); run directly, this script makes the same venv.
# PYTHON overrides it: an interpreter that already has the packages.
venv="$root/.build/browser-venv"
PYTHON="${PYTHON:-$venv/bin/python}"
if ! "$PYTHON" -c "import selenium, pytest, axe_selenium_python" 2>/dev/null; then
  if [ "$PYTHON" != "$venv/bin/python" ]; then
    echo "$PYTHON lacks selenium, pytest or axe_selenium_python (pip install $BROWSER_PACKAGES)" >&2
    exit 1
  fi
  echo "making $venv: $BROWSER_PACKAGES"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet $BROWSER_PACKAGES
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

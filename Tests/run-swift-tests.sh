#!/usr/bin/env bash
# Runs `swift test --skip-build "$@"` with time limits, so a hung test fails the run with its name
# instead of stalling it. swift-corelibs-xctest (Linux) has no executionTimeAllowance, so the limit
# is kept here, from XCTest's own "Test Case '…' started/passed/failed" lines:
#   PARLEY_TEST_TIME_LIMIT  seconds one test may run (default 60)
#   PARLEY_SUITE_TIME_LIMIT seconds the whole run may take (default 600)
# Past either, the whole process group (swift test, the test binary, any parley it started) gets
# SIGTERM, then SIGKILL 10 s later, and this script exits 124. Waits inside the tests have their
# own, shorter deadlines; this is the backstop for anything they miss.
set -uo pipefail

test_limit="${PARLEY_TEST_TIME_LIMIT:-60}"
suite_limit="${PARLEY_SUITE_TIME_LIMIT:-600}"
SWIFT="${SWIFT:-swift}"

fifo="$(mktemp -u "${TMPDIR:-/tmp}/parley-tests.XXXXXX")"
mkfifo "$fifo"
# A session of its own, so the kill reaches every process of the run and nothing else. stdbuf makes
# the test binary's stdout line-buffered (it is a pipe here), so "started" lines arrive on time.
setsid stdbuf -oL -eL "$SWIFT" test --skip-build "$@" >"$fifo" 2>&1 &
run=$!
exec 3<"$fifo"
rm -f "$fifo"

stop_run() {
  echo "run-swift-tests: $1: stopping the test run (a hung test is a failure)" >&2
  kill -TERM -- "-$run" 2>/dev/null
  for _ in $(seq 100); do kill -0 "$run" 2>/dev/null || break; sleep 0.1; done
  kill -KILL -- "-$run" 2>/dev/null
  wait "$run" 2>/dev/null
  exit 124
}

current=""
current_start=0
partial=""
while true; do
  if IFS= read -r -t 1 line <&3; then
    line="$partial$line"
    partial=""
    printf '%s\n' "$line"
    case "$line" in
      "Test Case '"*"' started"*)
        current="${line#Test Case \'}"
        current="${current%%\' started*}"
        current_start=$SECONDS ;;
      "Test Case '"*"' passed"* | "Test Case '"*"' failed"* | "Test Case '"*"' skipped"*)
        current="" ;;
    esac
  else
    status=$?
    if [ "$status" -le 128 ]; then
      [ -n "$partial$line" ] && printf '%s' "$partial$line"
      break  # end of output: the run is over
    fi
    partial="$partial$line"  # a timed-out read keeps what it got of an unfinished line
  fi
  if [ -n "$current" ] && [ $((SECONDS - current_start)) -ge "$test_limit" ]; then
    stop_run "'$current' has run for ${test_limit} s (PARLEY_TEST_TIME_LIMIT)"
  fi
  if [ "$SECONDS" -ge "$suite_limit" ]; then
    stop_run "the tests have run for ${suite_limit} s (PARLEY_SUITE_TIME_LIMIT)${current:+, in '$current'}"
  fi
done
wait "$run"

#!/usr/bin/env bash
# Parley relay bench: Parley vs nginx relaying the same fake upstream, all on 127.0.0.1.
# Usage: bench/run.sh [bench.py options, e.g. --quick or --reps 3]
# Binary: $PARLEY_BIN, else .build/release/parley under the repository root.
# Needs nginx (Debian nginx-light), wrk and python3 (standard library; uvloop when $BENCH_PYTHON is the
# venv `make bench` makes). Stops by itself: bench.py gives up after --time-limit (870 s) and `timeout`
# backs that up at 900 s.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

missing=()
python="${BENCH_PYTHON:-python3}"
command -v "$python" >/dev/null || missing+=("python3")
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=("nginx (package nginx-light)")
command -v wrk >/dev/null || missing+=("wrk")
if [ ${#missing[@]} -gt 0 ]; then
  echo "bench: missing ${missing[*]}; install with: apt-get install -y nginx-light wrk python3 (or make bench-deps)" >&2
  exit 2
fi

export PARLEY_BIN="${PARLEY_BIN:-$root/.build/release/parley}"
if [ ! -x "$PARLEY_BIN" ]; then
  echo "bench: no parley binary at $PARLEY_BIN; build it with: swift build -c release (or set PARLEY_BIN)" >&2
  exit 2
fi

export PYTHONDONTWRITEBYTECODE=1
timeout -k 10 120 "$python" "$root/bench/signin.py" || echo "bench: the sign-in timing figure (bench/signin.py) failed" >&2
timeout -k 10 300 "$python" "$root/bench/search.py" || echo "bench: the search figures (bench/search.py) failed" >&2
timeout -k 10 180 "$python" "$root/bench/uploads.py" "$PARLEY_BIN" || echo "bench: the upload figures (bench/uploads.py) failed" >&2
timeout -k 10 180 "$python" "$root/bench/tool_overhead.py" || echo "bench: the tool-call overhead figures (bench/tool_overhead.py) failed" >&2
timeout -k 10 600 "$python" "$root/bench/cluster.py" || echo "bench: the several-nodes figures (bench/cluster.py) failed" >&2
timeout -k 10 300 "$python" "$root/bench/pg_blobs.py" || echo "bench: the PostgreSQL file-bytes figures (bench/pg_blobs.py) failed" >&2
exec timeout -k 10 900 "$python" "$root/bench/bench.py" "$@"

#!/usr/bin/env bash
# The 500-start storm against two Parley builds, alternately (issue 23: is the relay p99 at 500 streams
# noise, titles, the search index or the hardening?).
# Usage: bench/storm_compare.sh OLD_BIN NEW_BIN [RUNS (3)] [OUT_DIR (bench/storm-compare)]
# Each of RUNS rounds runs bench.py once against OLD_BIN, then once against NEW_BIN: the storm at
# --storm-streams (500) with frame 0 and 25, titles on and off, and nginx; then one more run of each
# binary with `perf record` on the server (frame 0, titles on and off). Every run's table is kept in
# OUT_DIR (OLD-1.md, NEW-1.md, ...; perf data in OUT_DIR/perf-old, perf-new); the last lines print
# the relay and start figures of every run side by side. About 2 minutes per bench run on a quiet
# machine. STORM_VARIANTS replaces the variants of the timed runs (bench.py --variants), STORM_OLD_VARIANTS
# those of OLD_BIN's (e.g. without titles-off variants for a build without titles); STORM_TIMEOUT_S
# raises bench.py's --timeout-s on a machine so busy that streams time out.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ $# -ge 2 ] || { sed -n 4,9p "$0" >&2; exit 2; }
old="$(realpath "$1")"; new="$(realpath "$2")"; runs="${3:-3}"; out="${4:-$root/bench/storm-compare}"
python="${BENCH_PYTHON:-python3}"
mkdir -p "$out"
storm=(--only startup,scale --scale-streams 500 --storm-reps 1 --startup-reps 1 --timeout-s "${STORM_TIMEOUT_S:-15}")
variants="${STORM_VARIANTS:-parley0,parley0-notitles,parley25,parley25-notitles,nginx}"
old_variants="${STORM_OLD_VARIANTS:-$variants}"
for i in $(seq 1 "$runs"); do
  for which in old new; do
    bin="$old"; v="$old_variants"; [ "$which" = new ] && bin="$new" && v="$variants"
    echo "storm_compare: run $i, $which ($bin)" >&2
    timeout -k 10 900 "$python" "$root/bench/bench.py" --parley-bin "$bin" "${storm[@]}" \
      --variants "$v" \
      --out "$out/$which-$i.md" 2> "$out/$which-$i.log" >/dev/null || echo "storm_compare: run $i $which failed (see $out/$which-$i.log)" >&2
  done
done
for which in old new; do
  bin="$old"; [ "$which" = new ] && bin="$new"
  echo "storm_compare: perf run, $which" >&2
  timeout -k 10 900 "$python" "$root/bench/bench.py" --parley-bin "$bin" "${storm[@]}" \
    --perf-freq 200 --perf-stack 8192 --variants "$( [ "$which" = new ] && echo "${STORM_PERF_VARIANTS:-parley0,parley0-notitles}" || echo "${STORM_OLD_PERF_VARIANTS:-parley0}")" --perf-dir "$out/perf-$which" \
    --out "$out/$which-perf.md" 2> "$out/$which-perf.log" >/dev/null || echo "storm_compare: perf run $which failed" >&2
done
grep -H "rep 1 " "$out"/old-[0-9]*.log "$out"/new-[0-9]*.log | sed 's/^ *//' || true

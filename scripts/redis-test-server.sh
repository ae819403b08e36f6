#!/usr/bin/env bash
# Usage: scripts/redis-test-server.sh start|stop|url DIR
#
# A throwaway redis-server (Debian's redis-server package) for tests: loopback only, on a free port,
# nothing persisted (no RDB snapshots, no AOF), protected mode off (it listens on 127.0.0.1 alone and
# has no password, so protected mode would only refuse the tests), daemonized with its pidfile, log
# and Unix socket in DIR (created if missing; keep it short: a socket path holds at most 107 bytes).
#   start  starts it (or does nothing if DIR's server is running) and prints its URL;
#          a restart in the same DIR reuses the port (DIR/port), so clients reconnect to the same URL
#   stop   stops it (SHUTDOWN NOSAVE, then SIGTERM, then SIGKILL) and waits until it is gone
#   url    prints redis://127.0.0.1:PORT (and exits 1 if it is not running)
# The socket is DIR/redis.sock (redis+unix://DIR/redis.sock).
set -euo pipefail

usage() { echo "usage: $0 start|stop|url DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
action=$1
mkdir -p "$2"
dir=$(cd "$2" && pwd)
pidfile="$dir/redis.pid"

# Alive and not a zombie: a daemon's parent is PID 1, which in a container may never reap it.
alive() { local state; state=$(ps -o stat= -p "$1" 2>/dev/null) && [ -n "$state" ] && [ "${state#Z}" = "$state" ]; }
running() { [ -s "$pidfile" ] && alive "$(cat "$pidfile")"; }
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
url() { echo "redis://127.0.0.1:$(cat "$dir/port")"; }

case "$action" in
start)
  if running; then url; exit 0; fi
  command -v redis-server >/dev/null || { echo "$0: redis-server is not installed (apt-get install redis-server)" >&2; exit 1; }
  # A port below Linux's ephemeral range (32768+), so no client connection holds it; a fresh one is
  # tried again (up to 5) if another process took it between the check and the bind.
  saved=""
  [ -s "$dir/port" ] && saved=$(cat "$dir/port")
  for attempt in 1 2 3 4 5; do
    port=$saved
    if [ -z "$port" ]; then
      for _ in $(seq 50); do
        candidate=$((20000 + RANDOM % 12000))
        if ! listening "$candidate"; then port=$candidate; break; fi
      done
      [ -n "$port" ] || { echo "$0: no free port found" >&2; exit 1; }
    fi
    echo "$port" > "$dir/port"
    rm -f "$pidfile"
    # The daemon keeps every descriptor it inherits but 0-2: close the rest first, or it holds the
    # caller's pipes open (a test reading this script's output, `make test | tee`) until it stops.
    (
      for fd in $(ls "/proc/$BASHPID/fd"); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done
      exec redis-server --port "$port" --bind 127.0.0.1 --protected-mode no \
        --save "" --appendonly no --dir "$dir" \
        --daemonize yes --pidfile "$pidfile" --logfile "$dir/redis.log" \
        --unixsocket "$dir/redis.sock" --unixsocketperm 700 </dev/null >/dev/null 2>&1
    )
    for _ in $(seq 100); do
      if running && listening "$port"; then url; exit 0; fi
      sleep 0.05
    done
    [ -z "$saved" ] && grep -q "Address already in use" "$dir/redis.log" 2>/dev/null || break
  done
  echo "$0: redis-server did not start on port $port; its log:" >&2
  tail -n 20 "$dir/redis.log" >&2 || true
  exit 1
  ;;
stop)
  running || { rm -f "$pidfile"; exit 0; }
  pid=$(cat "$pidfile")
  command -v redis-cli >/dev/null && redis-cli -p "$(cat "$dir/port")" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
  for signal in TERM KILL; do
    for _ in $(seq 50); do
      alive "$pid" || { rm -f "$pidfile"; exit 0; }
      sleep 0.05
    done
    kill "-$signal" "$pid" 2>/dev/null || true
  done
  sleep 0.1
  alive "$pid" && { echo "$0: redis-server $pid would not stop" >&2; exit 1; }
  rm -f "$pidfile"
  ;;
url)
  running || { echo "$0: no redis-server running for $dir" >&2; exit 1; }
  url
  ;;
*)
  usage
  ;;
esac

#!/bin/bash
# Usage: scripts/cluster.sh start|stop|status DIR [NODES]
#
# Several Parley nodes on one machine, as issue 24 runs them (`make cluster`): a throwaway PostgreSQL 15
# (scripts/postgres-test-server.sh) and Redis 7 (scripts/redis-test-server.sh) in DIR, NODES parley
# processes (default 3) sharing them (PARLEY_DATABASE_URL, PARLEY_REDIS_URL), and nginx in front,
# round-robin with no sticky sessions and the SSE settings of the README. All on loopback.
#   start   starts everything (or what is not running) and prints the address to open
#   stop    stops everything it started in DIR
#   status  prints what runs
# The nodes run $PARLEY_BIN (default .build/release/parley) with the environment's PARLEY_* settings
# (a provider, PARLEY_AUTH…), listen on free ports, and log to DIR/node-N.log. nginx listens on
# $CLUSTER_PORT (default 8080). Nothing outside DIR is written.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
die() { echo "cluster: $*" >&2; exit 1; }
[ $# -ge 2 ] || die "usage: $0 start|stop|status DIR [NODES]"
command=$1
mkdir -p "$2"
dir=$(cd "$2" && pwd -P)
nodes=${3:-3}
bin=${PARLEY_BIN:-$root/.build/release/parley}
port=${CLUSTER_PORT:-8080}
nginx=$(command -v nginx || echo /usr/sbin/nginx)

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

start() {
    [ -x "$bin" ] || die "no parley at $bin (make build)"
    [ -x "$nginx" ] || die "no nginx (apt-get install nginx-light)"
    local postgres redis
    chmod 755 "$dir"  # the postgres user must reach DIR/postgres (mktemp makes folders only root can enter)
    postgres=$("$here/postgres-test-server.sh" start "$dir/postgres" | tail -n 1)
    redis=$("$here/redis-test-server.sh" start "$dir/redis" | tail -n 1)
    local upstreams=""
    for n in $(seq 1 "$nodes"); do
        local pidfile="$dir/node-$n.pid" node_port
        if running "$pidfile"; then
            node_port=$(cat "$dir/node-$n.port")
        else
            node_port=$(free_port)
            echo "$node_port" > "$dir/node-$n.port"
            PARLEY_HOST=127.0.0.1 PARLEY_PORT=$node_port PARLEY_DATABASE_URL=$postgres PARLEY_REDIS_URL=$redis \
                PARLEY_PUBLIC=${PARLEY_PUBLIC:-$root/Public} PARLEY_TRUSTED_PROXIES=${PARLEY_TRUSTED_PROXIES:-127.0.0.1} \
                nohup "$bin" > "$dir/node-$n.log" 2>&1 &
            echo $! > "$pidfile"
        fi
        upstreams+="        server 127.0.0.1:$node_port;"$'\n'
    done
    for n in $(seq 1 "$nodes"); do
        local deadline=$((SECONDS + 30))
        until grep -q "^listening on" "$dir/node-$n.log" 2>/dev/null; do
            running "$dir/node-$n.pid" || die "node $n exited: $(tail -n 5 "$dir/node-$n.log")"
            [ $SECONDS -lt $deadline ] || die "node $n did not start within 30 s"
            sleep 0.1
        done
    done
    mkdir -p "$dir/nginx"
    chmod 777 "$dir/nginx"
    cat > "$dir/nginx/nginx.conf" <<CONF
daemon on;
worker_processes 1;
pid $dir/nginx/nginx.pid;
error_log $dir/nginx/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $dir/nginx/client_body;
    proxy_temp_path $dir/nginx/proxy;
    fastcgi_temp_path $dir/nginx/fastcgi;
    uwsgi_temp_path $dir/nginx/uwsgi;
    scgi_temp_path $dir/nginx/scgi;
    client_max_body_size 64m;
    upstream parley {
$upstreams        keepalive 32;
    }
    server {
        listen 127.0.0.1:$port;
        location / {
            proxy_pass http://parley;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host \$http_host;
            proxy_set_header X-Forwarded-For \$remote_addr;
            proxy_buffering off;
            proxy_request_buffering off;
            proxy_read_timeout 1h;
        }
    }
}
CONF
    if running "$dir/nginx/nginx.pid"; then
        "$nginx" -p "$dir/nginx" -c "$dir/nginx/nginx.conf" -s reload
    else
        "$nginx" -p "$dir/nginx" -c "$dir/nginx/nginx.conf" -e "$dir/nginx/error.log"
    fi
    echo "$port" > "$dir/nginx/port"
    echo "cluster: $nodes nodes behind nginx at http://127.0.0.1:$port (logs in $dir)"
    echo "http://127.0.0.1:$port"
}

stop() {
    if running "$dir/nginx/nginx.pid"; then "$nginx" -p "$dir/nginx" -c "$dir/nginx/nginx.conf" -s quit || true; fi
    for pidfile in "$dir"/node-*.pid; do
        [ -f "$pidfile" ] || continue
        if running "$pidfile"; then
            kill -TERM "$(cat "$pidfile")" 2>/dev/null || true
            for _ in $(seq 1 100); do running "$pidfile" || break; sleep 0.1; done
            running "$pidfile" && kill -KILL "$(cat "$pidfile")" 2>/dev/null
        fi
        rm -f "$pidfile"
    done
    "$here/redis-test-server.sh" stop "$dir/redis" >/dev/null 2>&1 || true
    "$here/postgres-test-server.sh" stop "$dir/postgres" >/dev/null 2>&1 || true
}

status() {
    for pidfile in "$dir"/node-*.pid; do
        [ -f "$pidfile" ] || continue
        name=$(basename "$pidfile" .pid)
        if running "$pidfile"; then echo "$name: running on port $(cat "$dir/$name.port")"; else echo "$name: stopped"; fi
    done
    if running "$dir/nginx/nginx.pid"; then echo "nginx: running on port $(cat "$dir/nginx/port")"; else echo "nginx: stopped"; fi
}

case $command in
    start) start ;;
    stop) stop ;;
    status) status ;;
    *) die "unknown command $command (start, stop or status)" ;;
esac

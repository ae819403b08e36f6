#!/bin/bash
# Usage: scripts/postgres-test-server.sh start|stop|url DIR
#
# A throwaway PostgreSQL 15 for tests and `make cluster` (issue 24), in DIR and nowhere else:
#   start  initdb in DIR/data on first use, start it if it is not running, make the role `parley`
#          (a database owner, NOT a superuser, as Parley runs in production; for the tests also
#          CREATEDB, so each store test makes a database, and pg_signal_backend, so dropping it WITH
#          (FORCE) may end an autovacuum worker in it) and its database `parley`, then print the URL:
#          postgres://parley@127.0.0.1:PORT/parley
#   stop   stop it (fast shutdown); nothing to do if it is not running
#   url    print the URL of the server in DIR
# Every command can be run again: start on a running server only prints the URL.
#
# PostgreSQL refuses to run as root: as root, the server runs as the `postgres` user (runuser) and DIR
# is chowned to it; as any other user, it runs as that user. Only loopback connects (TCP on 127.0.0.1,
# and a unix socket in DIR), with trust authentication; fsync is off, as the data is thrown away.
# The port is PGPORT if set, else a free one; DIR/port keeps it, so a restart keeps the URL.
# Debian's own cluster (/var/lib/postgresql/15/main, pg_ctlcluster) is neither used nor touched.
set -euo pipefail

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
die() { echo "postgres-test-server: $*" >&2; exit 1; }

[ $# -eq 2 ] || die "usage: $0 start|stop|url DIR"
command=$1
case $command in start | stop | url) ;; *) die "unknown command $command (start, stop or url)" ;; esac
mkdir -p "$2" || die "cannot create $2"
dir=$(cd "$2" && pwd -P)
data=$dir/data
[ -x "$PG_BIN/pg_ctl" ] || die "no PostgreSQL server in $PG_BIN (apt-get install postgresql-15)"
# A unix socket path has at most 107 bytes: DIR/.s.PGSQL.PORT must fit.
[ ${#dir} -le 90 ] || die "$dir is too long for a unix socket path (at most 90 characters)"

if [ "$(id -u)" = 0 ]; then
    as_server() { runuser -u postgres -- "$@"; }
else
    as_server() { "$@"; }
fi

running() { [ -f "$data/PG_VERSION" ] && as_server "$PG_BIN/pg_ctl" -D "$data" status >/dev/null 2>&1; }

port() {
    [ -f "$dir/port" ] || die "no server was started in $dir (run: $0 start $dir)"
    cat "$dir/port"
}

url() { echo "postgres://parley@127.0.0.1:$(port)/parley"; }

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Runs one SQL statement as the superuser over the unix socket; prints the result unaligned.
superuser_sql() {
    as_server "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -At -h "$dir" -p "$(port)" -U postgres -d postgres -c "$1"
}

init() {
    if [ "$(id -u)" = 0 ]; then
        chown postgres:postgres "$dir"
        chmod 700 "$dir"
        runuser -u postgres -- test -w "$dir" \
            || die "the postgres user cannot reach $dir (a parent folder is closed to it?)"
    fi
    # -N: no fsync of the new files; the cluster is thrown away.
    as_server "$PG_BIN/initdb" -D "$data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 -N \
        >"$dir/initdb.log" 2>&1 || die "initdb failed: see $dir/initdb.log"
    cat >>"$data/postgresql.conf" <<CONF
# scripts/postgres-test-server.sh: loopback only, socket in its folder, no durability (test data).
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
CONF
    cat >"$data/pg_hba.conf" <<HBA
# scripts/postgres-test-server.sh: trust on the unix socket and on loopback, nothing else.
local all all trust
host  all all 127.0.0.1/32 trust
HBA
}

start() {
    [ -f "$data/PG_VERSION" ] || init
    if ! running; then
        local port=${PGPORT:-}
        [ -n "$port" ] || { [ -f "$dir/port" ] && port=$(cat "$dir/port"); } || true
        [ -n "$port" ] || port=$(free_port)
        echo "$port" >"$dir/port"
        as_server "$PG_BIN/pg_ctl" -D "$data" -l "$dir/server.log" -o "-p $port" -w -t 30 start >/dev/null \
            || die "the server did not start on port $port: see $dir/server.log"
    fi
    if [ "$(superuser_sql "SELECT count(*) FROM pg_roles WHERE rolname = 'parley'")" = 0 ]; then
        superuser_sql "CREATE ROLE parley LOGIN NOSUPERUSER CREATEDB NOCREATEROLE"
    fi
    if [ "$(superuser_sql "SELECT pg_has_role('parley', 'pg_signal_backend', 'MEMBER')")" = f ]; then
        superuser_sql "GRANT pg_signal_backend TO parley"
    fi
    if [ "$(superuser_sql "SELECT count(*) FROM pg_database WHERE datname = 'parley'")" = 0 ]; then
        superuser_sql "CREATE DATABASE parley OWNER parley ENCODING 'UTF8'"
    fi
    url
}

stop() {
    if running; then
        as_server "$PG_BIN/pg_ctl" -D "$data" -m fast -w -t 30 stop >/dev/null || die "the server in $dir did not stop"
    fi
}

case $command in
    start) start ;;
    stop) stop ;;
    url) running || die "no server is running in $dir"; url ;;
esac

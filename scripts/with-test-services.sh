#!/bin/bash
# Usage: scripts/with-test-services.sh COMMAND [ARGS...]
#
# Runs COMMAND beside a throwaway PostgreSQL 15 and Redis 7 (scripts/postgres-test-server.sh,
# scripts/redis-test-server.sh), each in a fresh directory under /tmp (the postgres user must reach
# it, and a unix socket path must stay short), with their URLs in PARLEY_TEST_POSTGRES_URL and
# PARLEY_TEST_REDIS_URL and PARLEY_REQUIRE_POSTGRES=1 / PARLEY_REQUIRE_REDIS=1, so a test that needs
# one fails instead of skipping. Both are stopped and removed afterwards, whatever COMMAND answers;
# its exit status is this script's.
set -uo pipefail

[ $# -ge 1 ] || { echo "usage: $0 COMMAND [ARGS...]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
postgres_dir=$(mktemp -d /tmp/parley-pg.XXXXXX)
redis_dir=$(mktemp -d /tmp/parley-redis.XXXXXX)

cleanup() {
    "$here/postgres-test-server.sh" stop "$postgres_dir" >/dev/null 2>&1
    "$here/redis-test-server.sh" stop "$redis_dir" >/dev/null 2>&1
    rm -rf "$postgres_dir" "$redis_dir"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

postgres_url=$("$here/postgres-test-server.sh" start "$postgres_dir") || { echo "$0: PostgreSQL did not start" >&2; exit 1; }
redis_url=$("$here/redis-test-server.sh" start "$redis_dir") || { echo "$0: Redis did not start" >&2; exit 1; }
postgres_url=$(printf '%s\n' "$postgres_url" | tail -n 1)
redis_url=$(printf '%s\n' "$redis_url" | tail -n 1)

PARLEY_TEST_POSTGRES_URL=$postgres_url PARLEY_REQUIRE_POSTGRES=1 \
PARLEY_TEST_REDIS_URL=$redis_url PARLEY_REQUIRE_REDIS=1 "$@"

#!/usr/bin/env bash
# The test command: runs every test on SQLite and on PostgreSQL.
# Without AOS_TEST_POSTGRES_URL it starts a throwaway PostgreSQL cluster on a
# free loopback port and stops it at exit. Extra arguments go to `go test`.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${AOS_TEST_POSTGRES_URL:-}" ]; then
  dir=$(mktemp -d /tmp/aos-pg.XXXXXX)
  chmod 755 "$dir"
  trap 'scripts/pgcluster.sh stop "$dir"; rm -rf "$dir"' EXIT
  AOS_TEST_POSTGRES_URL=$(scripts/pgcluster.sh start "$dir")
  export AOS_TEST_POSTGRES_URL
fi
# Race detector on the durable core; the rest without it (the sandbox and
# provider suites spawn many processes and run long under -race).
race_pkgs=$(go list ./internal/kernel/... ./internal/store/...)
other_pkgs=$(go list ./... | grep -v -e '/internal/kernel' -e '/internal/store')
go test -race -count=1 -timeout 20m "$@" $race_pkgs
go test -count=1 -timeout 20m "$@" $other_pkgs

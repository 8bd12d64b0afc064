#!/usr/bin/env bash
# The test command: runs every test on SQLite and on PostgreSQL, then the
# web console's browser tests (scripts/console-test.sh).
# Without AOS_TEST_POSTGRES_URL it starts a throwaway PostgreSQL cluster on a
# free loopback port and stops it at exit. Extra arguments go to `go test`.
set -euo pipefail
cd "$(dirname "$0")/.."
# Go where the README says it is; runuser and ip-style tools in sbin, which a
# user's PATH may lack (the control and sandbox tests use them).
export PATH="$PATH:/usr/local/go/bin:/usr/sbin:/sbin"
if [ -z "${AOS_TEST_POSTGRES_URL:-}" ]; then
  dir=$(mktemp -d /tmp/aos-pg.XXXXXX)
  chmod 755 "$dir"
  trap 'scripts/pgcluster.sh stop "$dir"; rm -rf "$dir"' EXIT
  AOS_TEST_POSTGRES_URL=$(scripts/pgcluster.sh start "$dir")
  export AOS_TEST_POSTGRES_URL
fi
# The real coding-agent CLIs (Claude Code, Codex CLI, OpenClaw) at pinned
# versions, for the engine tests (scripts/engines-install.sh; cached in
# $AOS_ENGINES_DIR, default .cache/engines). AOS_SKIP_ENGINES=1 skips the
# install and those tests; AOS_TEST_REQUIRE_ENGINES=1 (CI) makes a failed
# install, or a skipped engine test, fail the run.
if [ "${AOS_SKIP_ENGINES:-}" != 1 ]; then
  if scripts/engines-install.sh; then
    . "${AOS_ENGINES_DIR:-.cache/engines}/env.sh"
  elif [ "${AOS_TEST_REQUIRE_ENGINES:-}" = 1 ]; then
    echo "test.sh: installing the engines failed" >&2; exit 1
  else
    echo "test.sh: installing the engines failed; their tests are skipped" >&2
  fi
fi
# The Go tests get a TMPDIR of their own, so that what they leave there can
# be checked: SQLite's event-socket directories (aos-events-*) must all be
# gone when the tests end (internal/store/sqlite/bus_sweep.go).
outer_tmp=${TMPDIR:-/tmp}
test_tmp=$(mktemp -d "$outer_tmp/aos-test-tmp.XXXXXX")
chmod 1777 "$test_tmp" # like /tmp: the other-user tests write there too
check_tmp() {
  left=$(find "$test_tmp" -maxdepth 1 -name 'aos-events-*' 2>/dev/null | wc -l)
  if [ "$left" -ne 0 ]; then
    echo "test.sh: the tests left $left aos-events-* socket dirs under TMPDIR:" >&2
    find "$test_tmp" -maxdepth 1 -name 'aos-events-*' >&2
    return 1
  fi
  rm -rf "$test_tmp"
}
# Race detector on the kernel, store, engine and server packages; the rest
# without it (the sandbox, tool and provider suites have their own -race runs
# in development and spawn many processes).
race_pkgs=$(go list ./internal/kernel/... ./internal/store/... ./internal/engine/... ./internal/api/... ./internal/mission/... ./internal/auth/...)
other_pkgs=$(go list ./... | grep -v -e '/internal/kernel' -e '/internal/store' -e '/internal/engine' -e '/internal/api' -e '/internal/mission' -e '/internal/auth')
TMPDIR=$test_tmp go test -race -count=1 -timeout 20m "$@" $race_pkgs
TMPDIR=$test_tmp go test -count=1 -timeout 20m "$@" $other_pkgs
check_tmp
# The web console in real Chromium against a real `aos up` (< 3 min);
# AOS_SKIP_BROWSER=1 skips it, and says so.
scripts/console-test.sh

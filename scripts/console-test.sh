#!/usr/bin/env bash
# The web console's browser tests: real Chromium (Debian's chromium) driven
# by playwright-core, against a real `aos up` built from this tree and the
# scripted model server. Installs the pinned npm packages (npm ci) when
# web/node_modules is missing or stale. Bounded: the whole run is killed
# after 180 s.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
command -v node >/dev/null || { echo "console-test: node is missing (apt-get install nodejs npm)"; exit 1; }
bin=$(mktemp -d /tmp/aos-console-bin.XXXXXX)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/aos" ./cmd/aos
if [ ! -f web/node_modules/.package-lock.json ] || ! cmp -s web/package-lock.json web/node_modules/.package-lock.json 2>/dev/null; then
  (cd web && npm ci --no-audit --no-fund --cache "${NPM_CACHE:-$HOME/.npm}" >/dev/null)
fi
cd web
AOS_BIN="$bin/aos" timeout 180 node --test --test-concurrency=1 test/

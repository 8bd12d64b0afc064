#!/usr/bin/env bash
# The web console's browser tests: real Chromium (Debian's chromium) driven
# by playwright-core, against a real `aos up` built from this tree and the
# scripted model server. Installs the pinned npm packages (npm ci) when
# web/node_modules is missing or stale. AOS_SKIP_BROWSER=1 skips it (say so
# out loud: it is the console's only end-to-end test). Bounded: the whole run is killed
# after 420 s (AOS_BROWSER_TIMEOUT seconds; the 2,000-step mission takes a minute of it).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${AOS_SKIP_BROWSER:-}" = 1 ]; then echo "console-test: SKIPPED (AOS_SKIP_BROWSER=1)"; exit 0; fi
export PATH="$PATH:/usr/local/go/bin"
command -v node >/dev/null || { echo "console-test: node is missing (apt-get install nodejs npm)"; exit 1; }
bin=$(mktemp -d /tmp/aos-console-bin.XXXXXX)
trap 'rm -rf "$bin"' EXIT
CGO_ENABLED=0 go build -o "$bin/aos" ./cmd/aos # as scripts/run.sh builds it
scripts/console-build.sh --deps
cd web
AOS_BIN="$bin/aos" timeout "${AOS_BROWSER_TIMEOUT:-420}" node --test --test-concurrency=1 test/

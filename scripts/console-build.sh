#!/usr/bin/env bash
# Rebuilds the web console from web/ with the packages pinned in
# web/package-lock.json (npm ci), type-checks it, and writes the assets the
# binary embeds to internal/console/dist. With --check (CI) it then fails if
# the rebuilt assets differ from the committed ones.
# With --deps it only installs the packages (for scripts/console-test.sh).
# NPM_CACHE names npm's cache directory (default ~/.npm), so CI reuses it;
# npm ci runs again only when the lock file changed since the last install.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-build}
command -v npm >/dev/null || { echo "console-build: npm is missing (apt-get install nodejs npm)"; exit 1; }
cd web
if ! cmp -s package-lock.json node_modules/.aos-installed-lock 2>/dev/null; then
  npm ci --no-audit --no-fund --prefer-offline --cache "${NPM_CACHE:-$HOME/.npm}" >/dev/null
  cp package-lock.json node_modules/.aos-installed-lock
fi
[ "$mode" = "--deps" ] && exit 0
npm run --silent build >/dev/null
cd ..
if [ "$mode" = "--check" ]; then
  if ! git diff --quiet -- internal/console/dist || [ -n "$(git ls-files --others --exclude-standard internal/console/dist)" ]; then
    echo "console-build: internal/console/dist differs from a build of web/; run scripts/console-build.sh and commit:"
    git status --short -- internal/console/dist
    exit 1
  fi
fi

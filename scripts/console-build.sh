#!/usr/bin/env bash
# Rebuilds the web console from web/ with the packages pinned in
# web/package-lock.json (npm ci), type-checks it, and writes the assets the
# binary embeds to internal/console/dist. Before that, from the OpenAPI
# document docs/openapi.json (the server's GET /api/v1/openapi.json, kept
# equal by go test ./internal/api -run TestOpenAPIGolden), it lints the
# document with Redocly's linter and generates the console's API types,
# web/src/schema.d.ts, with openapi-typescript: both pinned in
# web/tools/openapi/package-lock.json. With --check (CI) it then fails if
# the rebuilt assets or the generated types differ from the committed ones.
# With --deps it only installs the packages (for scripts/console-test.sh).
# NPM_CACHE names npm's cache directory (default ~/.npm), so CI reuses it;
# npm ci runs again only when a lock file changed since the last install.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-build}
command -v npm >/dev/null || { echo "console-build: npm is missing (apt-get install nodejs npm)"; exit 1; }
install() { # dir
  if ! cmp -s "$1/package-lock.json" "$1/node_modules/.aos-installed-lock" 2>/dev/null; then
    (cd "$1" && npm ci --no-audit --no-fund --prefer-offline --cache "${NPM_CACHE:-$HOME/.npm}" >/dev/null)
    cp "$1/package-lock.json" "$1/node_modules/.aos-installed-lock"
  fi
}
install web
install web/tools/openapi
[ "$mode" = "--deps" ] && exit 0
(
  cd web/tools/openapi
  if ! out=$(node_modules/.bin/redocly lint ../../../docs/openapi.json --config lint.yaml --format=stylish 2>&1); then
    echo "console-build: docs/openapi.json fails the OpenAPI linter:"; echo "$out"; exit 1
  fi
  node_modules/.bin/openapi-typescript ../../../docs/openapi.json -o ../../src/schema.d.ts >/dev/null 2>&1 ||
    { echo "console-build: openapi-typescript failed"; exit 1; }
)
(cd web && npm run --silent build >/dev/null)
if [ "$mode" = "--check" ]; then
  gen="internal/console/dist web/src/schema.d.ts"
  # shellcheck disable=SC2086
  if ! git diff --quiet -- $gen || [ -n "$(git ls-files --others --exclude-standard $gen)" ]; then
    echo "console-build: internal/console/dist or web/src/schema.d.ts differs from a build of web/ and docs/openapi.json; run scripts/console-build.sh and commit:"
    git status --short -- $gen
    exit 1
  fi
fi

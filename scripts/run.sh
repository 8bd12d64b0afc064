#!/usr/bin/env bash
# Sets up and runs the main job: installs the system packages aos needs
# (as root, with apt), builds bin/aos, and runs `aos demo`: a mission that
# fixes a failing test in a throwaway repository, with a scripted model (no
# API key), through the real kernel, SDK, sandbox and git.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
need=()
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v rg >/dev/null || need+=(ripgrep)
command -v slirp4netns >/dev/null || need+=(slirp4netns)
command -v git >/dev/null || need+=(git)
# One line per phase; a phase's own output is shown only if it fails.
log=$(mktemp /tmp/aos-run.XXXXXX)
trap 'rm -f "$log"' EXIT
phase() {
  local what=$1; shift
  echo "$what…"
  if ! "$@" >"$log" 2>&1; then
    echo "aos: $what failed:" >&2
    tail -n 40 "$log" >&2
    exit 1
  fi
}
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    phase "installing ${need[*]}" sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"' sh "${need[@]}"
  else
    echo "aos: please install: ${need[*]} (for example: sudo apt-get install ${need[*]})" >&2
    exit 1
  fi
fi
command -v go >/dev/null || { echo "aos: Go 1.26 is needed (expected at /usr/local/go/bin/go)" >&2; exit 1; }
# CGO_ENABLED=0: a static binary (no dynamic loader at each start, which
# every command and sandboxed shell pays; runs on any Linux of the arch).
phase "building bin/aos" env CGO_ENABLED=0 go build -o bin/aos ./cmd/aos
rm -f "$log"
trap - EXIT
exec bin/aos demo "$@"

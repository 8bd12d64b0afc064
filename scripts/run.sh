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
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "aos: please install: ${need[*]} (for example: sudo apt-get install ${need[*]})" >&2
    exit 1
  fi
fi
go build -o bin/aos ./cmd/aos
exec bin/aos demo "$@"

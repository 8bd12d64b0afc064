#!/usr/bin/env bash
# Sets up and runs the main job: installs the system packages aos needs
# (as root, with apt), builds bin/aos, runs the self-test mission through the
# real kernel and database, then starts a worker (`aos up`) until Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
need=()
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v rg >/dev/null || need+=(ripgrep)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "aos: please install: ${need[*]} (for example: sudo apt-get install ${need[*]})" >&2
  fi
fi
go build -o bin/aos ./cmd/aos
bin/aos selftest
exec bin/aos up

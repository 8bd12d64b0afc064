#!/bin/sh
# Checks the tools a Go service agent needs on this machine.
ok=0
if command -v go >/dev/null 2>&1; then go version; else echo "go: not found on PATH (install Go from https://go.dev/dl/)"; ok=1; fi
if command -v git >/dev/null 2>&1; then git --version; else echo "git: not found on PATH"; ok=1; fi
exit $ok

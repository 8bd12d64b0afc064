#!/bin/sh
# Checks for git (history of the docs); pandoc is optional.
ok=0
if command -v git >/dev/null 2>&1; then git --version; else echo "git: not found on PATH"; ok=1; fi
if command -v pandoc >/dev/null 2>&1; then pandoc --version | head -n 1; else echo "pandoc: not found (optional: only for converting to other formats)"; fi
exit $ok

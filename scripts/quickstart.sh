#!/usr/bin/env bash
# The main job: install build dependencies, build deltaserve (Release), create the default model on
# first run, check it generates, and serve it: the OpenAI-compatible API on http://127.0.0.1:8000/v1
# until Ctrl-C. Safe to run again: every step skips what is already done.
# Usage: scripts/quickstart.sh [--model DIR] [-- SERVE_OPTIONS...]
#   (default model: a random-weight Qwen3.5-0.8B shape in models/; e.g. -- --port 9000)
set -euo pipefail
cd "$(dirname "$0")/.."

model=""
if [ "${1:-}" = "--model" ]; then model=${2:?--model needs a directory}; shift 2; fi
if [ "${1:-}" = "--" ]; then shift; fi

scripts/install_deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDELTASERVE_TESTS=OFF >/dev/null
cmake --build build --target deltaserve
bin=build/apps/deltaserve/deltaserve

if [ -z "$model" ]; then
  model=models/qwen3.5-0.8b-random
  # Made once; remade when an older version made it (its random text was mostly invisible ids).
  if ! grep -qs '"visible_text": true' "$model/deltaserve_random.json"; then
    echo "deltaserve: creating the default model (random weights, Qwen3.5-0.8B shape) in $model" >&2
    "$bin" make-checkpoint --shape qwen3.5-0.8b --out "$model" --force
  fi
fi

# A smoke test first: a sampled continuation of a prompt (the log lines say what was loaded and how
# fast it ran). The random default model writes random but visible text; a real checkpoint, an answer.
"$bin" generate --model "$model" --prompt "The capital of France is" --max-tokens 16 --temperature 0.7 --seed 1

# The main job: serve it (docs/server.md), with any serve options given after `--`. Try, from
# another terminal (thinking is on by default in Qwen3.5's template: what the model thinks arrives
# as message.reasoning_content, the answer as message.content):
#   curl http://127.0.0.1:8000/v1/chat/completions -H 'Content-Type: application/json' \
#     -d '{"messages": [{"role": "user", "content": "Hello!"}], "max_tokens": 32,
#          "chat_template_kwargs": {"enable_thinking": false}}'
exec "$bin" serve --model "$model" --served-model-name "$(basename "$model")" "$@"

#!/usr/bin/env bash
# The main job: install build dependencies, build deltaserve (Release), create the default model on
# first run, and run it. Safe to run again: every step skips what is already done.
# Usage: scripts/quickstart.sh [--model DIR]   (default: a random-weight Qwen3.5-0.8B shape in models/)
set -euo pipefail
cd "$(dirname "$0")/.."

model=""
if [ "${1:-}" = "--model" ]; then model=${2:?--model needs a directory}; fi

scripts/install_deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDELTASERVE_TESTS=OFF >/dev/null
cmake --build build --target deltaserve
bin=build/apps/deltaserve/deltaserve

if [ -z "$model" ]; then
  model=models/qwen3.5-0.8b-random
  if [ ! -f "$model/config.json" ]; then
    echo "deltaserve: creating the default model (random weights, Qwen3.5-0.8B shape) in $model" >&2
    "$bin" make-checkpoint --shape qwen3.5-0.8b --out "$model" --force
  fi
fi

# The main job: a greedy continuation of a prompt. The log lines say what was loaded and how fast it
# ran. With a real checkpoint (--model) the continuation is printed as text; the random default model
# mostly picks ids that the project's vocabulary leaves unused (they decode to nothing), so it prints ids.
if [ "$model" = models/qwen3.5-0.8b-random ]; then
  "$bin" generate --model "$model" --prompt "The capital of France is" --max-tokens 16 --ids
else
  "$bin" generate --model "$model" --prompt "The capital of France is" --max-tokens 32
fi

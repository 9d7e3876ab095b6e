#!/usr/bin/env bash
# Fuzzes one parser with libFuzzer (clang, ASan + UBSan) and merges inputs that add coverage into
# the kept corpus tests/fuzz/corpus/TARGET (which CI replays). Crashes are written to fuzz-artifacts/.
# Usage: scripts/fuzz.sh TARGET SECONDS     TARGET: a folder of tests/fuzz/corpus (safetensors_header, model_config,
#   chat_template, chat_render, output_parsers, openai_request)
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: scripts/fuzz.sh safetensors_header|model_config|chat_template SECONDS}
seconds=${2:?usage: scripts/fuzz.sh TARGET SECONDS}
[ -d "tests/fuzz/corpus/$target" ] || { echo "unknown fuzz target: $target" >&2; exit 1; }

scripts/install_deps.sh
for package in clang libclang-rt-14-dev; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || {
    apt-get update -qq && apt-get install -y -qq --no-install-recommends clang libclang-rt-14-dev >/dev/null; break; }
done
cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DDELTASERVE_FUZZ=ON -DDELTASERVE_TESTS=ON >/dev/null
cmake --build build-fuzz --target "fuzz_$target"

dict=tests/fuzz/json.dict
case $target in chat_template | chat_render) dict=tests/fuzz/jinja.dict ;; esac
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp "tests/fuzz/corpus/$target/"* "$scratch/"
mkdir -p fuzz-artifacts
"build-fuzz/tests/fuzz/fuzz_$target" "$scratch" -dict="$dict" -max_len=8192 \
  -max_total_time="$seconds" -artifact_prefix=fuzz-artifacts/ -print_final_stats=1
"build-fuzz/tests/fuzz/fuzz_$target" -merge=1 -max_len=8192 "tests/fuzz/corpus/$target" "$scratch"
echo "corpus tests/fuzz/corpus/$target: $(ls "tests/fuzz/corpus/$target" | wc -l) inputs" >&2

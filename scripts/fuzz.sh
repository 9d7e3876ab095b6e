#!/usr/bin/env bash
# Fuzzes one parser with libFuzzer (clang, ASan + UBSan), then replaces the kept corpus
# tests/fuzz/corpus/TARGET (which CI replays) with a minimal one (-merge=1 into an empty folder) that
# covers every edge the old corpus and the run reached. Crashes are written to fuzz-artifacts/.
# Usage: scripts/fuzz.sh TARGET SECONDS     TARGET: a folder of tests/fuzz/corpus (safetensors_header, model_config,
#   tokenizer_json, chat_template, chat_render, output_parsers, openai_request, gguf_file, gguf_model, prefix_store, png_decode,
#   jpeg_decode, webp_decode, gif_decode)
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

dict=(-dict=tests/fuzz/json.dict)
max_len=8192
case $target in
  chat_template | chat_render) dict=(-dict=tests/fuzz/jinja.dict) ;;
  gguf_file) dict=(-dict=tests/fuzz/gguf.dict) ;;
  gguf_model) dict=(-dict=tests/fuzz/gguf.dict); max_len=72000 ;;  # whole models: its seeds are 17-70 KB
  prefix_store) dict=() ;;  # a binary format: no words to suggest
  png_decode | jpeg_decode | webp_decode | gif_decode) dict=() ;;
esac
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp "tests/fuzz/corpus/$target/"* "$scratch/"
mkdir -p fuzz-artifacts
"build-fuzz/tests/fuzz/fuzz_$target" "$scratch" "${dict[@]}" -max_len="$max_len" \
  -max_total_time="$seconds" -artifact_prefix=fuzz-artifacts/ -print_final_stats=1
# Merging into the kept corpus would only ever add files; merging into an empty folder keeps the
# smallest inputs that together reach every edge of the old corpus and the run. -use_counters=0:
# edges only, not hit-count buckets, which kept 3-4 times the files (docs/fuzzing.md); max_len: all
# of every kept seed (one safetensors seed is 10 KB, past the fuzzing limit).
minimal=$(mktemp -d)
trap 'rm -rf "$scratch" "$minimal"' EXIT
"build-fuzz/tests/fuzz/fuzz_$target" -merge=1 -use_counters=0 -max_len=$((max_len > 16384 ? max_len : 16384)) "$minimal" "$scratch"
# libFuzzer names what it merges by SHA-1; an input that was in the kept corpus keeps its name (seed_*).
for kept in "tests/fuzz/corpus/$target/"*; do
  sum=$(sha1sum <"$kept" | cut -c1-40)
  name=$(basename "$kept")
  if [ "$name" != "$sum" ] && [ -f "$minimal/$sum" ]; then mv "$minimal/$sum" "$minimal/$name"; fi
done
rm -f "tests/fuzz/corpus/$target/"*
cp "$minimal/"* "tests/fuzz/corpus/$target/"
echo "corpus tests/fuzz/corpus/$target: $(ls "tests/fuzz/corpus/$target" | wc -l) inputs," \
  "$(du -sb "tests/fuzz/corpus/$target" | cut -f1) bytes" >&2

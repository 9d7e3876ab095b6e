#!/usr/bin/env bash
# GGUF files of a full-size random-weight shape, made by llama.cpp's own converter and quantiser, for the
# benchmarks and quality runs (never committed; never run by CI). See tools/peer/README.md.
#
#   tools/peer/make_gguf_models.sh [SHAPE] [OUT_DIR]          # default: 2b /work/gguf-models
#
# 1. deltaserve make-checkpoint --shape SHAPE (random weights, real shapes, tokenizer), unless present;
# 2. llama.cpp's convert_hf_to_gguf.py --outtype bf16 -> <name>-BF16.gguf (through
#    tools/reference/make_gguf_model_fixtures.py's convert(): deltaserve's own tokenizer has no pre-tokenizer
#    hash llama.cpp knows, so the converter is told "qwen35", the name it gives Qwen3.5's identical regex);
# 3. llama-quantize (llama.cpp's default recipes, no imatrix) -> Q8_0, Q4_K_M, Q5_K_M, Q6_K, IQ4_XS;
# then prints each file's exact size. Existing outputs are kept (delete one to remake it).
# Needs: the peer build (tools/peer/llamacpp.sh), deltaserve built (DELTASERVE, default
# build/apps/deltaserve/deltaserve) and a Python with torch, numpy, safetensors, sentencepiece and the
# vendored gguf-py (PYTHON, default /work/venvs/gguf-ref/bin/python; tools/reference/README.md says how).
set -euo pipefail

SHAPE=${1:-2b}
OUT=${2:-/work/gguf-models}
PEER_DIR=${PEER_DIR:-/work/peer-build}
SRC=$PEER_DIR/llama_cpp_python-0.3.36/vendor/llama.cpp
BIN=$PEER_DIR/build/bin
PYTHON=${PYTHON:-/work/venvs/gguf-ref/bin/python}
DELTASERVE=${DELTASERVE:-build/apps/deltaserve/deltaserve}
THREADS=${THREADS:-2}
NICE=${NICE:-10}
TYPES=${TYPES-"Q8_0 Q4_K_M Q5_K_M Q6_K IQ4_XS"}
HERE=$(cd "$(dirname "$0")" && pwd)

NAME=qwen3.5-$SHAPE-random
CKPT=$OUT/$NAME
mkdir -p "$OUT"
[[ -x $BIN/llama-quantize ]] || { echo "error: $BIN/llama-quantize not found; run tools/peer/llamacpp.sh" >&2; exit 1; }

if [[ ! -f $CKPT/config.json ]]; then
    nice -n "$NICE" "$DELTASERVE" make-checkpoint --shape "$SHAPE" --out "$CKPT" --threads "$THREADS"
fi
BF16=$OUT/$NAME-BF16.gguf
if [[ ! -f $BF16 ]]; then
    nice -n "$NICE" "$PYTHON" -c 'import pathlib, sys
sys.path.insert(0, sys.argv[1])
from make_gguf_model_fixtures import convert
convert(pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3]), "bf16", pathlib.Path(sys.argv[4]), 0)' \
        "$HERE/../reference" "$SRC" "$CKPT" "$BF16.part"
    mv "$BF16.part" "$BF16"
fi
for type in $TYPES; do
    out=$OUT/$NAME-$type.gguf
    if [[ ! -f $out ]]; then
        nice -n "$NICE" "$BIN/llama-quantize" "$BF16" "$out.part" "$type" "$THREADS" > "$out.log" 2>&1 \
            || { tail -20 "$out.log" >&2; exit 1; }
        mv "$out.part" "$out"
    fi
done
for f in "$BF16" $(for type in $TYPES; do echo "$OUT/$NAME-$type.gguf"; done); do
    printf '%14d  %s\n' "$(stat -c %s "$f")" "$f"
done

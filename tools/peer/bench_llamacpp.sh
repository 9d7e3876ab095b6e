#!/usr/bin/env bash
# llama.cpp's llama-bench on one GGUF file: prefill at a few prompt sizes and decode, in tok/s.
# Never run by CI. Needs the peer build (tools/peer/llamacpp.sh). See tools/peer/README.md.
#
#   tools/peer/bench_llamacpp.sh MODEL.gguf [extra llama-bench flags...]
#   THREADS=2 PROMPTS=64,128,512,2048 GEN=128 REPS=3 tools/peer/bench_llamacpp.sh /work/gguf-models/x.gguf
#
# Defaults: 2 threads, pp 128,512,2048 (pp512 is llama.cpp's usual prefill figure), tg128 (decode from an
# empty context), 3 repetitions, weight repacking as llama.cpp's default (--repack 1; pass --repack 0 to
# compare), flash attention as its default. Prints the machine load before and after, since this machine is
# shared and the numbers move with it.
set -euo pipefail

if [[ $# -lt 1 || ! -f $1 ]]; then
    echo "usage: $0 MODEL.gguf [extra llama-bench flags...]" >&2
    exit 2
fi
MODEL=$1
shift
PEER_DIR=${PEER_DIR:-/work/peer-build}
BENCH=$PEER_DIR/build/bin/llama-bench
[[ -x $BENCH ]] || { echo "error: $BENCH not found; run tools/peer/llamacpp.sh first" >&2; exit 1; }

THREADS=${THREADS:-2}
PROMPTS=${PROMPTS:-128,512,2048}
GEN=${GEN:-128}
REPS=${REPS:-3}

echo "model: $MODEL ($(stat -c %s "$MODEL") bytes)"
echo "load before: $(uptime)"
"$BENCH" -m "$MODEL" -t "$THREADS" -p "$PROMPTS" -n "$GEN" -r "$REPS" -o md "$@"
echo "load after: $(uptime)"

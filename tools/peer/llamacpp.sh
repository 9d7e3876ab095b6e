#!/usr/bin/env bash
# Builds llama.cpp (the peer) from the llama-cpp-python sdist on PyPI, outside the repository.
# Idempotent: a second run only rebuilds what changed. Never run by CI. See tools/peer/README.md.
#
#   tools/peer/llamacpp.sh            # builds into $PEER_DIR (default /work/peer-build)
#   JOBS=2 NICE=10 PEER_DIR=/elsewhere tools/peer/llamacpp.sh
#   AMX=off tools/peer/llamacpp.sh    # into $PEER_DIR/build-noamx: this CPU's AVX-512 / VNNI / BF16,
#                                     # no AMX (llama.cpp's AMX path segfaults on qwen35 files; README)
#
# Prints the bin directory on its last line.
set -euo pipefail

VERSION=0.3.36                         # llama-cpp-python; vendors llama.cpp 0c1e57098 (its CHANGELOG)
LLAMA_COMMIT=0c1e57098
SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
PEER_DIR=${PEER_DIR:-/work/peer-build}
JOBS=${JOBS:-2}
NICE=${NICE:-10}
HERE=$(cd "$(dirname "$0")" && pwd)

SDIST=$PEER_DIR/llama_cpp_python-$VERSION.tar.gz
SRC=$PEER_DIR/llama_cpp_python-$VERSION/vendor/llama.cpp
AMX=${AMX:-native}
BUILD=$PEER_DIR/build
[[ $AMX == off ]] && BUILD=$PEER_DIR/build-noamx

mkdir -p "$PEER_DIR"
if [[ ! -f $SDIST ]]; then
    python3 -m pip download --no-deps --no-binary :all: "llama-cpp-python==$VERSION" -d "$PEER_DIR"
fi
echo "$SHA256  $SDIST" | sha256sum -c --quiet - || { echo "error: $SDIST does not have the pinned sha256 $SHA256" >&2; exit 1; }
if [[ ! -f $SRC/CMakeLists.txt ]]; then
    tar -xzf "$SDIST" -C "$PEER_DIR"
fi

# LLAMA_BUILD_COMMIT: the sdist has no .git, so llama.cpp would report "unknown".
# GGML_NATIVE: -march=native (this machine's AVX-512 / VNNI / bf16). GGML_CPU_REPACK stays ON (the default),
# as users get it; the logits dumper and llama-bench report whether repacked buffers were used.
# AMX=off: -march=native would define __AMX_INT8__ and compile ggml's AMX path in, so the ISA is
# spelled out instead (the AVX-512 set of the AMX Xeons, which llama.cpp detects the same way).
ISA_FLAGS=(-DGGML_NATIVE=ON)
if [[ $AMX == off ]]; then
    ISA_FLAGS=(-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
               -DGGML_AVX_VNNI=ON -DGGML_AVX512=ON -DGGML_AVX512_VBMI=ON -DGGML_AVX512_VNNI=ON -DGGML_AVX512_BF16=ON)
fi
if [[ ! -f $BUILD/CMakeCache.txt ]]; then
    cmake -S "$SRC" -B "$BUILD" -G Ninja \
        -DCMAKE_BUILD_TYPE=Release \
        "${ISA_FLAGS[@]}" -DGGML_OPENMP=ON -DGGML_CCACHE=ON \
        -DBUILD_SHARED_LIBS=ON \
        -DLLAMA_BUILD_COMMIT=$LLAMA_COMMIT \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
        -DLLAMA_BUILD_APP=OFF -DLLAMA_OPENSSL=OFF
fi
nice -n "$NICE" cmake --build "$BUILD" -j "$JOBS" \
    --target llama-quantize llama-bench llama-perplexity llama-imatrix llama-gguf-split

# The logits dumper: one small program against libllama (tools/peer/dump_logits.cpp).
DUMP=$BUILD/bin/llama-dump-logits
if [[ ! -x $DUMP || $HERE/dump_logits.cpp -nt $DUMP || $BUILD/bin/libllama.so -nt $DUMP ]]; then
    nice -n "$NICE" g++ -std=c++17 -O2 -march=native -Wall -Wextra \
        -I"$SRC/include" -I"$SRC/ggml/include" "$HERE/dump_logits.cpp" \
        -L"$BUILD/bin" -lllama -lggml -lggml-base -Wl,-rpath,"$BUILD/bin" -o "$DUMP"
fi
echo "$BUILD/bin"

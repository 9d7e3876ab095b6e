#!/usr/bin/env bash
# Builds and runs every test: a Release build with -Werror, then the same tests under
# AddressSanitizer + UndefinedBehaviorSanitizer. Installs what it needs; safe to run again.
# Usage: scripts/test.sh [--no-sanitizers]
set -euo pipefail
cd "$(dirname "$0")/.."

sanitizers=1
[ "${1:-}" = "--no-sanitizers" ] && sanitizers=0
jobs=$(nproc)

scripts/install_deps.sh --test

run_suite() {  # run_suite BUILD_DIR EXCLUDED_LABELS CMAKE_ARGS...
  local dir=$1 excluded=$2; shift 2
  cmake -S . -B "$dir" -G Ninja -DDELTASERVE_WERROR=ON -DDELTASERVE_TESTS=ON "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
  ctest --test-dir "$dir" --output-on-failure -j "$jobs" -LE "$excluded"
}

echo "== Release build and tests ==" >&2
run_suite build-test 'slow|gpu' -DCMAKE_BUILD_TYPE=Release
if [ "$sanitizers" -eq 1 ]; then
  # `cluster` (three replicas behind a gateway) runs once: its replicas' C++ paths are the ones the
  # other server tests run under the sanitizers.
  echo "== ASan + UBSan build and tests ==" >&2
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_suite build-asan 'slow|gpu|cluster' -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDELTASERVE_SANITIZE=ON
fi

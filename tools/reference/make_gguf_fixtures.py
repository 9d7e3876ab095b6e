#!/usr/bin/env python3
"""GGUF container fixtures written by gguf-py (llama.cpp's own Python writer and reader).

Writes tests/fixtures/gguf/container.gguf — metadata of every value type (scalars, arrays, strings,
a non-default alignment) and tensors of several ggml types and ranks — and expected.json, what
gguf-py's GGUFReader reads back from that file (key types, values, tensor shapes, types, offsets).
The C++ parser's test compares its reading of the file with expected.json.

  python3 -m venv /tmp/gguf-venv && /tmp/gguf-venv/bin/pip install gguf==0.19.0
  /tmp/gguf-venv/bin/python tools/reference/make_gguf_fixtures.py
"""
import json
import pathlib

import gguf
import numpy as np

OUT = pathlib.Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "gguf"


def write(path):
    w = gguf.GGUFWriter(str(path), arch="qwen35")
    w.add_custom_alignment(64)  # general.alignment, and the writer pads to it
    w.add_name("container fixture")
    w.add_uint8("test.u8", 200)
    w.add_int8("test.i8", -100)
    w.add_uint16("test.u16", 60000)
    w.add_int16("test.i16", -30000)
    w.add_uint32("test.u32", 4000000000)
    w.add_int32("test.i32", -2000000000)
    w.add_float32("test.f32", 0.25)
    w.add_uint64("test.u64", 2**62 + 1)
    w.add_int64("test.i64", -(2**62))
    w.add_float64("test.f64", -1.5e300)
    w.add_bool("test.bool", True)
    w.add_string("test.string", "déjà vu ✓")
    w.add_array("test.strings", ["<|im_start|>", "", "Ġhello", "✓"])
    w.add_array("test.ints", [1, -2, 3])
    w.add_array("test.floats", [0.5, -0.25])
    rng = np.random.default_rng(0)
    w.add_tensor("token_embd.weight", rng.standard_normal((3, 64), dtype=np.float32))
    w.add_tensor("blk.0.attn_norm.weight", rng.standard_normal(64, dtype=np.float32).astype(np.float16))
    w.add_tensor("blk.0.ffn_up.weight", rng.integers(0, 256, (2, 34 * 2), dtype=np.uint8),
                 raw_dtype=gguf.GGMLQuantizationType.Q8_0)  # shape from the bytes: (2, 64)
    w.add_tensor("blk.0.ffn_down.weight", rng.integers(0, 256, (2, 144), dtype=np.uint8),
                 raw_dtype=gguf.GGMLQuantizationType.Q4_K)  # (2, 256)
    w.add_tensor("blk.0.ssm_a", rng.standard_normal(5, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def value_of(field):
    kind = field.types[0]
    if kind == gguf.GGUFValueType.ARRAY:
        return [value_of_part(field, i) for i in field.data]
    return value_of_part(field, field.data[0])


def value_of_part(field, index):
    part = field.parts[index]
    kind = field.types[-1]
    if kind == gguf.GGUFValueType.STRING:
        return bytes(part).decode("utf-8")
    value = part.tolist()[0]
    return bool(value) if kind == gguf.GGUFValueType.BOOL else value


def expected(path):
    reader = gguf.GGUFReader(str(path))
    out = {"metadata": [], "tensors": [], "data_offset": int(reader.data_offset), "alignment": int(reader.alignment)}
    for field in reader.fields.values():
        if field.name.startswith("GGUF."):
            continue  # the reader's own header fields (version, counts)
        out["metadata"].append({"key": field.name, "type": field.types[0].name.lower(),
                                "element_type": field.types[-1].name.lower(), "value": value_of(field)})
    for t in reader.tensors:
        out["tensors"].append({"name": t.name, "type": t.tensor_type.name, "shape": [int(n) for n in t.shape],
                               "offset": int(t.data_offset) - int(reader.data_offset), "bytes": int(t.n_bytes)})
    return out


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / "container.gguf"
    write(path)
    manifest = expected(path)
    manifest["made_by"] = f"gguf-py {gguf.__version__ if hasattr(gguf, '__version__') else '0.19.0'} (GGUFWriter; expected values from GGUFReader)"
    (OUT / "expected.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {path} ({path.stat().st_size} bytes) and expected.json")


if __name__ == "__main__":
    main()

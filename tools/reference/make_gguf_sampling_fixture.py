#!/usr/bin/env python3
"""A GGUF file's sampling defaults, written by llama.cpp's converter code (gguf-py, no torch).

convert_hf_to_gguf.py reads the generation_config.json beside the model it converts through
gguf.Metadata.load() and writes its sampling values as general.sampling.* keys with
Metadata.set_gguf_meta_model(). This script runs exactly those two calls on a generation_config.json
in Qwen3.5's form (its published non-thinking settings, presence_penalty included, which the converter
does not carry) and writes tests/fixtures/gguf/sampling.gguf: metadata only, no tensors. It also writes
sampling_expected.json, what gguf-py's GGUFReader reads back (each key's value type and value), which
deltaserve's reading of the file is compared with.

  python3 -m venv /tmp/ggufpy && /tmp/ggufpy/bin/pip install numpy pyyaml
  PYTHONPATH=$LLAMA_CPP/gguf-py /tmp/ggufpy/bin/python tools/reference/make_gguf_sampling_fixture.py
(LLAMA_CPP: the llama.cpp source llama-cpp-python 0.3.36 vendors, tools/peer/llamacpp.sh; gguf-py 0.19.0.)
"""
import json
import pathlib
import tempfile

import gguf

OUT = pathlib.Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "gguf"

GENERATION_CONFIG = {
    "bos_token_id": 248044,
    "do_sample": True,
    "eos_token_id": [248046, 248044],
    "pad_token_id": 248044,
    "temperature": 0.7,
    "top_k": 20,
    "top_p": 0.8,
    "min_p": 0.0,
    "presence_penalty": 1.5,
    "repetition_penalty": 1.05,
    "transformers_version": "4.57.0.dev0",
}


def main():
    with tempfile.TemporaryDirectory() as model_dir:
        (pathlib.Path(model_dir) / "generation_config.json").write_text(json.dumps(GENERATION_CONFIG))
        metadata = gguf.Metadata.load(None, pathlib.Path(model_dir), "sampling fixture", 0)
    path = OUT / "sampling.gguf"
    writer = gguf.GGUFWriter(str(path), arch="qwen35")
    metadata.set_gguf_meta_model(writer)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()

    reader = gguf.GGUFReader(str(path))
    expected = {}
    for key, field in reader.fields.items():
        if not key.startswith("general.sampling."):
            continue
        kind = field.types[0]
        value = field.parts[field.data[0]].tolist()[0]
        expected[key] = {"type": kind.name.lower(), "value": value}
    (OUT / "sampling_expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    print(f"wrote {path} ({path.stat().st_size} bytes): {expected}")


if __name__ == "__main__":
    main()

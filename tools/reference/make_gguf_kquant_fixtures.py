#!/usr/bin/env python3
"""K-quant GGUF fixtures made by llama.cpp itself, with llama.cpp's own dequantisation and logits as oracles.

Input: tests/fixtures/g_kquant_shapes (made by make_fixtures.py: every matmul input dimension is a multiple of
256, so llama.cpp's K-quants apply to every weight without its silent fallback to 32-blocks).
Converts it with llama.cpp's convert_hf_to_gguf.py to BF16 (not committed: it holds exactly the values of
the committed model.safetensors), quantises that with llama.cpp's llama-quantize, and writes into
tests/fixtures/gguf/:

  g_kquant_shapes-Q4_K.gguf     llama-quantize --pure BF16 out Q4_K_M   every quantisable tensor Q4_K
  g_kquant_shapes-Q5_K.gguf     llama-quantize --pure BF16 out Q5_K_M   every quantisable tensor Q5_K
  g_kquant_shapes-Q6_K.gguf     llama-quantize --pure BF16 out Q6_K     every quantisable tensor Q6_K
  g_kquant_shapes-IQ4_XS.gguf   llama-quantize --pure BF16 out IQ4_XS   every quantisable tensor IQ4_XS
  g_kquant_shapes-Q4_K_M.gguf   llama-quantize        BF16 out Q4_K_M   llama.cpp's default Q4_K_M mix
  kquant_expected.json          per file and tensor: ggml type, ggml shape, FNV-1a 64 of gguf-py's
                                dequantisation (gguf.quants.dequantize) as fp32 little-endian bytes, and the
                                first values: the format of model_expected.json (gguf-py's dequantisation
                                equals ggml's own C to_float bit for bit on all 165 quantised tensors here)
  kquant_llamacpp_logits.safetensors   llama.cpp's logits at every position of prompts 1, 64 and 211 tokens
                                long, per file: as its users get them (<type>.prompt<k>.logits) and in fp32 on
                                gguf-py's dequantisation of the file (<type>.prompt<k>.logits_f32)
  kquant_manifest.json          how all of it was made (versions, commands, what llama.cpp's log said, sizes,
                                sha256, per-tensor types, and errors between all these logits and HF's)

No imatrix is used: llama.cpp 0c1e57098 requires one only for IQ1_*, IQ2_*, IQ3_XXS and Q2_K in Q2_K_S
(src/llama-quant.cpp, tensor_requires_imatrix); IQ4_XS quantises without one (unweighted).

The logits come from tools/peer/dump_logits.cpp (built by tools/peer/llamacpp.sh): llama.cpp's CPU backend,
2 threads, the whole prompt as one llama_decode with n_batch = n_ubatch = prompt length, every position's
logits. `logits`: llama.cpp's default context (flash attention auto, F16 KV cache, weight repacking);
`logits_f32`: an F32 GGUF written with gguf-py from the dequantised tensors, run with an F32 KV cache and
flash attention off, i.e. the quantised model in fp32 arithmetic (on the BF16 values this path is within
2e-6 of HF fp32). Deterministic: a rerun rewrites every output byte for byte (checked).

  tools/peer/llamacpp.sh                                   # builds llama.cpp into /work/peer-build
  /work/venvs/gguf-ref/bin/pip install /work/peer-build/llama_cpp_python-0.3.36/vendor/llama.cpp/gguf-py
  /work/venvs/gguf-ref/bin/python tools/reference/make_fixtures.py --only g_kquant_shapes
  /work/venvs/gguf-ref/bin/python tools/reference/make_gguf_kquant_fixtures.py \\
      --llama-cpp /work/peer-build/llama_cpp_python-0.3.36/vendor/llama.cpp --bin /work/peer-build/build/bin
"""
import argparse
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from make_gguf_model_fixtures import FIXTURES, OUT, convert, expected_of, small_tokenizer  # noqa: E402

FIXTURE = "g_kquant_shapes"
# (file suffix, llama-quantize ftype argument, --pure)
QUANTS = [
    ("Q4_K", "Q4_K_M", True),
    ("Q5_K", "Q5_K_M", True),
    ("Q6_K", "Q6_K", True),
    ("IQ4_XS", "IQ4_XS", True),
    ("Q4_K_M", "Q4_K_M", False),
]
PROMPTS = [0, 2, 4]  # indices into the fixture's reference.safetensors: lengths 1, 64, 211
THREADS = 2
# llama-dump-logits flags for llama.cpp's fp32 arithmetic: with an F32 model, an F32 KV cache and no flash
# attention, llama.cpp on an F32 copy of the BF16 values lands within 2e-6 of HF fp32 (its defaults: 8e-5).
EXACT = ["--f32-kv", "--no-flash-attn"]
SDIST = "llama-cpp-python 0.3.36 (sdist sha256 832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e)"
LLAMA_COMMIT = "0c1e57098"


def run(cmd, **kw):
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], check=True, capture_output=True, text=True, **kw)


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def census(tensors):
    counts = {}
    for t in tensors.values():
        counts[t["type"]] = counts.get(t["type"], 0) + 1
    return dict(sorted(counts.items()))


def llama_logits(bin_dir, gguf_path, ids, tmp, flags=()):
    """llama.cpp's logits [n, vocab] for one prompt, and what its log says about how they were computed."""
    ids_path, out_path = tmp / "ids.i32", tmp / "logits.f32"
    ids.astype("<i4").tofile(ids_path)
    cmd = [bin_dir / "llama-dump-logits", gguf_path, THREADS, ids_path, out_path, *flags]
    p = run(cmd)
    info = json.loads(p.stdout.strip().splitlines()[-1])
    logits = np.fromfile(out_path, dtype="<f4").reshape(len(ids), info["n_vocab"])
    log = p.stderr
    facts = {
        "repacked_tensors": dict(re.findall(r"repack: repack tensor (\S+) with (\S+)", log)),
        "flash_attn_setting": sorted(set(re.findall(r"llama_context: flash_attn += (\w+)", log))),
        "flash_attn_resolved": sorted(set(re.findall(r"Flash Attention (enabled|disabled)", log))),
        "kv_cache_types": sorted(set(re.findall(r"K \((\w+)\):.*?V \((\w+)\):", log))),
        "n_batch": sorted(set(int(v) for v in re.findall(r"n_batch += (\d+)", log))),
        "n_ubatch": sorted(set(int(v) for v in re.findall(r"n_ubatch += (\d+)", log))),
        "threads": info["threads"],
        "system_info": info["system_info"].strip(" |"),
    }
    return logits, facts


def merged(runs):
    """One prompt's facts, with the batch sizes of all the prompts."""
    out = dict(runs[-1])
    for key in ("n_batch", "n_ubatch"):
        out[key] = sorted({v for run in runs for v in run[key]})
    return out


def dequantised_copy(src, dst):
    """An F32 GGUF with src's metadata and gguf-py's dequantisation of every tensor: llama.cpp on it computes
    with exactly the quantised weights but in fp32 (no Q8_K activation quantisation, no repacking)."""
    import gguf
    reader = gguf.GGUFReader(str(src))
    writer = gguf.GGUFWriter(str(dst), arch=reader.get_field(gguf.Keys.General.ARCHITECTURE).contents())
    for field in reader.fields.values():
        if field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
            continue
        value = field.contents()
        if field.name == gguf.Keys.General.FILE_TYPE:
            value = int(gguf.LlamaFileType.ALL_F32)
        sub_type = field.types[-1] if field.types[0] == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(field.name, value, field.types[0], sub_type=sub_type)
    for t in reader.tensors:
        writer.add_tensor(t.name, gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def rel_err(a, b):
    """Max over positions of max|a - b| / max|b| (the project's measure)."""
    return float((np.abs(a - b).max(-1) / np.abs(b).max(-1)).max())


def mean_kl(p_logits, q_logits):
    """Mean over positions of KL(softmax(p) || softmax(q)), p the reference."""
    def log_softmax(x):
        x = x.astype(np.float64)
        x = x - x.max(-1, keepdims=True)
        return x - np.log(np.exp(x).sum(-1, keepdims=True))
    lp, lq = log_softmax(p_logits), log_softmax(q_logits)
    return float((np.exp(lp) * (lp - lq)).sum(-1).mean())


def compare(pairs):
    """Errors of logits against reference logits, pooled over all positions of all prompts."""
    ours = np.concatenate([o for o, _ in pairs])
    ref = np.concatenate([r for _, r in pairs])
    top2 = np.sort(ref, -1)[:, -2:]
    decisive = (top2[:, 1] - top2[:, 0]) > 3e-2 * np.abs(ref).max(-1)
    same = ours.argmax(-1) == ref.argmax(-1)
    return {"rel_err": rel_err(ours, ref), "mean_kl": mean_kl(ref, ours), "top1": float(same.mean()),
            "top1_where_margin_gt_3pct": float(same[decisive].mean()), "positions": int(len(same)),
            "decisive_positions": int(decisive.sum())}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--llama-cpp", required=True, help="llama.cpp source tree (from the llama-cpp-python sdist)")
    parser.add_argument("--bin", required=True, type=pathlib.Path,
                        help="llama.cpp bin directory with llama-quantize and llama-dump-logits (tools/peer/llamacpp.sh)")
    args = parser.parse_args()
    llama_cpp = pathlib.Path(args.llama_cpp).resolve()
    from importlib.metadata import version
    from safetensors.numpy import load_file, save_file

    reference = load_file(str(FIXTURES / FIXTURE / "reference.safetensors"))
    vocab = int(reference["prompt0.logits"].shape[1])
    for old in OUT.glob(f"{FIXTURE}-*.gguf"):
        old.unlink()
    expected = {"converter": "llama.cpp convert_hf_to_gguf.py and llama-quantize from " + SDIST, "files": {}}
    manifest = {
        "what": f"GGUF K-quant fixtures made by llama.cpp from tests/fixtures/{FIXTURE}, and llama.cpp's fp32 "
                "logits on them; written by tools/reference/make_gguf_kquant_fixtures.py",
        "llama_cpp": {"source": SDIST + ", vendor/llama.cpp", "commit": LLAMA_COMMIT,
                      "build": "tools/peer/llamacpp.sh: CMake Release, GGML_NATIVE=ON, GGML_CPU_REPACK=ON (default), "
                               "GGML_OPENMP=ON, shared libraries, gcc " + gcc_version()},
        "gguf_py": f"gguf {version('gguf')} (gguf-py of the same llama.cpp tree)",
        "source_checkpoint": {"fixture": FIXTURE,
                              "model_safetensors_sha256": sha256(FIXTURES / FIXTURE / "model.safetensors")},
        "conversion": f"convert_hf_to_gguf.py {FIXTURE} --outtype bf16 --no-mtp (pre-tokenizer told 'qwen35', see "
                      "make_gguf_model_fixtures.py) -> BF16 GGUF, not committed: it holds exactly the values of "
                      "model.safetensors (BF16, with ssm_a = -exp(A_log), norms + 1, conv and 1-D tensors F32)",
        "imatrix": "none: llama.cpp requires one only for IQ1_*, IQ2_*, IQ3_XXS and Q2_K in Q2_K_S; IQ4_XS is "
                   "quantised unweighted without one",
        "unquantised_rule": UNQUANTISED_RULE,
        "logits": {
            "file": "kquant_llamacpp_logits.safetensors",
            "tensors": {
                "prompt<k>.input_ids": "I64 [n]: equal to the fixture's reference.safetensors prompt<k>.input_ids",
                "<type>.prompt<k>.logits": f"F32 [n, {vocab}]: llama.cpp's logits at every position of prompt<k> "
                                           f"on {FIXTURE}-<type>.gguf as its users get them (defaults: flash "
                                           "attention, F16 KV cache, repacked weights, K-quant dot products on "
                                           "Q8_K-quantised activations); <type> BF16 = the uncommitted BF16 file",
                "<type>.prompt<k>.logits_f32": f"F32 [n, {vocab}]: llama.cpp in fp32 (F32 KV cache, no flash "
                                               "attention) on an F32 GGUF holding gguf-py's dequantisation of "
                                               f"{FIXTURE}-<type>.gguf: the quantised model's logits in exact "
                                               "arithmetic (quantised types only; for BF16 that is HF's "
                                               "reference.safetensors prompt<k>.logits)",
            },
            "types": ["BF16"] + [q for q, _, _ in QUANTS],
            "prompts": {f"prompt{k}": int(reference[f"prompt{k}.input_ids"].shape[0]) for k in PROMPTS},
            "how": f"tools/peer/dump_logits.cpp: CPU backend, {THREADS} threads, one llama_decode over the whole "
                   "prompt (n_ctx = n_batch = n_ubatch = n, llama.cpp pads n_ctx to 256), logits at every position, "
                   "llama.cpp's default context otherwise (flash attention auto -> enabled, F16 KV cache) and its "
                   "default weight repacking (use_extra_bufts); per file, llamacpp_run says what the log reported",
            "errors": "rel_err = max over positions of max|a - b| / max|b|; mean_kl = mean over positions of "
                      "KL(softmax(reference) || softmax(a)); top1 = argmax agreement, also where the reference's "
                      "top-2 margin exceeds 3% of its max |logit|; worst over the prompts",
        },
        "files": {},
    }
    logits_out = {f"prompt{k}.input_ids": reference[f"prompt{k}.input_ids"].astype(np.int64) for k in PROMPTS}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        src = tmp / FIXTURE
        shutil.copytree(FIXTURES / FIXTURE, src)
        (src / "reference.safetensors").unlink()
        small_tokenizer(src, vocab)
        bf16 = tmp / f"{FIXTURE}-BF16.gguf"
        convert(llama_cpp, src, "bf16", bf16, 0)
        files = [("BF16", bf16, None)]
        for suffix, ftype, pure in QUANTS:
            out = OUT / f"{FIXTURE}-{suffix}.gguf"
            p = run([args.bin / "llama-quantize"] + (["--pure"] if pure else []) + [bf16, out, ftype, THREADS])
            fallbacks = [line for line in (p.stdout + p.stderr).splitlines() if "falling back" in line]
            if fallbacks:
                raise RuntimeError(f"llama-quantize fell back to other types: {fallbacks}")
            os.chmod(out, 0o644)
            files.append((suffix, out, "llama-quantize " + ("--pure " if pure else "")
                          + f"{FIXTURE}-BF16.gguf {out.name} {ftype} {THREADS}"))

        for suffix, path, command in files:
            tensors = expected_of(path)
            entry = {"bytes": path.stat().st_size, "census": census(tensors)}
            if command is not None:
                expected["files"][path.name] = tensors
                entry.update(command=command, sha256=sha256(path),
                             tensor_types={n: t["type"] for n, t in tensors.items()})
            dequantised = tmp / "dequantised-f32.gguf"
            dequantised_copy(path, dequantised)
            pairs = {"logits_vs_hf_fp32": [], "logits_vs_repack_off": [], "logits_f32_vs_hf_fp32": []}
            if command is not None:
                pairs.update(logits_vs_llamacpp_bf16=[], logits_vs_logits_f32=[])
            runs = []
            for k in PROMPTS:
                ids, hf = reference[f"prompt{k}.input_ids"], reference[f"prompt{k}.logits"]
                logits, facts = llama_logits(args.bin, path, ids, tmp)
                exact, exact_facts = llama_logits(args.bin, dequantised, ids, tmp, EXACT)
                runs.append((facts, exact_facts))
                pairs["logits_vs_hf_fp32"].append((logits, hf))
                pairs["logits_vs_repack_off"].append((logits, llama_logits(args.bin, path, ids, tmp, ["--no-repack"])[0]))
                pairs["logits_f32_vs_hf_fp32"].append((exact, hf))
                logits_out[f"{suffix}.prompt{k}.logits"] = logits
                if command is not None:
                    logits_out[f"{suffix}.prompt{k}.logits_f32"] = exact
                    pairs["logits_vs_llamacpp_bf16"].append((logits, logits_out[f"BF16.prompt{k}.logits"]))
                    pairs["logits_vs_logits_f32"].append((logits, exact))
            entry["llamacpp_run"] = {"logits": merged([f for f, _ in runs]), "logits_f32": merged([f for _, f in runs])}
            entry["errors"] = {name: compare(p) for name, p in pairs.items()}
            manifest["files"][path.name if command else f"{path.name} (not committed)"] = entry
            print(suffix, entry["bytes"], entry["census"], flush=True)
            for name, e in entry["errors"].items():
                print(f"  {name:28s} rel_err {e['rel_err']:.3g}  mean_kl {e['mean_kl']:.3g}  top1 {e['top1']:.3f}  "
                      f"decisive {e['top1_where_margin_gt_3pct']:.3f}", flush=True)

    manifest["logits"]["errors_per_file"] = {
        "logits_vs_hf_fp32": "logits against HF fp32 on the BF16 values (reference.safetensors prompt<k>.logits)",
        "logits_vs_repack_off": "logits against llama.cpp's logits on the same file with repacking off",
        "logits_f32_vs_hf_fp32": "logits_f32 (for BF16: llama.cpp in fp32 on an F32 copy) against HF fp32: the "
                                 "quantisation error alone (for BF16: how exact llama.cpp's fp32 path is)",
        "logits_vs_llamacpp_bf16": "logits against BF16.prompt<k>.logits: the quantisation error as llama.cpp "
                                   "computes it",
        "logits_vs_logits_f32": "logits against logits_f32: llama.cpp's own arithmetic on the quantised file "
                                "(activation quantisation, F16 KV cache, repacked kernels) with the weights held "
                                "fixed, the yardstick for another engine's distance to <type>.prompt<k>.logits",
    }
    save_file(logits_out, str(OUT / "kquant_llamacpp_logits.safetensors"))
    os.chmod(OUT / "kquant_llamacpp_logits.safetensors", 0o644)
    (OUT / "kquant_expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    (OUT / "kquant_manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


def gcc_version():
    try:
        return subprocess.run(["gcc", "-dumpfullversion"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown"


UNQUANTISED_RULE = (
    "llama.cpp src/llama-quant.cpp (commit 0c1e57098), tensor_allows_quantization: a tensor is quantised only if "
    "it has >= 2 dimensions, its name ends in 'weight' and contains neither '_norm.weight' nor 'ssm_conv1d' (the "
    "other exclusions name other architectures; output.weight is kept only with --leave-output-tensor). For "
    "qwen35 this keeps every norm (attn_norm, post_attention_norm, output_norm, attn_q_norm, attn_k_norm, "
    "ssm_norm), ssm_a, ssm_dt.bias and ssm_conv1d.weight as the converter wrote them (F32); ssm_alpha.weight "
    "and ssm_beta.weight ([hidden, nV]) ARE quantised like every other 2-D weight (ssm_beta is excluded only "
    "for GLM5_NEXT), and so are token_embd and output. Without --pure, the Q4_K_M recipe "
    "(llama_tensor_get_type_impl) gives output.weight Q6_K; attn_qkv (in qwen35 the DeltaNet in_proj_qkv) "
    "counts as attn_v (category_is_attn_v) and shares attn_v's counter over all layers, so the i-th of those "
    "n tensors is Q6_K when use_more_bits(i, n) = i < n/8 || i >= 7n/8 || (i - n/8) % 3 == 2 (the rule that "
    "would give attn_qkv Q5_K is never reached); ffn_down is Q6_K by the same rule on its layer index; "
    "everything else Q4_K. A tensor whose row length is not a multiple of the type's block falls back "
    "(Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, IQ4_XS -> IQ4_NL; the recipe makes such an output.weight "
    "Q8_0), which this script refuses.")


if __name__ == "__main__":
    main()

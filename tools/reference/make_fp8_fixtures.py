#!/usr/bin/env python3
"""Build tiny block-FP8 Qwen3.5 checkpoints the way HF / Qwen releases are made, and record what transformers
computes for them (the oracle of the C++ block-FP8 loader, tests/model/fp8_checkpoint_test.cpp).

Each fixture is a random Qwen3.5 model (make_fixtures.py's classes and randomisation), rounded to BF16, whose
Linears of the kinds Qwen converts (mlp gate/up/down, self_attn q/k/v/o, linear_attn in_proj_qkv / in_proj_z /
out_proj, and the MTP layer's) are quantised by transformers' own `Fp8Quantize` (integrations/finegrained_fp8.py)
into F8_E4M3 weights plus a `weight_scale_inv` per 128 x 128 block. `Fp8Quantize` passes a weight whose
dimensions are not multiples of 128 through unquantised, so such a weight is zero-padded to whole blocks,
quantised by `Fp8Quantize`, and cropped: zeros change no block's max |w|, so this is the per-block rule on the
partial blocks too. `Fp8Quantize` returns F32 scales; Qwen's files store BF16, so the scales are rounded to BF16
(a few tensors get F16 or F32 instead, to cover the three dtypes loaders meet). Everything else stays BF16
(A_log and linear_attn.norm too, as in Qwen3.6 FP8 files).

Fixtures (tests/fixtures/fp8/<name>/):
  g_fp8_full_blocks     every converted dimension a multiple of 128; released VLM layout with a vision tower and an
                        MTP layer (FP8 Linears + scales, mtp.fc BF16), untied. transformers loads it itself
                        (from_pretrained on CPU dequantises: FineGrainedFP8HfQuantizer sets dequantize=True).
  h_fp8_partial_blocks  dimensions 160, 192, 320, 64 (partial blocks in rows and columns) beside 384 (whole);
                        text-only layout. transformers' loader cannot dequantise these (Fp8Dequantize derives the
                        block from the scale grid: 192 rows / 2 scale rows = 96-row blocks, silently wrong, and
                        129 rows raise), which the manifest records; its reference weights come from
                        transformers' `_dequantize_fp8_weight` (the FP8 backward's dequantisation: 128-blocks,
                        repeat_interleave, cropped) in float32, which equals `Fp8Dequantize` wherever that one
                        applies (checked on g), and its logits from HF's Qwen3.5 classes holding those weights.

Files per fixture: config.json (with the quantization_config as Qwen releases it), model.safetensors,
reference.safetensors, expected.json (per FP8 weight: transformers' dequantised values as a 64-bit FNV-1a of the
float32 and of the bfloat16 bytes, plus the first values), manifest.json.

Usage (venv outside the repo; see README.md; needs `accelerate` for transformers' FP8 loader):
    /work/venvs/reference/bin/python tools/reference/make_fp8_fixtures.py [--out tests/fixtures/fp8]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import torch

import safetensors
import transformers
from safetensors import safe_open
from safetensors.torch import save_file
from transformers import FineGrainedFP8Config
from transformers.integrations.finegrained_fp8 import Fp8Dequantize, Fp8Quantize, _dequantize_fp8_weight

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_fixtures as mf  # noqa: E402  (the shared model builder and randomisation)

BASE_SEED = 20261202
BLOCK = 128
PROMPT_LENGTHS = [1, 64, 130]
L, F = mf.L, mf.F_

# The Linears Qwen's FP8 releases convert (quantized-checkpoints.md §1.3), by the end of their name.
CONVERTED = ("mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight", "self_attn.q_proj.weight",
             "self_attn.k_proj.weight", "self_attn.v_proj.weight", "self_attn.o_proj.weight",
             "linear_attn.in_proj_qkv.weight", "linear_attn.in_proj_z.weight", "linear_attn.out_proj.weight")

FIXTURES = [
    dict(
        name="g_fp8_full_blocks",
        description="block FP8 (e4m3, 128 x 128, BF16 weight_scale_inv; layer 1's MLP F16, layer 3's attention F32), "
                    "every converted dimension a multiple of 128; 4 layers [L,L,L,F], hidden 128, intermediate 256, "
                    "4 query / 2 KV heads x 64, DeltaNet 2 key / 4 value heads x 32; VLM layout with a vision tower "
                    "(BF16) and one MTP layer (FP8 Linears, mtp.fc BF16); untied; vocab 256",
        layout="vlm", tie=False, mtp=True,
        text=mf.text_cfg(layer_types=[L, L, L, F], vocab_size=256, hidden_size=128, intermediate_size=256,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=64, linear_key_head_dim=32,
                         linear_value_head_dim=32, linear_num_key_heads=2, linear_num_value_heads=4,
                         rope_parameters=mf.rope(1e4, [4, 2, 2])),
        vision=mf.tiny_vision(128),
        scale_dtype=lambda name: (torch.float16 if ".layers.1.mlp." in name else
                                  torch.float32 if ".layers.3.self_attn." in name else torch.bfloat16),
    ),
    dict(
        name="h_fp8_partial_blocks",
        description="block FP8 with partial blocks: hidden 160, intermediate 320, q_proj 384 x 160, k/v 64 x 160, "
                    "o_proj 160 x 192, in_proj_qkv 320 x 160, in_proj_z 192 x 160, out_proj 160 x 192 (BF16 scales; "
                    "layer 0's DeltaNet F32, layer 2's MLP F16); 4 layers [L,L,L,F], 3 query / 1 KV heads x 64, "
                    "DeltaNet 2 key heads x 32 / 4 value heads x 48; text-only layout, untied; vocab 256",
        layout="text", tie=False, mtp=False,
        text=mf.text_cfg(layer_types=[L, L, L, F], vocab_size=256, hidden_size=160, intermediate_size=320,
                         num_attention_heads=3, num_key_value_heads=1, head_dim=64, linear_key_head_dim=32,
                         linear_value_head_dim=48, linear_num_key_heads=2, linear_num_value_heads=4,
                         rope_parameters=mf.rope(1e4, [4, 2, 2])),
        vision=None,
        scale_dtype=lambda name: (torch.float32 if ".layers.0.linear_attn." in name else
                                  torch.float16 if ".layers.2.mlp." in name else torch.bfloat16),
    ),
]


def log(*args):
    print(*args, flush=True)


def fnv1a64(data: bytes) -> str:
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


class _Quantizer:
    """The attribute Fp8Quantize reads: the quantization config (HF defaults: 128 x 128 blocks, float scales)."""
    quantization_config = FineGrainedFP8Config()


FP8_QUANTIZE = Fp8Quantize(_Quantizer())


def quantize(name, weight_bf16):
    """transformers' Fp8Quantize on a BF16 weight, zero-padded to whole blocks and cropped back."""
    rows, cols = weight_bf16.shape
    padded = torch.zeros((-(-rows // BLOCK)) * BLOCK, (-(-cols // BLOCK)) * BLOCK, dtype=torch.bfloat16)
    padded[:rows, :cols] = weight_bf16
    out = FP8_QUANTIZE._quantize_one(name, padded)
    codes, inv = out[name], out[name + "_scale_inv"]
    assert codes.dtype == torch.float8_e4m3fn and inv.dtype == torch.float32, (codes.dtype, inv.dtype)
    return codes[:rows, :cols].contiguous(), inv.contiguous()


def hf_dequantize(codes, scales):
    """transformers' dequantisation: float32 values and the bfloat16 ones a bf16 model holds.

    `_dequantize_fp8_weight` (128-blocks, cropped) for every weight; `Fp8Dequantize._dequantize_one` (the loader's)
    too where it applies, checked equal."""
    f32 = _dequantize_fp8_weight(codes.clone(), scales, [BLOCK, BLOCK], torch.float32)
    loader = "ok"
    try:
        via_loader = Fp8Dequantize(None)._dequantize_one(codes, scales, torch.float32)
        if not torch.equal(via_loader, f32):
            rows = int((via_loader != f32).any(dim=1).sum())
            loader = f"silently different: {rows} of {codes.shape[0]} rows (block size taken from the scale grid)"
        else:
            assert torch.equal(Fp8Dequantize(None)._dequantize_one(codes, scales, torch.bfloat16), f32.to(torch.bfloat16))
    except ValueError as e:
        loader = f"raises ValueError: {e}"
    return f32, f32.to(torch.bfloat16), loader


def modules_to_not_convert(fx, names):
    """Every module the file keeps in BF16, named as Qwen's lists name them (module paths, parameters for
    A_log / dt_bias): informational only — loaders must decide by what the file holds."""
    out = []
    for name in names:
        if name.endswith(CONVERTED) or name.endswith("_scale_inv"):
            continue
        module = name.removesuffix(".weight").removesuffix(".bias")
        if module not in out:
            out.append(module)
    return out


def mtp_tensors(fx, g):
    """One MTP layer in the released names (HF's classes have no MTP; deltaserve skips it, pairing its scales)."""
    t = fx["text"]
    H, D, nH, nKV, I = t["hidden_size"], t["head_dim"], t["num_attention_heads"], t["num_key_value_heads"], \
        t["intermediate_size"]
    shapes = {"mtp.pre_fc_norm_embedding.weight": [H], "mtp.pre_fc_norm_hidden.weight": [H], "mtp.fc.weight": [H, 2 * H],
              "mtp.layers.0.input_layernorm.weight": [H], "mtp.layers.0.post_attention_layernorm.weight": [H],
              "mtp.layers.0.self_attn.q_proj.weight": [nH * 2 * D, H], "mtp.layers.0.self_attn.k_proj.weight": [nKV * D, H],
              "mtp.layers.0.self_attn.v_proj.weight": [nKV * D, H], "mtp.layers.0.self_attn.o_proj.weight": [H, nH * D],
              "mtp.layers.0.self_attn.q_norm.weight": [D], "mtp.layers.0.self_attn.k_norm.weight": [D],
              "mtp.layers.0.mlp.gate_proj.weight": [I, H], "mtp.layers.0.mlp.up_proj.weight": [I, H],
              "mtp.layers.0.mlp.down_proj.weight": [H, I], "mtp.norm.weight": [H]}
    return {n: (torch.randn(s, generator=g) * (s[-1] ** -0.5 if len(s) == 2 else 0.1)).to(torch.bfloat16)
            for n, s in shapes.items()}


def write_checkpoint(fx, model, out_dir, seed):
    """BF16 state dict -> FP8 release layout; returns {weight name: (codes, stored scales, hf fp32 inv scales)}."""
    state = {k: v.detach().to(torch.bfloat16).contiguous() for k, v in model.state_dict().items()}
    if fx["tie"]:
        state.pop("lm_head.weight", None)
    if fx["mtp"]:
        state.update(mtp_tensors(fx, torch.Generator().manual_seed(seed + 17)))
    tensors, fp8 = {}, {}
    for name, value in state.items():
        if name.endswith(CONVERTED) and "visual" not in name:
            codes, inv = quantize(name, value)
            scales = inv.to(fx["scale_dtype"](name))
            tensors[name], tensors[name + "_scale_inv"] = codes, scales
            fp8[name] = (codes, scales, inv, value)
        else:
            tensors[name] = value
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    model.config.dtype = torch.bfloat16
    model.config.get_text_config().dtype = torch.bfloat16
    model.config.save_pretrained(out_dir)
    config = json.loads((out_dir / "config.json").read_text())
    if fx["mtp"]:
        config["text_config"]["mtp_num_hidden_layers"] = 1
    config["quantization_config"] = {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                                     "weight_block_size": [BLOCK, BLOCK],
                                     "modules_to_not_convert": modules_to_not_convert(fx, list(tensors))}
    (out_dir / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    save_file(tensors, str(out_dir / "model.safetensors"), metadata={"format": "pt"})
    with safe_open(out_dir / "model.safetensors", "pt") as f:
        dtypes = {k: f.get_slice(k).get_dtype() for k in f.keys()}
    for k, d in dtypes.items():
        want = ("F8_E4M3" if k in fp8 else {torch.bfloat16: "BF16", torch.float16: "F16", torch.float32: "F32"}[
            tensors[k].dtype] if k.endswith("_scale_inv") else "BF16")
        assert d == want, (k, d, want)
    return fp8, state


def reference_model(fx, state, fp8, dtype):
    """HF's Qwen3.5 classes holding transformers' dequantised FP8 weights and the stored BF16 rest."""
    model = mf.build_model(fx, 0)
    weights = {}
    for name, value in state.items():
        if name.startswith("mtp."):
            continue
        weights[name] = (hf_dequantize(fp8[name][0], fp8[name][1])[0] if name in fp8 else value.to(torch.float32))
    missing, unexpected = model.load_state_dict(weights, strict=False)
    assert not unexpected and all(k == "lm_head.weight" and fx["tie"] for k in missing), (missing, unexpected)
    return model.to(dtype).eval()


def load_with_transformers(fx, out_dir, dtype):
    cls = mf.Qwen3_5ForConditionalGeneration if fx["layout"] == "vlm" else mf.Qwen3_5ForCausalLM
    model = cls.from_pretrained(out_dir, dtype=dtype, attn_implementation="eager")
    return model.eval()


def e4m3_table():
    """torch's float32 -> float8_e4m3fn conversion (what Fp8Quantize's `.to` does after its clamp): codes of every
    bfloat16 bit pattern's value in pattern order (finite values beyond 448 saturate; NaN stays NaN), and of 4096
    random float32s."""
    patterns = torch.arange(65536, dtype=torch.int32).to(torch.int16).view(torch.bfloat16).to(torch.float32)
    g = torch.Generator().manual_seed(7)
    randoms = (torch.rand(4096, generator=g) * 2 - 1) * torch.pow(2.0, torch.randint(-12, 10, (4096,), generator=g).float())
    return (patterns.to(torch.float8_e4m3fn).view(torch.uint8), randoms,
            randoms.to(torch.float8_e4m3fn).view(torch.uint8))


def make_fixture(index, fx, out_root):
    name = fx["name"]
    seed = BASE_SEED + 1000 * index
    t0 = time.perf_counter()
    model = mf.build_model(fx, seed)
    mf.randomise(model, fx, seed)
    out_dir = out_root / name
    fp8, state = write_checkpoint(fx, model, out_dir, seed)
    del model
    log(f"[{name}] wrote {len(fp8)} FP8 weights to {out_dir}")

    expected, loader_findings = {}, {}
    for w, (codes, scales, _inv, _src) in fp8.items():
        f32, bf16, loader = hf_dequantize(codes, scales)
        loader_findings[loader.split(":")[0]] = loader_findings.get(loader.split(":")[0], 0) + 1
        expected[w] = {"shape": list(codes.shape), "scale_dtype": str(scales.dtype).removeprefix("torch."),
                       "transformers_loader": loader,
                       "fnv1a64_f32": fnv1a64(f32.numpy().astype("<f4").tobytes()),
                       "fnv1a64_bf16": fnv1a64(bf16.view(torch.int16).numpy().astype("<i2").tobytes()),
                       "first": [float(v) for v in f32.flatten()[:8]]}

    ref32 = reference_model(fx, state, fp8, torch.float32)
    ref16 = reference_model(fx, state, fp8, torch.bfloat16)
    hf_loaded = None
    if fx["name"].startswith("g_"):
        # transformers' own FP8 loader on CPU (dequantize=True): every Linear must hold exactly our reference values.
        hf_loaded = load_with_transformers(fx, out_dir, torch.float32)
        hf_params = dict(hf_loaded.named_parameters())
        for n, p in ref32.named_parameters():
            assert torch.equal(p, hf_params[n]), f"transformers' FP8 loader differs from the reference at {n}"
        hf_loaded16 = load_with_transformers(fx, out_dir, torch.bfloat16)
        hf_params16 = dict(hf_loaded16.named_parameters())
        for n, p in ref16.named_parameters():
            assert torch.equal(p, hf_params16[n]), f"transformers' bf16 FP8 load differs from the reference at {n}"
        log(f"[{name}] transformers' from_pretrained (FP8, CPU) holds the reference weights, fp32 and bf16")
    else:
        try:
            load_with_transformers(fx, out_dir, torch.float32)
            loader_findings["from_pretrained"] = "loaded (weights checked per tensor above)"
        except Exception as e:  # noqa: BLE001  (recorded, not hidden)
            loader_findings["from_pretrained"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
        log(f"[{name}] transformers' from_pretrained: {loader_findings['from_pretrained']}")

    vocab = fx["text"]["vocab_size"]
    rng = np.random.default_rng(seed)
    tensors, prompts = {}, []
    for k, n in enumerate(PROMPT_LENGTHS):
        ids = rng.integers(0, vocab - mf.RESERVED_TOP, size=n, dtype=np.int64)
        logits = mf.forward_logits(ref32, ids)
        if hf_loaded is not None:
            assert torch.equal(logits, mf.forward_logits(hf_loaded, ids)), "from_pretrained logits differ"
        bf16 = mf.forward_logits(ref16, ids)
        m = mf.top2_margins(logits)
        tensors[f"prompt{k}.input_ids"] = torch.as_tensor(ids)
        tensors[f"prompt{k}.logits"] = logits.contiguous()
        tensors[f"prompt{k}.logits_hf_bf16"] = bf16.contiguous()
        prompts.append(dict(length=n, max_abs_logit=float(logits.abs().max()), min_top2_margin=float(m.min()),
                            hf_bf16_vs_fp32_rel_err=mf.rel_err(bf16, logits)))
        log(f"[{name}] prompt{k} n={n}: max|logit| {prompts[-1]['max_abs_logit']:.3f}, "
            f"HF bf16 vs fp32 {prompts[-1]['hf_bf16_vs_fp32_rel_err']:.3g}")
    # What the quantiser test re-quantises: each FP8 weight's BF16 source and transformers' F32 inverse scales.
    for w in list(fp8)[:2] + [w for w in fp8 if w.startswith("mtp.")][:1]:
        tensors[f"quantize.{w}.source"] = fp8[w][3]
        tensors[f"quantize.{w}.inv_scale_f32"] = fp8[w][2]
    if index == 0:
        (tensors["e4m3.bf16_pattern_codes"], tensors["e4m3.random_values"],
         tensors["e4m3.random_codes"]) = e4m3_table()
    save_file(tensors, str(out_dir / "reference.safetensors"), metadata={"format": "pt"})
    (out_dir / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    manifest = dict(
        name=name, description=fx["description"], seed=seed,
        versions=dict(python=platform.python_version(), torch=torch.__version__, transformers=transformers.__version__,
                      numpy=np.__version__, safetensors=safetensors.__version__),
        quantisation="transformers Fp8Quantize._quantize_one on the BF16 weight zero-padded to whole 128-blocks, "
                     "cropped; its F32 inverse scales stored as " + "BF16 (F16 / F32 where the description says)",
        dequantisation="transformers _dequantize_fp8_weight(codes, scales, [128, 128], float32); bf16 = that .to(bfloat16)",
        transformers_loader=loader_findings,
        logits="prompt<k>.logits: HF fp32 forward (eager, CPU, use_cache=False) on the dequantised weights"
               + (" = transformers' own from_pretrained of this directory (checked equal)" if hf_loaded is not None else "")
               + "; prompt<k>.logits_hf_bf16: the same model in bfloat16 (weights = the float32 values .to(bfloat16))",
        prompts=prompts,
        config_sha256=mf.sha256_file(out_dir / "config.json"),
        model_safetensors_sha256=mf.sha256_file(out_dir / "model.safetensors"),
    )
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    for f in out_dir.iterdir():
        os.chmod(f, 0o644)
    sizes = {f.name: f.stat().st_size for f in sorted(out_dir.iterdir())}
    log(f"[{name}] done in {time.perf_counter() - t0:.1f}s: {sum(sizes.values()) / 1e6:.2f} MB {sizes}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    root = Path(__file__).resolve().parents[2]
    ap.add_argument("--out", type=Path, default=root / "tests" / "fixtures" / "fp8")
    args = ap.parse_args()
    mf.check_torch_fallbacks()
    torch.set_default_dtype(torch.float32)
    transformers.logging.set_verbosity_error()
    log(f"python {platform.python_version()}, torch {torch.__version__}, transformers {transformers.__version__}")
    for i, fx in enumerate(FIXTURES):
        make_fixture(i, fx, args.out)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Build tiny random Qwen3.5 checkpoints with HF transformers' own classes and record reference outputs.

Writes tests/fixtures/<name>/{config.json, generation_config.json, model.safetensors, reference.safetensors,
manifest.json} for every fixture in FIXTURES. Deterministic: every random draw comes from a seed derived
from BASE_SEED and the fixture's index. Runs on CPU in fp32 with eager attention and HF's torch fallback
kernels (the script refuses to run if flash-linear-attention, causal-conv1d or kernels are importable).

Usage (venv outside the repo, see README.md):
    /work/venvs/reference/bin/python tools/reference/make_fixtures.py [--out tests/fixtures] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import importlib.util
import json
import os
import platform
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

import safetensors
import transformers
from safetensors import safe_open
from safetensors.torch import save_file
from transformers import (
    Qwen3_5Config,
    Qwen3_5ForCausalLM,
    Qwen3_5ForConditionalGeneration,
    Qwen3_5TextConfig,
)
from transformers.models.qwen3_5 import modeling_qwen3_5 as hf_qwen35

BASE_SEED = 20260301
PROMPT_LENGTHS = [1, 63, 64, 65, 211]
NEW_TOKENS = 32
# Prompt ids are drawn from [0, vocab - RESERVED_TOP): the top ids hold the (unused) vision token ids.
RESERVED_TOP = 8
# A greedy decision whose top-2 margin is below this fraction of max |logit| is a near-tie that a correct
# implementation could legitimately flip; such prompts are redrawn (the attempt number is recorded).
MIN_GREEDY_MARGIN_REL = 1e-3
# DeltaNet query projections (in_proj_qkv Q rows and their conv taps) are drawn correlated with the key ones,
# q = QK_CORRELATION * k + sqrt(1 - QK_CORRELATION^2) * noise, as in a trained retrieval head. With fully
# independent q and k, the read-out S^T q is dominated by cancellation and the fixture becomes so sensitive that
# bf16 rounding of matmul inputs alone moves logits by ~8% of max |logit|.
QK_CORRELATION = 0.9
# Output projections (out_proj, o_proj, down_proj) use this gain on top of 1/sqrt(fan_in), which keeps the residual
# stream from being dominated by the mixers' rounding noise.
OUT_GAIN = 0.7

L, F_ = "linear_attention", "full_attention"


def rope(theta, section, partial=0.25):
    return dict(rope_type="default", rope_theta=float(theta), mrope_section=list(section),
                mrope_interleaved=True, partial_rotary_factor=partial)


def tiny_vision(out_hidden, depth=1, hidden=16, heads=2):
    return dict(depth=depth, hidden_size=hidden, intermediate_size=hidden, num_heads=heads, patch_size=16,
                spatial_merge_size=2, temporal_patch_size=2, out_hidden_size=out_hidden,
                num_position_embeddings=16, hidden_act="gelu_pytorch_tanh")


def text_cfg(**kw):
    base = dict(vocab_size=512, hidden_size=64, intermediate_size=96, num_attention_heads=4, num_key_value_heads=2,
                head_dim=32, linear_conv_kernel_dim=4, linear_key_head_dim=16, linear_value_head_dim=16,
                linear_num_key_heads=2, linear_num_value_heads=4, rms_norm_eps=1e-6, max_position_embeddings=4096,
                hidden_act="silu", rope_parameters=rope(1e4, [2, 1, 1]))
    base.update(kw)
    base["num_hidden_layers"] = len(base["layer_types"])
    return base


FIXTURES = [
    dict(
        name="a_vlm_tied",
        description="4 layers [L,L,L,F], nV = 2*nK (grouped value heads), tied embeddings, released VLM layout "
                    "(model.language_model.*, model.visual.*) from Qwen3_5ForConditionalGeneration, fp32",
        layout="vlm", storage="f32", tie=True,
        text=text_cfg(layer_types=[L, L, L, F_]),
        vision=tiny_vision(64, depth=2, hidden=32, heads=4),
    ),
    dict(
        name="b_kv1_alternating",
        description="4 layers [L,F,L,F], nV = nK, a single KV head (num_key_value_heads 1, 4 query heads), tied, "
                    "VLM layout, fp32",
        layout="vlm", storage="f32", tie=True,
        text=text_cfg(layer_types=[L, F_, L, F_], num_key_value_heads=1, linear_num_key_heads=4,
                      linear_num_value_heads=4),
        vision=tiny_vision(64),
    ),
    dict(
        name="c_bf16_untied",
        description="4 layers [L,L,L,F], untied lm_head, BF16 storage with linear_attn.A_log and "
                    "linear_attn.norm.weight kept F32 (like Qwen3.5 files); nV = 3*nK and 6 query heads over 2 KV "
                    "heads (ratio 3 like the 27B); VLM layout. 'logits' = HF fp32 on the stored values; "
                    "'logits_hf_bf16' = HF loaded with dtype=bfloat16",
        layout="vlm", storage="bf16_mixed", tie=False,
        text=text_cfg(layer_types=[L, L, L, F_], intermediate_size=160, num_attention_heads=6,
                      num_key_value_heads=2, linear_num_key_heads=2, linear_num_value_heads=6),
        vision=tiny_vision(64),
    ),
    dict(
        name="d_text_only",
        description="4 layers [L,L,L,F], nV = 2*nK, untied, text-only save layout (model.*, lm_head.weight) "
                    "from Qwen3_5ForCausalLM with a flat qwen3_5_text config, fp32",
        layout="text", storage="f32", tie=False,
        text=text_cfg(layer_types=[L, L, L, F_]),
        vision=None,
    ),
    dict(
        name="e_real_head_sizes",
        description="3 layers [L,L,F] with the real head sizes: head_dim 256, linear key/value head dim 128, "
                    "partial_rotary_factor 0.25 (rotary 64), mrope_section [11,11,10], rope_theta 1e7; hidden 64, "
                    "2 query heads / 1 KV head, 1 key head / 2 value heads; vocab 256 (to keep the fixture small); tied, "
                    "VLM layout, fp32",
        layout="vlm", storage="f32", tie=True,
        text=text_cfg(layer_types=[L, L, F_], vocab_size=256, intermediate_size=96, num_attention_heads=2,
                      num_key_value_heads=1,
                      head_dim=256, linear_key_head_dim=128, linear_value_head_dim=128, linear_num_key_heads=1,
                      linear_num_value_heads=2, rope_parameters=rope(1e7, [11, 11, 10])),
        vision=tiny_vision(64),
    ),
    dict(
        name="f_odd_shapes",
        description="generality: 3 layers [F,L,L] (full attention first), conv kernel 2, linear key head dim 16 != "
                    "value head dim 24, nV = 2*nK, head_dim 48 (rotary 12, mrope [2,2,2]), 3 query heads / 1 KV "
                    "head, hidden 48, vocab 256, untied, text-only layout, fp32",
        layout="text", storage="f32", tie=False,
        text=text_cfg(layer_types=[F_, L, L], vocab_size=256, hidden_size=48, intermediate_size=80,
                      num_attention_heads=3, num_key_value_heads=1, head_dim=48, linear_conv_kernel_dim=2,
                      linear_key_head_dim=16, linear_value_head_dim=24, linear_num_key_heads=2,
                      linear_num_value_heads=4, rope_parameters=rope(1e4, [2, 2, 2])),
        vision=None,
    ),
    dict(
        name="g_kquant_shapes",
        description="4 layers [L,L,L,F] whose every matmul input dimension is a multiple of 256 (GGUF K-quant "
                    "super-blocks; the source of the llama.cpp-quantised tests/fixtures/gguf/g_kquant_shapes-*.gguf): "
                    "hidden 256, intermediate 256, vocab 512 (with 256 the converted tokenizer has no BPE merges and "
                    "llama.cpp refuses it); real head sizes (head_dim 256, dK = dV = 128, rotary 64, mrope "
                    "[11,11,10], rope_theta 1e7), 2 query heads / 1 KV head, 2 key heads / 4 value heads "
                    "(llama.cpp reorders the value heads; out_proj's 256-column super-blocks span two value heads); "
                    "untied lm_head; BF16 storage with linear_attn.A_log and linear_attn.norm.weight F32; VLM layout",
        layout="vlm", storage="bf16_mixed", tie=False,
        text=text_cfg(layer_types=[L, L, L, F_], hidden_size=256, intermediate_size=256,
                      num_attention_heads=2, num_key_value_heads=1, head_dim=256, linear_key_head_dim=128,
                      linear_value_head_dim=128, linear_num_key_heads=2, linear_num_value_heads=4,
                      rope_parameters=rope(1e7, [11, 11, 10])),
        vision=tiny_vision(256),
    ),
]


def log(*args):
    print(*args, flush=True)


def check_torch_fallbacks():
    for pkg in ("fla", "causal_conv1d", "kernels"):
        if importlib.util.find_spec(pkg) is not None:
            sys.exit(f"error: '{pkg}' is importable; HF would use its kernels instead of the torch fallbacks. "
                     "Use a venv without it (see tools/reference/README.md).")


# --------------------------------------------------------------------------------------------------------
# Model construction and randomisation


def build_model(fx, seed):
    torch.manual_seed(seed)
    t = dict(fx["text"], tie_word_embeddings=fx["tie"])
    if fx["layout"] == "vlm":
        vocab = t["vocab_size"]
        cfg = Qwen3_5Config(text_config=t, vision_config=fx["vision"], tie_word_embeddings=fx["tie"],
                            image_token_id=vocab - 4, video_token_id=vocab - 3,
                            vision_start_token_id=vocab - 2, vision_end_token_id=vocab - 1)
        model = Qwen3_5ForConditionalGeneration(cfg)
    else:
        cfg = Qwen3_5TextConfig(**t)
        model = Qwen3_5ForCausalLM(cfg)
    model.set_attn_implementation("eager")
    return model.eval()


def text_model(model):
    return model.model.language_model if isinstance(model, Qwen3_5ForConditionalGeneration) else model.model


@torch.no_grad()
def randomise(model, fx, seed):
    """Overwrite every text-model parameter from a seeded generator (HF's init makes norms 0/1, dt_bias 1,
    A_log = log U(0.01, 16) and projections N(0, 0.02): too uniform to test the conventions)."""
    g = torch.Generator().manual_seed(seed + 7919)
    tc = fx["text"]
    hidden = tc["hidden_size"]

    def normal(shape, std, mean=0.0):
        return torch.randn(shape, generator=g) * std + mean

    tm = text_model(model)
    for name, p in tm.named_parameters():
        shape = tuple(p.shape)
        if name == "embed_tokens.weight":
            # Tied head: logits = h . E^T, so std 0.5 with hidden 64 gives logit std ~4.
            new = normal(shape, 0.5)
        elif name.endswith("linear_attn.A_log"):
            new = torch.rand(shape, generator=g) * 3.0 - 2.0            # U(-2, 1): exp(A_log) in [0.14, 2.7]
        elif name.endswith("linear_attn.dt_bias"):
            new = normal(shape, 1.0, mean=-0.5)
        elif name.endswith("linear_attn.norm.weight"):
            new = normal(shape, 0.1, mean=1.0)                           # plain scale: 1 + noise
        elif name.endswith("conv1d.weight"):
            new = normal(shape, shape[-1] ** -0.5)
        elif name.endswith("norm.weight"):                               # zero-centred RMSNorms: (1 + w)
            new = normal(shape, 0.1)
        elif p.ndim == 2:                                                # projections [out, in]
            gain = OUT_GAIN if name.endswith(("out_proj.weight", "o_proj.weight", "down_proj.weight")) else 1.0
            new = normal(shape, gain * shape[1] ** -0.5)
        else:
            raise RuntimeError(f"unhandled parameter {name} {shape}")
        p.copy_(new)
    key_dim = tc["linear_num_key_heads"] * tc["linear_key_head_dim"]
    for layer in tm.layers:
        if hasattr(layer, "linear_attn"):
            for p in (layer.linear_attn.in_proj_qkv.weight, layer.linear_attn.conv1d.weight):
                q, k = p[:key_dim], p[key_dim:2 * key_dim]
                noise = normal(tuple(q.shape), float(k.std()))
                q.copy_(QK_CORRELATION * k + (1.0 - QK_CORRELATION ** 2) ** 0.5 * noise)
    if not fx["tie"]:
        model.lm_head.weight.copy_(normal(tuple(model.lm_head.weight.shape), 4.0 / hidden ** 0.5))
    else:
        assert model.lm_head.weight.data_ptr() == tm.embed_tokens.weight.data_ptr(), "lm_head is not tied"


def keep_f32(name):
    return name.endswith("linear_attn.A_log") or name.endswith("linear_attn.norm.weight")


@torch.no_grad()
def round_to_bf16_storage(model):
    """Round every parameter that will be stored as BF16 (all but A_log / linear_attn.norm.weight)."""
    for name, p in model.named_parameters():
        if not keep_f32(name):
            p.copy_(p.to(torch.bfloat16).to(torch.float32))


# --------------------------------------------------------------------------------------------------------
# Saving


def save_checkpoint(model, fx, out_dir):
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    if fx["storage"] == "f32":
        model.save_pretrained(out_dir)
    else:
        # BF16 storage with A_log and linear_attn.norm.weight kept F32, as in Qwen3.5 release files.
        m = copy.deepcopy(model)
        with torch.no_grad():
            for name, p in m.named_parameters():
                p.data = p.data.to(torch.float32 if keep_f32(name) else torch.bfloat16)
        m.config.dtype = torch.bfloat16
        m.config.get_text_config().dtype = torch.bfloat16
        m.save_pretrained(out_dir)
    for f in out_dir.iterdir():
        os.chmod(f, 0o644)
    # Verify the stored dtypes and the absence/presence of lm_head.
    with safe_open(out_dir / "model.safetensors", "pt") as f:
        names = list(f.keys())
        dtypes = {k: f.get_slice(k).get_dtype() for k in names}
    prefix = "model.language_model." if fx["layout"] == "vlm" else "model."
    assert all(k.startswith((prefix, "model.visual.", "lm_head.")) for k in names), names
    assert ("lm_head.weight" in names) == (not fx["tie"]), "lm_head.weight presence does not match tie"
    if fx["storage"] == "f32":
        assert set(dtypes.values()) == {"F32"}, set(dtypes.values())
    else:
        for k, d in dtypes.items():
            assert d == ("F32" if keep_f32(k) else "BF16"), (k, d)
    return names, dtypes


def load_checkpoint(fx, out_dir, dtype):
    cls = Qwen3_5ForConditionalGeneration if fx["layout"] == "vlm" else Qwen3_5ForCausalLM
    model = cls.from_pretrained(out_dir, dtype=dtype, attn_implementation="eager")
    return model.eval()


# --------------------------------------------------------------------------------------------------------
# Reference computation


class PathCounter:
    """Wraps HF's module-level DeltaNet kernels to record which path each call takes."""

    NAMES = ("torch_chunk_gated_delta_rule", "torch_recurrent_gated_delta_rule", "causal_conv1d_fn",
             "causal_conv1d_update")

    def __init__(self):
        self.calls = []
        self.orig = {}

    def __enter__(self):
        for n in self.NAMES:
            fn = getattr(hf_qwen35, n)
            self.orig[n] = fn

            def wrapper(*a, _fn=fn, _n=n, **k):
                seq = a[0].shape[1] if "gated_delta" in _n else a[0].shape[-1]
                self.calls.append((_n, int(seq)))
                return _fn(*a, **k)

            setattr(hf_qwen35, n, wrapper)
        return self

    def __exit__(self, *exc):
        for n, fn in self.orig.items():
            setattr(hf_qwen35, n, fn)

    def summary(self):
        out = {}
        for n, seq in self.calls:
            out.setdefault(n, {}).setdefault(str(seq), 0)
            out[n][str(seq)] += 1
        return out


@torch.no_grad()
def forward_logits(model, ids):
    out = model(input_ids=torch.as_tensor(ids, dtype=torch.long)[None], use_cache=False)
    return out.logits[0].float()


def top2_margins(logits):
    top = torch.topk(logits, 2, dim=-1).values
    return top[:, 0] - top[:, 1]


@torch.no_grad()
def greedy(model, ids):
    x = torch.as_tensor(ids, dtype=torch.long)[None]
    with PathCounter() as pc:
        t0 = time.perf_counter()
        out = model.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=NEW_TOKENS,
                             min_new_tokens=NEW_TOKENS, return_dict_in_generate=True, output_logits=True,
                             pad_token_id=0, eos_token_id=None)
        dt = time.perf_counter() - t0
    new = out.sequences[0, x.shape[1]:]
    assert new.numel() == NEW_TOKENS, new.shape
    step_logits = torch.stack([l[0].float() for l in out.logits])          # [32, vocab], decode path
    return new, step_logits, pc.summary(), dt


@torch.no_grad()
def decay_stats(model, ids):
    """exp(g) and beta per token and value head over all DeltaNet layers, to check the gates are active."""
    decays, betas, hooks = [], [], []
    for layer in text_model(model).layers:
        if not hasattr(layer, "linear_attn"):
            continue
        la = layer.linear_attn

        def hook_a(mod, inp, out, __la=la):
            g = -__la.A_log.float().exp() * F.softplus(out.float() + __la.dt_bias)
            decays.append(g.exp().flatten())

        def hook_b(mod, inp, out):
            betas.append(out.float().sigmoid().flatten())

        hooks += [la.in_proj_a.register_forward_hook(hook_a), la.in_proj_b.register_forward_hook(hook_b)]
    forward_logits(model, ids)
    for h in hooks:
        h.remove()
    d, b = torch.cat(decays), torch.cat(betas)
    q = torch.tensor([0.05, 0.5, 0.95])
    return dict(decay_exp_g_p05_p50_p95=[round(v, 4) for v in torch.quantile(d, q).tolist()],
                beta_p05_p50_p95=[round(v, 4) for v in torch.quantile(b, q).tolist()])


def rel_err(a, b):
    """Max over positions of max|a - b| / max|b| (per position), the issue's error measure."""
    num = (a - b).abs().amax(dim=-1)
    den = b.abs().amax(dim=-1).clamp_min(1e-30)
    return float((num / den).max())


def sha256_file(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def make_fixture(index, fx, out_root):
    name = fx["name"]
    seed = BASE_SEED + 1000 * index
    t_fx = time.perf_counter()
    log(f"[{name}] building ({fx['layout']} layout, storage {fx['storage']}, seed {seed})")
    model = build_model(fx, seed)
    randomise(model, fx, seed)
    if fx["storage"] == "bf16_mixed":
        round_to_bf16_storage(model)
    out_dir = out_root / name
    names, dtypes = save_checkpoint(model, fx, out_dir)
    log(f"[{name}] saved {len(names)} tensors to {out_dir}")

    # All references come from the checkpoint as reloaded from disk (exactly the stored values, upcast to fp32).
    ref_model = load_checkpoint(fx, out_dir, torch.float32)
    for n, p in ref_model.named_parameters():
        assert p.dtype == torch.float32, (n, p.dtype)
    vocab = fx["text"]["vocab_size"]
    probe = np.arange(5) % (vocab - RESERVED_TOP)
    same = torch.equal(forward_logits(model, probe), forward_logits(ref_model, probe))
    assert same, "reloaded checkpoint does not reproduce the in-memory model"
    del model

    bf16_model = emul_model = None
    if fx["storage"] == "bf16_mixed":
        # Rough stand-in for the C++ fast mode: the fp32 model with every nn.Linear input rounded to bf16.
        emul_model = load_checkpoint(fx, out_dir, torch.float32)
        for mod in emul_model.modules():
            if isinstance(mod, torch.nn.Linear):
                mod.register_forward_pre_hook(lambda _m, inp: (inp[0].to(torch.bfloat16).to(torch.float32),))
        bf16_model = load_checkpoint(fx, out_dir, torch.bfloat16)
        bf16_dtypes = sorted({str(p.dtype) for p in bf16_model.parameters()})
        log(f"[{name}] HF bf16 load parameter dtypes: {bf16_dtypes}")

    tensors, prompts_info = {}, []
    stats = dict(max_abs_logit=0.0, min_top2_margin=float("inf"), min_top2_margin_rel=float("inf"),
                 min_greedy_margin=float("inf"), min_greedy_margin_rel=float("inf"),
                 hf_decode_vs_forward_rel_err=0.0)
    generate_seconds = 0.0
    rng = np.random.default_rng(seed)
    for k, n in enumerate(PROMPT_LENGTHS):
        for attempt in range(50):
            ids = rng.integers(0, vocab - RESERVED_TOP, size=n, dtype=np.int64)
            logits = forward_logits(ref_model, ids)
            new, step_logits, paths, gen_s = greedy(ref_model, ids)
            full = np.concatenate([ids, new.numpy()])
            tf_logits = forward_logits(ref_model, full)                       # teacher-forced, chunked path
            decisions = tf_logits[n - 1:n - 1 + NEW_TOKENS]
            assert torch.equal(decisions.argmax(-1), new), "generate disagrees with teacher-forced argmax"
            max_abs = float(tf_logits.abs().max())
            g_margin = float(top2_margins(decisions).min())
            if g_margin >= MIN_GREEDY_MARGIN_REL * max_abs:
                break
            log(f"[{name}] prompt{k} (n={n}) attempt {attempt}: greedy near-tie (margin {g_margin:.3g}), redrawing")
        else:
            raise RuntimeError("could not find a prompt without greedy near-ties")
        generate_seconds += gen_s
        m = top2_margins(logits)
        la = float(logits.abs().max())
        stats["max_abs_logit"] = max(stats["max_abs_logit"], la)
        stats["min_top2_margin"] = min(stats["min_top2_margin"], float(m.min()))
        stats["min_top2_margin_rel"] = min(stats["min_top2_margin_rel"], float((m / logits.abs().amax(-1)).min()))
        stats["min_greedy_margin"] = min(stats["min_greedy_margin"], g_margin)
        stats["min_greedy_margin_rel"] = min(stats["min_greedy_margin_rel"], g_margin / max_abs)
        dec_err = rel_err(step_logits, decisions)
        stats["hf_decode_vs_forward_rel_err"] = max(stats["hf_decode_vs_forward_rel_err"], dec_err)

        tensors[f"prompt{k}.input_ids"] = torch.as_tensor(ids, dtype=torch.int64)
        tensors[f"prompt{k}.logits"] = logits.contiguous()
        tensors[f"prompt{k}.greedy"] = new.to(torch.int64).contiguous()
        info = dict(index=k, length=n, attempt=attempt, max_abs_logit=la, min_top2_margin=float(m.min()),
                    min_greedy_margin=g_margin, generate_kernel_calls=paths,
                    hf_decode_vs_teacher_forced_rel_err=dec_err)
        if bf16_model is not None:
            lb = forward_logits(bf16_model, ids)
            tensors[f"prompt{k}.logits_hf_bf16"] = lb.contiguous()
            agree = (lb.argmax(-1) == logits.argmax(-1)).float().mean().item()
            safe = m > 3e-2 * logits.abs().amax(-1)
            agree_safe = (lb.argmax(-1) == logits.argmax(-1))[safe].float().mean().item() if safe.any() else 1.0
            le = forward_logits(emul_model, ids)
            info.update(hf_bf16_vs_fp32_rel_err=rel_err(lb, logits), hf_bf16_argmax_agreement=agree,
                        hf_bf16_argmax_agreement_where_margin_gt_3pct=agree_safe,
                        fp32_with_bf16_linear_inputs_rel_err=rel_err(le, logits),
                        fp32_with_bf16_linear_inputs_argmax_agreement_where_margin_gt_3pct=(
                            (le.argmax(-1) == logits.argmax(-1))[safe].float().mean().item() if safe.any() else 1.0))
        prompts_info.append(info)
        log(f"[{name}] prompt{k} n={n}: max|logit| {la:.3f}, min top-2 margin {float(m.min()):.3g}, "
            f"greedy min margin {g_margin:.3g}, generate {gen_s:.2f}s, decode-vs-forward rel err {dec_err:.2g}"
            + (f", HF-bf16 rel err {info['hf_bf16_vs_fp32_rel_err']:.3g} argmax agree {info['hf_bf16_argmax_agreement']:.3f}"
               f", bf16-linear-input emulation rel err {info['fp32_with_bf16_linear_inputs_rel_err']:.3g}"
               if bf16_model is not None else ""))

    gates = decay_stats(ref_model, tensors[f"prompt{len(PROMPT_LENGTHS) - 1}.input_ids"].numpy())
    ref_path = out_dir / "reference.safetensors"
    save_file(tensors, str(ref_path), metadata={"format": "pt"})
    os.chmod(ref_path, 0o644)

    cls = "Qwen3_5ForConditionalGeneration" if fx["layout"] == "vlm" else "Qwen3_5ForCausalLM"
    manifest = dict(
        name=name,
        description=fx["description"],
        versions=dict(python=platform.python_version(), torch=torch.__version__, transformers=transformers.__version__,
                      numpy=np.__version__, safetensors=safetensors.__version__),
        seed=seed,
        hf_class=cls,
        layout=("VLM: model.language_model.*, model.visual.*" if fx["layout"] == "vlm" else "text-only: model.*")
        + (", lm_head.weight" if not fx["tie"] else ", tied (no lm_head.weight stored)"),
        storage=("F32" if fx["storage"] == "f32" else "BF16, with linear_attn.A_log and linear_attn.norm.weight F32"),
        tie_word_embeddings=fx["tie"],
        config_sha256=sha256_file(out_dir / "config.json"),
        model_safetensors_sha256=sha256_file(out_dir / "model.safetensors"),
        prompt_lengths=PROMPT_LENGTHS,
        new_tokens=NEW_TOKENS,
        reference=dict(
            device="cpu", dtype="float32", attn_implementation="eager",
            deltanet_kernels="transformers torch fallbacks (no fla / causal-conv1d / kernels installed)",
            logits="one forward over the whole prompt, use_cache=False (chunked DeltaNet path, chunk 64)",
            greedy="generate(do_sample=False, max_new_tokens=32) with cache: prefill = chunked path + "
                   "causal_conv1d_fn; every later token = torch_recurrent_gated_delta_rule + causal_conv1d_update",
            logits_hf_bf16=("from_pretrained(dtype=torch.bfloat16): A_log and linear_attn.norm.weight are cast to "
                            "bf16 too; eager attention; CPU" if fx["storage"] == "bf16_mixed" else None),
        ),
        tensors={"prompt<k>.input_ids": "I64 [n]", "prompt<k>.logits": "F32 [n, vocab]",
                 "prompt<k>.greedy": "I64 [32] (new tokens only)"}
        | ({"prompt<k>.logits_hf_bf16": "F32 [n, vocab]"} if fx["storage"] == "bf16_mixed" else {}),
        stats=stats,
        gates_on_longest_prompt=gates,
        prompts=prompts_info,
    )
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    os.chmod(out_dir / "manifest.json", 0o644)
    sizes = {f.name: f.stat().st_size for f in sorted(out_dir.iterdir())}
    log(f"[{name}] done in {time.perf_counter() - t_fx:.1f}s (generate {generate_seconds:.2f}s): total {sum(sizes.values()) / 1e6:.2f} MB {sizes}; "
        f"gates {gates}")
    return manifest


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    root = Path(__file__).resolve().parents[2]
    ap.add_argument("--out", type=Path, default=root / "tests" / "fixtures")
    ap.add_argument("--only", nargs="*", help="fixture names to (re)build")
    args = ap.parse_args()
    check_torch_fallbacks()
    torch.set_default_dtype(torch.float32)
    transformers.logging.set_verbosity_error()
    log(f"python {platform.python_version()}, torch {torch.__version__}, transformers {transformers.__version__}, "
        f"threads {torch.get_num_threads()}")
    t0 = time.perf_counter()
    for i, fx in enumerate(FIXTURES):
        if args.only and fx["name"] not in args.only:
            continue
        make_fixture(i, fx, args.out)
    log(f"all done in {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()

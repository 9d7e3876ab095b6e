#!/usr/bin/env python3
"""Cross-check the committed fixtures with an independent float64 NumPy implementation (no torch).

The forward pass below is written from the "HF numerics" description in README.md (spec §3-§5), with the
DeltaNet computed by the plain token recurrence in float64 (no chunking), so it tells

  * that the description reproduces HF (a layout or convention slip shows up as an O(1) error), and
  * how far HF's fp32 chunked reference is from exact arithmetic (the noise floor a C++ fp32 engine lives in).

The RoPE angles are the one place where it copies HF's fp32 arithmetic (inv_freq and pos * inv_freq in fp32,
cos/sin of those fp32 angles), because that rounding is part of the reference, not noise.
Also re-checks the greedy continuations: teacher-forced argmax of the float64 model over prompt + greedy.

Usage: python tools/reference/check_fixtures.py [FIXTURE_DIR ...]   (needs numpy and safetensors only)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file


def load_weights(path):
    """safetensors -> float64 numpy. BF16 is not a numpy dtype: read it through the raw bytes."""
    import struct

    raw = Path(path).read_bytes()
    (hlen,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + hlen])
    base = 8 + hlen
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        buf = raw[base + a:base + b]
        if info["dtype"] == "BF16":
            u16 = np.frombuffer(buf, dtype="<u2").astype(np.uint32) << 16
            arr = u16.view(np.float32)
        elif info["dtype"] == "F32":
            arr = np.frombuffer(buf, dtype="<f4")
        else:
            raise ValueError(f"{name}: unexpected dtype {info['dtype']}")
        out[name] = arr.reshape(info["shape"]).astype(np.float64)
    return out


def silu(x):
    return x / (1.0 + np.exp(-x))


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def softplus(x):
    return np.where(x > 20.0, x, np.log1p(np.exp(np.minimum(x, 20.0))))


def rmsnorm_zc(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * (1.0 + w)


class Model:
    def __init__(self, fixture_dir):
        d = Path(fixture_dir)
        cfg = json.loads((d / "config.json").read_text())
        self.vlm = cfg["model_type"] == "qwen3_5"
        self.tc = cfg["text_config"] if self.vlm else cfg
        self.tie = cfg.get("tie_word_embeddings", self.tc.get("tie_word_embeddings", False))
        w = load_weights(d / "model.safetensors")
        p = "model.language_model." if self.vlm else "model."
        self.w = {k[len(p):]: v for k, v in w.items() if k.startswith(p)}
        self.head = w["lm_head.weight"] if "lm_head.weight" in w else self.w["embed_tokens.weight"]
        assert ("lm_head.weight" in w) == (not self.tie)
        tc = self.tc
        self.eps = tc["rms_norm_eps"]
        rp = tc["rope_parameters"]
        D = tc["head_dim"]
        R = int(D * rp.get("partial_rotary_factor", 0.25))
        self.R = R
        # HF: inv_freq = 1 / (theta ** (arange(0, R, 2, float32) / R)), all in fp32.
        ar = np.arange(0, R, 2, dtype=np.float32) / np.float32(R)
        self.inv_freq = (np.float32(1.0) / (np.float32(rp["rope_theta"]) ** ar)).astype(np.float32)

    def rope(self, pos):
        ang = (pos.astype(np.float32)[:, None] * self.inv_freq[None, :]).astype(np.float32)
        emb = np.concatenate([ang, ang], axis=-1)
        return np.cos(emb).astype(np.float32).astype(np.float64), np.sin(emb).astype(np.float32).astype(np.float64)

    def attention(self, i, h, pos):
        tc, w = self.tc, self.w
        pre = f"layers.{i}.self_attn."
        S = h.shape[0]
        nH, nKV, D = tc["num_attention_heads"], tc["num_key_value_heads"], tc["head_dim"]
        P = (h @ w[pre + "q_proj.weight"].T).reshape(S, nH, 2 * D)
        q, gate = P[..., :D], P[..., D:].reshape(S, nH * D)
        q = rmsnorm_zc(q, w[pre + "q_norm.weight"], self.eps)
        k = rmsnorm_zc((h @ w[pre + "k_proj.weight"].T).reshape(S, nKV, D), w[pre + "k_norm.weight"], self.eps)
        v = (h @ w[pre + "v_proj.weight"].T).reshape(S, nKV, D)
        cos, sin = self.rope(pos)
        R = self.R

        def rot(x):
            xr, xp = x[..., :R], x[..., R:]
            x1, x2 = xr[..., :R // 2], xr[..., R // 2:]
            rh = np.concatenate([-x2, x1], axis=-1)
            return np.concatenate([xr * cos[:, None, :] + rh * sin[:, None, :], xp], axis=-1)

        q, k = rot(q), rot(k)
        grp = nH // nKV
        out = np.empty((S, nH, D))
        mask = np.triu(np.full((S, S), -np.inf), 1)
        for hh in range(nH):
            kv = hh // grp
            sc = q[:, hh, :] @ k[:, kv, :].T * D ** -0.5 + mask
            sc = np.exp(sc - sc.max(-1, keepdims=True))
            sc /= sc.sum(-1, keepdims=True)
            out[:, hh, :] = sc @ v[:, kv, :]
        o = out.reshape(S, nH * D) * sigmoid(gate)
        return o @ w[pre + "o_proj.weight"].T

    def deltanet(self, i, h):
        tc, w = self.tc, self.w
        pre = f"layers.{i}.linear_attn."
        S = h.shape[0]
        nK, nV = tc["linear_num_key_heads"], tc["linear_num_value_heads"]
        dK, dV = tc["linear_key_head_dim"], tc["linear_value_head_dim"]
        K = tc["linear_conv_kernel_dim"]
        m = h @ w[pre + "in_proj_qkv.weight"].T                    # [S, Cv]
        z = (h @ w[pre + "in_proj_z.weight"].T).reshape(S, nV, dV)
        b = h @ w[pre + "in_proj_b.weight"].T
        a = h @ w[pre + "in_proj_a.weight"].T
        cw = w[pre + "conv1d.weight"][:, 0, :]                     # [Cv, K]; cw[:, K-1] multiplies the current token
        mp = np.concatenate([np.zeros((K - 1, m.shape[1])), m], axis=0)
        u = np.zeros_like(m)
        for j in range(K):
            u += cw[:, j][None, :] * mp[j:j + S]
        u = silu(u)
        q = u[:, :nK * dK].reshape(S, nK, dK)
        k = u[:, nK * dK:2 * nK * dK].reshape(S, nK, dK)
        v = u[:, 2 * nK * dK:].reshape(S, nV, dV)
        beta = sigmoid(b)
        g = -np.exp(w[pre + "A_log"]) * softplus(a + w[pre + "dt_bias"])
        r = nV // nK
        q, k = np.repeat(q, r, axis=1), np.repeat(k, r, axis=1)   # value head h reads key head h // r
        q = q / np.sqrt((q * q).sum(-1, keepdims=True) + 1e-6)
        k = k / np.sqrt((k * k).sum(-1, keepdims=True) + 1e-6)
        q = q * dK ** -0.5
        state = np.zeros((nV, dK, dV))
        o = np.empty((S, nV, dV))
        for t in range(S):
            state *= np.exp(g[t])[:, None, None]
            kv = np.einsum("hkv,hk->hv", state, k[t])
            delta = (v[t] - kv) * beta[t][:, None]
            state += k[t][:, :, None] * delta[:, None, :]
            o[t] = np.einsum("hkv,hk->hv", state, q[t])
        y = o / np.sqrt(np.mean(o * o, axis=-1, keepdims=True) + self.eps)
        y = y * w[pre + "norm.weight"] * silu(z)
        return y.reshape(S, nV * dV) @ w[pre + "out_proj.weight"].T

    def logits(self, ids):
        tc, w = self.tc, self.w
        x = w["embed_tokens.weight"][ids]
        pos = np.arange(len(ids))
        for i, lt in enumerate(tc["layer_types"]):
            h = rmsnorm_zc(x, w[f"layers.{i}.input_layernorm.weight"], self.eps)
            x = x + (self.deltanet(i, h) if lt == "linear_attention" else self.attention(i, h, pos))
            h = rmsnorm_zc(x, w[f"layers.{i}.post_attention_layernorm.weight"], self.eps)
            pre = f"layers.{i}.mlp."
            x = x + (silu(h @ w[pre + "gate_proj.weight"].T) * (h @ w[pre + "up_proj.weight"].T)) @ w[pre + "down_proj.weight"].T
        x = rmsnorm_zc(x, w["norm.weight"], self.eps)
        return x @ self.head.T


def rel_err(a, b):
    return float((np.abs(a - b).max(-1) / np.abs(b).max(-1)).max())


def check(fixture_dir):
    d = Path(fixture_dir)
    model = Model(d)
    ref = load_file(str(d / "reference.safetensors"))
    k, worst, worst_bf16, greedy_ok = 0, 0.0, 0.0, True
    rows = []
    while f"prompt{k}.input_ids" in ref:
        ids = ref[f"prompt{k}.input_ids"]
        hf = ref[f"prompt{k}.logits"].astype(np.float64)
        ours = model.logits(ids)
        e = rel_err(ours, hf)
        worst = max(worst, e)
        full = np.concatenate([ids, ref[f"prompt{k}.greedy"]])
        tf = model.logits(full)[len(ids) - 1:-1].argmax(-1)
        same = bool((tf == ref[f"prompt{k}.greedy"]).all())
        greedy_ok &= same
        row = f"  prompt{k} n={len(ids)}: float64 vs HF fp32 rel err {e:.2e}, greedy teacher-forced match {same}"
        if f"prompt{k}.logits_hf_bf16" in ref:
            eb = rel_err(ref[f"prompt{k}.logits_hf_bf16"].astype(np.float64), ours)
            worst_bf16 = max(worst_bf16, eb)
            row += f", HF bf16 vs float64 rel err {eb:.3g}"
        rows.append(row)
        k += 1
    print(f"{d.name}: worst float64-vs-HF-fp32 rel err {worst:.2e}; greedy ok {greedy_ok}"
          + (f"; HF bf16 worst {worst_bf16:.3g}" if worst_bf16 else ""))
    print("\n".join(rows))
    return worst < 1e-4 and greedy_ok


def main():
    dirs = sys.argv[1:] or sorted(str(p.parent) for p in (Path(__file__).resolve().parents[2] / "tests" / "fixtures")
                                  .glob("*/reference.safetensors"))
    ok = all([check(d) for d in dirs])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

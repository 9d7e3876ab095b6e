#!/usr/bin/env python3
"""Reference fixtures for the Qwen3.5 MTP (multi-token prediction) head, which HF transformers does not implement
(it drops `mtp.*` on load). The oracle of the C++ MTP forward (tests/model/mtp_fixture_test.cpp).

The main model is HF's own tiny random Qwen3.5 (make_fixtures.py's classes, randomisation and storage rules). The MTP
head is a small PyTorch module that follows vLLM's `Qwen3_5MultiTokenPredictor.forward`
(vllm/model_executor/models/qwen3_5_mtp.py; ../../../shared/docs/qwen35-mtp.md §1):

    e  = embed_tokens[x_{i+1}]                                  (the main model's table)
    u  = cat([pre_fc_norm_embedding(e), pre_fc_norm_hidden(h_i)])   embedding FIRST; zero-centred RMSNorms (1 + w)
    z  = fc(u)                                                  Linear(2H, H, bias=False)
    g  = mtp.norm(DecoderLayer(z; position i, the head's own KV cache))
    logits = lm_head(g)                                         (the main model's head; predicts x_{i+2})

with h_i the main model's hidden AFTER its final norm (`last_hidden_state`, what lm_head reads; asserted). The decoder
layer and mtp.norm are HF itself, as SGLang builds its MTP layer: a `Qwen3_5TextModel` with `num_hidden_layers=1`,
`layer_types=["full_attention"]`, loaded with `mtp.layers.0.*` -> `layers.0.*` and `mtp.norm` -> `norm`, called with
`inputs_embeds` and its own `DynamicCache` (the MTP KV cache; default positions = cache length + arange, i.e. row i at
position i). Chained drafts: step j >= 2 feeds (g of the previous step, its argmax) at the next position through the same
layer and cache (vLLM: the previous MTP hidden after mtp.norm).

Fixtures (tests/fixtures/mtp/<name>/): config.json (text config with mtp_num_hidden_layers 1), generation_config.json,
model.safetensors (save_pretrained), mtp.safetensors (the 15 mtp.* tensors, as released files shard them),
model.safetensors.index.json (both shards, as released), mtp_reference.safetensors, manifest.json.
`mtp_reference.safetensors`, per prompt k:
    prompt<k>.sequence        I64 [L+1]   prompt + the main model's greedy continuation (NEW_TOKENS tokens)
    prompt<k>.prompt_length   I64 [1]
    prompt<k>.hidden          F32 [L+1, H] main model, post-final-norm hidden, one forward without cache
    prompt<k>.mtp_logits      F32 [L, V]  teacher-forced MTP: row i = (hidden[i], sequence[i+1]) at position i
    prompt<k>.mtp_hidden      F32 [L, H]  the same rows' g (after mtp.norm)
    prompt<k>.draft_ends      I64 [P]     m: the prefix sequence[0..m] is committed (m >= 1)
    prompt<k>.drafts          I64 [P, 4]  greedy drafts d_1..d_4 for that prefix (k = 1..4 are its first k)
    prompt<k>.draft_logits    F32 [P, 4, V]
A draft for prefix m runs the MTP over rows 0..m-1 (fresh cache), d_1 = argmax of row m-1, then chains 3 steps.

Prompts whose greedy continuation or drafts contain a near-tie (top-2 margin < 1e-3 max |logit|) are redrawn.

Usage (venv outside the repo, see README.md):
    /work/venvs/reference/bin/python tools/reference/make_mtp_fixtures.py [--out tests/fixtures/mtp] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

import safetensors
import transformers
from safetensors import safe_open
from safetensors.torch import save_file
from transformers.cache_utils import DynamicCache
from transformers.models.qwen3_5 import modeling_qwen3_5 as hf_qwen35

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_fixtures as mf  # noqa: E402  (the shared model builder, randomisation and storage rules)

BASE_SEED = 20261217
PROMPT_LENGTHS = [1, 63, 64, 65, 130]
NEW_TOKENS = 8
DRAFT_STEPS = 4
MIN_MARGIN_REL = 1e-3
L, F_ = mf.L, mf.F_

FIXTURES = [
    dict(
        name="mtp_a_f32_tied",
        description="4 layers [L,L,L,F] + one MTP layer; tied head (the MTP shares embed_tokens as its head); released "
                    "VLM layout (model.language_model.*, model.visual.*, mtp.*); fp32",
        layout="vlm", storage="f32", tie=True,
        text=mf.text_cfg(layer_types=[L, L, L, F_]),
        vision=mf.tiny_vision(64),
    ),
    dict(
        name="mtp_b_bf16_untied",
        description="3 layers [L,L,F] + one MTP layer with the real head sizes (head_dim 256, rotary 64, mrope "
                    "[11,11,10], theta 1e7; dK = dV = 128), 2 query / 1 KV heads; untied lm_head; BF16 storage "
                    "(A_log, linear_attn.norm F32; mtp.* BF16 as released); text-only layout (model.*, mtp.*)",
        layout="text", storage="bf16_mixed", tie=False,
        text=mf.text_cfg(layer_types=[L, L, F_], num_attention_heads=2, num_key_value_heads=1, head_dim=256,
                         linear_key_head_dim=128, linear_value_head_dim=128, linear_num_key_heads=1,
                         linear_num_value_heads=2, rope_parameters=mf.rope(1e7, [11, 11, 10])),
        vision=None,
    ),
]


def log(*args):
    print(*args, flush=True)


def rms_norm_zero_centred(hidden, eps):
    """HF's Qwen3_5RMSNorm (weight applied as 1 + w)."""
    return hf_qwen35.Qwen3_5RMSNorm(hidden, eps=eps)


class MtpReference(torch.nn.Module):
    """vLLM's Qwen3_5MultiTokenPredictor (dense, one layer), the decoder layer and final norm from HF itself."""

    def __init__(self, text_config, embed_tokens, lm_head):
        super().__init__()
        H, eps = text_config.hidden_size, text_config.rms_norm_eps
        self.pre_fc_norm_embedding = rms_norm_zero_centred(H, eps)
        self.pre_fc_norm_hidden = rms_norm_zero_centred(H, eps)
        self.fc = torch.nn.Linear(2 * H, H, bias=False)
        cfg = copy.deepcopy(text_config)
        cfg.num_hidden_layers = 1
        cfg.layer_types = ["full_attention"]
        self.layer_model = hf_qwen35.Qwen3_5TextModel(cfg)   # layers.0 = mtp.layers.0, norm = mtp.norm
        self.layer_model.set_attn_implementation("eager")
        self.embed_tokens, self.lm_head = embed_tokens, lm_head   # shared with the main model (not parameters here)

    def mtp_state_dict_names(self):
        """checkpoint name -> this module's parameter."""
        out = {"mtp.pre_fc_norm_embedding.weight": self.pre_fc_norm_embedding.weight,
               "mtp.pre_fc_norm_hidden.weight": self.pre_fc_norm_hidden.weight,
               "mtp.fc.weight": self.fc.weight,
               "mtp.norm.weight": self.layer_model.norm.weight}
        for n, p in self.layer_model.layers[0].named_parameters():
            out["mtp.layers.0." + n] = p
        return out

    @torch.no_grad()
    def forward(self, hidden, next_ids, cache):
        """hidden [S, H] (post-norm main hidden, or the previous MTP g), next_ids [S]; rows at cache length + i."""
        e = self.embed_tokens(torch.as_tensor(next_ids, dtype=torch.long)[None])          # [1, S, H]
        u = torch.cat([self.pre_fc_norm_embedding(e), self.pre_fc_norm_hidden(hidden[None])], dim=-1)  # [1, S, 2H]
        z = self.fc(u)
        out = self.layer_model(inputs_embeds=z, past_key_values=cache, use_cache=True)
        g = out.last_hidden_state[0]                                                      # [S, H] after mtp.norm
        return self.lm_head(g).float(), g


@torch.no_grad()
def randomise_mtp(mtp, seed):
    """make_fixtures.randomise's rules: zero-centred norms N(0, 0.1), projections N(0, 1/sqrt(fan_in)), output
    projections x OUT_GAIN."""
    g = torch.Generator().manual_seed(seed + 104729)
    for name, p in mtp.mtp_state_dict_names().items():
        shape = tuple(p.shape)
        if p.ndim == 1:                          # every vector of the head is a zero-centred RMSNorm weight
            new = torch.randn(shape, generator=g) * 0.1
        elif p.ndim == 2:
            gain = mf.OUT_GAIN if name.endswith(("o_proj.weight", "down_proj.weight")) else 1.0
            new = torch.randn(shape, generator=g) * (gain * shape[1] ** -0.5)
        else:
            raise RuntimeError(f"unhandled MTP parameter {name} {shape}")
        p.copy_(new)


def save_mtp_shard(mtp, fx, out_dir):
    """mtp.safetensors (BF16 for bf16 storage, as released; F32 otherwise) and the index naming both shards."""
    dtype = torch.float32 if fx["storage"] == "f32" else torch.bfloat16
    tensors = {n: p.detach().to(dtype).contiguous() for n, p in mtp.mtp_state_dict_names().items()}
    save_file(tensors, str(out_dir / "mtp.safetensors"), metadata={"format": "pt"})
    weight_map, total = {}, 0
    for shard in ("model.safetensors", "mtp.safetensors"):
        with safe_open(out_dir / shard, "pt") as f:
            for k in f.keys():
                weight_map[k] = shard
                t = f.get_slice(k)
                total += int(np.prod(t.get_shape(), dtype=np.int64)) * (4 if t.get_dtype() == "F32" else 2)
    index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
    (out_dir / "model.safetensors.index.json").write_text(json.dumps(index, indent=2) + "\n")
    for f in ("mtp.safetensors", "model.safetensors.index.json"):
        os.chmod(out_dir / f, 0o644)


@torch.no_grad()
def load_mtp_shard(mtp, out_dir):
    """The reference computes on exactly the stored values (BF16 upcast to fp32)."""
    params = mtp.mtp_state_dict_names()
    with safe_open(out_dir / "mtp.safetensors", "pt") as f:
        assert set(f.keys()) == set(params), sorted(set(f.keys()) ^ set(params))
        for k in f.keys():
            params[k].copy_(f.get_tensor(k).to(torch.float32))


def add_mtp_to_config(out_dir):
    path = out_dir / "config.json"
    config = json.loads(path.read_text())
    text = config.get("text_config", config)
    text["mtp_num_hidden_layers"] = 1
    text["mtp_use_dedicated_embeddings"] = False
    path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")


@torch.no_grad()
def main_hidden_and_logits(model, ids):
    """Post-final-norm hidden [n, H] (base model last_hidden_state) and logits [n, V], one forward without cache."""
    x = torch.as_tensor(ids, dtype=torch.long)[None]
    out = model(input_ids=x, use_cache=False, output_hidden_states=False)
    base = mf.text_model(model)(input_ids=x, use_cache=False)
    h = base.last_hidden_state[0]
    logits = out.logits[0].float()
    assert torch.equal(model.lm_head(h).float(), logits), "lm_head(last_hidden_state) is not the model's logits"
    return h, logits


def top2_margin(logits):
    top = torch.topk(logits, 2, dim=-1).values
    return top[..., 0] - top[..., 1]


@torch.no_grad()
def drafts_for_prefix(mtp, hidden, sequence, m):
    """Committed sequence[0..m]: MTP over rows 0..m-1 (fresh cache), then DRAFT_STEPS - 1 chained steps."""
    cache = DynamicCache(config=mtp.layer_model.config)
    logits, g = mtp(hidden[:m], sequence[1:m + 1], cache)
    out_logits, drafts = [logits[-1]], [int(logits[-1].argmax())]
    prev = g[-1:]
    for _ in range(DRAFT_STEPS - 1):
        logits, g = mtp(prev, [drafts[-1]], cache)
        out_logits.append(logits[-1])
        drafts.append(int(logits[-1].argmax()))
        prev = g[-1:]
    return drafts, torch.stack(out_logits)


def make_fixture(index, fx, out_root):
    name = fx["name"]
    seed = BASE_SEED + 1000 * index
    t0 = time.perf_counter()
    fx_main = dict(fx, name=name)
    model = mf.build_model(fx_main, seed)
    mf.randomise(model, fx_main, seed)
    if fx["storage"] == "bf16_mixed":
        mf.round_to_bf16_storage(model)
    out_dir = out_root / name
    mf.save_checkpoint(model, fx_main, out_dir)
    del model
    add_mtp_to_config(out_dir)

    ref_model = mf.load_checkpoint(fx_main, out_dir, torch.float32)   # reloads through the index below too
    tm = mf.text_model(ref_model)
    text_config = tm.config
    mtp = MtpReference(text_config, tm.embed_tokens, ref_model.lm_head).eval()
    randomise_mtp(mtp, seed)
    if fx["storage"] == "bf16_mixed":
        for p in mtp.mtp_state_dict_names().values():
            p.data.copy_(p.data.to(torch.bfloat16).to(torch.float32))
    save_mtp_shard(mtp, fx, out_dir)
    # Reload both: the main model through the index (HF ignores mtp.*), the head from its shard.
    reloaded = mf.load_checkpoint(fx_main, out_dir, torch.float32)
    probe = np.arange(5) % (text_config.vocab_size - mf.RESERVED_TOP)
    assert torch.equal(main_hidden_and_logits(reloaded, probe)[1], main_hidden_and_logits(ref_model, probe)[1])
    ref_model = reloaded
    tm = mf.text_model(ref_model)
    mtp = MtpReference(text_config, tm.embed_tokens, ref_model.lm_head).eval()
    load_mtp_shard(mtp, out_dir)
    log(f"[{name}] main model + MTP head saved to {out_dir}")

    vocab = text_config.vocab_size
    rng = np.random.default_rng(seed)
    tensors, prompts_info = {}, []
    stats = dict(max_abs_mtp_logit=0.0, min_draft_margin_rel=float("inf"), min_greedy_margin_rel=float("inf"),
                 mtp_top1_matches_next_token=0, mtp_rows=0, chained_vs_teacher_forced_first_draft_max_abs=0.0)
    for k, n in enumerate(PROMPT_LENGTHS):
        for attempt in range(50):
            ids = rng.integers(0, vocab - mf.RESERVED_TOP, size=n, dtype=np.int64)
            x = torch.as_tensor(ids, dtype=torch.long)[None]
            with torch.no_grad():
                new = ref_model.generate(x, attention_mask=torch.ones_like(x), do_sample=False,
                                         max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS, pad_token_id=0,
                                         eos_token_id=None)[0, n:]
            sequence = np.concatenate([ids, new.numpy()])
            hidden, logits = main_hidden_and_logits(ref_model, sequence)
            decisions = logits[n - 1:n - 1 + NEW_TOKENS]
            assert torch.equal(decisions.argmax(-1), new), "generate disagrees with the teacher-forced argmax"
            greedy_margin = float((top2_margin(decisions) / decisions.abs().amax(-1)).min())

            Lp = len(sequence) - 1
            mtp_logits, mtp_hidden = mtp(hidden[:Lp], sequence[1:], DynamicCache(config=mtp.layer_model.config))
            ends = sorted({1, n, n + 3, Lp} - {0})
            drafts, draft_logits = [], []
            for m in ends:
                d, dl = drafts_for_prefix(mtp, hidden, sequence, m)
                drafts.append(d)
                draft_logits.append(dl)
            draft_logits = torch.stack(draft_logits)
            draft_margin = float((top2_margin(draft_logits) / draft_logits.abs().amax(-1)).min())
            if greedy_margin >= MIN_MARGIN_REL and draft_margin >= MIN_MARGIN_REL:
                break
            log(f"[{name}] prompt{k} (n={n}) attempt {attempt}: near-tie (greedy {greedy_margin:.3g}, drafts "
                f"{draft_margin:.3g} of max |logit|), redrawing")
        else:
            raise RuntimeError("could not find a prompt without near-ties")
        # The first draft of prefix m is the teacher-forced row m - 1 (same rows, same positions).
        first = torch.stack([mtp_logits[m - 1] for m in ends])
        tf_diff = float((first - draft_logits[:, 0]).abs().max())
        stats["chained_vs_teacher_forced_first_draft_max_abs"] = max(
            stats["chained_vs_teacher_forced_first_draft_max_abs"], tf_diff)
        stats["max_abs_mtp_logit"] = max(stats["max_abs_mtp_logit"], float(mtp_logits.abs().max()))
        stats["min_draft_margin_rel"] = min(stats["min_draft_margin_rel"], draft_margin)
        stats["min_greedy_margin_rel"] = min(stats["min_greedy_margin_rel"], greedy_margin)
        if len(sequence) > 2:
            stats["mtp_top1_matches_next_token"] += int((mtp_logits[:-1].argmax(-1) ==
                                                         torch.as_tensor(sequence[2:])).sum())
            stats["mtp_rows"] += len(sequence) - 2

        tensors[f"prompt{k}.sequence"] = torch.as_tensor(sequence, dtype=torch.int64)
        tensors[f"prompt{k}.prompt_length"] = torch.tensor([n], dtype=torch.int64)
        tensors[f"prompt{k}.hidden"] = hidden.contiguous()
        tensors[f"prompt{k}.mtp_logits"] = mtp_logits.contiguous()
        tensors[f"prompt{k}.mtp_hidden"] = mtp_hidden.contiguous()
        tensors[f"prompt{k}.draft_ends"] = torch.as_tensor(ends, dtype=torch.int64)
        tensors[f"prompt{k}.drafts"] = torch.as_tensor(drafts, dtype=torch.int64)
        tensors[f"prompt{k}.draft_logits"] = draft_logits.contiguous()
        prompts_info.append(dict(index=k, prompt_length=n, sequence_length=len(sequence), attempt=attempt,
                                 draft_ends=ends, drafts=drafts, min_greedy_margin_rel=greedy_margin,
                                 min_draft_margin_rel=draft_margin, first_draft_chained_vs_teacher_forced=tf_diff))
        log(f"[{name}] prompt{k} n={n}: sequence {len(sequence)}, drafts {drafts} at ends {ends}, margins greedy "
            f"{greedy_margin:.3g} drafts {draft_margin:.3g}, chained-vs-teacher-forced {tf_diff:.2g}")

    ref_path = out_dir / "mtp_reference.safetensors"
    save_file(tensors, str(ref_path), metadata={"format": "pt"})
    os.chmod(ref_path, 0o644)
    manifest = dict(
        name=name, description=fx["description"],
        versions=dict(python=platform.python_version(), torch=torch.__version__, transformers=transformers.__version__,
                      numpy=np.__version__, safetensors=safetensors.__version__),
        seed=seed, storage=("F32" if fx["storage"] == "f32" else "BF16 (A_log, linear_attn.norm F32), mtp.* BF16"),
        tie_word_embeddings=fx["tie"],
        config_sha256=mf.sha256_file(out_dir / "config.json"),
        model_safetensors_sha256=mf.sha256_file(out_dir / "model.safetensors"),
        mtp_safetensors_sha256=mf.sha256_file(out_dir / "mtp.safetensors"),
        mtp_reference=dict(
            module="vLLM Qwen3_5MultiTokenPredictor.forward: cat([pre_fc_norm_embedding(embed(x_{i+1})), "
                   "pre_fc_norm_hidden(h_i)]) -> fc -> HF Qwen3_5TextModel(1 full_attention layer) with its own "
                   "DynamicCache (row i at position i) -> its norm (mtp.norm) -> the main lm_head",
            hidden="main model base last_hidden_state (after the final norm); lm_head(hidden) == logits asserted",
            chaining="step j >= 2: (previous g after mtp.norm, previous argmax) at the next position, same cache",
            device="cpu", dtype="float32", attn_implementation="eager"),
        prompt_lengths=PROMPT_LENGTHS, new_tokens=NEW_TOKENS, draft_steps=DRAFT_STEPS,
        stats=stats, prompts=prompts_info)
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    os.chmod(out_dir / "manifest.json", 0o644)
    sizes = {f.name: f.stat().st_size for f in sorted(out_dir.iterdir())}
    log(f"[{name}] done in {time.perf_counter() - t0:.1f}s: {sum(sizes.values()) / 1e6:.2f} MB {sizes}; stats {stats}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    root = Path(__file__).resolve().parents[2]
    ap.add_argument("--out", type=Path, default=root / "tests" / "fixtures" / "mtp")
    ap.add_argument("--only", nargs="*", help="fixture names to (re)build")
    args = ap.parse_args()
    mf.check_torch_fallbacks()
    torch.set_default_dtype(torch.float32)
    transformers.logging.set_verbosity_error()
    log(f"python {platform.python_version()}, torch {torch.__version__}, transformers {transformers.__version__}")
    args.out.mkdir(parents=True, exist_ok=True)
    for i, fx in enumerate(FIXTURES):
        if args.only and fx["name"] not in args.only:
            continue
        make_fixture(i, fx, args.out)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Vision fixtures: a tiny random Qwen3_5ForConditionalGeneration, images in every supported format, and what HF
transformers computes for them — decoded pixels, pixel_values / image_grid_thw, the vision tower and merger,
mRoPE positions and logits of prompts with images.

Writes tests/fixtures/vision/: config.json, generation_config.json, model.safetensors (as save_pretrained writes
them, BF16 with linear_attn.A_log / linear_attn.norm.weight F32 like the released files), preprocessor_config.json
(the released keys, with small pixel bounds), preprocessor_config_clip.json (a second processor with other
mean / std / rescale to check that the file, not a default, decides), images/*, vision_reference.safetensors and
manifest.json. Deterministic (seeded); tools/reference/README.md ("Vision fixtures") says what each tensor is.

Usage (the reference venv plus torchvision, see requirements.txt):
    /work/venvs/reference/bin/python tools/reference/make_vision_fixtures.py [--out tests/fixtures/vision]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import os
import platform
import shutil
import struct
import sys
import zlib
import time
from pathlib import Path

import numpy as np
import PIL
import torch
import torchvision
import transformers
from PIL import Image, ImageOps
from safetensors.torch import save_file
from transformers import Qwen3_5Config, Qwen3_5ForConditionalGeneration
from transformers.image_utils import load_image, load_image_as_tensor
from transformers.models.qwen2_vl.image_processing_qwen2_vl import Qwen2VLImageProcessor

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_fixtures as mf  # noqa: E402  (text config, randomisation, BF16 storage rules, checks)

SEED = 20261202
L, F_ = mf.L, mf.F_

# Vision: hidden 32 with 2 heads (head_dim 16, a multiple of 4 as the 2-D rotary needs), a 5 x 5 position
# table (side 5: never equal to a grid side of the cases below, so interpolation runs in both directions), merge 2.
VISION = dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2, in_channels=3, patch_size=16,
              spatial_merge_size=2, temporal_patch_size=2, out_hidden_size=64, num_position_embeddings=25,
              hidden_act="gelu_pytorch_tanh")
TEXT = mf.text_cfg(layer_types=[L, F_], vocab_size=256, hidden_size=64, intermediate_size=96)

# The released keys (Qwen3.5 / 3.6 preprocessor_config.json) with small pixel bounds, so that a 64 x 96 image
# stays 64 x 96 and the other cases are scaled down or up.
PREPROCESSOR = {
    "size": {"longest_edge": 8192, "shortest_edge": 4096},
    "patch_size": 16,
    "temporal_patch_size": 2,
    "merge_size": 2,
    "image_mean": [0.5, 0.5, 0.5],
    "image_std": [0.5, 0.5, 0.5],
    "processor_class": "Qwen3VLProcessor",
    "image_processor_type": "Qwen2VLImageProcessorFast",
}
# Other mean / std / rescale (CLIP's, HF's class defaults) and legacy top-level min/max_pixels keys that override
# `size`; patch and merge as above so the same tower could take the result.
PREPROCESSOR_CLIP = {
    "size": {"longest_edge": 1 << 20, "shortest_edge": 16},
    "min_pixels": 4096,
    "max_pixels": 12288,
    "patch_size": 16,
    "temporal_patch_size": 2,
    "merge_size": 2,
    "image_mean": [0.48145466, 0.4578275, 0.40821073],
    "image_std": [0.26862954, 0.26130258, 0.27577711],
    "rescale_factor": 0.00392156862745098,
    "image_processor_type": "Qwen2VLImageProcessor",
}


def log(*args):
    print(*args, flush=True)


# ------------------------------------------------------------------------------------------------------------
# Images


def textured(rng, h, w, channels=3):
    """Smooth gradients plus noise: compresses a little, and every resize rounding path is exercised."""
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([(x * 255 // max(w - 1, 1)), (y * 255 // max(h - 1, 1)), ((x + y) * 255 // max(h + w - 2, 1))],
                    -1)[..., :channels]
    noise = rng.integers(-12, 13, size=(h, w, channels))
    return np.clip(base + noise, 0, 255).astype(np.uint8)


def exif_with_orientation(value):
    exif = Image.Exif()
    exif[0x0112] = value
    return exif.tobytes()


def encode(img, fmt, **kw):
    buf = io.BytesIO()
    img.save(buf, format=fmt, **kw)
    return buf.getvalue()


def make_images(rng):
    """(name, bytes, what it covers) for every case."""
    cases = []
    cases.append(("rgb_64x96.png", encode(Image.fromarray(textured(rng, 64, 96)), "PNG"),
                  "RGB PNG, 64 x 96: already a multiple of 32 within the pixel bounds, no resize; grid 4 x 6"))
    rgba = np.concatenate([textured(rng, 120, 160), textured(rng, 120, 160, 1)], -1)
    cases.append(("rgba_120x160.png", encode(Image.fromarray(rgba, "RGBA"), "PNG"),
                  "RGBA PNG with varying alpha (dropped, not composited), 120 x 160: over max_pixels, scaled down "
                  "to 64 x 96 (antialiased: scale 1.875 x 1.667)"))
    cases.append(("up_30x40.jpg", encode(Image.fromarray(textured(rng, 30, 40)), "JPEG", quality=90),
                  "baseline 4:2:0 JPEG, 30 x 40: under min_pixels, scaled up to 64 x 96"))
    gray = textured(rng, 80, 112, 1)[..., 0]
    cases.append(("gray_80x112.png", encode(Image.fromarray(gray, "L"), "PNG"),
                  "greyscale PNG, 80 x 112: round(2.5) = 2 and round(3.5) = 4 (half to even) give 64 x 128, "
                  "rows shrink while columns grow"))
    stored = Image.fromarray(textured(rng, 48, 80))  # upright it is 80 tall, 48 wide
    cases.append(("exif6_48x80.jpg", encode(stored, "JPEG", quality=92, exif=exif_with_orientation(6)),
                  "JPEG stored 48 x 80 with EXIF orientation 6 (rotate 90 degrees clockwise): upright 80 x 48, "
                  "resized to 64 x 64"))
    frames = [Image.fromarray(textured(rng, 70, 90)).quantize(colors=64, method=Image.Quantize.MEDIANCUT,
                                                               dither=Image.Dither.NONE) for _ in range(2)]
    cases.append(("palette_70x90.gif", encode(frames[0], "GIF", save_all=True, append_images=frames[1:],
                                             duration=100, loop=0),
                  "animated GIF (2 frames, 64-colour palette), 70 x 90: the first frame, resized to 64 x 96"))
    rgba_webp = np.concatenate([textured(rng, 60, 100), textured(rng, 60, 100, 1)], -1)
    cases.append(("lossless_60x100.webp", encode(Image.fromarray(rgba_webp, "RGBA"), "WEBP", lossless=True,
                                                 exact=True),
                  "lossless WebP with alpha (RGB under alpha kept), 60 x 100: resized to 64 x 96"))
    cases.append(("lossy_64x64.webp", encode(Image.fromarray(textured(rng, 64, 64)), "WEBP", quality=80),
                  "lossy WebP, 64 x 64: no resize; grid 4 x 4"))
    return cases


def make_orientation_images(rng):
    """Tiny PNGs (5 x 7) carrying EXIF orientation 1..8 in an eXIf chunk: decoded pixels only."""
    pixels = Image.fromarray(textured(rng, 5, 7))
    return [(f"orientation{v}_5x7.png", encode(pixels, "PNG", exif=exif_with_orientation(v))) for v in range(1, 9)]


def png_chunk(kind, payload):
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))


def png_16bit(samples, colour_type):
    """A PNG of 16-bit samples [H, W, C] written by hand (PIL writes no 16-bit colour PNGs)."""
    h, w = samples.shape[:2]
    rows = b"".join(b"\0" + samples[y].astype(">u2").tobytes() for y in range(h))
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, colour_type, 0, 0, 0))
            + png_chunk(b"IDAT", zlib.compress(rows)) + png_chunk(b"IEND", b""))


def make_decode_images(rng):
    """Small images for the decoders alone (name, bytes, what it covers): the colour types, bit depths and
    container variants the preprocessing cases do not reach."""
    px = textured(rng, 9, 13)
    gray = textured(rng, 9, 13, 1)[..., 0]
    cases = []
    pal = Image.fromarray(px).quantize(colors=12, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    cases.append(("palette_trns.png", encode(pal, "PNG", transparency=3), "palette PNG with a tRNS entry"))
    cases.append(("gray_alpha.png", encode(Image.fromarray(np.stack([gray, gray[::-1]], -1), "LA"), "PNG"),
                  "grey + alpha PNG"))
    wide = (textured(rng, 9, 13).astype(np.uint16) * 257 + rng.integers(0, 257, (9, 13, 3))).astype(np.uint16)
    cases.append(("rgb16.png", png_16bit(wide, 2), "16-bit RGB PNG (PIL keeps the high byte)"))
    cases.append(("rgba16.png", png_16bit(np.concatenate([wide, wide[..., :1]], -1), 6), "16-bit RGBA PNG"))
    g16 = np.concatenate([rng.integers(0, 256, (9, 6)), rng.integers(0, 65536, (9, 7))], 1).astype(np.uint16)
    cases.append(("gray16.png", png_16bit(g16[..., None], 0),
                  "16-bit grey PNG: PIL opens it as I;16 and clips values above 255 to 255 converting to RGB"))
    cases.append(("progressive.jpg", encode(Image.fromarray(textured(rng, 24, 40)), "JPEG", quality=85,
                                           progressive=True), "progressive JPEG"))
    cases.append(("gray.jpg", encode(Image.fromarray(textured(rng, 16, 24, 1)[..., 0], "L"), "JPEG"), "greyscale JPEG"))
    cases.append(("subsampling444.jpg", encode(Image.fromarray(textured(rng, 16, 24)), "JPEG", subsampling=0),
                  "4:4:4 JPEG"))
    cases.append(("subsampling422.jpg", encode(Image.fromarray(textured(rng, 17, 23)), "JPEG", subsampling=1),
                  "4:2:2 JPEG with odd sides"))
    cases.append(("exif3.webp", encode(Image.fromarray(px), "WEBP", lossless=True, exif=exif_with_orientation(3)),
                  "lossless WebP with EXIF orientation 3"))
    frames = [Image.fromarray(textured(rng, 9, 13)) for _ in range(2)]
    cases.append(("animated.webp", encode(frames[0], "WEBP", save_all=True, append_images=frames[1:], lossless=True,
                                          duration=50), "animated WebP (2 frames): the first"))
    cases.append(("exif8.jpg", encode(Image.fromarray(px), "JPEG", exif=exif_with_orientation(8)),
                  "JPEG with EXIF orientation 8"))
    small = Image.fromarray(px).quantize(colors=7, dither=Image.Dither.NONE)
    cases.append(("transparent.gif", encode(small, "GIF", transparency=2), "GIF with a transparent index (ignored)"))
    return cases


def pil_decode(data):
    """HF's load_image on a data: URL (PIL open, exif_transpose, convert RGB), as uint8 [H, W, 3]."""
    url = "data:image/x;base64," + base64.b64encode(data).decode()
    return np.asarray(load_image(url), dtype=np.uint8)


def torchvision_decode(data):
    """HF's torchvision-backend fetch_images path (load_image_as_tensor: torchvision.io.decode_image, RGB, EXIF)."""
    try:
        t = load_image_as_tensor("data:image/x;base64," + base64.b64encode(data).decode())
    except Exception as e:  # recorded, not fatal: the fixture's oracle is PIL's decode
        return None, f"{type(e).__name__}: {e}"
    if t.ndim == 4:
        return None, f"returned {tuple(t.shape)} (all frames)"
    return t.permute(1, 2, 0).contiguous().numpy(), None


# ------------------------------------------------------------------------------------------------------------
# Preprocessing


class ResizeRecorder:
    """Wraps the processor's resize to record the uint8 image the torchvision backend produced."""

    def __init__(self, processor):
        self.images = []
        original = processor.resize

        def resize(images, **kw):
            out = original(images=images, **kw)
            self.images.extend(out)
            return out

        processor.resize = resize


def preprocess(config, rgb):
    processor = Qwen2VLImageProcessor(**{k: v for k, v in config.items() if k != "processor_class"})
    assert processor.backend == "torchvision", processor.backend
    recorder = ResizeRecorder(processor)
    # The decoded pixels as a CHW uint8 tensor: the processor then does only what it does to every image.
    out = processor(images=[torch.from_numpy(rgb).permute(2, 0, 1).contiguous()], return_tensors="pt")
    resized = recorder.images[0].permute(1, 2, 0).contiguous().numpy() if recorder.images else rgb
    return out["pixel_values"], out["image_grid_thw"], resized


def fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def signed64(u):
    return u - (1 << 64) if u >= 1 << 63 else u


# ------------------------------------------------------------------------------------------------------------
# Model


def build_model(seed):
    torch.manual_seed(seed)
    vocab = TEXT["vocab_size"]
    cfg = Qwen3_5Config(text_config=dict(TEXT, tie_word_embeddings=True), vision_config=VISION,
                        tie_word_embeddings=True, image_token_id=vocab - 4, video_token_id=vocab - 3,
                        vision_start_token_id=vocab - 2, vision_end_token_id=vocab - 1)
    model = Qwen3_5ForConditionalGeneration(cfg)
    model.set_attn_implementation("eager")
    return model.eval()


@torch.no_grad()
def randomise_vision(model, seed):
    """HF initialises LayerNorm weights to 1, biases to 0 and the position table with std 0.02, which hides
    bugs in those paths: every vision parameter is redrawn."""
    g = torch.Generator().manual_seed(seed + 104729)
    for name, p in model.model.visual.named_parameters():
        shape = tuple(p.shape)
        if name.endswith(("norm1.weight", "norm2.weight", "norm.weight")):
            new = torch.randn(shape, generator=g) * 0.2 + 1.0
        elif name.endswith(".bias"):
            new = torch.randn(shape, generator=g) * 0.1
        elif name == "pos_embed.weight":
            new = torch.randn(shape, generator=g)
        else:  # Linear [out, in] and the Conv3d [D, C, T, P, P]
            fan_in = int(np.prod(shape[1:]))
            new = torch.randn(shape, generator=g) * fan_in ** -0.5
        p.copy_(new)


def tower_internals(model, pixel_values, grid):
    """Patch embeddings, interpolated position embeddings, rotary cos/sin and every block's output."""
    visual = model.model.visual
    rec = {}
    hooks = [visual.patch_embed.register_forward_hook(lambda m, i, o: rec.__setitem__("patch_embed", o.clone())),
             visual.rotary_pos_emb.register_forward_hook(lambda m, i, o: rec.__setitem__("rotary_cos", o[0].clone()))]
    for b, blk in enumerate(visual.blocks):
        hooks.append(blk.register_forward_hook(lambda m, i, o, b=b: rec.__setitem__(f"block{b}", o.clone())))
    out = visual(pixel_values, grid_thw=grid)
    for h in hooks:
        h.remove()
    # The position embeddings added to the patch embeddings: recomputed as the forward does.
    from transformers.vision_utils import get_vision_interpolation_indices_and_weights
    idx, w = get_vision_interpolation_indices_and_weights(grid, visual.num_grid_per_side, mode="bilinear",
                                                          align_corners=True,
                                                          spatial_merge_size=visual.config.spatial_merge_size)
    rec["pos_embed"] = (visual.pos_embed(idx) * w[:, :, None]).sum(1)
    return out, rec


def prompt_ids(rng, parts, image_token, start, end, grids, merge):
    """Token ids and mm_token_type_ids for text runs (int: a length) and images (str: an index into grids)."""
    ids, types = [], []
    for part in parts:
        if isinstance(part, int):
            ids += rng.integers(0, TEXT["vocab_size"] - mf.RESERVED_TOP, size=part).tolist()
            types += [0] * part
        else:
            t, h, w = grids[int(part)]
            n = t * h * w // (merge * merge)
            ids += [start] + [image_token] * n + [end]
            types += [0] + [1] * n + [0]
    return torch.tensor([ids]), torch.tensor([types], dtype=torch.int32)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    root = Path(__file__).resolve().parents[2]
    ap.add_argument("--out", type=Path, default=root / "tests" / "fixtures" / "vision")
    args = ap.parse_args()
    mf.check_torch_fallbacks()
    torch.set_default_dtype(torch.float32)
    transformers.logging.set_verbosity_error()
    t0 = time.perf_counter()
    out_dir = args.out
    if out_dir.exists():
        shutil.rmtree(out_dir)
    (out_dir / "images").mkdir(parents=True)
    rng = np.random.default_rng(SEED)

    tensors, manifest_cases, notes = {}, [], []
    # --- images, decoding and preprocessing ------------------------------------------------------------------
    cases = make_images(rng)
    decoded = {}
    for name, data, what in cases:
        (out_dir / "images" / name).write_bytes(data)
        rgb = pil_decode(data)
        tv, tv_error = torchvision_decode(data)
        tv_agrees = None if tv is None else bool(tv.shape == rgb.shape and np.array_equal(tv, rgb))
        decoded[name] = rgb
        pv, grid, resized = preprocess(PREPROCESSOR, rgb)
        # The normalisation is torch's fused (x - mean/rescale) / (std/rescale) in fp32: check that the recorded
        # uint8 image reproduces pixel_values exactly, so the C++ test may compare the resize alone as well.
        tensors[f"{name}.decoded"] = torch.from_numpy(rgb.copy())
        if resized.shape != rgb.shape:  # otherwise the resize returned the image untouched
            tensors[f"{name}.resized"] = torch.from_numpy(resized.copy())
        tensors[f"{name}.image_grid_thw"] = grid[0].to(torch.int64)
        tensors[f"{name}.pixel_values_head"] = pv[0, :64].contiguous()  # for readable failures
        pv_hash = fnv1a64(pv.contiguous().numpy().tobytes())
        tensors[f"{name}.pixel_values_fnv1a64"] = torch.tensor([signed64(pv_hash)], dtype=torch.int64)
        manifest_cases.append(dict(image=name, bytes=len(data), covers=what, decoded_hw=list(rgb.shape[:2]),
                                   resized_hw=list(resized.shape[:2]), image_grid_thw=grid[0].tolist(),
                                   pixel_values_shape=list(pv.shape), pixel_values_fnv1a64=f"{pv_hash:016x}",
                                   torchvision_decode_equals_pil=tv_agrees, torchvision_decode_error=tv_error))
        log(f"{name}: {len(data)} bytes, decoded {rgb.shape}, resized {resized.shape[:2]}, grid {grid[0].tolist()}, "
            f"torchvision decode == PIL: {tv_agrees}{' (' + tv_error + ')' if tv_error else ''}")
    # The second processor config on the first image.
    first = cases[0][0]
    pv, grid, resized = preprocess(PREPROCESSOR_CLIP, decoded[first])
    tensors[f"{first}.clip.image_grid_thw"] = grid[0].to(torch.int64)
    tensors[f"{first}.clip.pixel_values_head"] = pv[0, :64].contiguous()
    tensors[f"{first}.clip.pixel_values_fnv1a64"] = torch.tensor(
        [signed64(fnv1a64(pv.contiguous().numpy().tobytes()))], dtype=torch.int64)
    log(f"{first} with preprocessor_config_clip.json: resized {resized.shape[:2]}, grid {grid[0].tolist()}")

    orientation = []
    for name, data in make_orientation_images(rng):
        (out_dir / "images" / name).write_bytes(data)
        rgb = pil_decode(data)
        tv, tv_error = torchvision_decode(data)
        tensors[f"{name}.decoded"] = torch.from_numpy(rgb.copy())
        orientation.append(dict(image=name, decoded_hw=list(rgb.shape[:2]),
                                torchvision_decode_equals_pil=None if tv is None else bool(
                                    tv.shape == rgb.shape and np.array_equal(tv, rgb)),
                                torchvision_decode_error=tv_error))

    decode_only = []
    (out_dir / "images" / "decode").mkdir()
    for name, data, what in make_decode_images(rng):
        (out_dir / "images" / "decode" / name).write_bytes(data)
        rgb = pil_decode(data)
        tv, tv_error = torchvision_decode(data)
        tensors[f"decode/{name}.decoded"] = torch.from_numpy(rgb.copy())
        decode_only.append(dict(image=name, covers=what, decoded_hw=list(rgb.shape[:2]),
                                torchvision_decode_equals_pil=None if tv is None else bool(
                                    tv.shape == rgb.shape and np.array_equal(tv, rgb)),
                                torchvision_decode_error=tv_error))
        log(f"decode/{name}: {len(data)} bytes, decoded {rgb.shape}, torchvision == PIL: "
            f"{decode_only[-1]['torchvision_decode_equals_pil']}{' (' + tv_error + ')' if tv_error else ''}")
    # CMYK JPEG: PIL converts it; the C++ decoder refuses it by name (docs/vision.md).
    cmyk = encode(Image.fromarray(textured(rng, 8, 8)).convert("CMYK"), "JPEG")
    (out_dir / "images" / "decode" / "cmyk.jpg").write_bytes(cmyk)

    # --- the model -----------------------------------------------------------------------------------------
    fx = dict(name="vision", layout="vlm", storage="bf16_mixed", tie=True, text=TEXT, vision=VISION)
    model = build_model(SEED)
    mf.randomise(model, fx, SEED)
    randomise_vision(model, SEED)
    mf.round_to_bf16_storage(model)
    tmp = out_dir / "checkpoint"
    mf.save_checkpoint(model, fx, tmp)
    for f in tmp.iterdir():
        shutil.move(str(f), out_dir / f.name)
    tmp.rmdir()
    (out_dir / "preprocessor_config.json").write_text(json.dumps(PREPROCESSOR, indent=2) + "\n")
    (out_dir / "preprocessor_config_clip.json").write_text(json.dumps(PREPROCESSOR_CLIP, indent=2) + "\n")
    ref = Qwen3_5ForConditionalGeneration.from_pretrained(out_dir, dtype=torch.float32,
                                                          attn_implementation="eager").eval()
    visual = ref.model.visual
    assert visual.num_grid_per_side == 5
    theta = visual.config.rope_parameters["rope_theta"]
    dh = VISION["hidden_size"] // VISION["num_heads"]
    expect_inv = 1.0 / (theta ** (torch.arange(0, dh // 2, 2, dtype=torch.float) / (dh // 2)))
    assert torch.equal(visual.rotary_pos_emb.inv_freq, expect_inv), "vision inv_freq is not theta^(-4j/dh)"

    # --- the tower per image, all images in one call, and internals of the first ------------------------
    with torch.no_grad():
        grids, pvs = {}, {}
        for name, _, _ in cases:
            pv, grid, _ = preprocess(PREPROCESSOR, decoded[name])
            grids[name], pvs[name] = grid, pv
            out = visual(pv, grid_thw=grid)
            tensors[f"{name}.last_hidden_state"] = out.last_hidden_state.contiguous()
            tensors[f"{name}.pooler_output"] = out.pooler_output.contiguous()
        names = [c[0] for c in cases]
        all_pv = torch.cat([pvs[n] for n in names])
        all_grid = torch.cat([grids[n] for n in names])
        together = visual(all_pv, grid_thw=all_grid)
        alone = torch.cat([tensors[f"{n}.last_hidden_state"] for n in names])
        segment_err = float((together.last_hidden_state - alone).abs().max())
        # HF's segments are exact (checked here): the C++ test runs all images in one call against the per-image
        # outputs, so they are not stored twice.
        assert torch.equal(together.last_hidden_state, alone), segment_err
        _, internals = tower_internals(ref, pvs[first], grids[first])
        for k, v in internals.items():
            tensors[f"{first}.{k}"] = v.contiguous()
    log(f"tower: all {len(names)} images in one call vs one by one: max abs diff {segment_err:.3g}")

    # --- prompts with images: input ids, mRoPE positions, logits, greedy continuation ---------------------
    cfg = ref.config
    # (images, parts, earlier turn): parts are text runs (a length) and images (an index into images); a prompt
    # with an earlier turn starts with that prompt's ids and HF's greedy answer to it, as a chat's next turn does.
    # Prompts are drawn in this order from the one generator: new ones go last so earlier draws keep their values.
    prompts = {
        "one_image": (["rgb_64x96.png"], [4, "0", 6], None),
        "two_images": (["gray_80x112.png", "up_30x40.jpg"], [3, "0", 2, "1", 5], None),
        # The second turn of a chat: turn one (one_image and its answer), a question longer than a prefill chunk
        # of the engine tests, and a second image of another size.
        "multi_turn": (["rgb_64x96.png", "gray_80x112.png"], [70, "1", 3], "one_image"),
        # Text alone to the vision model: the request batched beside image requests.
        "text_only": ([], [37], None),
    }
    prompt_info, greedy_of = {}, {}
    with torch.no_grad():
        for pname, (imgs, parts, earlier) in prompts.items():
            grid = torch.cat([grids[n] for n in imgs]) if imgs else None
            pv = torch.cat([pvs[n] for n in imgs]) if imgs else None
            ids, types = prompt_ids(rng, parts, cfg.image_token_id, cfg.vision_start_token_id, cfg.vision_end_token_id,
                                    [g.tolist() for g in grid] if imgs else [], VISION["spatial_merge_size"])
            if earlier:
                ids = torch.cat([tensors[f"{earlier}.input_ids"], greedy_of[earlier], ids[0]])[None]
                types = torch.cat([tensors[f"{earlier}.mm_token_type_ids"].to(torch.int32),
                                   torch.zeros(len(greedy_of[earlier]), dtype=torch.int32), types[0]])[None]
            pos, deltas = ref.model.get_rope_index(ids, types, image_grid_thw=grid)
            vision_inputs = dict(pixel_values=pv, image_grid_thw=grid) if imgs else {}
            logits = ref(input_ids=ids, mm_token_type_ids=types, use_cache=False, **vision_inputs).logits[0].float()
            gen = ref.generate(input_ids=ids, attention_mask=torch.ones_like(ids), mm_token_type_ids=types,
                               **vision_inputs, do_sample=False, max_new_tokens=8,
                               min_new_tokens=8, pad_token_id=0, eos_token_id=None, return_dict_in_generate=True,
                               output_logits=True)
            new = gen.sequences[0, ids.shape[1]:]
            margins = [float((lambda t: t[0] - t[1])(torch.topk(l[0].float(), 2).values)) for l in gen.logits]
            tensors[f"{pname}.input_ids"] = ids[0].to(torch.int64)
            tensors[f"{pname}.mm_token_type_ids"] = types[0].to(torch.int64)
            if imgs:
                tensors[f"{pname}.image_grid_thw"] = grid.to(torch.int64)
            tensors[f"{pname}.position_ids"] = pos[:, 0].to(torch.int64).contiguous()
            tensors[f"{pname}.rope_delta"] = deltas.reshape(1).to(torch.int64)
            tensors[f"{pname}.logits"] = logits.contiguous()
            tensors[f"{pname}.greedy"] = new.to(torch.int64).contiguous()
            greedy_of[pname] = tensors[f"{pname}.greedy"]
            prompt_info[pname] = dict(images=imgs, earlier_turn=earlier, length=int(ids.shape[1]),
                                      rope_delta=int(deltas.item()),
                                      max_abs_logit=float(logits.abs().max()), min_greedy_margin=min(margins))
            log(f"{pname}: {ids.shape[1]} tokens, rope_delta {int(deltas.item())}, greedy {new.tolist()}, "
                f"min greedy margin {min(margins):.3g}")

    # Not "reference.safetensors": the text-model tests take every fixture holding that file for prompt<k>.* logits.
    save_file(tensors, str(out_dir / "vision_reference.safetensors"), metadata={"format": "pt"})
    manifest = dict(
        description="Vision fixtures (make_vision_fixtures.py): decoding, preprocessing, tower, prompts with images",
        versions=dict(python=platform.python_version(), torch=torch.__version__, torchvision=torchvision.__version__,
                      transformers=transformers.__version__, pillow=PIL.__version__, numpy=np.__version__),
        pillow_features={k: PIL.features.version(k) for k in ("libjpeg_turbo", "webp", "zlib", "libimagequant")},
        seed=SEED, vision_config=VISION, text_config={k: TEXT[k] for k in ("vocab_size", "hidden_size", "layer_types")},
        preprocessor=PREPROCESSOR, preprocessor_clip=PREPROCESSOR_CLIP, vision_rope_theta=theta,
        decode_oracle="HF load_image on a data: URL (PIL open, ImageOps.exif_transpose, convert('RGB'))",
        preprocess_oracle="Qwen2VLImageProcessor (torchvision backend, CPU) on the decoded pixels as a CHW uint8 tensor",
        tower_oracle="model.model.visual on the reloaded checkpoint in fp32 (BF16-stored values), eager attention",
        all_images_vs_one_by_one_max_abs=segment_err,
        cases=manifest_cases, orientation_cases=orientation, decode_only_cases=decode_only,
        refused_cases=[dict(image='decode/cmyk.jpg', covers='CMYK JPEG: refused by name (PIL converts it)')], prompts=prompt_info,
        config_sha256=mf.sha256_file(out_dir / "config.json"),
        model_safetensors_sha256=mf.sha256_file(out_dir / "model.safetensors"),
        notes=notes,
    )
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    for f in list(out_dir.rglob("*")):
        if f.is_file():
            os.chmod(f, 0o644)
    sizes = {str(f.relative_to(out_dir)): f.stat().st_size for f in sorted(out_dir.rglob("*")) if f.is_file()}
    log(f"done in {time.perf_counter() - t0:.1f}s: {sum(sizes.values()) / 1e3:.0f} KB {sizes}")


if __name__ == "__main__":
    main()

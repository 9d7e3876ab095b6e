#!/usr/bin/env python3
"""Images end to end through `deltaserve serve` with the official `openai` client on 127.0.0.1.

The model is the `tiny` random checkpoint, whose config has a vision tower (make-checkpoint writes its
random weights), with the HF vision fixture's preprocessor_config.json beside it. Its text is
meaningless, so the checks are on the plumbing: an image reaches the model (the first token's
log-probabilities move with the image and not with a re-send of the same image), the prompt holds
each image's token count, the prefix cache hits a repeated image and not another, file:// URLs stay
inside --allowed-local-media-path, and every bad body is a 400 naming the part — after which the
server still answers. A --text-only checkpoint refuses images by name.

Usage: vision_e2e_test.py DELTASERVE_BINARY REPO_DIR
"""
import base64
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

import openai

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from replicas import Replica, check, failures, http  # noqa: E402

BIN, REPO = sys.argv[1], sys.argv[2]
IMAGES = os.path.join(REPO, "tests", "fixtures", "vision", "images")


class Server(Replica):
    """A `deltaserve serve` replica (replicas.py) with an `openai` client."""

    def __init__(self, model, *args):
        super().__init__(BIN, model, "--cache-memory", "256MiB", *args, name="vision")
        self.start()
        self.client = openai.OpenAI(base_url=f"{self.url}/v1", api_key="none", max_retries=0, timeout=120)


def data_url(path, media="image/png"):
    with open(path, "rb") as f:
        return f"data:{media};base64," + base64.b64encode(f.read()).decode()


def image_part(url):
    return {"type": "image_url", "image_url": {"url": url}}


def user(*parts):
    return [{"role": "user", "content": [{"type": "text", "text": "Describe the picture."}, *parts]}]


def png_claiming(width, height):
    """A PNG whose header (valid, CRCs right) claims width x height, with no pixel data."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IEND", b"")


def first_logprobs(server, messages):
    r = server.client.chat.completions.create(model="tiny", messages=messages, max_tokens=1, temperature=0,
                                              logprobs=True, top_logprobs=5)
    top = r.choices[0].logprobs.content[0].top_logprobs
    return [(t.token, round(t.logprob, 5)) for t in top], r.usage


def expect_400(server, messages, text, param=None):
    try:
        server.client.chat.completions.create(model="tiny", messages=messages, max_tokens=2)
        check(False, f"expected a 400 with '{text}'")
    except openai.BadRequestError as e:
        body = e.body if isinstance(e.body, dict) else {}
        check(text in str(e), f"400 says '{text}': {e}")
        if param is not None:
            check(body.get("param") == param, f"400 names {param}: {body.get('param')}")


def run_image_tests(server, media):
    rgb, gray = os.path.join(IMAGES, "rgb_64x96.png"), os.path.join(IMAGES, "gray_80x112.png")
    # The image reaches the model: the same image twice gives the same distribution, another a different one.
    a1, usage = first_logprobs(server, user(image_part(data_url(rgb))))
    a2, _ = first_logprobs(server, user(image_part(data_url(rgb))))
    b, _ = first_logprobs(server, user(image_part(data_url(gray))))
    print(f"first token's top logprobs: {a1[:2]} (image A), {b[:2]} (image B)", flush=True)
    check(a1 == a2, f"the same image twice gives the same first-token logprobs: {a1} vs {a2}")
    check(a1 != b, f"another image gives other logprobs: {a1} vs {b}")
    # 64 x 96 → 4 x 6 patches → 6 tokens in place of the template's one <|image_pad|>.
    status, raw, _ = http(server.port, "POST", "/tokenize", json.dumps({"messages": user(image_part(data_url(rgb)))}))
    tokens = json.loads(raw)["tokens"] if status == 200 else []
    check(status == 200 and tokens.count(248056) == 6, f"/tokenize expands the image to 6 pads: {status} {raw[:200]}")
    check(usage.prompt_tokens == len(tokens), f"usage counts the expanded prompt: {usage.prompt_tokens} vs {len(tokens)}")
    status, raw, _ = http(server.port, "POST", "/tokenize", json.dumps({"messages": user(image_part(data_url(gray)))}))
    gray_pads = json.loads(raw)["tokens"].count(248056) if status == 200 else -1
    status, raw, _ = http(server.port, "POST", "/v1/chat/completions/render",
                       json.dumps({"messages": user(image_part(data_url(rgb)), image_part(data_url(gray)))}))
    check(status == 200 and json.loads(raw)["token_ids"].count(248056) == 6 + gray_pads,
          f"render expands both images (6 + {gray_pads} pads): {raw[:200]}")

    # Streaming with an image.
    chunks = list(server.client.chat.completions.create(model="tiny", messages=user(image_part(data_url(gray))),
                                                        max_tokens=4, temperature=0, stream=True))
    check(chunks and chunks[-1].choices[0].finish_reason == "length", "a streamed image request finishes")

    # The prefix cache: a long prompt with the image early hits on a repeat, never with another image.
    long_text = {"type": "text", "text": " ".join(f"word{i}" for i in range(120))}
    def cached(path):
        r = server.client.chat.completions.create(model="tiny", messages=user(image_part(data_url(path)), long_text),
                                                  max_tokens=1, temperature=0)
        details = r.usage.prompt_tokens_details
        return details.cached_tokens if details else 0
    first, repeat, other = cached(rgb), cached(rgb), cached(os.path.join(IMAGES, "lossy_64x64.webp"))
    print(f"prefix cache: cached tokens {first} cold, {repeat} on a repeat, {other} with another image", flush=True)
    check(first == 0 and repeat > 0, f"a repeated image hits the prefix cache: {first}, then {repeat}")
    check(other == 0, f"another image under the same text does not hit: {other}")

    # file:// under --allowed-local-media-path only.
    r = server.client.chat.completions.create(model="tiny", messages=user(image_part("file://" + os.path.join(media, "cat.jpg"))),
                                              max_tokens=2)
    check(r.choices[0].finish_reason in ("length", "stop"), "a file:// image under the allowed directory is served")
    expect_400(server, user(image_part("file://" + os.path.join(media, "escape.png"))), "expected a file under --allowed-local-media-path",
               "messages[0].content[1].image_url.url")
    expect_400(server, user(image_part("file:///etc/hostname")), "expected a file under --allowed-local-media-path")

    # Every bad body is a clear 400, and the server survives them all.
    expect_400(server, user(image_part("https://example.com/cat.png")), "not fetched by this server")
    expect_400(server, user(image_part("data:image/png;base64,%%%%")), "base64: expected A-Z")
    expect_400(server, user(image_part("data:image/png,abc")), "expected a base64 data: URL")
    expect_400(server, user(image_part("data:;base64,")), "")
    expect_400(server, user(image_part(data_url(rgb)[:400])), "PNG")
    expect_400(server, user(image_part("data:image/png;base64," + base64.b64encode(png_claiming(100000, 100000)).decode())),
               "pixels")
    expect_400(server, user(image_part(data_url(rgb)), image_part(data_url(rgb)), image_part(data_url(rgb))),
               "expected at most 2 images per request (--limit-mm-per-prompt), found 3", "messages")
    expect_400(server, [{"role": "user", "content": [{"type": "image_url", "image_url": "nope"}]}], "expected {\"url\"")
    expect_400(server, [{"role": "system", "content": [image_part(data_url(rgb))]}, {"role": "user", "content": "hi"}],
               "System message cannot contain images")
    expect_400(server, [{"role": "user", "content": "<|vision_start|><|image_pad|><|vision_end|>"}], "carries no image")
    r = server.client.chat.completions.create(model="tiny", messages=user(image_part(data_url(rgb))), max_tokens=2)
    check(r.choices[0].finish_reason in ("length", "stop"), "the server still answers after the bad bodies")
    check(server.process.poll() is None, "the server is alive")


def main():
    work = tempfile.mkdtemp(prefix="deltaserve-vision-e2e-")
    try:
        model = os.path.join(work, "tiny")
        subprocess.run([BIN, "make-checkpoint", "--shape", "tiny", "--out", model, "--seed", "5", "-q"], check=True)
        shutil.copy(os.path.join(REPO, "tests", "fixtures", "vision", "preprocessor_config.json"), model)
        media = os.path.join(work, "media")
        os.mkdir(media)
        shutil.copy(os.path.join(IMAGES, "up_30x40.jpg"), os.path.join(media, "cat.jpg"))
        shutil.copy(os.path.join(IMAGES, "rgb_64x96.png"), os.path.join(work, "outside.png"))
        os.symlink(os.path.join(work, "outside.png"), os.path.join(media, "escape.png"))
        server = Server(model, "--allowed-local-media-path", media,
                        "--limit-mm-per-prompt", '{"image": 2}')
        try:
            check("vision: tower bound" in server.log_text(), "the start-up log names the tower it bound")
            run_image_tests(server, media)
        finally:
            server.stop()

        text_only = os.path.join(work, "text-only")
        subprocess.run([BIN, "make-checkpoint", "--shape", "tiny", "--text-only", "--out", text_only, "--seed", "5", "-q"],
                       check=True)
        server = Server(text_only)
        try:
            expect_400(server, user(image_part(data_url(os.path.join(IMAGES, "rgb_64x96.png")))),
                       "this model takes text only", "messages[0].content[1]")
            r = server.client.chat.completions.create(model="tiny", messages=[{"role": "user", "content": "hi"}], max_tokens=2)
            check(r.choices[0].finish_reason in ("length", "stop"), "a text-only checkpoint still answers text")
        finally:
            server.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"vision e2e: {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Images on the command line: `logits --messages` and `generate --image` on the `tiny` random
checkpoint (a vision tower; the HF fixture's preprocessor_config.json beside it).

- `logits --messages` (image part as a local path, a file:// URL and a data: URL: the same logits) writes
  [n, vocab] with the image expanded to its 6 tokens; fed in chunks that split the image's run it gives
  the one-call logits (within 1e-5 of the row's largest);
- `generate --chat --image` (the engine's path) picks the argmax of the last row of `logits --messages`
  (the direct path), with a margin check so the comparison means something;
- errors are one clear line: an image for a text-only checkpoint, an http URL, a missing file.
No numpy: .npy files are read with struct/array.

Usage: vision_cli_test.py DELTASERVE_BINARY REPO_DIR
"""
import array
import ast
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile

BIN, REPO = sys.argv[1], sys.argv[2]
IMAGES = os.path.join(REPO, "tests", "fixtures", "vision", "images")
IMAGE_PAD = 248056
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print(f"FAIL: {what}", flush=True)


def run(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True)


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    header_len = int.from_bytes(data[8:10], "little")
    header = ast.literal_eval(data[10:10 + header_len].decode())
    values = array.array("f")
    values.frombytes(data[10 + header_len:])
    rows, cols = header["shape"]
    return [values[r * cols:(r + 1) * cols] for r in range(rows)]


def chat(url):
    return [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}, {"type": "text", "text": "What is it?"}]}]


def logits(model, work, messages, *extra):
    path = os.path.join(work, "messages.json")
    with open(path, "w") as f:
        json.dump(messages, f)
    out = os.path.join(work, "l.npy")
    r = run("logits", "--model", model, "--messages", path, "--out", out, *extra)
    check(r.returncode == 0, f"logits {' '.join(extra)}: {r.stderr[-500:]}")
    return (read_npy(out) if r.returncode == 0 else []), r.stderr


def worst(a, b):
    return max(max(abs(x - y) for x, y in zip(ra, rb)) / max(abs(y) for y in rb) for ra, rb in zip(a, b))


def main():
    work = tempfile.mkdtemp(prefix="deltaserve-vision-cli-")
    try:
        model = os.path.join(work, "tiny")
        subprocess.run([BIN, "make-checkpoint", "--shape", "tiny", "--out", model, "--seed", "5", "-q"], check=True)
        shutil.copy(os.path.join(REPO, "tests", "fixtures", "vision", "preprocessor_config.json"), model)
        image = os.path.join(IMAGES, "rgb_64x96.png")

        whole, log = logits(model, work, chat(image))
        check("1 image(s), rope_delta -3" in log, f"logits names the image and the decode offset: {log[-300:]}")
        check(len(whole) == 24, f"24 positions (the image's 6 tokens in place of one pad): {len(whole)}")
        as_url, _ = logits(model, work, chat("file://" + image))
        with open(image, "rb") as f:
            as_data, _ = logits(model, work, chat("data:image/png;base64," + base64.b64encode(f.read()).decode()))
        check(as_url == whole and as_data == whole, "a local path, a file:// URL and a data: URL give the same logits")
        # The image's 6 pads sit at 8..13 (after "<|im_start|>user\n<|vision_start|>"): 10 + 14 splits them.
        chunked, _ = logits(model, work, chat(image), "--chunks", "10,14")
        error = worst(chunked, whole) if chunked and whole else 1.0
        print(f"logits fed 10 + 14 vs one call: {error:.2e} relative", flush=True)
        check(error <= 1e-5, f"chunks splitting the image's run give the one-call logits: {error:.2e}")

        last = whole[-1] if whole else [0.0]
        order = sorted(range(len(last)), key=lambda i: -last[i])[:2]
        r = run("generate", "--model", model, "--chat", "--prompt", "What is it?", "--image", image, "--max-tokens", "1",
                "--temperature", "0", "--ids")
        check(r.returncode == 0, f"generate --image: {r.stderr[-500:]}")
        first = int(r.stdout.strip().split(",")[0]) if r.returncode == 0 else -1
        margin = last[order[0]] - last[order[1]]
        print(f"generate --image: first token {first}; logits' argmax {order[0]} (margin {margin:.3g})", flush=True)
        check(first == order[0], f"generate --image picks the argmax of logits --messages: {first} vs {order[0]}")
        check(margin > 1e-3, f"the argmax is no near-tie (margin {margin})")

        # Errors: one clear line each.
        r = run("logits", "--model", model, "--messages", "/nonexistent.json", "--out", os.path.join(work, "x.npy"))
        check(r.returncode == 1 and "cannot read" in r.stderr, f"a missing --messages file: {r.stderr[-300:]}")
        with open(os.path.join(work, "http.json"), "w") as f:
            json.dump(chat("https://example.com/cat.png"), f)
        r = run("logits", "--model", model, "--messages", os.path.join(work, "http.json"), "--out", os.path.join(work, "x.npy"))
        check(r.returncode == 1 and "not fetched" in r.stderr, f"an http URL: {r.stderr[-300:]}")
        text_only = os.path.join(work, "text-only")
        subprocess.run([BIN, "make-checkpoint", "--shape", "tiny", "--text-only", "--out", text_only, "--seed", "5", "-q"],
                       check=True)
        r = run("generate", "--model", text_only, "--chat", "--prompt", "x", "--image", image, "--max-tokens", "1")
        check(r.returncode == 1 and "takes text only" in r.stderr, f"generate --image on a text-only checkpoint: {r.stderr[-300:]}")
        r = run("generate", "--model", model, "--prompt", "no placeholder", "--image", image, "--max-tokens", "1")
        check(r.returncode == 1 and "image placeholder" in r.stderr, f"--image without a placeholder: {r.stderr[-300:]}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"vision cli: {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Text by domain from this Debian machine's own files, split in two, for `deltaserve token-map`'s
coverage measurement (docs/mtp.md, "Draft vocabulary coverage").

Domains: English man pages (rendered by man-db, `col -b`), man pages in German, French, Russian,
Japanese and Chinese (whatever the installed packages ship), Python 3.11's standard library (code) and
the C headers under /usr/include. Each file goes to the counted half or the held-out half by the
parity of the SHA-256 of its path, so the split is fixed and no text is in both. Writes
OUT/<domain>.count.txt and OUT/<domain>.held.txt and prints their sizes. Python stdlib only.

  python3 tools/token_map/debian_corpus.py /tmp/corpus [--cap-mb 8]
"""
import argparse
import gzip
import hashlib
import os
import pathlib
import subprocess
import sys

MAN = {"en": "/usr/share/man", "de": "/usr/share/man/de", "fr": "/usr/share/man/fr", "ru": "/usr/share/man/ru",
       "ja": "/usr/share/man/ja", "zh": ["/usr/share/man/zh_CN", "/usr/share/man/zh_TW"]}
CODE = {"python": ("/usr/lib/python3.11", ".py"), "c-headers": ("/usr/include", ".h")}


def man_pages(roots):
    for root in roots if isinstance(roots, list) else [roots]:
        for section in sorted(pathlib.Path(root).glob("man[1-8]")):
            yield from sorted(section.glob("*.gz"))


def render(page):
    env = dict(os.environ, MANWIDTH="100", LANG="C.UTF-8", MAN_KEEP_FORMATTING="")
    try:
        text = subprocess.run(["man", "-l", str(page)], env=env, capture_output=True, timeout=20).stdout
        return subprocess.run(["col", "-b"], input=text, capture_output=True, timeout=20).stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return ""


def held_out(path):
    return hashlib.sha256(str(path).encode()).digest()[0] % 2 == 1


def write(out, domain, items, cap):
    halves = {"count": [], "held": []}
    sizes = {"count": 0, "held": 0}
    for path, text in items:
        half = "held" if held_out(path) else "count"
        if not text.strip() or sizes[half] >= cap:
            continue
        halves[half].append(text)
        sizes[half] += len(text.encode())
        if min(sizes.values()) >= cap:
            break
    for half, texts in halves.items():
        (out / f"{domain}.{half}.txt").write_text("".join(t if t.endswith("\n") else t + "\n" for t in texts))
    print(f"{domain}: counted {sizes['count'] / 1e6:.2f} MB, held out {sizes['held'] / 1e6:.2f} MB", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--cap-mb", type=float, default=8.0, help="at most this many MB per half and domain")
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cap = int(args.cap_mb * 1e6)
    for domain, roots in MAN.items():
        write(out, f"man-{domain}", ((p, render(p)) for p in man_pages(roots)), cap)
    for domain, (root, suffix) in CODE.items():
        files = sorted(p for p in pathlib.Path(root).rglob("*" + suffix) if p.is_file())
        write(out, domain, ((p, p.read_text(encoding="utf-8", errors="replace")) for p in files), cap)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Train deltaserve's own byte-level BPE with the Qwen3.5 tokenizer pipeline.

The result is NOT Qwen's vocabulary. It is a smaller vocabulary (default 32,000
merges) built with exactly the Qwen3.5 normalizer / pre-tokenizer / decoder /
model settings (docs/qwen35-architecture.md section 7.1), with Qwen3.5's 33
added tokens at their real ids 248044..248076. The engine's tokenizer code can
be tested against it without the real (un-redistributable here) Qwen files.

Stages (all run by default):
  collect   gather text from installed Debian packages into WORKDIR/corpus.txt
  train     train BPE with HF `tokenizers` (BpeTrainer)
  finalize  place the added tokens at 248044.., write tokenizer.json and
            tokenizer_config.json into OUT_DIR
  verify    reload with Tokenizer.from_file and run checks

Only dependency: `tokenizers` (pinned in tools/tokenizer/README.md). Needs the
Debian packages in REQUIRED_PACKAGES installed (the corpus is read from them).

Usage:
  /work/venvs/tokenizer/bin/python tools/tokenizer/train_bpe.py \
      [--workdir /tmp/deltaserve-bpe] [--out-dir data/tokenizer] [--merges 32000]
"""

import argparse
import gzip
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import time
import unicodedata

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
from tokenizers import __version__ as TOKENIZERS_VERSION
from tokenizers.trainers import BpeTrainer

# --------------------------------------------------------------------------------------
# Qwen3.5 constants (spec section 7.1)
# --------------------------------------------------------------------------------------

QWEN35_SPLIT_REGEX = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

FIRST_ADDED_ID = 248044
# (content, special) in id order 248044..248076. Flags of the fim/repo/tool_response rows are
# UNCONFIRMED in the spec; the spec's stated values are used.
ADDED_TOKENS = [
    ("<|endoftext|>", True),
    ("<|im_start|>", True),
    ("<|im_end|>", True),
    ("<|object_ref_start|>", True),
    ("<|object_ref_end|>", True),
    ("<|box_start|>", True),
    ("<|box_end|>", True),
    ("<|quad_start|>", True),
    ("<|quad_end|>", True),
    ("<|vision_start|>", True),
    ("<|vision_end|>", True),
    ("<|vision_pad|>", True),
    ("<|image_pad|>", True),
    ("<|video_pad|>", True),
    ("<tool_call>", False),
    ("</tool_call>", False),
    ("<|fim_prefix|>", True),
    ("<|fim_middle|>", True),
    ("<|fim_suffix|>", True),
    ("<|fim_pad|>", True),
    ("<|repo_name|>", True),
    ("<|file_sep|>", True),
    ("<tool_response>", False),
    ("</tool_response>", False),
    ("<think>", False),
    ("</think>", False),
    ("<|audio_start|>", True),
    ("<|audio_end|>", True),
    ("<tts_pad>", True),
    ("<tts_text_bos>", True),
    ("<tts_text_eod>", True),
    ("<tts_text_bos_single>", True),
    ("<|audio_pad|>", True),
]
assert len(ADDED_TOKENS) == 33

# --------------------------------------------------------------------------------------
# Corpus definition. Every file is taken from `dpkg -L <package>` so the corpus depends only
# on the named packages (and their versions), not on whatever else is installed.
# (name, packages, file filter, kind, byte cap or None)
# --------------------------------------------------------------------------------------

MAN_EN_PACKAGES = ["manpages", "manpages-dev", "coreutils", "util-linux", "bash", "findutils", "grep",
                   "sed", "tar", "gzip", "man-db", "groff-base", "procps", "iproute2", "systemd", "apt",
                   "dpkg", "openssh-client", "make", "gcc-12"]
L10N = [  # (package, /usr/share/man/<dir>, cap in bytes of extracted text)
    ("manpages-de", "de", 4_000_000),
    ("manpages-fr", "fr", 4_000_000),
    ("manpages-es", "es", 3_000_000),
    ("manpages-it", "it", 2_000_000),
    ("manpages-pl", "pl", 3_000_000),
    ("manpages-pt-br", "pt_BR", 1_000_000),
    ("manpages-ru", "ru", 3_000_000),
    ("manpages-ja", "ja", 4_000_000),
    ("manpages-zh", "zh_CN", 3_000_000),
    ("manpages-zh", "zh_TW", 2_000_000),
]

SOURCES = (
    [("python-docs-rst", ["python3.11-doc"], r"/html/_sources/.*\.rst\.txt$", "text", None),
     ("python-stdlib", ["libpython3.11-stdlib", "libpython3.11-minimal"], r"^/usr/lib/python3\.11/.*\.py$",
      "text", 12_000_000),
     ("c-headers", ["libc6-dev", "linux-libc-dev"], r"^/usr/include/.*\.h$", "text", 6_000_000),
     ("man-en", MAN_EN_PACKAGES, r"^/usr/share/man/man[1-8]/[^/]+\.gz$", "man", None)]
    + [(f"man-{d}", [pkg], rf"^/usr/share/man/{d}/man[1-8]/[^/]+\.gz$", "man", cap) for pkg, d, cap in L10N]
)
REQUIRED_PACKAGES = sorted({p for _, pkgs, _, _, _ in SOURCES for p in pkgs})


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def dpkg_files(pkg):
    out = subprocess.run(["dpkg", "-L", pkg], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"package {pkg} is not installed; run: apt-get install {' '.join(REQUIRED_PACKAGES)}")
    return out.stdout.splitlines()


def dpkg_version(pkg):
    out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True, text=True)
    return out.stdout.strip()


# ---------------------------------- roff -> text --------------------------------------

_ROFF_NAMED = {"aq": "'", "dq": '"', "em": "\u2014", "en": "\u2013", "lq": "\u201c", "rq": "\u201d",
               "oq": "\u2018", "cq": "\u2019", "bu": "\u2022", "co": "\u00a9", "rg": "\u00ae", "ti": "~",
               "ha": "^", "rs": "\\", "mi": "-", "hy": "-", "at": "@", "sh": "#", "Do": "$", "bv": "|",
               "ba": "|", "tm": "\u2122", "de": "\u00b0", "mu": "\u00d7", "di": "\u00f7", "+-": "\u00b1",
               "<=": "\u2264", ">=": "\u2265", "!=": "\u2260", "->": "\u2192", "<-": "\u2190", "Fo": "\u00ab",
               "Fc": "\u00bb", "fo": "\u2039", "fc": "\u203a", "lh": "\u261c", "rh": "\u261e",
               "ga": "`", "aa": "\u00b4", "ss": "\u00df", "pl": "+", "eq": "=", "sl": "/", "lB": "[",
               "rB": "]", "lC": "{", "rC": "}", "la": "\u27e8", "ra": "\u27e9", "ua": "\u2191",
               "da": "\u2193", "OK": "\u2713", "sc": "\u00a7", "ps": "\u00b6", "dg": "\u2020", "Eu": "\u20ac",
               "eu": "\u20ac", "Po": "\u00a3", "Ye": "\u00a5", "ct": "\u00a2", "a\"": "\u02dd"}
_ROFF_ESC = re.compile(
    r"\\(?:"
    r"f(?:\[[^\]]*\]|\([A-Za-z0-9]{2}|[A-Za-z0-9])"        # font
    r"|s[+-]?(?:\d+|\[[^\]]*\]|\(\d\d)"                    # size
    r"|\*(?:\[[^\]]*\]|\(..|.)"                              # string
    r"|n[+-]?(?:\[[^\]]*\]|\(..|.)"                          # number register
    r"|(?P<named>\(..|\[[^\]]*\])"                           # named glyph
    r"|[hvwlLDoXbxkzZH]'[^']*'"                              # escapes with quoted args
    r"|(?P<ch>.)"
    r")")
_TEXT_MACROS = {"SH", "SS", "B", "I", "SM", "SB", "BR", "BI", "IB", "IR", "RI", "RB", "IP", "TQ", "UR", "MT",
                "OP", "Nm", "Nd", "Fl", "Ar", "Op", "Xr", "Pa", "Dv", "Fn", "Ft", "Fa", "Fo", "Em", "Sy",
                "Li", "Ql", "Dq", "Sq", "Pq", "Cm", "It", "Va", "Ev", "Er", "Ic", "Sh", "Ss", "Nx", "Ox",
                "Bx", "St", "Xo", "In", "Cd", "Vt", "Ns", "Qq", "Lk"}
_BREAK_MACROS = {"PP", "LP", "P", "SH", "SS", "Sh", "Ss", "Pp", "TP", "IP", "sp"}
_ALT_FONT = {"BR", "BI", "IB", "IR", "RI", "RB"}


def _roff_inline(s):
    def sub(m):
        if m.group("named") is not None:
            n = m.group("named")
            n = n[1:] if n.startswith("(") else n[1:-1]
            if n.startswith("u") and re.fullmatch(r"u[0-9A-Fa-f]{4,6}", n):
                return chr(int(n[1:], 16))
            return _ROFF_NAMED.get(n, "")
        ch = m.group("ch")
        if ch is None:
            return ""
        return {"-": "-", "e": "\\", "\\": "\\", " ": " ", "~": " ", "0": " ", "t": "\t", "'": "\u00b4",
                "`": "`", ".": ".", '"': "", "#": ""}.get(ch, "" if ch in "&|^c/,:%!{})prdu" else ch)
    s = re.sub(r'\\".*$', "", s)  # trailing comment
    return _ROFF_ESC.sub(sub, s)


def _macro_args(rest):
    args, cur, q, i = [], "", False, 0
    while i < len(rest):
        c = rest[i]
        if c == '"':
            if q and i + 1 < len(rest) and rest[i + 1] == '"':
                cur += '"'
                i += 1
            else:
                q = not q
        elif c in " \t" and not q:
            if cur:
                args.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    if cur:
        args.append(cur)
    return args


def roff_to_text(src):
    """Cheap, deterministic roff (man/mdoc) -> plain text. Good enough for BPE statistics."""
    out, in_de, in_tbl_fmt = [], False, False
    for line in src.split("\n"):
        if in_de:
            if line.startswith(".."):
                in_de = False
            continue
        if line.startswith(('.\\"', "'\\\"", '.\\\\"', '\\"')):
            continue
        if line.startswith((".", "'")):
            parts = line[1:].strip().split(None, 1)
            if not parts:
                continue
            mac, rest = parts[0], (parts[1] if len(parts) > 1 else "")
            if mac in ("de", "de1", "am", "ig"):
                in_de = True
                continue
            if mac == "TS":
                in_tbl_fmt = True
                continue
            if mac in _BREAK_MACROS:
                out.append("")
            if mac in _TEXT_MACROS:
                args = _macro_args(rest)
                if mac in ("IP", "TQ") and args:
                    args = args[:1]
                joiner = "" if mac in _ALT_FONT else " "
                text = _roff_inline(joiner.join(args)).strip()
                if text:
                    out.append(text)
            continue
        if in_tbl_fmt:  # tbl options/format lines end with '.'
            if line.rstrip().endswith("."):
                in_tbl_fmt = False
            continue
        out.append(_roff_inline(line).rstrip())
    text = "\n".join(out)
    text = re.sub(r"\n{3,}", "\n\n", text).strip("\n")
    return text + "\n" if text else ""


# ---------------------------------- collect --------------------------------------------

def collect(workdir):
    os.makedirs(workdir, exist_ok=True)
    corpus_path = os.path.join(workdir, "corpus.txt")
    manifest_path = os.path.join(workdir, "manifest.tsv")
    docs, manifest, stats = [], [], []
    for name, pkgs, pattern, kind, cap in SOURCES:
        rx = re.compile(pattern)
        files = set()
        for p in pkgs:
            for f in dpkg_files(p):
                if rx.search(f) and os.path.isfile(f):
                    files.add(os.path.realpath(f))  # dedupe symlinked pages
        # deterministic but well-mixed order: sort by hash of the path
        order = sorted(files, key=lambda f: hashlib.sha256(f.encode()).hexdigest())
        total, used, skipped = 0, 0, 0
        seen_content = set()
        for f in order:
            if cap is not None and total >= cap:
                break
            raw = open(f, "rb").read()
            if f.endswith(".gz"):
                raw = gzip.decompress(raw)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                skipped += 1
                continue
            if kind == "man":
                if text.lstrip().startswith(".so "):  # redirect page
                    skipped += 1
                    continue
                text = roff_to_text(text)
            text = text.replace("\x00", "")
            if not text.strip():
                skipped += 1
                continue
            h = hashlib.sha256(text.encode()).digest()
            if h in seen_content:
                skipped += 1
                continue
            seen_content.add(h)
            docs.append(text)
            n = len(text.encode())
            manifest.append(f"{name}\t{n}\t{f}")
            total += n
            used += 1
        stats.append((name, used, skipped, total))
        log(f"collect {name:16s} files={used:6d} skipped={skipped:5d} bytes={total:>11,d}  ({', '.join(pkgs[:4])}{'...' if len(pkgs) > 4 else ''})")
    # Documents are separated by a NUL-free separator line in the file; training uses the in-memory docs.
    with open(corpus_path, "w", encoding="utf-8", newline="") as fo:
        for d in docs:
            fo.write(d)
            if not d.endswith("\n"):
                fo.write("\n")
            fo.write("\n")
    with open(manifest_path, "w", encoding="utf-8") as fo:
        fo.write("source\tbytes\tpath\n" + "\n".join(manifest) + "\n")
    size = os.path.getsize(corpus_path)
    log(f"corpus: {len(docs)} documents, {size:,} bytes, sha256 {sha256_file(corpus_path)} -> {corpus_path}")
    return docs, stats, size


# ---------------------------------- train ---------------------------------------------

def build_pipeline():
    tok = Tokenizer(models.BPE(dropout=None, unk_token=None, continuing_subword_prefix="", end_of_word_suffix="",
                               fuse_unk=False, byte_fallback=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN35_SPLIT_REGEX), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    return tok


def chunks(docs, max_chars=200_000):
    """Yield documents; split very large ones at line boundaries (keeps memory per item bounded)."""
    for d in docs:
        if len(d) <= max_chars:
            yield d
            continue
        start = 0
        while start < len(d):
            end = d.find("\n", start + max_chars)
            end = len(d) if end < 0 else end + 1
            yield d[start:end]
            start = end


def train(docs, n_merges):
    tok = build_pipeline()
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    assert len(alphabet) == 256
    trainer = BpeTrainer(vocab_size=len(alphabet) + n_merges, min_frequency=2, show_progress=True,
                         special_tokens=[], initial_alphabet=alphabet)
    log(f"train: BpeTrainer(vocab_size={len(alphabet) + n_merges}, min_frequency=2) on {len(docs)} documents")
    t0 = time.time()
    tok.train_from_iterator(chunks(docs), trainer=trainer, length=None)
    log(f"train: done in {time.time() - t0:.0f}s")
    return tok


# ---------------------------------- finalize ------------------------------------------

def finalize(tok, out_dir):
    d = json.loads(tok.to_str())
    model = d["model"]
    vocab, merges = model["vocab"], model["merges"]
    n = len(vocab)
    assert sorted(vocab.values()) == list(range(n)), "trained vocab ids not contiguous"
    assert n < FIRST_ADDED_ID
    # Match what HF writes for Qwen2/Qwen3 tokenizer.json files (converted by transformers' Qwen2Converter).
    model.update({"dropout": None, "unk_token": None, "continuing_subword_prefix": "", "end_of_word_suffix": "",
                  "fuse_unk": False, "byte_fallback": False, "ignore_merges": False})
    d["decoder"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    d["post_processor"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    d["truncation"] = None
    d["padding"] = None
    # HF `tokenizers` ignores the ids in "added_tokens" when they leave a gap after the model vocab (it
    # silently renumbers them to n, n+1, ...). An added token keeps a given id only if the model vocab
    # already maps its content to that id, so the 33 tokens are also entered into model.vocab at
    # 248044..248076 (ids n..248043 stay unused). No merge produces them.
    added = []
    for i, (content, special) in enumerate(ADDED_TOKENS):
        tid = FIRST_ADDED_ID + i
        assert content not in vocab
        vocab[content] = tid
        added.append({"id": tid, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
                      "normalized": False, "special": special})
    d["added_tokens"] = added
    os.makedirs(out_dir, exist_ok=True)
    tmp = os.path.join(out_dir, "tokenizer.json.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(d, f, ensure_ascii=False)
    # round-trip through HF tokenizers so the file is exactly as the library serialises it
    path = os.path.join(out_dir, "tokenizer.json")
    Tokenizer.from_file(tmp).save(path, pretty=True)
    os.remove(tmp)
    log(f"finalize: {path}: {n} BPE tokens (ids 0..{n - 1}), {len(merges)} merges, "
        f"unused ids {n}..{FIRST_ADDED_ID - 1}, added tokens {FIRST_ADDED_ID}..{FIRST_ADDED_ID + 32}")

    # Keys as in Qwen2/Qwen3 hub tokenizer_config.json files. Deliberately absent: chat_template (shipped as
    # chat_template.jinja) and additional_special_tokens (Qwen3.5's real list not seen; HF does not need it).
    cfg = {
        "add_prefix_space": False,
        "added_tokens_decoder": {
            str(FIRST_ADDED_ID + i): {"content": c, "lstrip": False, "normalized": False, "rstrip": False,
                                      "single_word": False, "special": s}
            for i, (c, s) in enumerate(ADDED_TOKENS)},
        "bos_token": None,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "errors": "replace",
        "model_max_length": 262144,
        "pad_token": "<|endoftext|>",
        "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None,
    }
    cpath = os.path.join(out_dir, "tokenizer_config.json")
    with open(cpath, "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=2, ensure_ascii=False)
        f.write("\n")
    return path, cpath, n, len(merges)


# ---------------------------------- verify --------------------------------------------

VERIFY_LINES = [
    "Hello, world!", "  leading spaces", "trailing spaces   ", "tabs\tand\ttabs", "CRLF line\r\nnext\r\n",
    "bare CR\rline", "\n\n\nnewlines\n\n", "I'm sure they'll say we've done it; you'd agree he's RIGHT'S",
    "numbers 1234567890 3.14159 -42 1e-9 0x7fff_ffff", "Emoji 😊👍🏽👨‍👩‍👧‍👦 🇩🇪🇯🇵 ❤️ ✈️", "中文测试：生活的真谛是什么？",
    "日本語のテキスト、カタカナとひらがな。", "한국어 문장입니다.", "Ελληνικά κείμενα", "Русский текст с ё и й",
    "עברית ومعها العربية", "ไทย ปี ภาษาไทย", "हिन्दी पाठ", "Ünïcödé façade naïve coöperate", "e\u0301 (NFC-composed input)",
    "a\u0308\u0301 stacked marks \u1e09", "Zalgo: Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǧ̗͚̚o̙̔ͮ̇͐̇", "zero\u200bwidth\u200djoiner\ufeffbom",
    "control \x00\x01\x1f\x7f chars", "<|im_start|>user\nhi<|im_end|>", "<think>\nreasoning\n</think>\n\nanswer",
    "<tool_call>\n<function=f>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call>", "<s>\nhi<s>there",
    "def f(x):\n    return x ** 2  # comment\n", "int main(void) { printf(\"%d\\n\", 42); return 0; }",
    "    \n  \n \n", "mixed\u3000ideographic\u00a0nbsp\u2009thin", "\U0001F600\U0001F4A9\U00010348 astral",
    "This is a test 😊\nI was born in 92000, and this is falsé.\n生活的真谛是\nHi  Hello\nHi   Hello\n\n \n  \n Hello\n"
    "<s>\nhi<s>there\nThe following string should be properly encoded: Hello.\nBut ird and ปี   ird   ด\nHey how are you doing",
]


def verify(path, docs, n_bpe, n_merges):
    tok = Tokenizer.from_file(path)
    ok = True

    def check(cond, what):
        nonlocal ok
        log(f"verify: {'OK  ' if cond else 'FAIL'} {what}")
        ok &= bool(cond)

    ids = tok.encode("<|im_start|>user\nhi<|im_end|>").ids
    check(ids[0] == 248045 and ids[-1] == 248046 and all(i < n_bpe for i in ids[1:-1]),
          f'encode("<|im_start|>user\\nhi<|im_end|>") = {ids}')
    dec = tok.get_added_tokens_decoder()
    check(all(dec.get(FIRST_ADDED_ID + i) is not None and dec[FIRST_ADDED_ID + i].content == c and
              dec[FIRST_ADDED_ID + i].special == s for i, (c, s) in enumerate(ADDED_TOKENS)),
          "33 added tokens at 248044..248076 with spec content/special flags")
    check(all(tok.token_to_id(c) == FIRST_ADDED_ID + i and tok.id_to_token(FIRST_ADDED_ID + i) == c
              for i, (c, _) in enumerate(ADDED_TOKENS)), "token_to_id/id_to_token of added tokens")
    check(tok.id_to_token(n_bpe) is None and tok.id_to_token(FIRST_ADDED_ID - 1) is None,
          f"ids {n_bpe} and {FIRST_ADDED_ID - 1} unused")
    check(tok.id_to_token(198) == "\u010a" and tok.id_to_token(220) == "\u0120" and tok.id_to_token(0) == "!",
          "byte ids follow GPT-2/Qwen order (0='!', 198='\\n', 220=' ')")
    vs, vs_na = tok.get_vocab_size(), tok.get_vocab_size(with_added_tokens=False)
    check(vs == n_bpe + 33, f"get_vocab_size()={vs} (with_added_tokens=False: {vs_na}); n_bpe={n_bpe}, merges={n_merges}")
    # round trip: handcrafted lines + deterministic sample of corpus lines
    rng = random.Random(1234)
    lines = list(VERIFY_LINES)
    for d in rng.sample(docs, min(300, len(docs))):
        ls = d.split("\n")
        i = rng.randrange(len(ls))
        lines.append("\n".join(ls[i:i + rng.randint(1, 3)]))
    bad = 0
    for x in lines:
        y = tok.decode(tok.encode(x).ids, skip_special_tokens=False)
        if y != unicodedata.normalize("NFC", x):
            bad += 1
            if bad <= 5:
                log(f"verify:   round-trip mismatch: {x!r} -> {y!r}")
    n_nfc = sum(1 for x in lines if unicodedata.normalize("NFC", x) == x)
    check(bad == 0, f"decode(encode(x)) == NFC(x) on {len(lines)} lines ({n_nfc} of them already NFC, i.e. == x)")
    # independent reference: plain BPE (lowest merge index first) over the HF pre-tokenizer's pieces
    d = json.loads(open(path, encoding="utf-8").read())
    vocab = d["model"]["vocab"]
    mrank = {tuple(m) if isinstance(m, list) else tuple(m.split(" ")): i for i, m in enumerate(d["model"]["merges"])}
    pre = build_pipeline().pre_tokenizer

    def ref_encode(text):
        out = []
        for piece, _ in pre.pre_tokenize_str(unicodedata.normalize("NFC", text)):
            sym = list(piece)
            while len(sym) > 1:
                best = min(range(len(sym) - 1), key=lambda i: mrank.get((sym[i], sym[i + 1]), 1 << 30))
                if (sym[best], sym[best + 1]) not in mrank:
                    break
                sym[best:best + 2] = [sym[best] + sym[best + 1]]
            out += [vocab[x] for x in sym]
        return out
    plain = [x for x in lines if not any(c in x for c, _ in ADDED_TOKENS)]
    mism = sum(1 for x in plain if ref_encode(x) != tok.encode(x).ids)
    check(mism == 0, f"HF encode == reference merge-rank BPE on {len(plain)} lines without added tokens")
    nfd = "e\u0301"
    check(tok.decode(tok.encode(nfd).ids) == "\u00e9", "NFD input is normalised to NFC (e+U+0301 -> é)")
    t = "<|im_start|>system\nx<|im_end|>"
    check(tok.decode(tok.encode(t).ids, skip_special_tokens=True) == "system\nx", "skip_special_tokens drops specials")
    check(tok.decode(tok.encode("<think>a</think>").ids, skip_special_tokens=True) == "<think>a</think>",
          "<think> (special=false) survives skip_special_tokens")
    # compression on a held-out-ish slice
    sample = "".join(docs[::50])[:2_000_000]
    nt = len(tok.encode(sample).ids)
    log(f"verify: {len(sample.encode()):,} bytes of corpus text -> {nt:,} tokens ({len(sample.encode()) / nt:.2f} bytes/token)")
    return ok


# ---------------------------------- main ----------------------------------------------

def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.abspath(os.path.join(here, "..", ".."))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", default="/tmp/deltaserve-bpe", help="corpus / scratch dir (outside the repo)")
    ap.add_argument("--out-dir", default=os.path.join(repo, "data", "tokenizer"))
    ap.add_argument("--merges", type=int, default=32000, help="target number of merges")
    args = ap.parse_args()

    log(f"tokenizers {TOKENIZERS_VERSION}, python {sys.version.split()[0]}")
    log("packages: " + ", ".join(f"{p}={dpkg_version(p) or 'MISSING'}" for p in REQUIRED_PACKAGES))
    docs, _, size = collect(args.workdir)
    tok = train(docs, args.merges)
    path, cpath, n_bpe, n_merges = finalize(tok, args.out_dir)
    ok = verify(path, docs, n_bpe, n_merges)
    for p in (path, cpath):
        log(f"result: {p}  {os.path.getsize(p):,} bytes  sha256 {sha256_file(p)}")
    log(f"summary: merges={n_merges} bpe_vocab={n_bpe} vocab_size={n_bpe + 33} corpus_bytes={size:,} "
        f"tokenizers={TOKENIZERS_VERSION}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

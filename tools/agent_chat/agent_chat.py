#!/usr/bin/env python3
"""A multi-turn agent chat against an OpenAI-compatible server, as an agent framework drives it.

Each turn sends the whole history back (system prompt, tools offered, every earlier user message and
assistant answer, as an OpenAI client keeps them), streams the answer (thinking on, --max-tokens new
tokens, EOS ignored via the vLLM extension `ignore_eos`), and records what the server reports:
prompt tokens, prompt tokens it found cached (`usage.prompt_tokens_details.cached_tokens`), so the
tokens actually prefilled, the new tokens (after the prefix shared with the previous turn's prompt),
prefilled - new, and the time to the first streamed token. Standard library only.

  tools/agent_chat/agent_chat.py --url http://127.0.0.1:8000 --turns 10 --max-tokens 300

With --chats N, N such chats run interleaved (one thread each, sharing the system prompt and tools),
which is how several agents share one server; the summary then also gives the hit rate of each
turn over all chats.
"""
import argparse
import http.client
import json
import random
import threading
import time
import urllib.parse

WORDS = ("time river stone light market number garden signal window engine paper orbit table cloud "
         "answer bridge letter planet winter summer forest copper silver harbor").split()

TOOLS = [
    {"type": "function", "function": {
        "name": "search_files", "description": "Search the repository for a regular expression.",
        "parameters": {"type": "object", "properties": {
            "pattern": {"type": "string", "description": "the regular expression"},
            "path": {"type": "string", "description": "a folder to search under"}}, "required": ["pattern"]}}},
    {"type": "function", "function": {
        "name": "run_tests", "description": "Run the test suite and report failures.",
        "parameters": {"type": "object", "properties": {
            "label": {"type": "string", "description": "only tests with this label"},
            "timeout_s": {"type": "integer", "description": "seconds before the run is stopped"}}}}},
]


def sentence(rng, words):
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def stream_turn(url, model, messages, max_tokens, extra):
    """One streamed chat completion: (ttft_s, content, reasoning, usage)."""
    parsed = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=3600)
    body = {"messages": messages, "tools": TOOLS, "max_tokens": max_tokens, "stream": True, "temperature": 0,
            "ignore_eos": True, "stream_options": {"include_usage": True}}
    body.update(extra)
    if model:
        body["model"] = model
    start = time.perf_counter()
    conn.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
    response = conn.getresponse()
    if response.status != 200:
        raise RuntimeError(f"HTTP {response.status}: {response.read()[:300]!r}")
    ttft, content, reasoning, usage = None, [], [], None
    for raw in response:
        line = raw.decode().strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        chunk = json.loads(line[6:])
        if chunk.get("usage"):
            usage = chunk["usage"]
        for choice in chunk.get("choices", []):
            delta = choice.get("delta", {})
            piece = (delta.get("content") or "") + (delta.get("reasoning_content") or delta.get("reasoning") or "")
            if ttft is None and (piece or delta.get("tool_calls")):
                ttft = time.perf_counter() - start
            content.append(delta.get("content") or "")
            reasoning.append(delta.get("reasoning_content") or delta.get("reasoning") or "")
    conn.close()
    if usage is None:
        raise RuntimeError("the stream ended without usage")
    return ttft if ttft is not None else time.perf_counter() - start, "".join(content), "".join(reasoning), usage


def render_ids(url, messages, extra):
    """The prompt's token ids from deltaserve's /v1/chat/completions/render (None elsewhere)."""
    parsed = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=600)
    body = {"messages": messages, "tools": TOOLS}
    if "chat_template_kwargs" in extra:
        body["chat_template_kwargs"] = extra["chat_template_kwargs"]
    conn.request("POST", "/v1/chat/completions/render", json.dumps(body), {"Content-Type": "application/json"})
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return json.loads(data).get("token_ids") if response.status == 200 else None


def common_prefix(a, b):
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def run_chat(args, index, system, results, lock):
    rng = random.Random(1000 + index)
    messages = [{"role": "system", "content": system}]
    previous_prompt, previous_ids = 0, []
    extra = json.loads(args.extra_body) if args.extra_body else {}
    for turn in range(1, args.turns + 1):
        messages.append({"role": "user", "content": " ".join(sentence(rng, 12) for _ in range(args.user_sentences))})
        ids = render_ids(args.url, messages, extra)
        ttft, content, _, usage = stream_turn(args.url, args.model, messages, args.max_tokens, extra)
        # As an OpenAI client keeps history: the answer's content; the reasoning is not sent back.
        messages.append({"role": "assistant", "content": content})
        prompt = usage["prompt_tokens"]
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
        row = {"chat": index, "turn": turn, "prompt_tokens": prompt, "cached_tokens": cached,
               # new: the tokens after the longest prefix this prompt shares with the last one (from the
               # rendered ids where the server can render; else what the prompt grew by)
               "prefilled": prompt - cached,
               "new_tokens": prompt - common_prefix(previous_ids, ids) if ids else prompt - previous_prompt,
               "completion_tokens": usage["completion_tokens"], "ttft_s": round(ttft, 4)}
        # What the cache made the server recompute besides the new tokens (the prefix cache's target: < 64).
        row["prefilled_minus_new"] = row["prefilled"] - row["new_tokens"]
        previous_prompt, previous_ids = prompt, ids or []
        with lock:
            results.append(row)
            if args.json:
                print(json.dumps(row), flush=True)
            else:
                print(f"{index:>4} {turn:>4} {prompt:>7} {row['new_tokens']:>7} {cached:>7} {prompt - cached:>9} "
                      f"{row['prefilled_minus_new']:>13} {ttft:>8.2f}s", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--model", default="")
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--chats", type=int, default=1, help="chats run interleaved, one thread each")
    parser.add_argument("--max-tokens", type=int, default=300, help="tokens generated per turn (EOS ignored)")
    parser.add_argument("--system-sentences", type=int, default=40, help="sentences of the shared system prompt")
    parser.add_argument("--user-sentences", type=int, default=2, help="sentences per user message")
    parser.add_argument("--extra-body", default="", help="JSON merged into every request body")
    parser.add_argument("--json", action="store_true", help="one JSON object per turn")
    args = parser.parse_args()
    system = "You are a coding agent. " + " ".join(sentence(random.Random(7), 12) for _ in range(args.system_sentences))
    results, lock = [], threading.Lock()
    if not args.json:
        print(f"{'chat':>4} {'turn':>4} {'prompt':>7} {'new':>7} {'cached':>7} {'prefilled':>9} {'prefilled-new':>13} "
              f"{'TTFT':>9}", flush=True)
    threads = [threading.Thread(target=run_chat, args=(args, i, system, results, lock)) for i in range(args.chats)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    prompt = sum(r["prompt_tokens"] for r in results)
    cached = sum(r["cached_tokens"] for r in results)
    summary = {"turns": len(results), "prompt_tokens": prompt, "cached_tokens": cached,
               "hit_rate": round(cached / prompt, 4) if prompt else 0.0, "per_turn": per_turn_hit_rates(results)}
    if args.json:
        print(json.dumps(summary), flush=True)
        return
    if args.chats > 1:
        for t in summary["per_turn"]:
            print(f"turn {t['turn']:>3} of {t['chats']} chats: {t['cached_tokens']} of {t['prompt_tokens']} prompt tokens "
                  f"cached ({100 * t['hit_rate']:.1f}%)", flush=True)
    print(f"{len(results)} turns: {cached} of {prompt} prompt tokens cached ({100 * summary['hit_rate']:.1f}%)", flush=True)


def per_turn_hit_rates(results):
    """Cached / prompt tokens over all chats' k-th turns, for each k (how the hit rate holds up as histories grow)."""
    rates = []
    for turn in sorted({r["turn"] for r in results}):
        rows = [r for r in results if r["turn"] == turn]
        prompt = sum(r["prompt_tokens"] for r in rows)
        cached = sum(r["cached_tokens"] for r in rows)
        rates.append({"turn": turn, "chats": len(rows), "prompt_tokens": prompt, "cached_tokens": cached,
                      "hit_rate": round(cached / prompt, 4) if prompt else 0.0})
    return rates


if __name__ == "__main__":
    main()

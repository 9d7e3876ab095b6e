#!/usr/bin/env python3
"""Load generator for an OpenAI-compatible server (deltaserve, vLLM, llama.cpp's server, ...).

For each concurrency level N: N clients each send --requests streaming /v1/completions requests one
after another (fixed output length, EOS ignored via the vLLM extension `ignore_eos`), and the tool
reports TTFT and inter-token latency p50 / p99 and the aggregate generated tokens per second.
Standard library only.

  tools/loadgen/loadgen.py --url http://127.0.0.1:8000 --concurrency 1,4,8,16 --max-tokens 64

--burst N instead: N clients connect at the same moment and each sends one GET /v1/models; it
reports how many got each HTTP status and how many got no HTTP answer at all (reset, closed).

--scrape-interval S: while each level runs, GET /metrics every S seconds as a gateway's load
monitor does, and report the scrape's latency (p50, p99, max) and the largest running / waiting
counts and KV usage it read (a scrape must answer promptly while the engine is busy).
"""
import argparse
import http.client
import json
import random
import statistics
import threading
import time
import urllib.parse


def percentile(values, q):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def one_request(url, model, prompt, max_tokens):
    """Streams one completion; returns (ttft, [gaps between chunks], completion tokens)."""
    parsed = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=3600)
    # logprobs 0: every token then arrives in a chunk even when its text is empty (random-weight
    # models emit many tokens their tokenizer decodes to nothing), so inter-token gaps are per token.
    body = {"prompt": prompt, "max_tokens": max_tokens, "stream": True, "ignore_eos": True, "temperature": 0,
            "logprobs": 0, "stream_options": {"include_usage": True}}
    if model:
        body["model"] = model
    start = time.perf_counter()
    conn.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
    response = conn.getresponse()
    if response.status != 200:
        raise RuntimeError(f"HTTP {response.status}: {response.read()[:200]!r}")
    arrivals, tokens = [], 0
    for raw in response:
        line = raw.decode().strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        chunk = json.loads(line[6:])
        if chunk.get("usage"):
            tokens = chunk["usage"]["completion_tokens"]
        if chunk.get("choices"):
            arrivals.append(time.perf_counter())
    conn.close()
    if not arrivals:
        raise RuntimeError("no tokens")
    return arrivals[0] - start, [b - a for a, b in zip(arrivals, arrivals[1:])], tokens


def scrape(url, interval, stop, out):
    """GET /metrics every `interval` s until `stop` is set: latencies and the load gauges read."""
    parsed = urllib.parse.urlparse(url)
    while not stop.is_set():
        start = time.perf_counter()
        conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=60)
        conn.request("GET", "/metrics")
        text = conn.getresponse().read().decode()
        conn.close()
        out["latencies"].append(time.perf_counter() - start)
        for line in text.splitlines():
            name = line.split("{")[0].split(" ")[0]
            if name in ("vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc"):
                out[name] = max(out.get(name, 0.0), float(line.rsplit(" ", 1)[1]))
        stop.wait(interval)


def run_level(args, n, words):
    ttfts, gaps, tokens, errors = [], [], [0], []
    lock = threading.Lock()
    scraped, stop = {"latencies": []}, threading.Event()
    scraper = threading.Thread(target=scrape, args=(args.url, args.scrape_interval, stop, scraped)) if args.scrape_interval else None
    if scraper:
        scraper.start()

    def client(i):
        rng = random.Random(i)
        for r in range(args.requests):
            prompt = " ".join(rng.choice(words) for _ in range(args.prompt_words))
            try:
                ttft, g, t = one_request(args.url, args.model, prompt, args.max_tokens)
            except Exception as error:  # noqa: BLE001 — reported, not fatal
                with lock:
                    errors.append(str(error))
                continue
            with lock:
                ttfts.append(ttft)
                gaps.extend(g)
                tokens[0] += t

    threads = [threading.Thread(target=client, args=(i,)) for i in range(n)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    if scraper:
        stop.set()
        scraper.join()
    for error in errors[:3]:
        print(f"error: {error}", flush=True)
    result = {"concurrency": n, "requests": len(ttfts), "errors": len(errors), "tokens": tokens[0], "wall_s": round(wall, 3),
              "tokens_per_s": round(tokens[0] / wall, 3),
              "ttft_p50_s": round(percentile(ttfts, 0.5), 4), "ttft_p99_s": round(percentile(ttfts, 0.99), 4),
              "itl_p50_s": round(percentile(gaps, 0.5), 4), "itl_p99_s": round(percentile(gaps, 0.99), 4),
              "itl_mean_s": round(statistics.mean(gaps), 4) if gaps else None}
    if scraper:
        lat = scraped.pop("latencies")
        result.update({"scrapes": len(lat), "scrape_p50_s": round(percentile(lat, 0.5), 4),
                       "scrape_p99_s": round(percentile(lat, 0.99), 4), "scrape_max_s": round(max(lat, default=float("nan")), 4),
                       "max_running": scraped.get("vllm:num_requests_running"), "max_waiting": scraped.get("vllm:num_requests_waiting"),
                       "max_kv_usage": scraped.get("vllm:kv_cache_usage_perc")})
    return result


def burst(url, n):
    """N clients connect at once, one GET /v1/models each: {outcome: count}, outcome an HTTP status or an error name."""
    parsed = urllib.parse.urlparse(url)
    outcomes, lock = {}, threading.Lock()
    barrier = threading.Barrier(n)

    def client():
        barrier.wait()
        try:
            conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=60)
            conn.request("GET", "/v1/models")
            response = conn.getresponse()
            response.read()
            outcome = str(response.status)
            conn.close()
        except Exception as error:  # noqa: BLE001 — the outcome being measured
            outcome = type(error).__name__
        with lock:
            outcomes[outcome] = outcomes.get(outcome, 0) + 1

    threads = [threading.Thread(target=client) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return outcomes


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--model", default="")
    parser.add_argument("--concurrency", default="1,4,8,16", help="comma-separated stream counts")
    parser.add_argument("--requests", type=int, default=1, help="requests per client at each level")
    parser.add_argument("--prompt-words", type=int, default=100, help="random words per prompt")
    parser.add_argument("--max-tokens", type=int, default=64, help="tokens generated per request (EOS ignored)")
    parser.add_argument("--json", action="store_true", help="one JSON object per level")
    parser.add_argument("--burst", type=int, default=0, help="N clients connect at once, one GET /v1/models each; counts outcomes")
    parser.add_argument("--scrape-interval", type=float, default=0.0,
                        help="GET /metrics every S seconds during each level; report its latency and the load it read")
    args = parser.parse_args()
    if args.burst:
        print(json.dumps({"burst": args.burst, "outcomes": burst(args.url, args.burst)}), flush=True)
        return
    words = ["time", "river", "stone", "light", "market", "number", "garden", "signal", "window", "engine", "paper", "orbit"]
    if not args.json:
        print(f"{'streams':>7} {'tok/s':>8} {'TTFT p50':>9} {'TTFT p99':>9} {'ITL p50':>8} {'ITL p99':>8} {'errors':>6}")
    for n in [int(x) for x in args.concurrency.split(",")]:
        result = run_level(args, n, words)
        if args.json:
            print(json.dumps(result), flush=True)
        else:
            print(f"{n:>7} {result['tokens_per_s']:>8.2f} {result['ttft_p50_s']:>8.2f}s {result['ttft_p99_s']:>8.2f}s "
                  f"{result['itl_p50_s'] * 1000:>6.0f}ms {result['itl_p99_s'] * 1000:>6.0f}ms {result['errors']:>6}", flush=True)
            if args.scrape_interval:
                print(f"        /metrics: {result['scrapes']} scrapes, p50 {result['scrape_p50_s'] * 1000:.1f} ms, "
                      f"p99 {result['scrape_p99_s'] * 1000:.1f} ms, max {result['scrape_max_s'] * 1000:.1f} ms; read running "
                      f"{result['max_running']}, waiting {result['max_waiting']}, KV usage {result['max_kv_usage']}", flush=True)


if __name__ == "__main__":
    main()

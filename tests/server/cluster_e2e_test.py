#!/usr/bin/env python3
"""Three replicas behind a real gateway: the SGLang Model Gateway (PyPI `smg`), on 127.0.0.1.

- Cache-aware routing: 24 conversations of 6 turns through `smg launch --policy cache_aware` with
  the `openai` client; a later turn that lands on the replica holding its conversation resumes
  from its cache (usage.prompt_tokens_details.cached_tokens covers the earlier turns). The same
  traffic (other conversations) through `--policy round_robin` must resume far less.
- Fault: one replica is SIGKILLed in the middle of the cache-aware run. Requests in flight to it
  fail cleanly at the client or are retried by the gateway; every request sent after the gateway
  saw it go succeeds on the others; nothing hangs. Restarted, it rejoins and serves again.
- Restart with the cache: another replica, idle for a moment (it writes what it took to
  --prefix-cache-dir while idle), is SIGKILLed and restarted; the next turn of every conversation
  goes through the gateway, and the ones it held resume from the cache it reloaded.
- Load signals: smg reads each replica's vLLM metrics (it identifies a vLLM-compatible worker by
  GET /version); under load its view of running requests is non-zero.

Usage: cluster_e2e_test.py DELTASERVE_BINARY REPO_DIR
"""
import concurrent.futures
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time

import openai

from replicas import Replica, check, finish, free_port, http, make_tiny_checkpoint

BIN, REPO = sys.argv[1], sys.argv[2]
SMG = os.path.join(os.path.dirname(sys.executable), "smg")
TURNS, CONVERSATIONS = 6, 24
WORDS = ("harbor lantern orchard granite meadow copper violet thunder saffron glacier willow ember canyon "
         "marble falcon juniper quartz tundra cobalt amber prairie cedar lagoon").split()


class Gateway:
    """One `smg launch` over the replicas, probing their health every second."""

    def __init__(self, replicas, policy, work):
        self.port = free_port()
        self.log = open(os.path.join(work, f"smg-{policy}.log"), "w")
        self.process = subprocess.Popen(
            [SMG, "launch", "--worker-urls", *[r.url for r in replicas], "--policy", policy, "--host", "127.0.0.1",
             "--port", str(self.port), "--prometheus-port", str(free_port()), "--health-check-interval-secs", "1",
             "--health-failure-threshold", "1", "--health-success-threshold", "1", "--load-monitor-interval", "1",
             "--shutdown-grace-period-secs", "1", "--log-level", "warn"],
            stdout=self.log, stderr=self.log)
        self.client = openai.OpenAI(base_url=f"http://127.0.0.1:{self.port}/v1", api_key="none", max_retries=0, timeout=60)
        deadline = time.time() + 60
        while time.time() < deadline and len(self.healthy()) < len(replicas):
            if self.process.poll() is not None:
                raise RuntimeError(f"smg exited: {open(self.log.name).read()[-2000:]}")
            time.sleep(0.2)
        check(len(self.healthy()) == len(replicas), f"smg registered the {len(replicas)} replicas: {self.healthy()}")

    def workers(self):
        try:
            status, body, _ = http(self.port, "GET", "/workers", timeout=5)
            return json.loads(body)["workers"] if status == 200 else []
        except (OSError, ValueError, KeyError):
            return []

    def healthy(self):
        return sorted(w["url"] for w in self.workers() if w.get("is_healthy"))

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()


class Conversation:
    def __init__(self, rng, tag):
        topic = " ".join(rng.choice(WORDS) for _ in range(60))
        self.messages = [{"role": "system", "content": f"Conversation {tag}. You advise on {topic}."}]
        self.rng, self.tag = rng, tag
        self.turns = []  # per turn: (prompt_tokens, cached_tokens) or None when it failed

    def turn(self, client):
        """One more turn; (prompt_tokens, cached_tokens), or an exception when the request failed."""
        # ~100 tokens a turn, so resuming the previous turn (within a 64-token snapshot step of
        # its prompt) and resuming an older one (a turn shorter) cannot be mistaken for each other.
        self.messages.append({"role": "user", "content": " ".join(self.rng.choice(WORDS) for _ in range(60)) + "?"})
        try:
            r = client.chat.completions.create(model="tiny", messages=self.messages, max_tokens=8, temperature=0,
                                               extra_body={"chat_template_kwargs": {"enable_thinking": False}, "ignore_eos": True})
        except openai.APIError as error:
            self.messages.pop()
            self.turns.append(None)
            return error
        self.messages.append({"role": "assistant", "content": r.choices[0].message.content or ""})
        result = (r.usage.prompt_tokens, r.usage.prompt_tokens_details.cached_tokens)
        self.turns.append(result)
        return result


def resumed_share(conversations):
    """Of the later turns (2 on): the share that landed on the replica holding the previous turn —
    their cached tokens cover its prompt but for the assistant header the template re-renders and
    less than one 64-token snapshot step — and the share of their prompt tokens found cached."""
    landed = total = prompt = cached = 0
    for c in conversations:
        for t in range(1, len(c.turns)):
            if c.turns[t] is None or c.turns[t - 1] is None:
                continue
            total += 1
            landed += c.turns[t][1] >= c.turns[t - 1][0] - 72
            prompt += c.turns[t][0]
            cached += c.turns[t][1]
    return landed / max(total, 1), total, cached / max(prompt, 1)


def run_conversations(gateway, conversations, turns, during=None):
    """Runs the conversations' turns, 8 at a time; `during(done)` is called after each finished turn."""
    done = [0]
    lock = threading.Lock()

    def converse(c):
        errors = []
        for _ in range(turns):
            result = c.turn(gateway.client)
            if isinstance(result, Exception):
                errors.append((time.time(), result))
            with lock:
                done[0] += 1
                n = done[0]
            if during:
                during(n)
        return errors

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        return [e for errors in pool.map(converse, conversations) for e in errors]


def main():
    work = tempfile.mkdtemp(prefix="deltaserve-cluster-")
    rng = random.Random(5)
    replicas, gateways = [], []
    try:
        model = make_tiny_checkpoint(BIN, REPO, work)
        for i in range(3):
            replicas.append(Replica(BIN, model, "--cache-memory", "256MiB", "--max-seqs", "8", "--log-stats-interval", "0",
                                    "--prefix-cache-dir", os.path.join(work, f"cache-{i}"), name=f"replica{i}").start(wait=False))
        for r in replicas:
            r.wait_ready()
        started = time.time()

        # Cache-aware, with a replica killed a third of the way through.
        gateway = Gateway(replicas, "cache_aware", work)
        gateways.append(gateway)
        victim = replicas[2]
        killed = {}
        load_seen = []

        def during(done):
            if done == TURNS * CONVERSATIONS // 3 and not killed:
                killed["at"] = time.time()
                victim.kill()
            if done % 12 == 0:
                load_seen.append(max((l.get("num_running_reqs", 0) for w in gateway.workers()
                                      for l in (w.get("engine_load") or {}).get("loads", [])), default=0))

        aware = [Conversation(rng, f"A{i}") for i in range(CONVERSATIONS)]
        errors = run_conversations(gateway, aware, TURNS, during)
        noticed = killed["at"] + 3.0  # the gateway probes every second, one failure marks a worker down
        late = [(t, e) for t, e in errors if t > noticed]
        check(not late, f"every request sent after the gateway saw the replica die succeeds: {late[:3]}")
        check(len(errors) <= 8, f"only requests in flight at the kill may fail (at most 8): {len(errors)} failed")
        share_aware, later_aware, tokens_aware = resumed_share(aware)
        print(f"cache-aware: {share_aware:.0%} of {later_aware} later turns landed on the replica holding the previous turn, "
              f"{tokens_aware:.0%} of their prompt tokens cached ({len(errors)} failed at the kill, "
              f"{time.time() - started:.1f} s)", flush=True)
        check(max(load_seen, default=0) > 0, f"smg's load monitor saw running requests (from /metrics): {load_seen}")
        # Every series the Inference Extension's model-server protocol and smg's load monitor read.
        m = replicas[1].metrics()
        names = {k.split("{")[0] for k in m}
        for name in ("vllm:num_requests_waiting", "vllm:num_requests_running", "vllm:kv_cache_usage_perc",
                     "vllm:gpu_cache_usage_perc", "vllm:cache_config_info", "vllm:gpu_prefix_cache_hit_rate",
                     "vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total"):
            check(name in names, f"/metrics has {name}")
        config = next((k for k in m if k.startswith("vllm:cache_config_info")), "")
        check('block_size="16"' in config and "num_gpu_blocks=" in config, f"cache_config_info labels: {config}")
        check(all(0 <= v <= 1 for k, v in m.items() if "cache_usage_perc" in k or "hit_rate" in k), "usage and hit rate within 0-1")

        # The killed replica rejoins.
        victim.start()
        deadline = time.time() + 30
        while time.time() < deadline and victim.url not in gateway.healthy():
            time.sleep(0.2)
        check(victim.url in gateway.healthy(), "the restarted replica rejoins the gateway")
        before = victim.metrics()
        fresh = [Conversation(rng, f"R{i}") for i in range(9)]
        run_conversations(gateway, fresh, 1)
        served = sum(v for k, v in victim.metrics().items() if k.startswith("vllm:request_success_total")) - \
            sum(v for k, v in before.items() if k.startswith("vllm:request_success_total"))
        check(served > 0, f"the rejoined replica serves requests again ({served:.0f} of 9)")

        # A killed replica keeps its cache: idle, it has written what it took to --prefix-cache-dir,
        # so restarted after a SIGKILL it reloads it, and the next turn of the conversations it held,
        # sent where the gateway sends them, resumes there.
        keeper = replicas[0]
        cache_dir = os.path.join(work, "cache-0")
        written = -1
        while written != len(os.listdir(cache_dir)):  # until its idle writes are done
            written = len(os.listdir(cache_dir))
            time.sleep(0.3)
        keeper.kill()
        keeper.start()
        deadline = time.time() + 30
        while time.time() < deadline and keeper.url not in gateway.healthy():
            time.sleep(0.2)
        check("reloaded" in keeper.log_text() and f"from {cache_dir}" in keeper.log_text(),
              "the killed replica reloaded its prefix cache")
        before = keeper.metrics()
        run_conversations(gateway, [c for c in aware if c.turns[-1] is not None], 1)
        after = keeper.metrics()
        hits = sum(v for k, v in after.items() if k.startswith("vllm:prefix_cache_hits_total")) - \
            sum(v for k, v in before.items() if k.startswith("vllm:prefix_cache_hits_total"))
        check(hits > 0, f"the replica killed and restarted serves hits for the conversations it held ({hits:.0f} tokens)")
        print(f"killed and restarted: {written} files on disk, {hits:.0f} prompt tokens resumed from them", flush=True)
        gateway.stop()

        # Round-robin over the same replicas, other conversations.
        gateway = Gateway(replicas, "round_robin", work)
        gateways.append(gateway)
        plain = [Conversation(rng, f"B{i}") for i in range(CONVERSATIONS)]
        errors = run_conversations(gateway, plain, TURNS)
        check(not errors, f"round-robin: every request succeeds: {errors[:3]}")
        share_rr, later_rr, tokens_rr = resumed_share(plain)
        print(f"round-robin: {share_rr:.0%} of {later_rr} later turns landed on the replica holding the previous turn, "
              f"{tokens_rr:.0%} of their prompt tokens cached", flush=True)
        check(share_aware >= 0.8, f"cache-aware routing sends later turns to the replica holding them: {share_aware:.0%}")
        check(share_aware >= share_rr + 0.4, f"cache-aware beats round-robin by a wide margin: {share_aware:.0%} vs {share_rr:.0%}")
        # Round-robin's misplaced turns still find an earlier turn of their conversation on the replica
        # they land on (3 replicas, 6 turns), so its token share runs well above its placement share
        # (51% of tokens with 53% of turns placed, under load): the margin in tokens is the smaller one.
        check(tokens_aware >= tokens_rr + 0.1, f"and in prompt tokens cached: {tokens_aware:.0%} vs {tokens_rr:.0%}")
        print(f"cluster: {time.time() - started:.1f} s", flush=True)
    finally:
        for g in gateways:
            g.stop()
        for r in replicas:
            r.stop()
    return finish("cluster e2e", work)


if __name__ == "__main__":
    sys.exit(main())

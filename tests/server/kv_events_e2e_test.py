#!/usr/bin/env python3
"""KV events end to end: a subscriber reads `serve --kv-events-endpoint` as a router would.

Every message is decoded with msgspec structs that follow vLLM's published event classes
(vllm/distributed/kv_events.py); sequence numbers must run 0, 1, 2, ... per process (the first
batches, sent before the subscriber is connected, come from the replay socket); the subscriber
rebuilds the replica's index of resumable prefixes from the events alone and compares it with what
the replica actually resumes:
  - no held prefix unannounced: for every probe prompt, the tokens the replica took from its cache
    (usage.prompt_tokens_details.cached_tokens) lie within the announced blocks the probe follows;
  - no announced prefix misses: a probe that follows an announced chain to its end (a leaf of the
    index) and then differs resumes exactly at the chain's end — so every announced block is a
    block a prompt resumes through. (Generations end on a block boundary here, so every chain end
    is a snapshot; a rule-4 snapshot inside a block is resumed only by the tokens that follow it.)
Traffic evicts KV blocks and snapshots (small caches), includes message starts and finished
generations (rule-4 snapshots, which a probe must follow through generated tokens), and the
replica is stopped with SIGTERM and restarted on its --prefix-cache-dir: the new process starts
with AllBlocksCleared, announces what it reloaded, and the same checks hold.

Usage: kv_events_e2e_test.py DELTASERVE_BINARY REPO_DIR
"""
import json
import os
import random
import signal
import sys
import tempfile
import threading
import time
from typing import Any

import msgspec
import zmq

from replicas import Replica, check, finish, free_port, http, make_tiny_checkpoint

BIN, REPO = sys.argv[1], sys.argv[2]
BLOCK = 16


# vLLM's event classes (vllm/distributed/kv_events.py), as its subscribers declare them.
class EventBatch(msgspec.Struct, array_like=True, omit_defaults=True, gc=False):
    ts: float
    events: list[Any]
    data_parallel_rank: int | None = None


class KVCacheEvent(msgspec.Struct, omit_defaults=True, gc=False, tag=True):
    pass


class BlockStored(KVCacheEvent):
    block_hashes: list[int]
    parent_block_hash: int | None
    token_ids: list[int]
    block_size: int
    lora_id: int | None
    medium: str | None
    lora_name: str | None
    extra_keys: list[Any] | None = None


class BlockRemoved(KVCacheEvent):
    block_hashes: list[int]
    medium: str | None


class AllBlocksCleared(KVCacheEvent):
    pass


class KVEventBatch(EventBatch):
    events: list[BlockStored | BlockRemoved | AllBlocksCleared]


class Subscriber(threading.Thread):
    """SUB on the events socket, DEALER on the replay socket; rebuilds the index per publisher process."""

    def __init__(self, endpoint, replay_endpoint, topic):
        super().__init__(daemon=True)
        self.context = zmq.Context()
        self.sub = self.context.socket(zmq.SUB)
        self.sub.connect(endpoint)
        self.sub.setsockopt(zmq.SUBSCRIBE, topic.encode())
        self.replay = self.context.socket(zmq.DEALER)
        self.replay.connect(replay_endpoint)
        self.topic = topic.encode()
        self.decoder = msgspec.msgpack.Decoder(type=KVEventBatch)
        self.lock = threading.Lock()
        self.processes = []      # per publisher process: {"batches": [(seq, batch)], "replayed": n}
        self.blocks = {}         # hash → (parent, tokens): the current process's index
        self.errors = []
        self.last_message = time.time()
        self.stopping = False

    def run(self):
        while not self.stopping:
            if not self.sub.poll(50):
                continue
            topic, seq_bytes, payload = self.sub.recv_multipart()
            with self.lock:
                self.last_message = time.time()
                if topic != self.topic:
                    self.errors.append(f"topic {topic!r}")
                self.receive(int.from_bytes(seq_bytes, "big"), payload)

    def receive(self, seq, payload):
        process = self.processes[-1] if self.processes else None
        expected = process["batches"][-1][0] + 1 if process else 0
        if process is None or seq < expected:  # a new publisher process numbers from 0 again
            process = {"batches": [], "replayed": 0}
            self.processes.append(process)
            self.blocks = {}
            expected = 0
        if seq > expected:  # missed batches (before we were connected, or dropped): replay them
            for replayed_seq, replayed_payload in self.fetch_replay(expected, seq):
                self.apply(process, replayed_seq, replayed_payload)
                process["replayed"] += 1
        self.apply(process, seq, payload)

    def fetch_replay(self, start, stop):
        self.replay.send_multipart([b"", start.to_bytes(8, "big")])
        got = []
        while self.replay.poll(5000):
            _, seq_bytes, payload = self.replay.recv_multipart()
            seq = int.from_bytes(seq_bytes, "big", signed=True)
            if seq < 0:
                break
            if seq < stop:
                got.append((seq, payload))
        return got

    def apply(self, process, seq, payload):
        try:
            batch = self.decoder.decode(payload)
        except msgspec.ValidationError as error:
            self.errors.append(f"batch {seq} does not decode with vLLM's schema: {error}")
            return
        if process["batches"] and seq != process["batches"][-1][0] + 1:
            self.errors.append(f"sequence gap: {process['batches'][-1][0]} then {seq}")
        process["batches"].append((seq, batch))
        for event in batch.events:
            if isinstance(event, AllBlocksCleared):
                self.blocks = {}
            elif isinstance(event, BlockStored):
                if event.block_size != BLOCK or len(event.token_ids) != BLOCK * len(event.block_hashes):
                    self.errors.append(f"BlockStored of {len(event.block_hashes)} blocks carries {len(event.token_ids)} tokens")
                if event.medium != "CPU":
                    self.errors.append(f"medium {event.medium!r}")
                parent = event.parent_block_hash
                if parent is not None and parent not in self.blocks:
                    self.errors.append(f"BlockStored's parent {parent} was never announced")
                for i, h in enumerate(event.block_hashes):
                    if h in self.blocks:
                        self.errors.append(f"block {h} announced twice")
                    self.blocks[h] = (parent, tuple(event.token_ids[i * BLOCK:(i + 1) * BLOCK]))
                    parent = h
            else:
                for h in event.block_hashes:
                    if self.blocks.pop(h, None) is None:
                        self.errors.append(f"BlockRemoved of {h}, never announced")

    def settle(self, replica, quiet=0.2):
        """Waits until the replica is idle and no event came for `quiet` s, counted from the call at the
        earliest: events queued before the last answer may still be on their way (a loaded machine
        delays the publisher's thread), and the last message seen may be from long before them."""
        called = time.time()
        deadline = called + 30
        while time.time() < deadline:
            m = replica.metrics()
            busy = any(v > 0 for k, v in m.items() if k.split("{")[0] in ("vllm:num_requests_running", "vllm:num_requests_waiting"))
            with self.lock:
                idle_for = time.time() - max(self.last_message, called)
            if not busy and idle_for >= quiet:
                return
            time.sleep(0.01)

    # The index, as a router would use it.
    def snapshot(self):
        with self.lock:
            return dict(self.blocks)

    @staticmethod
    def announced_blocks(blocks, prompt):
        """How many leading full blocks of `prompt` are announced, following parents."""
        by_parent = {(parent, tokens): h for h, (parent, tokens) in blocks.items()}
        parent, k = None, 0
        while (k + 1) * BLOCK <= len(prompt):
            h = by_parent.get((parent, tuple(prompt[k * BLOCK:(k + 1) * BLOCK])))
            if h is None:
                break
            parent, k = h, k + 1
        return k

    @staticmethod
    def leaves(blocks):
        """[(hash, tokens of the whole chain)] for every announced block no announced block extends."""
        parents = {parent for parent, _ in blocks.values()}
        out = []
        for h in blocks:
            if h in parents:
                continue
            chain, cursor = [], h
            while cursor is not None:
                parent, tokens = blocks[cursor]
                chain[:0] = tokens
                cursor = parent
            out.append((h, chain))
        return out


def complete(port, prompt, max_tokens):
    status, body, _ = http(port, "POST", "/v1/completions", json.dumps(
        {"model": "tiny", "prompt": prompt, "max_tokens": max_tokens, "ignore_eos": True, "temperature": 0}))
    if not check(status == 200, f"completion answered {status}: {body[:200]}"):
        return 0
    return json.loads(body)["usage"]["prompt_tokens_details"]["cached_tokens"]


def aligned_max_tokens(prompt_len, at_least=1):
    """max_tokens that ends the generation (its rule-4 snapshot, prompt + generated − 1) on a block."""
    m = (1 - prompt_len) % BLOCK or BLOCK
    while m < at_least:
        m += BLOCK
    return m


def probe(sub, replica, prompt, rng, stats):
    """Checks one probe: the tokens resumed lie within the announced blocks it follows."""
    sub.settle(replica)
    k = sub.announced_blocks(sub.snapshot(), prompt)
    cached = complete(replica.port, prompt, aligned_max_tokens(len(prompt)))
    stats["probes"] += 1
    stats["announced_tokens"] += k * BLOCK
    stats["cached_tokens"] += cached
    check(cached // BLOCK <= k, f"a held prefix is unannounced: the probe resumed {cached} tokens, "
                                f"its announced chain is {k} blocks")
    return k, cached


def probe_leaves(sub, replica, rng, stats, count):
    """Follows announced chains to their end and checks each resumes exactly there."""
    probed = set()
    for _ in range(count):
        sub.settle(replica)
        candidates = [(h, chain) for h, chain in sub.leaves(sub.snapshot()) if h not in probed]
        if not candidates:
            break
        h, chain = rng.choice(candidates)
        probed.add(h)
        prompt = chain + [rng.randrange(30000, 40000) for _ in range(3)]
        k, cached = probe(sub, replica, prompt, rng, stats)
        check(k == len(chain) // BLOCK, f"the chain of an announced leaf is announced ({k} of {len(chain) // BLOCK} blocks)")
        if check(cached == len(chain), f"an announced prefix misses: the leaf ends at {len(chain)} tokens, "
                                        f"the probe resumed {cached}"):
            stats["leaf_hits"] += 1
            stats["decoded_leaves" if len(chain) % 64 else "grid_leaves"] += 1
    return len(probed)


def main():
    work = tempfile.mkdtemp(prefix="deltaserve-kv-events-")
    rng = random.Random(11)
    replica = sub = None
    try:
        model = make_tiny_checkpoint(BIN, REPO, work)
        events = f"ipc://{work}/kv-events"
        replay_port = free_port()
        cache_dir = os.path.join(work, "prefix-cache")
        # Small caches, so traffic evicts KV blocks (6 MiB: ~140 blocks) and snapshots (5 MiB: 6).
        args = ["--cache-memory", "6MiB", "--prefix-cache-memory", "5MiB", "--max-seqs", "2", "--prefix-cache-dir", cache_dir,
                "--kv-events-endpoint", events, "--kv-events-replay-endpoint", f"tcp://127.0.0.1:{replay_port}",
                "--log-stats-interval", "0"]
        replica = Replica(BIN, model, *args, name="kv-events")
        topic = f"kv@127.0.0.1:{replica.port}@tiny"
        sub = Subscriber(events, f"tcp://127.0.0.1:{replay_port}", topic)
        sub.start()
        replica.start()
        im_start = json.loads(http(replica.port, "POST", "/tokenize", json.dumps({"prompt": "<|im_start|>"}))[1])["tokens"]
        check(len(im_start) == 1, f"<|im_start|> is one token: {im_start}")

        def fresh(n):  # random tokens, with a message start now and then (rule-1 snapshots)
            return [im_start[0] if rng.random() < 0.03 else rng.randrange(1000, 20000) for _ in range(n)]

        # Traffic: 8 conversations of 3 turns, each turn the last prompt plus new tokens.
        sent = []
        conversations = [fresh(rng.randrange(70, 260)) for _ in range(8)]
        for turn in range(3):
            for c, prompt in enumerate(conversations):
                complete(replica.port, prompt, aligned_max_tokens(len(prompt), at_least=rng.choice([1, 17])))
                sent.append(prompt)
                conversations[c] = prompt + fresh(rng.randrange(20, 90))
        sub.settle(replica)
        with sub.lock:
            first = sub.processes[0]
            removed = sum(len(e.block_hashes) for _, b in first["batches"] for e in b.events if isinstance(e, BlockRemoved))
            check(isinstance(first["batches"][0][1].events[0], AllBlocksCleared), "the first batch is AllBlocksCleared")
            check(first["replayed"] >= 1, "the batches sent before the subscriber connected came from the replay socket")
        check(removed > 0, "the traffic evicted announced blocks (BlockRemoved)")
        m = replica.metrics()
        check(sum(v for k, v in m.items() if k.startswith("deltaserve_prefix_cache_snapshot_evictions_total")) > 0, "snapshots were evicted")
        check(sum(v for k, v in m.items() if k.startswith("deltaserve_prefix_cache_block_evictions_total")) > 0, "KV blocks were evicted")

        stats = {k: 0 for k in ("probes", "announced_tokens", "cached_tokens", "leaf_hits", "decoded_leaves", "grid_leaves")}
        # No held prefix unannounced: continuations, truncations and unrelated prompts.
        for prompt in rng.sample(sent, 6):
            probe(sub, replica, prompt + fresh(5), rng, stats)
            cut = rng.randrange(1, len(prompt))
            probe(sub, replica, prompt[:cut] + fresh(rng.randrange(5, 40)), rng, stats)
        for _ in range(2):
            probe(sub, replica, fresh(rng.randrange(80, 200)), rng, stats)
        # No announced prefix misses: every chain end resumes there.
        leaves = probe_leaves(sub, replica, rng, stats, 12)
        check(leaves >= 6, f"at least 6 announced leaves to probe, found {leaves}")
        check(stats["decoded_leaves"] >= 1 and stats["grid_leaves"] >= 1,
              f"leaves at finished generations (rule 4) and on the snapshot grid were both probed: {stats}")
        print(f"before restart: {stats}", flush=True)

        # SIGTERM: drained, the cache written, exit 0, AllBlocksCleared last.
        replica.signal(signal.SIGTERM)
        check(replica.wait_exit(60) == 0, "SIGTERM exits 0")
        time.sleep(0.5)
        with sub.lock:
            last_events = sub.processes[-1]["batches"][-1][1].events
        check(isinstance(last_events[-1], AllBlocksCleared), "the last batch of a stopped replica is AllBlocksCleared")
        check(any(name.endswith(".dspc") for name in os.listdir(cache_dir)), "the prefix cache was written to --prefix-cache-dir")

        # Restarted on the same directory: a new sequence from 0, AllBlocksCleared, then what it reloaded.
        replica.start()
        sub.settle(replica, quiet=0.5)
        with sub.lock:
            check(len(sub.processes) == 2, f"the restart is a new publisher process ({len(sub.processes)} seen)")
            second = sub.processes[-1]
            check(second["batches"][0][0] == 0 and isinstance(second["batches"][0][1].events[0], AllBlocksCleared),
                  "the restarted replica's first batch (sequence 0) is AllBlocksCleared")
            reloaded = len(sub.blocks)
        check(reloaded > 0, "the restarted replica announces the prefixes it reloaded")
        check("reloaded" in replica.log_text(), "the restart reloaded the prefix cache")
        stats2 = {k: 0 for k in stats}
        leaves = probe_leaves(sub, replica, rng, stats2, 6)
        check(leaves >= 2 and stats2["leaf_hits"] == leaves, f"reloaded prefixes resume where announced: {stats2}")
        for prompt in rng.sample(sent, 3):
            probe(sub, replica, prompt + fresh(5), rng, stats2)
        print(f"after restart: {reloaded} blocks announced from the reload; {stats2}", flush=True)
        with sub.lock:
            for process in sub.processes:
                seqs = [s for s, _ in process["batches"]]
                check(seqs == list(range(len(seqs))), "sequence numbers run 0, 1, 2, ... without a gap")
            for error in sub.errors[:10]:
                check(False, f"subscriber: {error}")
    finally:
        if replica:
            replica.stop()
            if os.environ.get("DS_TEST_VERBOSE"):
                print(replica.log_text())
        if sub:
            sub.stopping = True
    return finish("kv events e2e", work)


if __name__ == "__main__":
    sys.exit(main())

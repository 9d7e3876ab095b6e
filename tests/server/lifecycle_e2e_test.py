#!/usr/bin/env python3
"""Graceful stop end to end, with the `openai` client.

SIGTERM while three streams run: /ready answers 503 at once, a new request 503 with Retry-After
(/health and /metrics still 200), the streams finish whole, the prefix cache is written to
--prefix-cache-dir and the process exits 0 within --shutdown-timeout. SIGINT with requests that
cannot finish within --shutdown-timeout: the stream's client gets an error event (the `openai`
client raises it), the non-streaming client a choice ended "abort" with the reason, and the
process exits 0 soon after the timeout. No request ends without its client learning how.

Usage: lifecycle_e2e_test.py DELTASERVE_BINARY REPO_DIR
"""
import concurrent.futures
import json
import os
import signal
import sys
import tempfile
import threading
import time

import openai

from replicas import Replica, check, finish, http, make_tiny_checkpoint

BIN, REPO = sys.argv[1], sys.argv[2]
NO_THINKING = {"chat_template_kwargs": {"enable_thinking": False}, "ignore_eos": True}


def client_of(replica):
    return openai.OpenAI(base_url=f"{replica.url}/v1", api_key="none", max_retries=0, timeout=120)


def stream_chat(client, started, max_tokens, text):
    """(finish_reason, completion tokens, error or None) of one streamed chat."""
    finish_reason, tokens = None, None
    try:
        for chunk in client.chat.completions.create(model="tiny", messages=[{"role": "user", "content": text}], stream=True,
                                                    max_tokens=max_tokens, stream_options={"include_usage": True},
                                                    extra_body=NO_THINKING):
            started.release()
            if chunk.usage:
                tokens = chunk.usage.completion_tokens
            for choice in chunk.choices:
                finish_reason = choice.finish_reason or finish_reason
        return finish_reason, tokens, None
    except openai.APIError as error:
        return finish_reason, tokens, error


def refused_while_draining(replica):
    """/ready 503, a new API request 503 with Retry-After, probes and scrapes still answered."""
    check(http(replica.port, "GET", "/ready")[0] == 503, "/ready answers 503 once draining")
    status, body, headers = http(replica.port, "POST", "/v1/chat/completions",
                                 json.dumps({"model": "tiny", "messages": [{"role": "user", "content": "late"}], "max_tokens": 4}))
    check(status == 503 and headers.get("Retry-After") == "1", f"a new request is refused 503 with Retry-After: {status} {body[:120]}")
    try:
        client_of(replica).models.list()
        check(False, "the openai client's request during the drain is refused")
    except openai.APIStatusError as error:
        check(error.status_code == 503, f"the openai client sees 503: {error.status_code}")
    check(http(replica.port, "GET", "/health")[0] == 200, "/health still answers 200 (the process is alive)")
    check(http(replica.port, "GET", "/metrics")[0] == 200, "/metrics still answers")


def drain_test(model, work):
    """SIGTERM: in-flight streams finish, new requests refused, cache written, exit 0 in time."""
    cache_dir = os.path.join(work, "prefix-cache")
    replica = Replica(BIN, model, "--shutdown-timeout", "60", "--prefix-cache-dir", cache_dir, "--log-stats-interval", "0",
                      name="drain").start()
    try:
        client = client_of(replica)
        started = threading.Semaphore(0)
        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            streams = [pool.submit(stream_chat, client, started, 120, f"Stream number {i} about the sea and the ships.") for i in range(3)]
            for _ in range(3):
                started.acquire(timeout=60)
            signalled = time.time()
            replica.signal(signal.SIGTERM)
            time.sleep(0.05)
            refused_while_draining(replica)
            results = [s.result(timeout=120) for s in streams]
        client.close()  # its kept-alive connections would hold the server's stop for their 5 s timeout
        for finish_reason, tokens, error in results:
            check(error is None and finish_reason == "length" and tokens == 120,
                  f"an in-flight stream finished whole during the drain: {finish_reason} {tokens} {error}")
        status = replica.wait_exit(60)
        took = time.time() - signalled
        check(status == 0, f"SIGTERM exits 0, found {status}")
        check(took < 60, f"the drain ended within --shutdown-timeout: {took:.1f} s")
        log = replica.log_text()
        check("draining" in log and "drained in" in log and "stopped" in log, "the log tells the drain")
        check(any(name.endswith(".dspc") for name in os.listdir(cache_dir)), "the prefix cache was written to --prefix-cache-dir")
        print(f"drain: 3 streams finished, exit {status} {took:.2f} s after SIGTERM", flush=True)
    finally:
        replica.stop()


def abort_test(model):
    """SIGINT with --shutdown-timeout 1: what cannot finish is aborted, each client told why."""
    replica = Replica(BIN, model, "--shutdown-timeout", "1", "--log-stats-interval", "0", name="abort").start()
    try:
        client = client_of(replica)
        started = threading.Semaphore(0)
        body = json.dumps({"model": "tiny", "prompt": "A long story", "max_tokens": 20000, "ignore_eos": True})
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            stream = pool.submit(stream_chat, client, started, 20000, "Tell a very long story.")
            whole = pool.submit(http, replica.port, "POST", "/v1/completions", body, 120)
            started.acquire(timeout=60)
            time.sleep(0.3)  # the non-streaming request is admitted too
            signalled = time.time()
            replica.signal(signal.SIGINT)
            finish_reason, tokens, error = stream.result(timeout=60)
            status, text, _ = whole.result(timeout=60)
        client.close()
        check(isinstance(error, openai.APIError) and "shut down" in str(error),
              f"the aborted stream's client gets an error naming the shutdown: {error!r}")
        choice = json.loads(text)["choices"][0] if status == 200 else {}
        check(choice.get("finish_reason") == "abort" and "shut down" in choice.get("error", ""),
              f"the aborted non-streaming request ends 'abort' with the reason: {status} {text[:300]}")
        exit_status = replica.wait_exit(30)
        took = time.time() - signalled
        check(exit_status == 0, f"SIGINT exits 0, found {exit_status}")
        check(took < 5, f"the abort came soon after --shutdown-timeout 1 s: {took:.1f} s")
        check("aborting them" in replica.log_text(), "the log tells the abort")
        print(f"abort: exit {exit_status} {took:.2f} s after SIGINT", flush=True)
    finally:
        replica.stop()


def main():
    work = tempfile.mkdtemp(prefix="deltaserve-lifecycle-")
    model = make_tiny_checkpoint(BIN, REPO, work)
    drain_test(model, work)
    abort_test(model)
    return finish("lifecycle e2e", work)


if __name__ == "__main__":
    sys.exit(main())

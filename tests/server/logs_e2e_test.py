#!/usr/bin/env python3
"""End-to-end tests of what `deltaserve serve` logs for an operator: one line per finished request
(id, route, status, prompt / cached / generated tokens, TTFT, duration, finish reason, never the
prompt or the reply), one per refused request (status and the error the client got, never the
key), the periodic engine line while busy (--log-stats-interval), --log-format json (every line one
JSON object, request and engine lines with typed fields equal to the usage clients were told), and
-q, which silences them. The `tiny` random checkpoint with the real Qwen3.5 vocabulary.

Usage: logs_e2e_test.py DELTASERVE_BINARY REPO_DIR
"""
import json
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from access_e2e_test import Server, http, tiny_model  # noqa: E402  (shared set-up; runs nothing on import)

failures = []
SECRET_PROMPT = "the secret prompt words zebra quokka"


def check(condition, what):
    if not condition:
        failures.append(what)
        print(f"FAIL: {what}", flush=True)


def exercise(server):
    """A chat, a streamed completion with two choices, a refused body and a wrong key; returns the usages."""
    client = server.client("key-1")
    chat = client.chat.completions.create(model="tiny", messages=[{"role": "user", "content": SECRET_PROMPT}],
                                          max_tokens=6, extra_body={"ignore_eos": True})
    stream = client.completions.create(model="tiny", prompt="hello there", max_tokens=5, n=2, stream=True,
                                       stream_options={"include_usage": True}, extra_body={"ignore_eos": True})
    usage = None
    for chunk in stream:
        usage = chunk.usage or usage
    status, _, _ = http(server.port, "POST", "/v1/chat/completions", {"messages": 3}, {"Authorization": "Bearer key-1"})
    check(status == 400, f"a bad body is refused: {status}")
    status, _, _ = http(server.port, "POST", "/v1/chat/completions", {"messages": []}, {"Authorization": "Bearer wrong-key-xyz"})
    check(status == 401, f"a wrong key is refused: {status}")
    return chat, usage


def text_lines(model):
    server = Server(model, "--api-key", "key-1", "--log-stats-interval", "0.2")
    try:
        chat, usage = exercise(server)
    finally:
        server.stop()
    log = server.log_text()
    line = re.search(r"request (chatcmpl-\S+): POST /v1/chat/completions 200, prompt (\d+) \((\d+) cached\), "
                     r"generated (\d+), TTFT [0-9.]+ s, [0-9.]+ s(, [0-9.]+ tok/s)?, finish (\w+)", log)
    check(line is not None, f"a finished chat is one line with its numbers:\n{log}")
    if line:
        check(line.group(1) == chat.id, f"the line names the response id: {line.group(1)} vs {chat.id}")
        check(int(line.group(2)) == chat.usage.prompt_tokens and int(line.group(4)) == chat.usage.completion_tokens,
              f"the line's tokens are the usage: {line.group(0)} vs {chat.usage}")
        check(line.group(6) == "length", f"finish reason length: {line.group(6)}")
    check(re.search(rf"POST /v1/completions 200 stream, 2 choices, prompt {usage.prompt_tokens} \(\d+ cached\), "
                    rf"generated {usage.completion_tokens}, .*finish length,length", log) is not None,
          f"a streamed completion with n=2 is one line:\n{log}")
    check("POST /v1/chat/completions 400: messages: expected a non-empty list" in log, "a refused body is logged with its error")
    check(re.search(r"POST /v1/chat/completions 401: the API key", log) is not None, "a wrong key is logged as 401")
    check("wrong-key-xyz" not in log and "key-1" not in log, "no key in the log")
    check(SECRET_PROMPT not in log and "zebra" not in log, "never the prompt text")
    check(re.search(r"engine: prompt [0-9.]+ tok/s \([0-9.]+ prefilled\), generation [0-9.]+ tok/s; running \d+, "
                    r"waiting \d+; KV [0-9.]+% of \d+ blocks; prefix cache hit", log) is not None,
          f"the periodic engine line appears while busy:\n{log}")


def json_lines(model):
    server = Server(model, "--api-key", "key-1", "--log-stats-interval", "0.2", "--log-format", "json")
    try:
        chat, usage = exercise(server)
    finally:
        server.stop()
    records = []
    for line in server.log_text().splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            check(False, f"--log-format json: a line that is not JSON: {line!r}")
    check(all({"time", "level", "message"} <= set(r) for r in records), "every JSON line has time, level and message")
    requests = [r for r in records if r.get("event") == "request" and r.get("status") == 200]
    mine = [r for r in requests if r.get("id") == chat.id]
    check(len(mine) == 1, f"one request record for the chat: {requests}")
    if mine:
        r = mine[0]
        check(r["route"] == "/v1/chat/completions" and r["stream"] is False and r["prompt_tokens"] == chat.usage.prompt_tokens
              and r["completion_tokens"] == chat.usage.completion_tokens and r["finish_reason"] == "length"
              and isinstance(r["ttft_s"], float) and r["duration_s"] >= r["ttft_s"], f"the chat's record: {r}")
    streamed = [r for r in requests if r.get("route") == "/v1/completions"]
    check(len(streamed) == 1 and streamed[0]["choices"] == 2 and streamed[0]["completion_tokens"] == usage.completion_tokens
          and streamed[0]["stream"] is True, f"the streamed completion's record: {streamed}")
    refused = [r for r in records if r.get("event") == "request" and r.get("status") in (400, 401)]
    check(sorted(r["status"] for r in refused) == [400, 401], f"refused requests are records with their status: {refused}")
    engine = [r for r in records if r.get("event") == "engine"]
    check(engine and all(isinstance(r["running"], int) and r["kv_blocks"] > 0 for r in engine),
          f"engine records with typed fields: {engine[:2]}")


def quiet(model):
    server = Server(model, "--log-stats-interval", "0.2", "-q")
    try:
        client = server.client("none")
        client.chat.completions.create(model="tiny", messages=[{"role": "user", "content": "hi"}], max_tokens=4)
    finally:
        server.stop()
    log = server.log_text()
    check("request " not in log and "engine: prompt" not in log, f"-q logs neither request nor engine lines:\n{log}")


def main():
    work = tempfile.mkdtemp(prefix="deltaserve-logs-")
    try:
        model = tiny_model(work)
        text_lines(model)
        json_lines(model)
        quiet(model)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"server logs e2e: {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

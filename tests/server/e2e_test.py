#!/usr/bin/env python3
"""End-to-end tests of `deltaserve serve` with the official `openai` client (PyPI) on 127.0.0.1.

The model is the `tiny` random checkpoint with the real Qwen3.5 vocabulary (build-cache/qwen3.5-tokenizer,
fetched by scripts/real_tokenizer.sh). Where a test needs a particular output (reasoning, tool calls,
stop strings) the server runs with --test-script: the engine's logits hook forces a scripted reply
token by token, and everything after the logits — sampling, detokenizing, stop strings, reasoning
and tool-call parsing, streaming — is the real path.

Usage: e2e_test.py DELTASERVE_BINARY REPO_DIR
"""
import concurrent.futures
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import openai

BIN, REPO = sys.argv[1], sys.argv[2]
REAL_TOKENIZER = os.path.join(REPO, "build-cache", "qwen3.5-tokenizer", "tokenizer.json")
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print(f"FAIL: {what}", flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(port, method, path, body=None):
    data = body.encode() if isinstance(body, str) else body
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


class Server:
    def __init__(self, model, *args):
        self.port = free_port()
        self.log = tempfile.NamedTemporaryFile(prefix="deltaserve-serve-", suffix=".log", delete=False)
        self.process = subprocess.Popen([BIN, "serve", "--model", model, "--port", str(self.port), "--threads", "2",
                                         "--cache-memory", "512MiB", *args], stdout=self.log, stderr=self.log)
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                if http(self.port, "GET", "/ready")[0] == 200:
                    break
            except OSError:
                pass
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited: {open(self.log.name).read()}")
            time.sleep(0.1)
        else:
            raise RuntimeError("server not ready after 120 s")
        self.client = openai.OpenAI(base_url=f"http://127.0.0.1:{self.port}/v1", api_key="none", max_retries=0, timeout=120)

    def metrics(self):
        status, text = http(self.port, "GET", "/metrics")
        assert status == 200
        values = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                values[name] = float(value)
        return values

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)


def metric(values, name):
    return next(v for k, v in values.items() if k.split("{")[0] == name)


def stream_chat(client, **kwargs):
    content, reasoning, finish, calls, usage = "", "", None, {}, None
    for chunk in client.chat.completions.create(stream=True, **kwargs):
        if chunk.usage:
            usage = chunk.usage
        for choice in chunk.choices:
            delta = choice.delta
            content += delta.content or ""
            reasoning += getattr(delta, "reasoning_content", None) or (delta.model_extra or {}).get("reasoning_content") or ""
            for call in delta.tool_calls or []:
                entry = calls.setdefault(call.index, {"name": "", "arguments": "", "id": None})
                entry["id"] = call.id or entry["id"]
                entry["name"] += call.function.name or ""
                entry["arguments"] += call.function.arguments or ""
            finish = choice.finish_reason or finish
    return content, reasoning, finish, calls, usage


def reasoning_of(message):
    return getattr(message, "reasoning_content", None) or (message.model_extra or {}).get("reasoning_content") or ""


WEATHER_TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather forecast",
                  "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"},
                                                                  "metric": {"type": "boolean"}},
                                 "required": ["city"]}}}]
SCRIPT = [
    {"prompt_contains": "REASONING_TEST", "reply": "Let me think about it.\n</think>\n\nThe answer is 42."},
    {"prompt_contains": "TOOL_TEST", "reply": "I need the weather.\n</think>\n\n<tool_call>\n<function=get_weather>\n"
                                              "<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n"
                                              "<parameter=metric>\ntrue\n</parameter>\n</function>\n</tool_call>"},
    {"prompt_contains": "STOP_TEST", "reply": "alpha beta STOP gamma delta"},
]


def main():
    work = tempfile.mkdtemp(prefix="deltaserve-e2e-")
    try:
        model = os.path.join(work, "tiny")
        subprocess.run([BIN, "make-checkpoint", "--shape", "tiny", "--out", model, "--seed", "5", "-q"], check=True)
        shutil.copy(REAL_TOKENIZER, os.path.join(model, "tokenizer.json"))  # the real vocabulary
        script = os.path.join(work, "script.json")
        with open(script, "w") as f:
            json.dump(SCRIPT, f)
        server = Server(model, "--test-script", script, "--max-seqs", "16", "--max-batch-tokens", "256")
        try:
            run_api_tests(server)
            run_usage_metrics_test(server)
            run_prefix_cache_test(server)
            run_port_clash_test(server, model)
            run_error_tests(server)
            run_concurrency_tests(server)
        finally:
            server.stop()
        run_overload_test(model)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"server e2e: {len(failures)} failed")
    return 1 if failures else 0


def run_api_tests(server):
    client = server.client
    # Nothing a client asked for yet: the start-up warm-up is not in the token counters, and the
    # /ready probes that answered 503 while loading are not 5xx responses.
    start = server.metrics()
    check(metric(start, "vllm:prompt_tokens_total") == 0 and metric(start, "vllm:generation_tokens_total") == 0,
          "token counters start at 0 (the warm-up is not counted)")
    check(start['deltaserve_http_responses_total{code="5xx"}'] == 0, "/ready's 503 while loading is not counted as a 5xx")
    check(server.client.models.list().data[0].id == "tiny", "models lists the served model")
    check(http(server.port, "GET", "/health")[0] == 200, "/health")

    # Chat: streaming and not give the same greedy text; usage in both.
    messages = [{"role": "user", "content": "Tell me something."}]
    kw = dict(model="tiny", messages=messages, max_tokens=12, temperature=0,
              extra_body={"chat_template_kwargs": {"enable_thinking": False}, "ignore_eos": True})
    whole = client.chat.completions.create(**kw)
    content, reasoning, finish, _, usage = stream_chat(client, stream_options={"include_usage": True}, **kw)
    check(whole.choices[0].message.content == content, f"chat stream == non-stream: {whole.choices[0].message.content!r} vs {content!r}")
    check(whole.usage.completion_tokens == 12 and usage and usage.completion_tokens == 12, "chat usage counts 12 tokens")
    check(whole.choices[0].finish_reason == "length" and finish == "length", "finish_reason length")
    rendered = json.loads(http(server.port, "POST", "/v1/chat/completions/render",
                               json.dumps({"messages": messages, "chat_template_kwargs": {"enable_thinking": False}}))[1])
    check(whole.usage.prompt_tokens == len(rendered["token_ids"]), "render gives the prompt's token ids")
    check(rendered["prompt"].endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n"), "thinking off renders the empty think block")

    # Completions: same text streamed or not; logprobs.
    comp = client.completions.create(model="tiny", prompt="The capital of France is", max_tokens=10, temperature=0,
                                     logprobs=2, extra_body={"ignore_eos": True})
    streamed = "".join(c.choices[0].text for c in client.completions.create(
        model="tiny", prompt="The capital of France is", max_tokens=10, temperature=0, stream=True, extra_body={"ignore_eos": True}))
    check(comp.choices[0].text == streamed, "completions stream == non-stream")
    check(len(comp.choices[0].logprobs.token_logprobs) == 10 and len(comp.choices[0].logprobs.top_logprobs[0]) >= 1,
          "completion logprobs")
    ids = json.loads(http(server.port, "POST", "/v1/completions/render", json.dumps({"prompt": "The capital of France is"}))[1])
    check(comp.usage.prompt_tokens == len(ids["token_ids"]), "completion render ids")

    # Reasoning split (thinking on: the prompt ends inside <think>).
    r = client.chat.completions.create(model="tiny", messages=[{"role": "user", "content": "REASONING_TEST"}], max_tokens=64)
    check(reasoning_of(r.choices[0].message) == "Let me think about it.\n", f"reasoning: {reasoning_of(r.choices[0].message)!r}")
    check(r.choices[0].message.content == "The answer is 42.", f"content after reasoning: {r.choices[0].message.content!r}")
    check(r.choices[0].finish_reason == "stop", "stops at EOS after the reply")
    content, reasoning, finish, _, _ = stream_chat(client, model="tiny", messages=[{"role": "user", "content": "REASONING_TEST"}], max_tokens=64)
    check((reasoning, content, finish) == ("Let me think about it.\n", "The answer is 42.", "stop"), f"streamed reasoning: {(reasoning, content)!r}")

    # Tool calls, typed by the schema; streaming too.
    t = client.chat.completions.create(model="tiny", messages=[{"role": "user", "content": "TOOL_TEST"}], tools=WEATHER_TOOLS, max_tokens=128)
    calls = t.choices[0].message.tool_calls or []
    check(t.choices[0].finish_reason == "tool_calls", f"finish_reason tool_calls: {t.choices[0].finish_reason}")
    check(len(calls) == 1 and calls[0].function.name == "get_weather", "one get_weather call")
    if calls:
        check(json.loads(calls[0].function.arguments) == {"city": "Paris", "days": 3, "metric": True},
              f"typed arguments: {calls[0].function.arguments}")
        check(calls[0].id.startswith("call_"), "call id")
    content, reasoning, finish, scalls, _ = stream_chat(client, model="tiny", messages=[{"role": "user", "content": "TOOL_TEST"}],
                                                        tools=WEATHER_TOOLS, max_tokens=128)
    check(finish == "tool_calls" and len(scalls) == 1 and json.loads(scalls[0]["arguments"]) == {"city": "Paris", "days": 3, "metric": True},
          f"streamed tool call: {scalls}")
    check(reasoning == "I need the weather.\n" and content.strip() == "", f"tool call reasoning/content: {reasoning!r} {content!r}")
    # The call goes back through the template (arguments as JSON text).
    follow = [{"role": "user", "content": "weather?"}, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}]
    status, body = http(server.port, "POST", "/v1/chat/completions/render", json.dumps({"messages": follow, "tools": WEATHER_TOOLS}))
    check(status == 200 and "<parameter=city>\nParis\n</parameter>" in json.loads(body)["prompt"], "tool call history renders")

    # Stop strings: never emitted, finish_reason stop; the same when streamed.
    kw = dict(model="tiny", messages=[{"role": "user", "content": "STOP_TEST"}], max_tokens=32, stop=["STOP"],
              extra_body={"chat_template_kwargs": {"enable_thinking": False}})
    before = server.metrics()
    s = client.chat.completions.create(**kw)
    check(s.choices[0].message.content == "alpha beta " and s.choices[0].finish_reason == "stop", f"stop string: {s.choices[0].message.content!r}")
    generated = metric(server.metrics(), "vllm:generation_tokens_total") - metric(before, "vllm:generation_tokens_total")
    check(generated == s.usage.completion_tokens, f"the engine stops at the stop string: {generated} tokens generated, "
          f"{s.usage.completion_tokens} in the reply")
    content, _, finish, _, _ = stream_chat(client, **kw)
    check(content == "alpha beta " and finish == "stop", f"streamed stop string: {content!r}")
    s = client.chat.completions.create(**{**kw, "stop": [" be"]})
    check(s.choices[0].message.content == "alpha", f"stop string inside a token run: {s.choices[0].message.content!r}")

    # n > 1 with a seed; sampling reproducible.
    a = client.chat.completions.create(model="tiny", messages=messages, max_tokens=8, temperature=1.0, seed=7, n=2,
                                       extra_body={"ignore_eos": True})
    b = client.chat.completions.create(model="tiny", messages=messages, max_tokens=8, temperature=1.0, seed=7, n=2,
                                       extra_body={"ignore_eos": True})
    check(len(a.choices) == 2 and [c.message.content for c in a.choices] == [c.message.content for c in b.choices], "n=2 seeded")
    check(a.usage.completion_tokens == 16, "usage sums the choices")


def run_usage_metrics_test(server):
    """The token counters equal the sum of the usage the clients were told, after a mixed run."""
    client = server.client
    before = server.metrics()
    usages = []
    chat = dict(model="tiny", messages=[{"role": "user", "content": "Count the tokens."}], max_tokens=6, temperature=0,
                extra_body={"ignore_eos": True})
    usages.append(client.chat.completions.create(**chat).usage)
    usages.append(stream_chat(client, stream_options={"include_usage": True}, **chat)[4])
    usages.append(client.chat.completions.create(**{**chat, "n": 3, "temperature": 1.0, "seed": 3}).usage)
    usages.append(stream_chat(client, stream_options={"include_usage": True}, **{**chat, "n": 2, "temperature": 1.0})[4])
    comp = dict(model="tiny", prompt="Usage of a completion", max_tokens=5, extra_body={"ignore_eos": True})
    usages.append(client.completions.create(**comp).usage)
    streamed = [c for c in client.completions.create(stream=True, stream_options={"include_usage": True}, **comp)]
    usages.append(streamed[-1].usage)
    usages.append(client.completions.create(model="tiny", prompt=[1, 2, 3, 4, 5], max_tokens=3, extra_body={"ignore_eos": True}).usage)
    # Errors before generation are told no usage and count nothing.
    check(http(server.port, "POST", "/v1/completions", json.dumps({"prompt": "x", "max_tokens": 300000}))[0] == 400, "too long → 400")
    check(http(server.port, "POST", "/v1/completions", json.dumps({"prompt": "x", "model": "nope"}))[0] == 404, "unknown model → 404")
    after = server.metrics()
    check(all(u is not None for u in usages), "every response carried usage")
    usages = [u for u in usages if u is not None]
    prompt = metric(after, "vllm:prompt_tokens_total") - metric(before, "vllm:prompt_tokens_total")
    generated = metric(after, "vllm:generation_tokens_total") - metric(before, "vllm:generation_tokens_total")
    told_prompt, told_generated = sum(u.prompt_tokens for u in usages), sum(u.completion_tokens for u in usages)
    check(told_generated == 6 + 6 + 18 + 12 + 5 + 5 + 3, f"usage sums n choices: {told_generated}")
    check((prompt, generated) == (told_prompt, told_generated),
          f"counters == summed usage: prompt {prompt} vs {told_prompt}, generated {generated} vs {told_generated}")

    # A stream its client cancels counts its prompt and the tokens made before the cancel.
    ids = json.loads(http(server.port, "POST", "/v1/completions/render", json.dumps({"prompt": "cancelled"}))[1])["token_ids"]
    stream = client.completions.create(model="tiny", prompt="cancelled", max_tokens=4000, stream=True, extra_body={"ignore_eos": True})
    next(iter(stream))
    stream.close()
    deadline = time.time() + 20
    end = server.metrics()
    while time.time() < deadline and metric(end, "vllm:prompt_tokens_total") == metric(after, "vllm:prompt_tokens_total"):
        time.sleep(0.05)
        end = server.metrics()
    prompt = metric(end, "vllm:prompt_tokens_total") - metric(after, "vllm:prompt_tokens_total")
    generated = metric(end, "vllm:generation_tokens_total") - metric(after, "vllm:generation_tokens_total")
    check(prompt == len(ids) and 1 <= generated < 4000, f"a cancelled stream counts {prompt} prompt (want {len(ids)}), {generated} generated")


def run_prefix_cache_test(server):
    # Turn 2 of a chat sends turn 1's history back: it finds the history cached up to the last
    # chunk boundary before turn 1's assistant message, reports it in usage, and the counters agree.
    client = server.client
    system = "You are a careful assistant. " + " ".join(f"Rule {i}: answer briefly and cite sources." for i in range(40))
    history = [{"role": "system", "content": system}, {"role": "user", "content": "First question, please."}]
    kw = dict(model="tiny", max_tokens=8, temperature=0, extra_body={"ignore_eos": True})
    before = server.metrics()
    first = client.chat.completions.create(messages=history, **kw)
    history += [{"role": "assistant", "content": first.choices[0].message.content or "ok"},
                {"role": "user", "content": "And a second one."}]
    _, _, _, _, usage = stream_chat(client, messages=history, stream_options={"include_usage": True}, **kw)
    after = server.metrics()
    cached_first = first.usage.prompt_tokens_details.cached_tokens
    cached_second = usage.prompt_tokens_details.cached_tokens if usage and usage.prompt_tokens_details else -1
    check(first.usage.prompt_tokens > 300 and cached_first == 0, f"turn 1 finds nothing cached ({cached_first})")
    check(cached_second >= 256 and cached_second % 64 == 0 and cached_second < usage.prompt_tokens,
          f"turn 2 finds turn 1's history cached on a chunk boundary ({cached_second} of {usage.prompt_tokens})")
    queries = metric(after, "vllm:prefix_cache_queries_total") - metric(before, "vllm:prefix_cache_queries_total")
    hits = metric(after, "vllm:prefix_cache_hits_total") - metric(before, "vllm:prefix_cache_hits_total")
    check(queries == first.usage.prompt_tokens + usage.prompt_tokens and hits == cached_second,
          f"prefix-cache counters match usage (queries {queries}, hits {hits})")
    check(metric(after, "deltaserve_prefix_cache_snapshots") > 0, "snapshots are held")


def run_port_clash_test(server, model):
    """A second server on a busy port fails at once with one line naming host:port; the first keeps every request."""
    started = time.time()
    try:
        second = subprocess.run([BIN, "serve", "--model", model, "--port", str(server.port)], capture_output=True, text=True,
                                timeout=30)
    except subprocess.TimeoutExpired:  # run() has killed it
        check(False, "a second server on a busy port was still running after 30 s: it shared the port")
        return
    elapsed = time.time() - started
    lines = [line for line in second.stderr.splitlines() if line.strip()]
    check(second.returncode == 1, f"busy port → exit 1, got {second.returncode}")
    check(len(lines) == 1 and lines[0].startswith("deltaserve: error: ") and f"127.0.0.1:{server.port}" in lines[0],
          f"busy port → one error line naming host:port: {second.stderr!r}")
    check(elapsed < 5, f"busy port fails before the model loads ({elapsed:.1f} s)")
    check(all(http(server.port, "GET", "/v1/models")[0] == 200 for _ in range(20)), "the first server answers all 20 requests")


def run_error_tests(server):
    port = server.port

    def expect(status, body, param=None, text=None, path="/v1/chat/completions"):
        got, raw = http(port, "POST", path, body)
        try:
            error = json.loads(raw)["error"]
        except Exception:
            error = {}
        ok = got == status and error.get("code") == status and (param is None or error.get("param") == param) and \
            (text is None or text in error.get("message", ""))
        check(ok, f"{path} {body[:60]!r} → {status} {param} {text}: got {got} {raw[:300]}")

    msgs = '"messages": [{"role": "user", "content": "hi"}]'
    expect(400, "{not json", text="not valid JSON")
    expect(400, "[1, 2]", text="must be a JSON object")
    expect(400, "{}", param="messages")
    expect(400, '{"messages": "hi"}', param="messages")
    expect(400, '{%s, "temperature": "hot"}' % msgs, param="temperature")
    expect(400, '{%s, "top_p": 2}' % msgs, param="top_p")
    expect(400, '{%s, "max_tokens": -1}' % msgs, param="max_tokens")
    expect(400, '{%s, "n": 0}' % msgs, param="n")
    status, raw = http(port, "POST", "/v1/chat/completions", '{%s, "model": "gpt-4"}' % msgs)
    error = json.loads(raw)["error"]
    check(status == 404 and error["code"] == "model_not_found" and error["param"] == "model", f"unknown model → 404: {status} {raw}")
    try:
        server.client.chat.completions.create(model="gpt-4", messages=[{"role": "user", "content": "hi"}])
        check(False, "an unknown model raises NotFoundError")
    except openai.NotFoundError as e:
        check("gpt-4" in str(e), "NotFoundError names the model")
    except openai.APIStatusError as e:
        check(False, f"an unknown model raised {type(e).__name__}, not NotFoundError")
    expect(400, '{%s, "max_tokens": 300000}' % msgs, param="max_tokens", text="maximum context length")
    expect(400, '{"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]}',
           param="messages[0].content[0].image_url.url", text="expected a data:, file:// or http(s) URL")
    expect(400, '{"messages": [{"role": "wizard", "content": "x"}]}', param="messages[0].role")
    expect(400, '{"messages": [{"role": "user",\n "content": "x",}]}', text="line 2, column 17")
    expect(400, '{"messages": [{"role": "user", "content": "\\udc00"}]}', text="lone UTF-16 surrogate")
    expect(400, b'{"messages": [{"role": "user", "content": "\xc3("}]}', text="invalid UTF-8")
    expect(400, '{%s, "stop": [1]}' % msgs, param="stop")
    expect(400, '{%s, "logprobs": true, "top_logprobs": 50}' % msgs, param="top_logprobs")
    expect(400, '{%s, "tools": [{"type": "function", "function": {"name": "f"}}], "tool_choice": "required"}' % msgs, param="tool_choice")
    expect(400, '{"prompt": 5}', param="prompt", path="/v1/completions")
    expect(400, '{"prompt": [1, 99999999]}', path="/v1/completions", text="vocabulary")
    expect(400, '{"prompt": "x" , "max_tokens": 1.5}', param="max_tokens", path="/v1/completions")
    check(http(port, "GET", "/v1/nothing")[0] == 404, "unknown route → 404")
    check(http(port, "GET", "/v1/chat/completions")[0] == 405, "GET on a POST route → 405")
    check(http(port, "POST", "/v1/chat/completions", b"\xff\xfe\x00garbage")[0] == 400, "binary body → 400")
    try:
        server.client.chat.completions.create(model="tiny", messages=[{"role": "user", "content": "hi"}], temperature=-1)
        check(False, "openai client sees a BadRequestError")
    except openai.BadRequestError as error:
        check("temperature" in str(error), "the client's error names the field")
    check(http(port, "GET", "/health")[0] == 200, "alive after the bad requests")


def run_concurrency_tests(server):
    client = server.client
    prompts = [f"Request number {i}: " + "word " * (3 * i) for i in range(16)]

    def one(i, stream):
        kw = dict(model="tiny", messages=[{"role": "user", "content": prompts[i]}], max_tokens=10, temperature=0,
                  extra_body={"ignore_eos": True, "chat_template_kwargs": {"enable_thinking": False}})
        if stream:
            return stream_chat(client, **kw)[0]
        return client.chat.completions.create(**kw).choices[0].message.content

    alone = [one(i, False) for i in range(16)]
    with concurrent.futures.ThreadPoolExecutor(24) as pool:
        futures = [pool.submit(one, i, True) for i in range(16)]
        bad = [pool.submit(http, server.port, "POST", "/v1/chat/completions", '{"messages": 7}') for _ in range(8)]
        together = [f.result() for f in futures]
        bad_status = [f.result()[0] for f in bad]
    check(together == alone, "16 concurrent streams give what each gives alone")
    check(all(s == 400 for s in bad_status), "bad requests in the load get 400")

    # A client that disconnects mid-stream cancels its request.
    before = server.metrics()
    stream = client.chat.completions.create(model="tiny", messages=[{"role": "user", "content": "long"}], max_tokens=5000,
                                            stream=True, extra_body={"ignore_eos": True})
    next(iter(stream))
    stream.close()
    aborted_before = [v for k, v in before.items() if 'finished_reason="abort"' in k]

    def aborted_now(values):
        return [v for k, v in values.items() if 'finished_reason="abort"' in k]

    # The running gauge and the finish counter are two updates: wait for both (a scrape may fall between).
    deadline = time.time() + 20
    after = server.metrics()
    while time.time() < deadline and (metric(after, "vllm:num_requests_running") > 0 or
                                      aborted_now(after) == aborted_before):
        time.sleep(0.1)
        after = server.metrics()
    check(metric(after, "vllm:num_requests_running") == 0, "a disconnected stream is cancelled")
    aborted = aborted_now(after)
    check(aborted and aborted[0] == aborted_before[0] + 1, "the cancel counts as abort")

    # Soak: a few hundred short requests leave RSS and the cache where they started.
    def short(i):
        return client.completions.create(model="tiny", prompt=f"soak {i} " + "x " * (i % 40), max_tokens=4,
                                         extra_body={"ignore_eos": True}).usage.completion_tokens
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(short, range(60)))  # warm: allocator and cache pages settle
        start = server.metrics()
        done = list(pool.map(short, range(300)))
    # The engine publishes its gauges after the step that sent the last token: wait for them.
    deadline = time.time() + 20
    end = server.metrics()
    while time.time() < deadline and (metric(end, "vllm:kv_cache_usage_perc") > 0 or metric(end, "vllm:num_requests_running") > 0):
        time.sleep(0.05)
        end = server.metrics()
    check(all(d == 4 for d in done), "soak requests complete")
    check(metric(end, "vllm:kv_cache_usage_perc") == 0 and metric(end, "vllm:num_requests_waiting") == 0, "soak returns the cache")
    rss0, rss1 = metric(start, "process_resident_memory_bytes"), metric(end, "process_resident_memory_bytes")
    # Each finished request leaves a snapshot (rule 4) within --prefix-cache-memory: what the prefix
    # cache holds is accounted, anything beyond it would be a leak.
    held = metric(end, "deltaserve_prefix_cache_snapshot_bytes") - metric(start, "deltaserve_prefix_cache_snapshot_bytes")
    check(rss1 <= rss0 * 1.10 + 16e6 + held,
          f"soak RSS {rss0 / 2**20:.0f} → {rss1 / 2**20:.0f} MiB (prefix cache snapshots {held / 2**20:+.0f} MiB)")
    check(metric(end, "vllm:generation_tokens_total") >= metric(start, "vllm:generation_tokens_total") + 1200, "generation counter")
    check('vllm:cache_config_info{model_name="tiny",block_size="16"' in http(server.port, "GET", "/metrics")[1], "cache_config_info")


def run_overload_test(model):
    server = Server(model, "--max-seqs", "1", "--max-queue", "1", "--max-batch-tokens", "65",
                    "--default-template-kwargs", '{"enable_thinking": false}')
    try:
        # The server's default template kwargs apply; a request's own override them.
        body = {"messages": [{"role": "user", "content": "hi"}]}
        prompt = json.loads(http(server.port, "POST", "/v1/chat/completions/render", json.dumps(body))[1])["prompt"]
        check(prompt.endswith("<think>\n\n</think>\n\n"), "--default-template-kwargs turns thinking off")
        body["chat_template_kwargs"] = {"enable_thinking": True}
        prompt = json.loads(http(server.port, "POST", "/v1/chat/completions/render", json.dumps(body))[1])["prompt"]
        check(prompt.endswith("<|im_start|>assistant\n<think>\n"), "a request's chat_template_kwargs override the default")

        def one(_):
            status, _ = http(server.port, "POST", "/v1/completions",
                             json.dumps({"prompt": "overload", "max_tokens": 40, "ignore_eos": True}))
            return status
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            statuses = list(pool.map(one, range(8)))
        check(429 in statuses and 200 in statuses and set(statuses) <= {200, 429}, f"overload → 429: {statuses}")
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""End-to-end tests of `deltaserve serve`'s access and vLLM switches through the real binary:
--api-key / --api-key-file / DELTASERVE_API_KEY / VLLM_API_KEY, CORS (--allowed-origins, preflight),
--default-max-tokens, /tokenize and /detokenize, --chat-template (file, inline, and one that does not
parse), --model as a Hub id found in the Hugging Face cache (and one that is not there). Plain HTTP and the official `openai` client; the `tiny` random checkpoint with the real
Qwen3.5 vocabulary, as e2e_test.py.

Usage: access_e2e_test.py DELTASERVE_BINARY REPO_DIR
"""
import json
import os
import shutil
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
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_test import free_port  # noqa: E402  (the shared helper; e2e_test runs nothing on import)


def check(condition, what):
    if not condition:
        failures.append(what)
        print(f"FAIL: {what}", flush=True)


def http(port, method, path, body=None, headers=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()


class Server:
    def __init__(self, model, *args, env=None):
        self.port = free_port()
        self.log = tempfile.NamedTemporaryFile(prefix="deltaserve-access-", suffix=".log", delete=False)
        clean = {k: v for k, v in os.environ.items() if k not in ("DELTASERVE_API_KEY", "VLLM_API_KEY")}
        self.process = subprocess.Popen([BIN, "serve", "--model", model, "--port", str(self.port), "--threads", "2",
                                         "--cache-memory", "256MiB", *args], stdout=self.log, stderr=self.log,
                                        env={**clean, **(env or {})})
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

    def client(self, key):
        return openai.OpenAI(base_url=f"http://127.0.0.1:{self.port}/v1", api_key=key, max_retries=0, timeout=120)

    def log_text(self):
        return open(self.log.name).read()

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)


CUSTOM_TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m.role }}\nCUSTOM {{ m.content }}<|im_end|>\n{% endfor %}"
                   "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def tiny_model(work):
    """The `tiny` random checkpoint with the real Qwen3.5 vocabulary, under work/tiny."""
    model = os.path.join(work, "tiny")
    subprocess.run([BIN, "make-checkpoint", "--shape", "tiny", "--out", model, "--seed", "5", "-q"], check=True)
    shutil.copy(REAL_TOKENIZER, os.path.join(model, "tokenizer.json"))
    return model


def main():
    work = tempfile.mkdtemp(prefix="deltaserve-access-")
    try:
        model = tiny_model(work)
        run_start_up_error_tests(model, work)
        keys = os.path.join(work, "keys.txt")
        with open(keys, "w") as f:
            f.write("\nfile-key-1\n  file-key-2  \n")
        template = os.path.join(work, "custom.jinja")
        with open(template, "w") as f:
            f.write(CUSTOM_TEMPLATE)
        server = Server(model, "--api-key", "flag-key", "--api-key-file", keys, "--allowed-origins", "http://localhost:3000",
                        "--default-max-tokens", "5", "--chat-template", template)
        try:
            run_key_tests(server)
            run_cors_tests(server)
            run_max_tokens_tests(server)
            run_tokenize_tests(server)
            rendered = render(server, "flag-key")
            check(rendered.startswith("<|im_start|>user\nCUSTOM hi<|im_end|>"), f"--chat-template FILE renders: {rendered!r}")
        finally:
            server.stop()
        run_environment_key_tests(model)
        run_hub_id_tests(model, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"server access e2e: {len(failures)} failed")
    return 1 if failures else 0


def render(server, key):
    status, _, body = http(server.port, "POST", "/v1/chat/completions/render", {"messages": [{"role": "user", "content": "hi"}]},
                           {"Authorization": f"Bearer {key}"} if key else {})
    return json.loads(body)["prompt"] if status == 200 else f"HTTP {status}: {body}"


def run_key_tests(server):
    port = server.port
    for probe in ("/health", "/ready", "/metrics", "/version"):
        check(http(port, "GET", probe)[0] == 200, f"{probe} answers without a key")
    status, headers, body = http(port, "GET", "/v1/models")
    error = json.loads(body).get("error", {}) if body.startswith("{") else {}
    check(status == 401 and error.get("code") == "invalid_api_key" and error.get("type") == "invalid_request_error"
          and "Authorization: Bearer" in error.get("message", ""), f"no key → 401 in OpenAI's shape: {status} {body}")
    check(headers.get("WWW-Authenticate") == "Bearer", "a 401 says WWW-Authenticate: Bearer")
    status, _, body = http(port, "GET", "/v1/models", headers={"Authorization": "Bearer not-a-key"})
    check(status == 401 and "not-a-key" not in body, f"wrong key → 401, the key not echoed: {status} {body}")
    check(http(port, "POST", "/tokenize", {"prompt": "x"})[0] == 401, "/tokenize needs the key")
    check(http(port, "GET", "/v1/nothing")[0] == 401, "an unknown route without a key → 401")
    for key in ("flag-key", "file-key-1", "file-key-2"):
        check(http(port, "GET", "/v1/models", headers={"Authorization": f"Bearer {key}"})[0] == 200, f"key {key} is accepted")
    try:
        server.client("wrong").models.list()
        check(False, "the openai client with a wrong key raises AuthenticationError")
    except openai.AuthenticationError as e:
        check("invalid_api_key" in str(e), f"AuthenticationError carries invalid_api_key: {e}")
    reply = server.client("file-key-2").chat.completions.create(model="tiny", messages=[{"role": "user", "content": "hi"}], max_tokens=3)
    check(reply.usage.completion_tokens <= 3, "a chat with a file key completes")
    log = server.log_text()
    check("API keys on (3 accepted)" in log, "the start-up log says auth is on and how many keys")
    check(not any(k in log for k in ("flag-key", "file-key-1", "file-key-2")), "no key appears in the log")


def run_cors_tests(server):
    port = server.port
    preflight = {"Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "authorization, content-type"}
    status, headers, _ = http(port, "OPTIONS", "/v1/chat/completions", headers=preflight)
    check(status == 204 and headers.get("Access-Control-Allow-Origin") == "http://localhost:3000"
          and "POST" in headers.get("Access-Control-Allow-Methods", "")
          and "authorization" in headers.get("Access-Control-Allow-Headers", "").lower()
          and "content-type" in headers.get("Access-Control-Allow-Headers", "").lower()
          and headers.get("Access-Control-Max-Age"), f"preflight from an allowed origin → 204 without a key: {status} {headers}")
    status, headers, body = http(port, "OPTIONS", "/v1/chat/completions", headers={**preflight, "Origin": "http://evil.example"})
    check(status == 403 and "Access-Control-Allow-Origin" not in headers and "evil.example" in body,
          f"preflight from a disallowed origin → 403 without CORS headers: {status} {body}")
    status, headers, _ = http(port, "GET", "/v1/models", headers={"Origin": "http://localhost:3000", "Authorization": "Bearer flag-key"})
    check(status == 200 and headers.get("Access-Control-Allow-Origin") == "http://localhost:3000" and headers.get("Vary") == "Origin",
          f"an allowed origin's response carries Access-Control-Allow-Origin and Vary: {headers}")
    status, headers, _ = http(port, "GET", "/v1/models", headers={"Origin": "http://evil.example", "Authorization": "Bearer flag-key"})
    check("Access-Control-Allow-Origin" not in headers, "a disallowed origin's response carries no CORS headers")


def run_max_tokens_tests(server):
    client = server.client("flag-key")
    chat = client.chat.completions.create(model="tiny", messages=[{"role": "user", "content": "go on"}],
                                          extra_body={"ignore_eos": True})
    check(chat.usage.completion_tokens == 5 and chat.choices[0].finish_reason == "length",
          f"a chat without max_tokens stops at --default-max-tokens 5: {chat.usage.completion_tokens} {chat.choices[0].finish_reason}")
    comp = client.completions.create(model="tiny", prompt="go on", extra_body={"ignore_eos": True})
    check(comp.usage.completion_tokens == 5, f"a completion without max_tokens stops at the cap: {comp.usage.completion_tokens}")
    comp = client.completions.create(model="tiny", prompt="go on", max_tokens=12, extra_body={"ignore_eos": True})
    check(comp.usage.completion_tokens == 12, f"an explicit max_tokens goes past the cap: {comp.usage.completion_tokens}")


def run_tokenize_tests(server):
    port, auth = server.port, {"Authorization": "Bearer flag-key"}
    status, _, body = http(port, "POST", "/tokenize", {"model": "tiny", "prompt": "Hello world, tokens!"}, auth)
    tokenized = json.loads(body)
    _, _, body = http(port, "POST", "/v1/completions/render", {"prompt": "Hello world, tokens!"}, auth)
    check(status == 200 and tokenized["tokens"] == json.loads(body)["token_ids"] and tokenized["count"] == len(tokenized["tokens"])
          and tokenized["max_model_len"] > 0, f"/tokenize a prompt: {tokenized}")
    status, _, body = http(port, "POST", "/detokenize", {"model": "tiny", "tokens": tokenized["tokens"]}, auth)
    check(status == 200 and json.loads(body) == {"prompt": "Hello world, tokens!"}, f"/detokenize gives the text back: {body}")
    messages = [{"role": "user", "content": "hi"}]
    status, _, body = http(port, "POST", "/tokenize", {"messages": messages, "add_generation_prompt": True}, auth)
    chat = json.loads(body)
    _, _, body = http(port, "POST", "/v1/chat/completions/render", {"messages": messages}, auth)
    check(status == 200 and chat["tokens"] == json.loads(body)["token_ids"], f"/tokenize a chat as it renders: {chat}")
    status, _, body = http(port, "POST", "/detokenize", {"tokens": [1, 99999999]}, auth)
    message = json.loads(body)["error"]["message"] if status == 400 else body
    check(status == 400 and "99999999" in message and "[0, " in message, f"/detokenize an id outside the vocabulary → 400: {message}")
    check(http(port, "POST", "/tokenize", {"messages": "hi"}, auth)[0] == 400, "/tokenize bad messages → 400")
    check(http(port, "POST", "/tokenize", {}, auth)[0] == 400, "/tokenize without prompt or messages → 400")
    check(http(port, "POST", "/detokenize", {"tokens": [1], "model": "gpt-4"}, auth)[0] == 404, "/detokenize another model → 404")


def run_environment_key_tests(model):
    server = Server(model, "--chat-template", CUSTOM_TEMPLATE, env={"VLLM_API_KEY": "vllm-env-key"})
    try:
        check(http(server.port, "GET", "/v1/models")[0] == 401, "VLLM_API_KEY turns auth on")
        check(http(server.port, "GET", "/v1/models", headers={"Authorization": "Bearer vllm-env-key"})[0] == 200, "VLLM_API_KEY's key works")
        check(render(server, "vllm-env-key").startswith("<|im_start|>user\nCUSTOM hi"), "--chat-template given inline renders")
        status, headers, _ = http(server.port, "GET", "/health", headers={"Origin": "http://localhost:3000"})
        check(status == 200 and "Access-Control-Allow-Origin" not in headers, "CORS is off without --allowed-origins")
    finally:
        server.stop()
    server = Server(model, env={"DELTASERVE_API_KEY": "ds-env-key", "VLLM_API_KEY": "vllm-env-key"})
    try:
        check(http(server.port, "GET", "/v1/models", headers={"Authorization": "Bearer ds-env-key"})[0] == 200, "DELTASERVE_API_KEY's key works")
        check(http(server.port, "GET", "/v1/models", headers={"Authorization": "Bearer vllm-env-key"})[0] == 401,
              "DELTASERVE_API_KEY comes before VLLM_API_KEY")
    finally:
        server.stop()


def run_hub_id_tests(model, work):
    """serve --model org/name finds the model in the Hugging Face cache, offline; a missing id is one clear error."""
    cache = os.path.join(work, "hub")
    snapshot = os.path.join(cache, "models--test-org--tiny-chat", "snapshots", "0123abc")
    os.makedirs(os.path.join(cache, "models--test-org--tiny-chat", "refs"))
    shutil.copytree(model, snapshot)
    with open(os.path.join(cache, "models--test-org--tiny-chat", "refs", "main"), "w") as f:
        f.write("0123abc\n")
    server = Server("test-org/tiny-chat", "--served-model-name", "tiny", env={"HF_HUB_CACHE": cache})
    try:
        reply = server.client("none").chat.completions.create(model="tiny", messages=[{"role": "user", "content": "hi"}], max_tokens=3)
        check(reply.usage.completion_tokens == 3, "a Hub id from the cache serves a chat")
        check("snapshots/0123abc" in server.log_text(), "the start-up log names the snapshot it loaded")
    finally:
        server.stop()
    result = subprocess.run([BIN, "serve", "--model", "test-org/missing", "--port", "0"], capture_output=True, text=True,
                            env={**os.environ, "HF_HUB_CACHE": cache}, timeout=60)
    check(result.returncode == 1 and "test-org/missing: no such directory here, and not in the Hugging Face cache" in result.stderr
          and "models--test-org--missing does not exist" in result.stderr, f"a missing Hub id → one clear error: {result.stderr!r}")


def run_start_up_error_tests(model, work):
    bad = os.path.join(work, "bad.jinja")
    with open(bad, "w") as f:
        f.write("{% for m in messages %}{{ m.content }}")  # no endfor
    cases = [
        (["--chat-template", bad], [bad, "unexpected end of template"], "a template file that does not parse"),
        (["--chat-template", os.path.join(work, "missing.jinja")], ["missing.jinja", "no such file"], "a template file that is not there"),
        (["--api-key-file", os.path.join(work, "no-keys.txt")], ["no-keys.txt"], "a key file that is not there"),
        (["--allowed-origins", "localhost:3000"], ["--allowed-origins", "scheme://host"], "an origin without a scheme"),
    ]
    for args, needles, what in cases:
        started = time.time()
        result = subprocess.run([BIN, "serve", "--model", model, "--port", "0", *args], capture_output=True, text=True, timeout=60)
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        check(result.returncode == 1 and len(lines) == 1 and lines[0].startswith("deltaserve: error: --")
              and all(n in lines[0] for n in needles) and time.time() - started < 10,
              f"{what} → exit 1 with one line naming it: rc {result.returncode} {result.stderr!r}")


if __name__ == "__main__":
    sys.exit(main())

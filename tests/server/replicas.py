"""Helpers of the scale-out end-to-end tests: deltaserve replicas of the `tiny` checkpoint on
127.0.0.1 (started, probed, signalled, restarted), their metrics, and check() bookkeeping.

The checkpoint is the `tiny` random one with the real Qwen3.5 vocabulary
(build-cache/qwen3.5-tokenizer, fetched by scripts/real_tokenizer.sh), as in e2e_test.py.
"""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print(f"FAIL: {what}", flush=True)
    return condition


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(port, method, path, body=None, timeout=60):
    """(status, body text, headers) of one request; HTTP errors are answers too."""
    data = body.encode() if isinstance(body, str) else body
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read().decode(), response.headers
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(), error.headers


def make_tiny_checkpoint(binary, repo, work):
    model = os.path.join(work, "tiny")
    subprocess.run([binary, "make-checkpoint", "--shape", "tiny", "--out", model, "--seed", "5", "-q"], check=True)
    shutil.copy(os.path.join(repo, "build-cache", "qwen3.5-tokenizer", "tokenizer.json"), os.path.join(model, "tokenizer.json"))
    return model


def parse_metrics(text):
    values = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            values[name] = float(value)
    return values


def metric(values, name):
    """The value of the series `name` (the first one, whatever its labels)."""
    return next(v for k, v in values.items() if k.split("{")[0] == name)


class Replica:
    """One `deltaserve serve` process; start() again after stop() or kill() restarts it on the same port."""

    def __init__(self, binary, model, *args, port=None, name="replica"):
        self.binary, self.model, self.args = binary, model, list(args)
        self.port = port or free_port()
        self.name = name
        self.process = None
        self.log = tempfile.NamedTemporaryFile(prefix=f"deltaserve-{name}-", suffix=".log", delete=False)
        self.url = f"http://127.0.0.1:{self.port}"

    def start(self, wait=True):
        self.process = subprocess.Popen([self.binary, "serve", "--model", self.model, "--port", str(self.port), "--threads", "1",
                                         "--served-model-name", "tiny", *self.args], stdout=self.log, stderr=self.log)
        if wait:
            self.wait_ready()
        return self

    def wait_ready(self, timeout=120):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                if http(self.port, "GET", "/ready", timeout=5)[0] == 200:
                    return
            except OSError:
                pass
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited: {self.log_text()}")
            time.sleep(0.05)
        raise RuntimeError(f"{self.name} not ready after {timeout} s")

    def metrics(self):
        status, text, _ = http(self.port, "GET", "/metrics")
        assert status == 200, status
        return parse_metrics(text)

    def signal(self, number):
        self.process.send_signal(number)

    def wait_exit(self, timeout):
        """The exit status, or None when the process is still running after `timeout` s (then killed)."""
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            return None

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            if self.wait_exit(60) is None:
                print(f"{self.name} did not stop on SIGTERM within 60 s", flush=True)

    def log_text(self):
        with open(self.log.name, errors="replace") as f:
            return f.read()


def finish(name, work):
    shutil.rmtree(work, ignore_errors=True)
    print(f"{name}: {len(failures)} failed", flush=True)
    return 1 if failures else 0

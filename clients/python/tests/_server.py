"""Start and stop a real `quarry serve` for the tests.

The binary is $QUARRY_BINARY (default /work/quarry-bin/quarry). Each server gets its own
temporary data directory, binds 127.0.0.1 on a port the kernel picks (--port 0 with
--port-file), and is stopped by its PID.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from typing import List

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_ROOT = os.path.dirname(HERE)
REPO_ROOT = os.path.dirname(os.path.dirname(PACKAGE_ROOT))
sys.path.insert(0, PACKAGE_ROOT)

BINARY = os.environ.get("QUARRY_BINARY", "/work/quarry-bin/quarry")


class Server:
    """A `quarry serve` child process on a free loopback port."""

    def __init__(self, *flags: str) -> None:
        self.dir = tempfile.mkdtemp(prefix="quarry-pyclient-")
        self.data_dir = os.path.join(self.dir, "data")
        port_file = os.path.join(self.dir, "port")
        self.log = open(os.path.join(self.dir, "server.log"), "wb")
        self.proc = subprocess.Popen(
            [BINARY, "--data-dir", self.data_dir, "serve", "--port", "0",
             "--port-file", port_file, *flags],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while not _read(port_file):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("quarry serve did not start (%s)" % BINARY)
            time.sleep(0.05)
        self.port = int(_read(port_file))
        self.url = "http://127.0.0.1:%d" % self.port
        with urllib.request.urlopen(self.url + "/api/v1/health", timeout=10) as res:
            res.read()

    def cli(self, *args: str) -> str:
        """Run the quarry CLI on this server's data directory."""
        return subprocess.run([BINARY, "--data-dir", self.data_dir, *args], check=True,
                              capture_output=True, text=True, timeout=120).stdout

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=20)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def _read(name: str) -> str:
    try:
        with open(name, encoding="utf-8") as f:
            return f.read().strip()
    except FileNotFoundError:
        return ""


def wait_until(predicate, what: str, limit_s: float = 60.0, step_s: float = 0.1) -> None:
    """Poll until `predicate()` is true; fail naming `what` after `limit_s` (a bound on the
    wait, not an assertion on speed)."""
    deadline = time.monotonic() + limit_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("gave up waiting for " + what)
        time.sleep(step_s)


def python_files() -> List[str]:
    """Every .py of the client, its tests and its benchmark."""
    found = []
    for root in (PACKAGE_ROOT, os.path.join(REPO_ROOT, "bench")):
        for base, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in ("__pycache__", "build")]
            found += [os.path.join(base, f) for f in files if f.endswith(".py")]
    return sorted(found)


def repo_file(*parts: str) -> str:
    return os.path.join(REPO_ROOT, *parts)

#!/usr/bin/env python3
"""Runs the shell examples of a docs page against the real binary and compares what they print
with what the page shows, so that a page cannot drift from the program.

Conventions a page follows (this header is the guide for whoever writes a page):

  ```sh                 run, in page order, each block in its own `bash -e -o pipefail`, in one
                        shared scratch home (HOME, the working directory; the default data
                        directory is ~/.quarry there), with the page's fixtures copied in first.
  ```sh exit=N          the block is expected to end with exit status N (default 0).
  ```sh serve           the first line starts a server (`quarry serve ...`): it runs in the
                        background until the block's other lines have run; 7720 in the block is
                        replaced by a free port, the runner waits for the port to answer, and
                        QUARRY_URL is the server's address for the block's other lines.
  ```sh no-run REASON   shown, not run (a synopsis, or what cannot run here, e.g. `make run`);
                        the reason is required and printed in the test's log.
  ```  ```json  ```output   directly after a run block (blank lines only between): what it
                        prints. Compared line by line after normalising ids, times, paths,
                        scores and rates; a line `...` in the page matches any lines, and
                        `...` inside a line any text.

Usage: doc_examples.py --binary build/quarry --page docs/getting-started.md
                       [--fixtures tests/docs/fixtures/home] [--setup SCRIPT]
                       [--teardown SCRIPT] [--keep]
Exit status 0: every block ran as shown; 1: a block failed or its output differs (printed).
"""
import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time


SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Block:
    def __init__(self, info, lines, line_no):
        words = info.split()
        self.lang = words[0] if words else ""
        self.flags = words[1:]
        self.lines = lines
        self.line_no = line_no  # of the opening fence, 1-based
        self.expected = None  # the output Block that follows, if any

    @property
    def text(self):
        return "\n".join(self.lines) + "\n"

    def flag(self, name):
        for f in self.flags:
            if f == name or f.startswith(name + "="):
                return f.split("=", 1)[1] if "=" in f else ""
        return None


def parse(path):
    """The page's fenced blocks, with each run block's shown output attached."""
    blocks, lines = [], open(path, encoding="utf-8").read().split("\n")
    i, last_end, last_block = 0, -10, None
    while i < len(lines):
        m = re.match(r"^```(.*)$", lines[i])
        if not m:
            i += 1
            continue
        start, info, body = i, m.group(1).strip(), []
        i += 1
        while i < len(lines) and lines[i] != "```":
            body.append(lines[i])
            i += 1
        b = Block(info, body, start + 1)
        between = lines[last_end + 1:start] if last_end >= 0 else ["x"]
        adjacent = all(not l.strip() for l in between)
        if (last_block is not None and adjacent and last_block.lang == "sh"
                and b.lang in ("", "json", "output", "text") and "no-run" not in last_block.flags):
            last_block.expected = b
        else:
            blocks.append(b)
        last_block, last_end = b, i
        i += 1
    return blocks


ULID = re.compile(r"\b[0-9A-HJKMNP-TV-Z]{26}\b")
UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
TIME = re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?Z?\b")
HEX = re.compile(r"\b[0-9a-f]{12,64}\b")
MS = re.compile(r"\b\d+(\.\d+)? ?ms\b")
RATE = re.compile(r"\b\d+(\.\d+)?/s\b")
FLOAT = re.compile(r"(?<![\w.])-?\d+\.\d+(e-?\d+)?\b(?!\.\d)")
TOOK = re.compile(r'("(took_ms|rested_ms)": )-?\d+(\.\d+)?')


def normalise(text, home):
    out = []
    # The scratch home, and the /home/me a page writes for the reader's home.
    for line in text.replace(home, "~").replace("/home/me", "~").split("\n"):
        line = ULID.sub("<id>", line)
        line = UUID.sub("<uuid>", line)
        line = TIME.sub("<time>", line)
        line = HEX.sub("<hex>", line)
        line = TOOK.sub(r"\1<num>", line)
        line = MS.sub("<n> ms", line)
        line = RATE.sub("<n>/s", line)
        line = FLOAT.sub("<num>", line)
        out.append(line.rstrip())
    while out and not out[-1]:
        out.pop()
    while out and not out[0]:
        out.pop(0)
    return out


def line_matches(expected, actual):
    """`...` inside a line stands for any text (a long list the page shortens)."""
    if "..." not in expected:
        return expected == actual
    pattern = ".*".join(re.escape(part) for part in expected.split("..."))
    return re.fullmatch(pattern, actual) is not None


def matches(expected, actual):
    """Line by line; an expected `...` line matches any number of actual lines."""
    if not expected:
        return not actual
    if expected[0] == "...":
        return any(matches(expected[1:], actual[k:]) for k in range(len(actual) + 1))
    return (bool(actual) and line_matches(expected[0], actual[0])
            and matches(expected[1:], actual[1:]))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, seconds=30):
    end = time.time() + seconds
    while time.time() < end:
        if proc.poll() is not None:
            return False
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.05)
    return False


def run_block(block, env, home):
    text = block.text
    server = None
    if block.flag("serve") is not None:
        port = str(free_port())
        lines = [l.replace("7720", port) for l in block.lines]
        command = lines[0].split("#")[0].strip()
        if "--port" not in command:
            command += " --port " + port
        lines[0] = command
        server = subprocess.Popen(["bash", "-c", "exec " + command], cwd=home,
                                  env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, start_new_session=True)
        if not wait_port(int(port), server):
            server.kill()
            return 1, "the server did not come up: " + lines[0]
        text = "\n".join(lines[1:]) + "\n"
        env = dict(env, QUARRY_URL="http://127.0.0.1:" + port)
    try:
        r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", text], cwd=home, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
        return r.returncode, r.stdout.decode("utf-8", "replace")
    finally:
        if server:
            os.killpg(server.pid, 15)
            server.wait(timeout=30)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--page", required=True)
    ap.add_argument("--fixtures", help="copied into the scratch home first")
    ap.add_argument("--setup", help="a bash script run in the home first: the state the page "
                    "assumes (a KB another page made); NAME=VALUE lines it writes to "
                    "~/.doc-env are set for every block")
    ap.add_argument("--teardown", help="a bash script run in the home at the end, pass or fail "
                    "(stops what the setup started)")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()

    binary = os.path.abspath(a.binary)
    tmp = tempfile.mkdtemp(prefix="quarry-doc-examples-")
    home = os.path.join(tmp, "home")
    if a.fixtures:
        shutil.copytree(a.fixtures, home, symlinks=True)
    else:
        os.makedirs(home)
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUARRY_")}
    env.update({"HOME": home, "TZ": "UTC", "LC_ALL": "C.UTF-8", "NO_COLOR": "1",
                "PATH": os.path.dirname(binary) + os.pathsep + env.get("PATH", "")})
    # The models `make model` converts, where an installed binary would find them.
    models = os.path.join(os.path.dirname(binary), "share", "quarry", "models")
    if os.path.isdir(models):
        env["QUARRY_MODELS_DIR"] = models

    try:
        return run_page(a, home, env)
    finally:
        if a.teardown:
            subprocess.run(["bash", os.path.abspath(a.teardown)], cwd=home,
                           env=dict(env, QUARRY_SOURCE_DIR=SOURCE_DIR), timeout=120)
        if a.keep:
            print("kept", tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def run_page(a, home, env):
    failures, ran, skipped = 0, 0, 0
    page = os.path.relpath(a.page)
    if a.setup:
        r = subprocess.run(["bash", "-e", "-o", "pipefail", os.path.abspath(a.setup)], cwd=home,
                           env=dict(env, QUARRY_SOURCE_DIR=SOURCE_DIR),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
        if r.returncode != 0:
            print(f"FAIL setup {a.setup} exited {r.returncode}:\n" + r.stdout.decode())
            return 1
        # Variables the page tells the reader to set (QUARRY_TOKEN=...): NAME=VALUE lines the
        # setup wrote to ~/.doc-env.
        doc_env = os.path.join(home, ".doc-env")
        if os.path.exists(doc_env):
            for line in open(doc_env, encoding="utf-8").read().splitlines():
                if "=" in line:
                    k, v = line.split("=", 1)
                    env[k] = v
    for b in parse(a.page):
        if b.lang != "sh":
            continue
        where = f"{page}:{b.line_no}"
        if "no-run" in b.flags:
            words = b.flags[b.flags.index("no-run") + 1:]
            if not words:
                print(f"FAIL {where}: `no-run` without a reason")
                failures += 1
            else:
                print(f"not run {where}: {' '.join(words)}")
                skipped += 1
            continue
        ran += 1
        want_status = int(b.flag("exit") or 0)
        status, out = run_block(b, env, home)
        problems = []
        if status != want_status:
            problems.append(f"exit status {status}, the page expects {want_status}")
        if b.expected is not None:
            want = normalise(b.expected.text, home)
            got = normalise(out, home)
            if not matches(want, got):
                problems.append("output differs from the page (normalised):\n--- page\n" +
                                "\n".join(want) + "\n--- program\n" + "\n".join(got))
        if problems:
            failures += 1
            print(f"FAIL {where}\n{b.text}" + "\n".join(problems) + f"\n--- raw output\n{out}")
        else:
            print(f"ok {where}")
    print(f"{page}: {ran} blocks run, {skipped} not run, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

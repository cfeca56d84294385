#!/usr/bin/env python3
"""Every error code of docs/errors.md, raised the way a user raises it, with its message held to
the rule that it names its fix (SPEC: every error a user can cause says what to do).

For each code the page's summary table lists, the scenarios below run the real binary (and, for
the server's codes, `quarry serve` and curl) in a scratch home, and check:

  - the error's code, and the exit status (or HTTP status) the table gives for it;
  - that the message names at least one fix, and that every fix it names exists:
      `quarry ...`       parsed against the CLI's own command table (`quarry completion bash`):
                         each word a sub-command of the one before, each flag one the command
                         (or a global option) has; a `kb set` in it is run on a scratch KB, and
                         must succeed as written;
      a KB setting       (chunking.max_tokens, limits.max_upload_bytes, embedder.settings.X):
                         `quarry kb set` on a scratch KB must know it;
      a provider setting (timeout_ms, settings.dimensions): the openai provider must know it;
      --a-flag           some command or the global options must have it;
      QUARRY_X / ..._KEY an environment variable docs/ documents;
      `make TARGET`      a target of the Makefile;  docs/PAGE.md  a page that exists;
    or, for the codes whose fix is to the input itself (a corrupt file, a bad pattern), that it
    names the input it refers to.
  - that no code of the table is left without a scenario, unless it is listed in UNRAISABLE
    with the reason.

Usage: error_fixes.py --binary build/quarry [--keep]
"""
import argparse
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Codes no user action raises, with why.
UNRAISABLE = {
    "internal": "a bug by definition: no situation a user can set up raises it on purpose",
}


class Scenario:
    def __init__(self, code, what, cmd, setup="", exit=None, input=None, http=False):
        self.code, self.what, self.cmd, self.setup = code, what, cmd, setup
        self.exit = exit      # expected exit status; None: the table's for the code
        self.input = input    # the fix is to this input, which the message must name
        self.http = http      # cmd prints an HTTP answer: body, then a last line with the status


S = Scenario
# The scratch home has: KB `notes` (no embedder) holding a.md; $FAKE, an OpenAI-compatible
# endpoint that fails on purpose (fake_provider.py; the model name picks the failure);
# $OPENAI, settings that reach it; secret K1. Each scenario runs in `bash -e -o pipefail`.
SCENARIOS = [
    S("invalid_argument", "unknown flag", "quarry search x --kb notes --frob"),
    S("invalid_argument", "unknown sub-command", "quarry kb frob"),
    S("invalid_argument", "missing argument", "quarry ingest --kb notes"),
    S("invalid_argument", "KB name outside the rule", "quarry kb create 'Bad!'", input="Bad!"),
    S("invalid_argument", "config outside the schema",
      "quarry kb set notes chunking.overlap_tokens=400"),
    S("invalid_argument", "unknown config key", "quarry kb set notes chunking.frob=1"),
    S("invalid_argument", "kb set pair without =", "quarry kb set notes description"),
    S("invalid_argument", "kb delete without --yes, no terminal", "quarry kb delete notes </dev/null"),
    S("invalid_argument", "pattern RE2 refuses", "quarry grep '(' --kb notes", input="missing )"),
    S("invalid_argument", "advanced query FTS5 cannot parse",
      "quarry search '\"unclosed' --advanced --kb notes"),
    S("invalid_argument", "top-k out of range", "quarry search x --kb notes --top-k 0",
      input="top_k"),
    S("invalid_argument", "malformed filter", "quarry search x --kb notes --filter '{\"a\": {\"$frob\": 1}}'",
      input="$frob"),
    S("invalid_argument", "--config not a JSON object", "quarry kb create k2 --config '[1]'"),
    S("invalid_argument", "docs delete with an empty filter",
      "quarry docs delete --kb notes --where '{}'"),
    S("invalid_argument", "unknown provider setting",
      "quarry embed --embedder openai:ok --settings \"${OPENAI%\\}},\\\"frob\\\": 1}\" hi"),
    S("not_found", "unknown KB", "quarry search x --kb nope"),
    S("not_found", "document id not in the KB", "quarry docs get 01NOSUCHDOCUMENT0000000000 --kb notes"),
    S("not_found", "missing path", "quarry ingest missing.md --kb notes", input="missing.md"),
    S("not_found", "missing path in a batch (the rest ingests)",
      "quarry ingest missing.md a.md --kb notes", exit=20, input="missing.md"),
    S("already_exists", "kb create with a used name", "quarry kb create notes"),
    S("conflict", "same name, other bytes, no --replace", "quarry ingest d/a.md --kb notes"),
    S("conflict", "subject keys on a KB with documents",
      "quarry kb set notes 'subjects.keys=[\"contact_id\"]'"),
    S("unsupported_format", "no converter for the extension", "quarry ingest x.png --kb notes",
      input=".png"),
    S("unsupported_format", "a FIFO", "quarry ingest fifo.md --kb notes", setup="mkfifo fifo.md",
      input="FIFO"),
    S("engine_unavailable", "static model not installed",
      "quarry embed --embedder static:nonexistent hi"),
    S("engine_unavailable", "incomplete bert folder", "quarry embed --embedder bert:$HOME/d hi"),
    S("corrupt_input", "a .txt that is binary", "quarry ingest bin.txt --kb notes",
      setup="printf 'a\\0b\\0c\\0\\0\\0\\0' > bin.txt", input="binary"),
    S("corrupt_input", "a .docx that is not a zip", "quarry ingest bad.docx --kb notes",
      setup="printf 'not a zip' > bad.docx", input="zip"),
    S("payload_too_large", "file over limits.max_upload_bytes", "quarry ingest big.md --kb small",
      setup="quarry kb create small >/dev/null && quarry kb set small limits.max_upload_bytes=5 >/dev/null"
            " && printf 'longer than five bytes\\n' > big.md"),
    S("no_content", "an empty file", "quarry ingest empty.md --kb notes", setup=": > empty.md",
      input="empty"),
    S("too_many_chunks", "a document over limits.max_chunks_per_document",
      "quarry ingest long.md --kb tiny",
      setup="quarry kb create tiny >/dev/null"
            " && quarry kb set tiny limits.max_chunks_per_document=1 chunking.max_tokens=16 >/dev/null"
            " && for i in $(seq 200); do echo \"word$i and some more words to fill\"; done > long.md"),
    S("mode_unavailable", "vector search, no embedder", "quarry search x --kb notes --mode vector"),
    S("mode_unavailable", "vector search, embedder's model missing",
      "quarry search x --kb gone --mode vector",
      setup="quarry kb create gone --embedder static:nonexistent-model >/dev/null"),
    S("mode_unavailable", "keyword taken out of modes", "quarry search x --kb greponly --mode keyword",
      setup="quarry kb create greponly >/dev/null && quarry kb set greponly 'modes=[\"grep\"]' >/dev/null"),
    S("dimension_mismatch", "provider returns another length",
      "quarry embed --embedder openai:wrongdim --settings \"$OPENAI\" hi"),
    S("busy", "another writer holds the data directory",
      "quarry --lock-timeout 100 kb create locked",
      setup="(flock .quarry/write.lock sleep 4 >/dev/null 2>&1 &) ; sleep 0.5"),
    S("io_error", "data directory cannot be created", "quarry --data-dir afile/sub kb list",
      setup="touch afile"),
    S("io_error", "a loop of symbolic links", "quarry ingest loop1 --kb notes",
      setup="ln -s loop2 loop1 && ln -s loop1 loop2", input="loop1"),
    S("unauthorized", "provider refuses the key (401)",
      "quarry embed --embedder openai:r401 --settings \"$OPENAI\" hi"),
    S("unauthorized", "named API key secret not set",
      "quarry embed --embedder openai:ok --settings \"${OPENAI%\\}},\\\"api_key_secret\\\": \\\"NOPE_KEY\\\"}\" hi"),
    S("unauthorized", "master key is not the one a secret was stored with",
      "quarry embed --embedder openai:ok --settings \"${OPENAI%\\}},\\\"api_key_secret\\\": \\\"K1\\\"}\" hi",
      setup="cp .quarry/secret.key key.bak && head -c 32 /dev/urandom > .quarry/secret.key"
            " && chmod 600 .quarry/secret.key"),
    S("unauthorized", "server: request without a token",
      "curl -s -w '\\n%{http_code}' \"$SERVER/api/v1/kbs\"", http=True),
    S("unauthorized", "server: malformed Authorization header",
      "curl -s -w '\\n%{http_code}' -H 'Authorization: Basic x' \"$SERVER/api/v1/kbs\"", http=True),
    S("forbidden", "symbolic link out of the ingested directory", "quarry ingest ld --kb notes",
      setup="mkdir -p ld && ln -sf /etc/hostname ld/out.txt && echo hi > ld/in.md", exit=20),
    S("forbidden", "secret.key readable by others",
      "quarry embed --embedder openai:ok --settings \"${OPENAI%\\}},\\\"api_key_secret\\\": \\\"K1\\\"}\" hi",
      setup="cp key.bak .quarry/secret.key && chmod 644 .quarry/secret.key"),
    S("forbidden", "server: a read token writes",
      "curl -s -w '\\n%{http_code}' -X POST -H \"Authorization: Bearer $READ_TOKEN\""
      " -H 'Content-Type: application/json' -d '{\"name\": \"x\"}' \"$SERVER/api/v1/kbs\"",
      setup="chmod 600 .quarry/secret.key", http=True),
    S("rate_limited", "provider keeps answering 429",
      "quarry embed --embedder openai:r429 --settings \"$OPENAI\" hi"),
    S("upstream_error", "provider fails (5xx)",
      "quarry embed --embedder openai:r500 --settings \"$OPENAI\" hi"),
    S("upstream_error", "provider refuses the request (404)",
      "quarry embed --embedder openai:r404 --settings \"$OPENAI\" hi"),
    S("timeout", "provider slower than timeout_ms",
      "quarry embed --embedder openai:slow --settings \"$OPENAI\" hi"),
    S("blocked_address", "loopback embedder without allow_private",
      "quarry kb create ssrf --embedder openai:m"
      " --config '{\"embedder\": {\"settings\": {\"base_url\": \"http://127.0.0.1:9/v1\", \"dimensions\": 4}}}'"),
    S("blocked_address", "cloud-metadata embedder",
      "quarry kb create ssrf --embedder openai:m"
      " --config '{\"embedder\": {\"settings\": {\"base_url\": \"http://169.254.169.254/v1\", \"dimensions\": 4}}}'",
      input="169.254.169.254"),
    S("content_too_large", "provider answers 413",
      "quarry embed --embedder openai:r413 --settings \"$OPENAI\" hi"),
    S("input_rejected", "provider refuses the text",
      "quarry embed --embedder openai:r400input --settings \"$OPENAI\" hi", input="edit the text"),
    S("cancelled", "Ctrl-C during ingest --wait",
      "timeout --preserve-status -s INT 1.5 quarry ingest a.md --kb slow --wait",
      setup="quarry kb create slow --embedder openai:slow"
            " --config \"{\\\"embedder\\\": {\\\"settings\\\": ${OPENAI%\\}},\\\"timeout_ms\\\": 20000}}}\" >/dev/null"),
    S("contract_violation", "pending query without LIMIT $1", "quarry pump run nolimit",
      setup="mkdir -p pump && sqlite3 pump/app.db 'CREATE TABLE t(id TEXT, content TEXT);"
            " INSERT INTO t VALUES (\"1\", \"one\"), (\"2\", \"two\");'"
            " && echo '{\"batch_size\": 1, \"source\": {\"type\": \"sql\", \"driver\": \"sqlite\","
            " \"path\": \"app.db\", \"pending\": \"SELECT id, content FROM t\","
            " \"store_chunk\": \"SELECT 1\"}}' > pump/nolimit.json"
            " && quarry pump deploy pump/ --embedder hash:64 >/dev/null",
      input="LIMIT $1"),
    S("budget_exhausted", "pump's monthly budget used up", "quarry pump run tickets",
      setup="mkdir -p pump2 && sqlite3 pump2/app.db 'CREATE TABLE t(id TEXT, content TEXT, done INT DEFAULT 0);"
            " INSERT INTO t(id, content) VALUES (\"1\", \"one\");'"
            " && echo '{\"source\": {\"type\": \"sql\", \"driver\": \"sqlite\", \"path\": \"app.db\","
            " \"pending\": \"SELECT id, content FROM t WHERE done = 0 LIMIT $1\","
            " \"store_chunk\": \"UPDATE t SET done = 1 WHERE id = $1\"}}' > pump2/tickets.json"
            " && quarry pump deploy pump2/ --embedder hash:64 >/dev/null"
            " && quarry pump budget --monthly 1 >/dev/null && quarry pump run tickets >/dev/null"
            " && sqlite3 pump2/app.db 'UPDATE t SET done = 0'"),
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def summary_table(path):
    """{code: (exit, http)} from the page's summary table."""
    out = {}
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^\| \[`([a-z_]+)`\]\(#[a-z_]+\) \| (\d+) \| (\d+) \|", line)
        if m:
            out[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return out


class CommandTable:
    """The CLI's commands and flags, from the completion script the binary writes."""

    def __init__(self, binary):
        script = subprocess.run([binary, "completion", "bash"], capture_output=True, text=True,
                                check=True).stdout
        self.commands, self.flags = {}, {}
        for table, name in ((self.commands, "_quarry_commands"), (self.flags, "_quarry_flags")):
            body = re.search(r"declare -gA " + name + r"=\((.*?)\n\)", script, re.S).group(1)
            for key, words in re.findall(r'\["_ ?([^"]*)"\]="([^"]*)"', body):
                table[key] = words.split()
        self.globals = [f for f in self.flags[""] if f not in ("-h", "--help", "--version")]

    def all_flags(self):
        return {f for fl in self.flags.values() for f in fl}

    def check(self, words):
        """Problems with `quarry WORDS...`, [] when it is a real command line; and its path."""
        path, problems, after_flag = "", [], False
        for w in words:
            if w.startswith("-"):
                flag = w.split("=", 1)[0]
                if flag not in self.flags.get(path, []) + self.globals:
                    problems.append(f"`quarry {path}` has no flag {flag}")
                after_flag = "=" not in w
                continue
            subs = self.commands.get(path, [])
            if w in subs:
                path = (path + " " + w).strip()
            elif subs and not after_flag:
                problems.append(f"`quarry {path}` has no sub-command '{w}' (it has {', '.join(subs)})")
                break
            after_flag = False
        if self.commands.get(path):
            problems.append(f"`quarry {path}` is not a whole command (add one of "
                            f"{', '.join(self.commands[path])})")
        return problems, path


class Home:
    def __init__(self, binary, keep):
        self.binary, self.keep = os.path.abspath(binary), keep
        self.dir = tempfile.mkdtemp(prefix="quarry-errors-")
        bindir = os.path.join(self.dir, ".bin")
        os.makedirs(bindir)
        os.symlink(self.binary, os.path.join(bindir, "quarry"))
        self.env = dict(os.environ, HOME=self.dir, QUARRY_HOME=os.path.join(self.dir, ".quarry"),
                        PATH=bindir + os.pathsep + os.environ.get("PATH", ""), NO_COLOR="1")
        for k in ("QUARRY_SECRET_KEY", "QUARRY_EMBEDDING_PROVIDER", "OPENAI_API_KEY"):
            self.env.pop(k, None)
        self.procs = []

    def sh(self, text, timeout=60, check=False):
        r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", text], cwd=self.dir,
                           env=self.env, capture_output=True, text=True, timeout=timeout)
        if check and r.returncode != 0:
            raise RuntimeError(f"setup `{text}` exited {r.returncode}: {r.stdout}{r.stderr}")
        return r

    def background(self, argv, **kw):
        p = subprocess.Popen(argv, cwd=self.dir, env=self.env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True, **kw)
        self.procs.append(p)
        return p

    def close(self):
        for p in self.procs:
            try:
                os.killpg(p.pid, signal.SIGTERM)
                p.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        if self.keep:
            print(f"kept {self.dir}")
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


def wait_port(port, what, seconds=20):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{what} did not answer on port {port}")


class Checker:
    def __init__(self, home, table):
        self.home, self.table = home, table
        self.known_kb_keys, self.provider_keys = {}, None
        self.makefile = open(os.path.join(SOURCE_DIR, "Makefile"), encoding="utf-8").read()
        self.docs = "".join(open(os.path.join(SOURCE_DIR, "docs", f), encoding="utf-8").read()
                            for f in os.listdir(os.path.join(SOURCE_DIR, "docs")) if f.endswith(".md"))
        home.sh("quarry kb create probe >/dev/null", check=True)

    def kb_key(self, key):
        """Does `quarry kb set` know this setting? (reset to its default on a scratch KB)"""
        if key not in self.known_kb_keys:
            r = self.home.sh(f"quarry --json kb set probe {shlex.quote(key + '=null')}")
            self.known_kb_keys[key] = "unknown key" not in r.stdout
        return self.known_kb_keys[key]

    def provider_key(self, key):
        if self.provider_keys is None:
            r = self.home.sh("quarry --json embed --embedder openai:ok --settings "
                             "\"${OPENAI%\\}},\\\"__probe__\\\": 1}\" hi")
            known = re.search(r"known: ([a-z_, ]+)", r.stdout)
            if not known:
                raise RuntimeError("the openai provider did not list its settings: " + r.stdout)
            self.provider_keys = set(known.group(1).replace(" ", "").split(","))
        return key in self.provider_keys

    def references(self, msg, cmd):
        """(fixes named and checked, problems) of a message; what it repeats of the user's own
        command line `cmd` (an unknown flag or key quoted back) is input, not a fix to check."""
        fixes, problems = [], []
        echoed = lambda word: word in cmd
        spans = re.findall(r"`([^`]+)`", msg)
        for span in spans:
            try:
                words = shlex.split(span)
            except ValueError:
                words = span.split()
            if not words:
                continue
            if words[0] == "quarry":
                bad, path = self.table.check(words[1:])
                if self.table.commands.get(path) and not [w for w in words[1:] if w not in (
                        path.split() + ["--help", "-h"])]:
                    # `quarry kb` names a group; `quarry kb --help` is its help, a fix
                    bad = []
                    if "--help" not in words and "-h" not in words:
                        continue
                problems += [f"`{span}`: {b}" for b in bad]
                if not bad and path == "kb set":
                    # run it as written on the scratch KB: the user will paste it
                    rest = [w for w in words[1:] if not w.startswith("-")][2:]
                    pairs = rest[1:] if rest else []
                    r = self.home.sh("quarry --json kb set probe " + " ".join(map(shlex.quote, pairs)))
                    if r.returncode != 0:
                        problems.append(f"`{span}` fails when run: {r.stdout.strip()}")
                if not bad:
                    fixes.append(span)
            elif words[0] == "make":
                for t in words[1:]:
                    if not re.search(r"^" + re.escape(t) + r":", self.makefile, re.M):
                        problems.append(f"`{span}`: the Makefile has no target {t}")
                fixes.append(span)
            elif words[0] == "chmod" and len(words) == 3 and os.path.exists(words[2]):
                fixes.append(span)
        prose = re.sub(r"`[^`]*`", " ", msg)
        for key in re.findall(r"(?<![\w.])((?:chunking|limits|embedder|hybrid|subjects|store)"
                              r"\.[a-z_]+(?:\.[a-z_]+)*)", prose):
            if echoed(key) and not self.kb_key(key):
                continue
            (fixes if self.kb_key(key) else problems).append(
                key if self.kb_key(key) else f"setting {key} is not one `quarry kb set` knows")
        for key in re.findall(r"(?<![\w.])settings\.([a-z_]+)", prose):
            if echoed(key) and not self.provider_key(key):
                continue
            (fixes if self.provider_key(key) else problems).append(
                "settings." + key if self.provider_key(key) else f"settings.{key} is not a provider setting")
        for word in re.findall(r"(?<![\w.])([a-z]+_[a-z_]+)(?![\w.])", prose):
            if self.provider_key(word):
                fixes.append(word)
        for flag in re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", prose):
            if flag in self.table.all_flags():
                fixes.append(flag)
            elif not echoed(flag):
                problems.append(f"no command has the flag {flag}")
        for var in re.findall(r"\b((?:QUARRY|OPENAI)_[A-Z_]+)\b", prose):
            if var in self.docs:
                fixes.append(var)
        for page in re.findall(r"\bdocs/([a-z-]+\.md)\b", msg):
            if os.path.exists(os.path.join(SOURCE_DIR, "docs", page)):
                fixes.append("docs/" + page)
            else:
                problems.append(f"docs/{page} does not exist")
        return fixes, problems


def message_of(sc, r, code):
    """The (code, message, status) the scenario's command reported."""
    if sc.http:
        body, _, status = r.stdout.rstrip("\n").rpartition("\n")
        try:
            err = json.loads(body)["error"]
            return err["code"], err["message"], int(status)
        except (ValueError, KeyError, TypeError):
            return None, body, int(status) if status.isdigit() else None
    m = re.search(r"error\[([a-z_]+)\]: (.*)", r.stderr, re.S)
    if m:
        return m.group(1), m.group(2).strip(), r.returncode
    for line in r.stdout.splitlines():  # a batch item: failed  PATH  [code] message
        m = re.match(r"^failed\s+\S+\s+\[([a-z_]+)\] (.*)$", line)
        if m and m.group(1) == code:
            return m.group(1), m.group(2), r.returncode
    m = re.search(r"^\s*(stopped|interrupted|terminated)\b", r.stdout + r.stderr, re.M | re.I)
    if m and code == "cancelled" and r.returncode in (130, 143):
        return "cancelled", (r.stdout + r.stderr).strip(), r.returncode
    return None, (r.stdout + r.stderr).strip(), r.returncode


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--errors-page", default=os.path.join(SOURCE_DIR, "docs", "errors.md"))
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()

    table = summary_table(a.errors_page)
    if len(table) < 20:
        print(f"FAIL: read only {len(table)} codes from {a.errors_page}'s summary table")
        return 1
    home = Home(a.binary, a.keep)
    failures = []
    try:
        portfile = os.path.join(home.dir, ".fake-port")
        home.background([sys.executable, os.path.join(os.path.dirname(__file__), "fake_provider.py"),
                         portfile])
        for _ in range(100):
            if os.path.exists(portfile) and open(portfile).read():
                break
            time.sleep(0.05)
        fake = f"http://127.0.0.1:{open(portfile).read()}/v1"
        home.env["FAKE"] = fake
        home.env["OPENAI"] = json.dumps({"base_url": fake, "allow_private": True, "dimensions": 4,
                                         "timeout_ms": 1000, "max_retries": 1,
                                         "retry_base_delay_ms": 1, "retry_max_delay_ms": 5})
        home.sh("quarry kb create notes >/dev/null && printf 'hello world\\n' > a.md"
                " && quarry ingest a.md --kb notes >/dev/null"
                " && mkdir d && printf 'hello there\\n' > d/a.md && printf '\\x89PNG\\r\\n' > x.png"
                " && printf 'k1-value' | quarry secret set K1 >/dev/null"
                " && quarry --json token create --name reader --scope read | jq -r .secret > .read-token",
                check=True)
        home.env["READ_TOKEN"] = open(os.path.join(home.dir, ".read-token")).read().strip()
        port = free_port()
        home.background(["quarry", "serve", "--port", str(port), "--require-token"])
        wait_port(port, "quarry serve")
        home.env["SERVER"] = f"http://127.0.0.1:{port}"

        commands = CommandTable(a.binary)
        checker = Checker(home, commands)
        covered = set()
        for sc in SCENARIOS:
            label = f"{sc.code}: {sc.what}"
            if sc.setup:
                home.sh(sc.setup, check=True)
            r = home.sh(sc.cmd)
            code, msg, status = message_of(sc, r, sc.code)
            want_status = sc.exit if sc.exit is not None else table[sc.code][1 if sc.http else 0]
            problems = []
            if code != sc.code:
                problems.append(f"reported {code or 'no error'}, not {sc.code}")
            if status != want_status:
                problems.append(f"{'HTTP status' if sc.http else 'exit status'} {status}, "
                                f"not {want_status} (docs/errors.md)")
            fixes, bad = checker.references(msg, sc.cmd)
            problems += bad
            if sc.input is not None:
                if sc.input not in msg:
                    problems.append(f"the message does not name the input '{sc.input}'")
            elif not fixes:
                problems.append("the message names no command, setting, flag or page to fix it")
            if problems:
                failures.append(label)
                print(f"FAIL {label}\n  $ {sc.cmd}\n  {msg}\n  - " + "\n  - ".join(problems))
            else:
                covered.add(sc.code)
                named = ", ".join(fixes) if fixes else f"names the input '{sc.input}'"
                print(f"ok   {label}: {named}")
        for code in table:
            if code not in covered and code not in UNRAISABLE and code not in {
                    s.code for s in SCENARIOS}:
                failures.append(code)
                print(f"FAIL {code}: no scenario raises it (add one, or say why in UNRAISABLE)")
        for code, why in UNRAISABLE.items():
            print(f"not raised {code}: {why}")
    finally:
        home.close()
    print(f"{len(SCENARIOS) - len([f for f in failures if ':' in f])} of {len(SCENARIOS)} "
          f"scenarios ok, {len(table)} codes in the table, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

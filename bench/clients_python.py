#!/usr/bin/env python3
"""The Python client's overhead over raw http.client, on SciFact keyword search.

Against one `quarry serve` with SciFact's corpus (BEIR layout) ingested as the KB `scifact`
(no embedder: keyword search), sends the same queries (test queries, then train queries, the
first --queries of them) once through quarry_client.Client.search and once through a raw
keep-alive http.client.HTTPConnection posting the same JSON and decoding the answer. The two
alternate which goes first from one query to the next, so that drift in the machine's load
hits both alike. Prints p50, p99 and mean per call, and the client/raw ratios.

    python3 bench/clients_python.py [--quarry build/quarry] [--dataset DIR] [--queries 1000]
                                    [--url http://127.0.0.1:PORT (a server with kb scifact)]

Without --url the script writes the corpus as Markdown files under a temporary directory,
ingests it with `quarry ingest` and serves it on a free loopback port, stopped at the end.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Callable, Dict, List, Optional
from urllib.parse import urlsplit

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "clients", "python"))

from quarry_client import Client  # noqa: E402

KB = "scifact"


def read_jsonl(name: str) -> List[Dict]:
    with open(name, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def serve_scifact(quarry: str, dataset: str, work: str) -> subprocess.Popen:
    """Ingest the corpus into a data dir under `work` and start serving it (port in work/port)."""
    docs = os.path.join(work, "docs")
    os.mkdir(docs)
    for d in read_jsonl(os.path.join(dataset, "corpus.jsonl")):
        name = "".join(c if c.isalnum() or c in "_-" else "_" for c in d["_id"]) + ".md"
        with open(os.path.join(docs, name), "w", encoding="utf-8") as f:
            f.write("# %s\n\n%s\n" % (d.get("title") or d["_id"], d["text"]))
    data = os.path.join(work, "data")
    started = time.perf_counter()
    for args in (["kb", "create", KB], ["ingest", docs, "--kb", KB, "-q"]):
        subprocess.run([quarry, "--data-dir", data, *args], check=True, timeout=1800)
    print("ingested %d documents in %.1f s" % (len(os.listdir(docs)),
                                              time.perf_counter() - started), file=sys.stderr)
    port_file = os.path.join(work, "port")
    log = open(os.path.join(work, "server.log"), "wb")
    proc = subprocess.Popen([quarry, "--data-dir", data, "serve", "--port", "0",
                             "--port-file", port_file], stdout=log, stderr=subprocess.STDOUT)
    for _ in range(300):
        if os.path.exists(port_file) and os.path.getsize(port_file):
            return proc
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("quarry serve did not start; see %s" % log.name)


def percentile(xs: List[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quarry", default=os.environ.get("QUARRY_BINARY", "build/quarry"))
    ap.add_argument("--dataset", default=os.path.join(HERE, "..", "..", "shared", "datasets",
                                                      "scifact"))
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--url", help="a running server whose KB scifact is ingested")
    args = ap.parse_args()

    queries = [q["text"] for name in ("queries.jsonl", "queries_train.jsonl")
               if os.path.exists(os.path.join(args.dataset, name))
               for q in read_jsonl(os.path.join(args.dataset, name))][:args.queries]
    if len(queries) < args.queries:
        raise SystemExit("only %d queries in %s" % (len(queries), args.dataset))

    work: Optional[str] = None
    proc: Optional[subprocess.Popen] = None
    url = args.url
    try:
        if url is None:
            work = tempfile.mkdtemp(prefix="quarry-bench-pyclient-")
            proc = serve_scifact(args.quarry, args.dataset, work)
            with open(os.path.join(work, "port")) as f:
                url = "http://127.0.0.1:%s" % f.read().strip()
        run(url, queries, args.warmup)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)


def run(url: str, queries: List[str], warmup: int) -> None:
    client = Client(url)
    parts = urlsplit(url)
    raw = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    route = "/api/v1/kbs/%s/search" % KB
    headers = {"Content-Type": "application/json", "Accept": "application/json"}

    def via_client(q: str) -> int:
        return len(client.search(KB, q, mode="keyword").hits)

    def via_raw(q: str) -> int:
        body = json.dumps({"query": q, "mode": "keyword"}, separators=(",", ":")).encode()
        raw.request("POST", route, body=body, headers=headers)
        res = raw.getresponse()
        data = res.read()
        if res.status != 200:
            raise SystemExit("raw search answered %d: %r" % (res.status, data[:200]))
        return len(json.loads(data)["hits"])

    for q in queries[:warmup]:
        via_client(q)
        via_raw(q)

    times: Dict[str, List[float]] = {"client": [], "raw": []}
    sides: Dict[str, Callable[[str], int]] = {"client": via_client, "raw": via_raw}
    for i, q in enumerate(queries):
        order = ("client", "raw") if i % 2 == 0 else ("raw", "client")
        hits = []
        for side in order:
            t0 = time.perf_counter()
            hits.append(sides[side](q))
            times[side].append((time.perf_counter() - t0) * 1000)
        if hits[0] != hits[1]:
            raise SystemExit("client and raw disagree on query %r" % q)

    print("%d keyword queries on %s (kb %s), alternating order, after %d warm-up"
          % (len(queries), url, KB, warmup))
    print("%-7s %9s %9s %9s" % ("", "p50 ms", "p99 ms", "mean ms"))
    stats = {}
    for side in ("raw", "client"):
        xs = times[side]
        stats[side] = (percentile(xs, 50), percentile(xs, 99), sum(xs) / len(xs))
        print("%-7s %9.3f %9.3f %9.3f" % ((side,) + stats[side]))
    print("ratio   %8.3fx %8.3fx %8.3fx  (client / raw)"
          % tuple(c / r for c, r in zip(stats["client"], stats["raw"])))
    client.close()
    raw.close()


if __name__ == "__main__":
    main()

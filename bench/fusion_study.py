#!/usr/bin/env python3
"""Offline study of hybrid fusion (issue 27, point 4): replays the keyword and vector lists that
`quarry-bench eval --mode hybrid --dump FILE` wrote for each collection and scores fusion rules
by leave-one-collection-out: a rule's parameters are chosen on every collection but the one
reported, never on the reported one.

Usage: bench/fusion_study.py DATASETS_DIR DUMP_DIR [TOKENIZER_JSON]
  reads DUMP_DIR/dump-<set>.jsonl for each set that has one, and DATASETS_DIR/<set>/qrels.tsv
  (scifact-train: scifact/qrels_train.tsv).

Nothing here is product code: what it finds is implemented in src/search/fusion.cpp and measured
again end to end with quarry-bench eval.
"""
import json
import math
import os
import sys
from collections import defaultdict

SETS = ["scifact", "cranfield", "cisi", "adi", "jaquad-ja", "cmrc2018-zh"]
ENGLISH = ["scifact", "cranfield", "cisi", "adi"]


def load_qrels(path):
    q = defaultdict(dict)
    with open(path) as f:
        next(f)
        for line in f:
            qid, did, s = line.rstrip("\n").split("\t")
            if float(s) > 0:
                q[qid][did] = float(s)
    return q


def ndcg10(ranked, rel):
    dcg = sum(rel.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:10]))
    ideal = sorted(rel.values(), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def docs_of(chunks):
    seen, out = set(), []
    for d in chunks:
        if d not in seen:
            seen.add(d)
            out.append(d)
    return out


def minmax(vals):
    lo, hi = min(vals), max(vals)
    return [(v - lo) / (hi - lo) if hi > lo else 1.0 for v in vals]


def fuse(q, alpha):
    """Interpolation as src/search/fusion.cpp does it: min-max per list, missing = 0."""
    score = defaultdict(float)
    order = []
    for name, w in (("keyword", 1 - alpha), ("vector", alpha)):
        lst = q.get(name) or []
        if not lst:
            continue
        for (doc, chunk, _), v in zip(lst, minmax([x[2] for x in lst])):
            if chunk not in score:
                order.append((chunk, doc))
            score[chunk] += w * v
    ranked = sorted(range(len(order)), key=lambda i: (-score[order[i][0]], i))
    return docs_of([order[i][1] for i in ranked])


VOCAB = set()
_WORD = None


def in_vocab(q):
    """The share of the query's words the embedder has a vector for (BERT-style pre-tokenizing:
    lowercase, CJK characters one word each, punctuation split off)."""
    global _WORD
    if _WORD is None:
        import re
        _WORD = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]|[^\W_]+", re.UNICODE)
    if "iv" not in q:
        words = _WORD.findall(q["query"].lower())
        q["iv"] = sum(w in VOCAB for w in words) / len(words) if words else 0.0
    return q["iv"]


def agreement(q, k=10):
    kw = docs_of([x[0] for x in q.get("keyword") or []])[:k]
    vec = docs_of([x[0] for x in q.get("vector") or []])[:k]
    if not kw or not vec:
        return 0.0
    return len(set(kw) & set(vec)) / k


# Per-query weights: alpha_q = rule(q, params). Each returns the ratio for one query.
def rule_fixed(q, p):
    return p["alpha"]


def rule_agree(q, p):
    # The vector list gets a say in proportion to how much it agrees with the keyword list at
    # the top: where it finds other documents, it is more likely wrong than right.
    return p["alpha"] * min(1.0, agreement(q, p["k"]) / p["full"])


def rule_oov(q, p):
    # A query the embedder cannot read (its words have no vectors) gets no vector say.
    return p["alpha"] * in_vocab(q) ** p["power"]


def rule_agree_oov(q, p):
    return rule_agree(q, p) * in_vocab(q) ** p["power"]


RULES = {
    "fixed": (rule_fixed, [{"alpha": a} for a in (0.0, 0.02, 0.05, 0.1, 0.15, 0.2)]),
    "agree": (rule_agree, [{"alpha": a, "k": k, "full": f}
                           for a in (0.05, 0.1, 0.15, 0.2, 0.3)
                           for k in (5, 10, 20) for f in (0.3, 0.5, 0.8, 1.0)]),
    "oov": (rule_oov, [{"alpha": a, "power": w} for a in (0.05, 0.1, 0.15, 0.2)
                       for w in (1, 2, 4, 8)]),
    "agree_oov": (rule_agree_oov, [{"alpha": a, "k": k, "full": f, "power": w}
                                   for a in (0.1, 0.2, 0.3) for k in (10, 20)
                                   for f in (0.5, 1.0) for w in (1, 4)]),
}


def evaluate(data, rule, params):
    """nDCG@10 per set: (hybrid, keyword)."""
    out = {}
    for name, (queries, qrels) in data.items():
        h = k = 0.0
        for q in queries:
            rel = qrels.get(q["qid"], {})
            h += ndcg10(fuse(q, rule(q, params)), rel)
            k += ndcg10(docs_of([x[0] for x in q.get("keyword") or []]), rel)
        out[name] = (h / len(queries), k / len(queries))
    return out


def objective(res, names):
    # Mean gain over keyword, with each loss counted three times: a rule that helps on average
    # but hurts one collection is worth less than one that never hurts.
    deltas = [res[n][0] - res[n][1] for n in names]
    return sum(d if d >= 0 else 3 * d for d in deltas) / len(deltas)


def main():
    ds_dir, dump_dir = sys.argv[1], sys.argv[2]
    if len(sys.argv) > 3:  # the embedder's tokenizer.json, for the out-of-vocabulary rules
        with open(sys.argv[3]) as f:
            VOCAB.update(json.load(f)["model"]["vocab"].keys())
    data = {}
    for name in SETS + ["scifact-train"]:
        path = os.path.join(dump_dir, f"dump-{name}.jsonl")
        if not os.path.exists(path):
            continue
        qrels = load_qrels(os.path.join(ds_dir, "scifact", "qrels_train.tsv") if name == "scifact-train"
                           else os.path.join(ds_dir, name, "qrels.tsv"))
        with open(path) as f:
            data[name] = ([json.loads(l) for l in f], qrels)
    names = [n for n in SETS if n in data]
    for rname, (rule, grid) in RULES.items():
        cache = [(p, evaluate(data, rule, p)) for p in grid]
        print(f"\n## rule {rname}: leave one collection out")
        print("| collection | chosen on the others | keyword | hybrid | delta |")
        print("|---|---|---|---|---|")
        deltas = {}
        for held in names:
            # SciFact's train split belongs to SciFact: it is left out with it.
            others = [n for n in names if n != held] + (["scifact-train"] if held != "scifact" and "scifact-train" in data else [])
            best = max(cache, key=lambda pr: objective(pr[1], others))
            h, k = best[1][held]
            deltas[held] = h - k
            print(f"| {held} | {json.dumps(best[0])} | {k:.4f} | {h:.4f} | {h - k:+.4f} |")
        en = [deltas[n] for n in ENGLISH if n in deltas]
        if en:
            print(f"mean delta over English: {sum(en) / len(en):+.4f}; worst: {min(deltas.values()):+.4f}")


if __name__ == "__main__":
    main()

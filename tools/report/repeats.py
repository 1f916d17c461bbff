"""Rounds: the set run several times, and one document per run and host from them.

`ferry-report --repeat N` runs the whole set N times, round after round
(so every run's repetitions are spread over the whole set's time, and a
load that drifts touches ferry and the host alike), round k into
<out>/rounds/<k>/. merge() then writes the usual <out>/json/<host>/<rid>.json:
the first round's document whose rows carry the median over the rounds of
each contender's figure and of each ratio, plus `rounds`: {ratio key:
[that ratio in every round]}. A ratio is taken within one run (ferry and
the host in one process group) before the median, never between runs.

verdict() decides whether a row below 1.0 is behind or noise: by the sign
test, a row is behind when its ratio is below 1.0 in every one of at
least 5 rounds (if ferry and the host were equally fast, each round would
be below 1.0 with probability 1/2, and all 5 with 1/32 < 0.05).
"""
import json
import os
import shutil
import statistics

SIGN_TEST_ROUNDS = 5  # all below 1.0 in 5 rounds: p = 1/32


def round_dirs(out, count):
    """The output folder of each round: <out> itself for a single round."""
    return [out] if count <= 1 else [os.path.join(out, "rounds", str(k + 1)) for k in range(count)]


def _row_keys(doc):
    """Each row's identity: its table, case, op and unit, and how many rows with those came before it
    (overlap's table repeats them)."""
    seen, keys = {}, []
    for row in doc["results"]:
        base = (row["table"], row["case"], row["op"], row["unit"])
        seen[base] = seen.get(base, 0) + 1
        keys.append(base + (seen[base],))
    return keys


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _merge_rows(docs):
    """The first document with every row's figures and ratios the median over the documents."""
    merged = json.loads(json.dumps(docs[0]))
    rows = [dict(zip(_row_keys(d), d["results"])) for d in docs]
    for key, row in zip(_row_keys(merged), merged["results"]):
        present = [r[key] for r in rows if key in r]
        for c in row["contenders"]:
            row["contenders"][c] = _median([p["contenders"].get(c) for p in present])
        row["rounds"] = {k: [p["ratios"].get(k) for p in present] for k in row["ratios"]}
        for k in row["ratios"]:
            row["ratios"][k] = _median(row["rounds"][k])
    return merged


def _load_rounds(dirs, host, rid):
    """(documents, failure texts) of one run on one host over the rounds."""
    docs, failed = [], []
    for d in dirs:
        base = os.path.join(d, "json", host, rid)
        if os.path.exists(base + ".json"):
            with open(base + ".json") as f:
                docs.append(json.load(f))
        elif os.path.exists(base + ".failed"):
            with open(base + ".failed") as f:
                failed.append("round %s: %s" % (os.path.basename(d), f.read().strip()))
    return docs, failed


def merge(out, dirs):
    """<out>/json/<host>/<rid>.json (or .failed when no round succeeded) from the rounds in dirs."""
    names = set()
    for d in dirs:
        for host in os.listdir(os.path.join(d, "json")) if os.path.isdir(os.path.join(d, "json")) else []:
            if os.path.isdir(os.path.join(d, "json", host)):
                names |= {(host, n.rsplit(".", 1)[0]) for n in os.listdir(os.path.join(d, "json", host))}
    for host, rid in sorted(names):
        docs, failed = _load_rounds(dirs, host, rid)
        folder = os.path.join(out, "json", host)
        os.makedirs(folder, exist_ok=True)
        if not docs:
            with open(os.path.join(folder, rid + ".failed"), "w") as f:
                f.write("; ".join(failed) + "\n")
            continue
        doc = _merge_rows(docs)
        doc["rounds_failed"] = failed
        with open(os.path.join(folder, rid + ".json"), "w") as f:
            json.dump(doc, f, indent=1)


def clear(out):
    shutil.rmtree(os.path.join(out, "rounds"), ignore_errors=True)


def verdict(ratios):
    """'behind', 'noise', 'too few rounds' or None (not below 1.0) for one row's per-round ratios."""
    values = [v for v in ratios if v is not None]
    if not values or statistics.median(values) >= 1.0:
        return None
    if len(values) < SIGN_TEST_ROUNDS:
        return "too few rounds"
    return "behind" if all(v < 1.0 for v in values) else "noise"

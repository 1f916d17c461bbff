#!/usr/bin/python3
"""Markdown table of tools/bench/run-report-ab.sh's runs: for every row of the report (run id, table,
case, op), ferry's median over the before runs and over the after runs, after/before, and the spread
of the before runs (max/min): a row counts as slower only when after/before is below 1 by more
than the before runs' own spread and below 0.95."""
import glob, json, os, re, statistics, sys
from collections import defaultdict


def values(out_dir, host):
    """{label: {row key: [ferry's value per run]}} and whether each row is higher-is-better."""
    got, better = defaultdict(lambda: defaultdict(list)), {}
    for path in glob.glob(os.path.join(out_dir, "*-*", "json", host, "*.json")):
        label = re.match(r"(before|after)-\d+$", os.path.basename(path.split("/json/")[0])).group(1)
        with open(path) as f:
            doc = json.load(f)
        rid = os.path.basename(path)[:-5]
        for r in doc["results"]:
            if "ferry" not in r["contenders"]:
                continue
            key = (rid, r["table"], str(r["case"]), r["op"], r["unit"])
            got[label][key].append(r["contenders"]["ferry"])
            # older binaries' JSON may lack the flag: times are lower-is-better
            higher = r.get("higher_is_better", r["unit"] not in ("us", "ms", "s", "seconds"))
            better[key] = better.get(key, True) and higher
    return got, better


def main(out_dir, host):
    got, better = values(out_dir, host)
    print("| run | table | case | op | unit | runs | ferry before | ferry after | after/before (speed) | before spread | verdict |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    slower = 0
    for key in sorted(set(got["before"]) & set(got["after"])):
        b, a = got["before"][key], got["after"][key]
        mb, ma = statistics.median(b), statistics.median(a)
        if mb <= 0 or ma <= 0 or min(b) <= 0:
            continue
        speed = ma / mb if better[key] else mb / ma
        spread = max(b) / min(b)
        verdict = "slower" if speed < min(1 / spread, 0.95) else "same" if speed < 1.05 else "faster"
        slower += verdict == "slower"
        print(f"| {' | '.join(key)} | {len(b)}+{len(a)} | {mb:.4g} | {ma:.4g} | {speed:.3f} | {spread:.2f} | {verdict} |")
    print(f"\nrows slower beyond the before runs' spread: {slower}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "romio321")

#!/usr/bin/python3
"""Markdown tables of tools/bench/run-ckpt-ab.sh's results: per MPI and state size, every strategy's
median over runs (each run's value already the median of its repetitions), before and after,
and steer collective over gather collective."""
import json, statistics, sys
from collections import defaultdict

def main(out_dir, mpis):
    for mpi in mpis:
        times = defaultdict(list)
        for label in ("before", "after"):
            with open(f"{out_dir}/{label}-{mpi}.jsonl") as f:
                for line in f:
                    r = json.loads(line)
                    times[(r["mib"], r["strategy"], r["transfers"], r["io"], label)].append(r["seconds"])
        sizes = sorted({k[0] for k in times})
        runs = min(len(v) for v in times.values())
        print(f"\n#### {mpi}: shelfsea, {len(sizes)} sizes, median of {runs} alternating runs (ms, slowest rank)\n")
        print("| MiB | strategy | transfers | ferry before | ferry after | host before | host after |")
        print("|---|---|---|---|---|---|---|")
        med = lambda *k: statistics.median(times[k]) * 1e3
        for mib in sizes:
            for s in ("gather", "stack", "steer"):
                for t in ("collective", "independent"):
                    cells = [f"{med(mib, s, t, io, label):.2f}" for io in ("ferry", "host") for label in ("before", "after")]
                    print(f"| {mib:.1f} | {s} | {t} | " + " | ".join(cells) + " |")
        print("\nsteer collective / gather collective:\n")
        print("| MiB | ferry before | ferry after | host before | host after |")
        print("|---|---|---|---|---|")
        for mib in sizes:
            cells = [f"{med(mib, 'steer', 'collective', io, label) / med(mib, 'gather', 'collective', io, label):.2f}"
                     for io in ("ferry", "host") for label in ("before", "after")]
            print(f"| {mib:.1f} | " + " | ".join(cells) + " |")

if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:] or ["openmpi"])

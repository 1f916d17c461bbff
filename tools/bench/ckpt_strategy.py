#!/usr/bin/env python3
"""Steer against gather: the table of tools/bench/run-ckpt-strategy-cluster.sh's rows.

usage: tools/bench/ckpt_strategy.py ROWS.jsonl...

One line per file system, placement (nodes x ranks per node), MPI and state size: the median over runs of
each run's median time of steer and of gather (ms, slowest rank), and the ratio steer / gather
taken within each run (the two alternate checkpoint by checkpoint there, so a loaded machine
slows both alike): its median and its range over the runs, and the load averages seen.
"""
import json
import statistics
import sys
from collections import defaultdict


def main(paths):
    runs = defaultdict(dict)  # (nodes, per_node, mpi, mib, run) -> strategy -> seconds
    loads = defaultdict(list)
    for path in paths:
        with open(path) as f:
            for line in f:
                row = json.loads(line)
                fs = "GlusterFS" if row["dir"].startswith("/mnt/ferry-cluster") else row["dir"].rsplit("/", 1)[0]
                key = (fs, row["nodes"], row["per_node"], row["mpi"], round(row["mib"], 1))
                runs[key + (path, row["run"])][row["strategy"]] = row["seconds"]
                loads[key].append(float(row["load"]))
    table = defaultdict(lambda: defaultdict(list))
    for key, by_strategy in runs.items():
        if {"steer", "gather"} <= by_strategy.keys():
            cell = table[key[:5]]
            for name in ("steer", "gather"):
                cell[name].append(1e3 * by_strategy[name])
            cell["ratio"].append(by_strategy["steer"] / by_strategy["gather"])
    print("| files | nodes x ranks | MPI | MiB | runs | steer ms | gather ms | steer/gather (median, range) | load |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key in sorted(table, key=lambda k: (k[0], k[3], -k[1], k[4])):
        fs, nodes, per_node, mpi, mib = key
        cell, load = table[key], loads[key]
        ratios = cell["ratio"]
        print(f"| {fs} | {nodes} x {per_node} | {mpi} | {mib} | {len(ratios)} | {statistics.median(cell['steer']):.1f} | "
              f"{statistics.median(cell['gather']):.1f} | {statistics.median(ratios):.2f} "
              f"({min(ratios):.2f}-{max(ratios):.2f}) | {min(load):.1f}-{max(load):.1f} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])

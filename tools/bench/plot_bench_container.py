#!/usr/bin/env python3
"""Plots ferry-bench container results (the directory of JSON files, one
per run, that tools/bench/bench-container.sh writes; schema in docs/report.md):
create time and write bandwidth against the stream count, one panel pair
per directory, every contender, and the container's collectives alone.
Needs matplotlib (Debian: python3-matplotlib).

usage: plot_bench_container.py RESULTS_DIR OUT.png
"""
import collections
import glob
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

CREATE, WRITE = "create, open, close (no data)", "write, create to close"


def row(doc, table):
    return next((r for r in doc["results"] if r["table"] == table), None)


def load(path):
    runs = collections.defaultdict(list)  # dir kind -> runs
    for name in sorted(glob.glob(os.path.join(path, "*.json"))):
        with open(name) as f:
            doc = json.load(f)
        if doc.get("workload") != "container" or not row(doc, WRITE):
            continue
        where = doc["environment"]["dir"]
        kind = "/dev/shm" if where.startswith("/dev/shm") else "disk, synced" if doc["parameters"]["sync"] else "disk"
        runs[kind].append(doc)
    return runs


def series(runs, contender, table):
    points = sorted((r["environment"]["ranks"], row(r, table)["contenders"][contender]) for r in runs
                    if contender in row(r, table)["contenders"])
    return [p[0] for p in points], [p[1] for p in points]


def plot(runs, out):
    kinds = sorted(runs)
    fig, axes = plt.subplots(2, len(kinds), figsize=(5 * len(kinds), 8), squeeze=False)
    for col, kind in enumerate(kinds):
        contenders = sorted({c for r in runs[kind] for c in row(r, CREATE)["contenders"]})
        for name in contenders:
            n, t = series(runs[kind], name, CREATE)
            axes[0][col].plot(n, t, marker="o", label=name)
            n, mib = series(runs[kind], name, WRITE)
            axes[1][col].plot(n, mib, marker="o", label=name)
        floor = sorted((r["environment"]["ranks"], row(r, CREATE)["extra"].get("collectives_alone_s", 0))
                       for r in runs[kind])
        axes[0][col].plot([p[0] for p in floor], [p[1] for p in floor], "k--", label="4 collectives alone")
        axes[0][col].set(title="create, open, close: %s" % kind, xlabel="streams (ranks)", ylabel="seconds",
                         xscale="log", yscale="log")
        axes[1][col].set(title="create, write, close: %s" % kind, xlabel="streams (ranks)", ylabel="MiB/s",
                         xscale="log")
        for ax in (axes[0][col], axes[1][col]):
            ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=100)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    plot(load(sys.argv[1]), sys.argv[2])

#!/usr/bin/env python3
"""Plots ferry-bench container results (the JSON lines tools/bench-container.sh
writes): create time and write bandwidth against the stream count, one
panel pair per directory, every contender, and the container's collectives
alone. Needs matplotlib (Debian: python3-matplotlib).

usage: plot_bench_container.py RESULTS.json OUT.png
"""
import collections
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    runs = collections.defaultdict(list)  # dir kind -> runs
    with open(path) as f:
        for line in f:
            run = json.loads(line)
            if run.get("workload") != "container":
                continue
            kind = "/dev/shm" if run["dir"].startswith("/dev/shm") else "disk, synced" if run["sync"] else "disk"
            runs[kind].append(run)
    return runs


def series(runs, contender, key):
    points = sorted((r["streams"], r["contenders"][contender][key]) for r in runs if contender in r["contenders"])
    return [p[0] for p in points], [p[1] for p in points]


def plot(runs, out):
    kinds = sorted(runs)
    fig, axes = plt.subplots(2, len(kinds), figsize=(5 * len(kinds), 8), squeeze=False)
    for col, kind in enumerate(kinds):
        contenders = sorted({c for r in runs[kind] for c in r["contenders"]})
        for name in contenders:
            n, t = series(runs[kind], name, "create_s")
            axes[0][col].plot(n, t, marker="o", label=name)
            n, t = series(runs[kind], name, "write_s")
            mib = [r["bytes_per_stream"] * r["streams"] / 2**20 for r in sorted(runs[kind], key=lambda r: r["streams"])
                   if name in r["contenders"]]
            axes[1][col].plot(n, [m / s for m, s in zip(mib, t)], marker="o", label=name)
        floor = sorted((r["streams"], r.get("collectives_alone_s", 0)) for r in runs[kind])
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

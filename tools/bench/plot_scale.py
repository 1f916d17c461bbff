#!/usr/bin/env python3
"""The scaling model's sweep as a picture: per-rank bytes against the rank
count, from the JSON that `ferry-bench scale --json F` writes (the report
schema, docs/report.md).

usage: plot_scale.py <scale.json> <out.png>

One panel per pattern (noncontig, btio, checkpoint), log-log: the view
cache, all collective state, what a rank receives per call besides data,
and the 4 MiB line issue 20 set for the view cache at 131072 ranks.
"""
import collections
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SERIES = [("view cache", "view cache per rank"), ("coll state", "all collective state per rank"),
          ("meta recv", "received per call, besides data")]


def sweep_of(doc):
    """{pattern: {op: [(P, bytes)]}} from the model rows."""
    out = collections.defaultdict(lambda: collections.defaultdict(list))
    for row in doc["results"]:
        if not row["table"].startswith("scale model "):
            continue
        pattern = row["table"][len("scale model "):]
        out[pattern][row["op"]].append((int(row["case"].split("=")[1]), row["contenders"]["model"]))
    return out


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    sweep = sweep_of(json.load(open(argv[1])))
    fig, axes = plt.subplots(1, len(sweep), figsize=(5 * len(sweep), 4), sharey=True, squeeze=False)
    for ax, (pattern, ops) in zip(axes[0], sorted(sweep.items())):
        for op, label in SERIES:
            points = sorted(ops.get(op, []))
            ax.loglog([p for p, _ in points], [b for _, b in points], marker="o", label=label)
        ax.axhline(4 << 20, color="grey", linestyle="--", linewidth=1, label="4 MiB")
        ax.set_title(pattern)
        ax.set_xlabel("ranks P")
        ax.grid(True, which="major", alpha=0.3)
    axes[0][0].set_ylabel("bytes per rank")
    axes[0][0].legend(fontsize=8)
    fig.suptitle("ferry's planning code for P virtual ranks (ferry-bench scale)")
    fig.tight_layout()
    fig.savefig(argv[2], dpi=110)


if __name__ == "__main__":
    main(sys.argv)

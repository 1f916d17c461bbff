#!/usr/bin/env python3
"""Checkpoint benchmark plot and tables from the JSON documents that
`ferry-bench ckpt --json F` writes (the report schema, docs/report.md) and
the JSON lines that `shelfsea --table D --json F` appends.

usage: plot_ckpt.py <results.json|jsonl>... <out.png> [--markdown]

One panel per (source, directory, MPI): bars of seconds per strategy and
transfers, ferry beside the host MPI-IO, grouped by rank count. With
--markdown, prints one table per panel (median seconds and the ratios).
"""
import collections
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ORDER = [("gather", "collective"), ("gather", "independent"), ("stack", "collective"), ("stack", "independent"),
         ("steer", "collective"), ("steer", "independent"), ("contig", "independent")]


def records_of_doc(doc):
    """A ferry-bench report document as one record per strategy, transfers and MPI-IO."""
    env, mpi = doc["environment"], "mpich" if doc["host_mpi"]["name"] == "MPICH" else "openmpi"
    for row in doc["results"]:
        strategy, transfers = row["case"].split()
        for io, seconds in row["contenders"].items():
            yield {"source": "ferry-bench", "ranks": env["ranks"], "dir": doc["parameters"].get("dir", env["dir"]),
                   "mpi": mpi, "mib": row["extra"]["mib"], "strategy": strategy, "transfers": transfers, "io": io,
                   "seconds": seconds, "peak": row["extra"].get(io + "_peak"), "rss": row["extra"].get(io + "_rss")}


def records_of(path):
    text = open(path).read()
    try:
        doc = json.loads(text)
    except ValueError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return list(records_of_doc(doc)) if "schema" in doc else [doc]


def load(paths):
    panels = collections.defaultdict(list)
    for path in paths:
        for r in records_of(path):
            panels[(r["source"], r["dir"].split("/ferry-bench")[0], r["mpi"])].append(r)
    return panels


def value(rows, ranks, strategy, transfers, io):
    for r in rows:
        if (r["ranks"], r["strategy"], r["transfers"], r["io"]) == (ranks, strategy, transfers, io):
            return r["seconds"]
    return None


def markdown(key, rows):
    ranks = sorted({r["ranks"] for r in rows})
    print("\n%s, %s, %s (%.1f MiB per checkpoint): seconds, slowest rank, median\n" % (key + (rows[0]["mib"],)))
    print("| strategy | transfers | " + " | ".join("%d ranks ferry | %d ranks host" % (n, n) for n in ranks) + " |")
    print("|---|---|" + "---|---|" * len(ranks))
    for s, t in ORDER:
        cells = []
        for n in ranks:
            for io in ("ferry", "host"):
                v = value(rows, n, s, t, io)
                cells.append("%.4f" % v if v is not None else "")
        if any(cells):
            print("| %s | %s | %s |" % (s, t, " | ".join(cells)))
    for n in ranks:
        for io in ("ferry", "host"):
            g, st, sk, c = (value(rows, n, "gather", "collective", io), value(rows, n, "steer", "collective", io),
                            value(rows, n, "stack", "collective", io), value(rows, n, "contig", "independent", io))
            text = "%d ranks %s: steer coll / gather coll = %.2f" % (n, io, st / g)
            if c:
                text += ", stack coll / contig = %.2f" % (sk / c)
            print("\n" + text)


def plot(panels, out):
    fig, axes = plt.subplots(len(panels), 1, figsize=(11, 3.6 * len(panels)), squeeze=False)
    for ax, (key, rows) in zip(axes[:, 0], sorted(panels.items())):
        ranks = sorted({r["ranks"] for r in rows})
        labels = [(s, t) for s, t in ORDER if any(value(rows, n, s, t, "ferry") for n in ranks)]
        width = 0.8 / (2 * len(ranks))
        for i, n in enumerate(ranks):
            for j, io in enumerate(("ferry", "host")):
                ys = [value(rows, n, s, t, io) or 0 for s, t in labels]
                xs = [k + (2 * i + j) * width for k in range(len(labels))]
                ax.bar(xs, ys, width, label="%d ranks, %s" % (n, io), hatch="" if io == "ferry" else "//")
        ax.set_xticks([k + 0.4 - width / 2 for k in range(len(labels))])
        ax.set_xticklabels(["%s\n%s" % (s, t[:5]) for s, t in labels])
        ax.set_ylabel("seconds per checkpoint")
        ax.set_title("%s, %s, %s (%.1f MiB)" % (key + (rows[0]["mib"],)))
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=90)


def main():
    files = [a for a in sys.argv[1:] if a != "--markdown"]
    panels = load(files[:-1])
    plot(panels, files[-1])
    if "--markdown" in sys.argv:
        for key, rows in sorted(panels.items()):
            markdown(key, rows)


if __name__ == "__main__":
    main()

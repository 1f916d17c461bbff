"""The report: Markdown tables and matplotlib plots from a set's stored JSON.

Everything here reads <out>/json only, so `ferry-report --render-only`
regenerates the same report from the same measurements.
"""
import glob
import json
import math
import os

from sets import HOSTS, SECTIONS

MAIN = "ferry/host"


def load(out):
    """{host: {run id: doc or {"failed": text}}} and the set's metadata."""
    data = {}
    for path in sorted(glob.glob(os.path.join(out, "json", "*", "*.json"))):
        host, rid = os.path.basename(os.path.dirname(path)), os.path.basename(path)[:-5]
        with open(path) as f:
            data.setdefault(host, {})[rid] = json.load(f)
    for path in sorted(glob.glob(os.path.join(out, "json", "*", "*.failed"))):
        host, rid = os.path.basename(os.path.dirname(path)), os.path.basename(path)[:-7]
        with open(path) as f:
            data.setdefault(host, {}).setdefault(rid, {"failed_run": f.read().strip()})
    meta_path = os.path.join(out, "json", "set.json")
    meta = json.load(open(meta_path)) if os.path.exists(meta_path) else {}
    return data, meta


def hosts_in(data):
    return [h for h in HOSTS if h in data]


def call_rows(doc):
    """The rows that time the data call alone (open-to-close rows stay in the JSON)."""
    return [r for r in doc.get("results", []) if "open to close" not in r["table"]]


def geomean(values):
    values = [v for v in values if v and v > 0 and math.isfinite(v)]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def fmt(v):
    if v is None:
        return "-"
    return "%.3g" % v if abs(v) < 100 else "%.0f" % v


# ---- plots ----

def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _save(fig, out, name):
    os.makedirs(os.path.join(out, "plots"), exist_ok=True)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "plots", name), dpi=90)
    _plt().close(fig)
    return "plots/" + name


def overview_ratios(data, runs):
    """[(label, {host: geomean ferry/host of the run's call rows for op})]."""
    lines = []
    for r in runs:
        for op in ("write", "read", "pack", "unpack"):
            per_host = {}
            for h in hosts_in(data):
                doc = data[h].get(r["id"])
                if doc and "results" in doc:
                    per_host[h] = geomean([row["ratios"].get(MAIN) for row in call_rows(doc) if row["op"] == op])
            if any(v for v in per_host.values()):
                lines.append(("%s %s" % (r["id"], op), per_host))
    return lines


def plot_overview(data, runs, out):
    """The ratio bars of the workloads (scaling and volume runs have their own plots); returns every line."""
    every = overview_ratios(data, runs)
    lines = overview_ratios(data, [r for r in runs if r["section"] not in ("scaling", "volume")])
    if not lines:
        return None, every
    plt = _plt()
    hosts = hosts_in(data)
    fig, ax = plt.subplots(figsize=(8, 0.2 * len(lines) * len(hosts) + 1.5))
    height = 0.8 / len(hosts)
    for k, h in enumerate(hosts):
        ys = [i + k * height for i in range(len(lines))]
        ax.barh(ys, [line[1].get(h) or 0 for line in lines], height=height, label=HOSTS[h]["label"])
    ax.set_yticks([i + 0.4 - height / 2 for i in range(len(lines))])
    ax.set_yticklabels([line[0] for line in lines], fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.axvline(1, color="black", linewidth=0.8)
    ax.set_xlabel("ferry / host (speed ratio, geometric mean over the run's cases; > 1: ferry faster)")
    ax.legend(fontsize=7)
    return _save(fig, out, "overview_ratios.png"), every


def plot_series(data, series, out, name, xlabel):
    """series: [(title, [(x, {host: doc}), ...], keep(row, x), [contenders])] -> one subplot each."""
    plt = _plt()
    fig, axes = plt.subplots(1, len(series), figsize=(4.2 * len(series), 3.4), squeeze=False)
    styles = {"ferry": "-o", "host": "--s", "posix": ":^"}  # colour: the host run; line: the contender
    for ax, (title, points, keep, contenders) in zip(axes[0], series):
        for k, h in enumerate(hosts_in(data)):
            for c in contenders:
                xy = []
                for x, docs in points:
                    rows = [row for row in call_rows(docs.get(h, {})) if keep(row, x)]
                    if rows and c in rows[0]["contenders"]:
                        xy.append((x, rows[0]["contenders"][c]))
                if xy and (c != "posix" or k == 0):
                    ax.plot([p[0] for p in xy], [p[1] for p in xy], styles.get(c, "-.v"),
                            color="black" if c == "posix" else "C%d" % k,
                            label="%s (%s)" % (c, HOSTS[h]["label"]) if c != "posix" else c)
        ax.set_title(title, fontsize=9)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("MiB/s")
        ax.legend(fontsize=6)
    return _save(fig, out, name)


def plot_bars(data, rid, keep, out, name, title):
    """Every contender of the first row `keep` accepts, one bar per host."""
    hosts = [h for h in hosts_in(data) if data[h].get(rid, {}).get("results")]
    rows = {h: [r for r in call_rows(data[h][rid]) if keep(r)] for h in hosts}
    hosts = [h for h in hosts if rows[h]]
    if not hosts:
        return None
    plt = _plt()
    names = list(rows[hosts[0]][0]["contenders"])
    fig, ax = plt.subplots(figsize=(8, 3.6))
    width = 0.8 / len(hosts)
    for k, h in enumerate(hosts):
        values = [rows[h][0]["contenders"].get(n, 0) or 0 for n in names]
        ax.bar([i + k * width for i in range(len(names))], values, width=width, label=HOSTS[h]["label"])
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(names))])
    ax.set_xticklabels(names, rotation=25, ha="right", fontsize=7)
    ax.set_ylabel(rows[hosts[0]][0]["unit"])
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    return _save(fig, out, name)

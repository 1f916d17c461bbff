"""ferry-tune's matrix and its choice (tools/ferry-tune, docs/report.md).

One parameter at a time is moved away from ferry's default; each value is
measured by `ferry-bench tune` on the access classes it can change (and
only the directions it can change: romio_cb_write moves writes only). A
value is taken when it is faster than the default by GAIN (geometric mean
over those classes and directions) and no slower than TOLERANCE on any of
them; otherwise the default stays. The chosen values are then measured
together against the defaults on every class, and dropped, least useful
first, until the set is no slower anywhere.
"""
import math
import statistics

GAIN, TOLERANCE = 1.05, 0.97

# name, group of classes (coll/indep), directions, default, candidate values
PARAMETERS = [
    ("cb_buffer_size", "coll", ("write", "read"), "1m", ["256k", "4m", "16m"]),
    ("cb_nodes", "coll", ("write", "read"), "0", ["1", "2", "RANKS"]),
    ("ferry_cb_strategy", "coll", ("write", "read"), "auto",
     ["even", "block_cyclic", "stripe_group", "stripe_group ferry_cb_group_size=2"]),
    ("romio_cb_write", "coll", ("write",), "automatic", ["enable", "disable"]),
    ("romio_cb_read", "coll", ("read",), "automatic", ["enable", "disable"]),
    ("ind_rd_buffer_size", "indep", ("read",), "1m", ["256k", "4m"]),
    ("ind_wr_buffer_size", "indep", ("write",), "1m", ["256k", "4m"]),
]

EXPLAIN = {
    "cb_buffer_size": "collective buffer per aggregator (window + two steps); also the early-transfer threshold",
    "cb_nodes": "aggregators of collective calls (0: ferry's rule)",
    "ferry_cb_strategy": "file domains: even, block_cyclic, stripe_group (k storage targets per aggregator)",
    "romio_cb_write": "independent/two-phase switch for collective writes (automatic: ferry's cost model)",
    "romio_cb_read": "independent/two-phase switch for collective reads (automatic: ferry's cost model)",
    "ind_rd_buffer_size": "data sieving read window",
    "ind_wr_buffer_size": "data sieving write window",
}


def hint_text(name, value, ranks):
    """The "key=value ..." of one candidate (a value may carry a companion hint)."""
    value = value.replace("RANKS", str(ranks))
    first, _, rest = value.partition(" ")
    return ("%s=%s %s" % (name, first, rest)).strip()


def candidates(ranks):
    """[(label, group, hints)], the default first."""
    out = [("default", "all", "")]
    for name, group, _, _, values in PARAMETERS:
        for v in values:
            text = hint_text(name, v, ranks)
            if all(text != c[0] for c in out):  # cb_nodes=RANKS may repeat 1 or 2
                out.append((text, group, text))
    return out


def speeds(doc, label):
    """{(class, op): MiB/s of candidate `label`} from a `ferry-bench tune` JSON."""
    found = {}
    for row in doc["results"]:
        value = row["contenders"].get("ferry " + label)
        if value:
            found[(row["case"], row["op"])] = value
    return found


def _ratios(doc, label, ops):
    base, mine = speeds(doc, "default"), speeds(doc, label)
    return {k: mine[k] / base[k] for k in mine if k in base and k[1] in ops}


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else 1.0


def choose(doc, ranks):
    """Per parameter a decision: {name, value (None: the default), gain, ratios, tried, note}."""
    decisions = []
    for name, _, ops, default, values in PARAMETERS:
        d = {"name": name, "value": None, "gain": 1.0, "ratios": {}, "tried": [], "note": ""}
        for v in values:
            ratios = _ratios(doc, hint_text(name, v, ranks), ops)
            gain = geomean(list(ratios.values()))
            d["tried"].append((v.replace("RANKS", str(ranks)), gain, ratios))
            if ratios and gain >= GAIN and min(ratios.values()) >= TOLERANCE and gain > d["gain"]:
                d.update(value=v.replace("RANKS", str(ranks)), gain=gain, ratios=ratios)
        decisions.append(d)
    return decisions


def combined_hints(decisions, ranks):
    return " ".join(hint_text(d["name"], d["value"], ranks) for d in decisions if d["value"])


def slowest(docs, label):
    """The smallest speed ratio of `label` to the default over every class and direction: per class the
    median over the runs in `docs` (each run's ratio taken within that run)."""
    per_class = {}
    for doc in docs:
        for k, r in _ratios(doc, label, ("write", "read")).items():
            per_class.setdefault(k, []).append(r)
    medians = {k: statistics.median(v) for k, v in per_class.items()}
    return (min(medians.values()), min(medians, key=medians.get)) if medians else (1.0, None)


def drop_weakest(decisions, worst, where):
    """Drops the kept value that gained least, noting why (the set together was slower at `where`)."""
    return drop_weakest_because(decisions, "all kept values together gave %s %s %.2fx" % (where[0], where[1], worst))


def drop_weakest_because(decisions, why):
    """Drops the kept value that gained least; its line in the file says it was dropped, and `why`."""
    weakest = min((d for d in decisions if d["value"]), key=lambda d: d["gain"])
    weakest["note"] = "%s measured %.2fx alone, dropped: %s" % (weakest["value"], weakest["gain"], why)
    weakest["value"] = None
    return decisions


def _summary(tried):
    return ", ".join("%s %.2fx (slowest %.2fx)" % (v, g, min(r.values()) if r else 1.0) for v, g, r in tried)


def hints_file(decisions, context):
    """The FERRY_HINTS text: a comment above every line saying what was measured."""
    lines = ["# FERRY_HINTS written by tools/ferry-tune: %s" % context["command"],
             "# file system: %s (%s), %d ranks, %s, %s, median of %d runs per class and candidate" %
             (context["dir"], context["fs_type"], context["ranks"], context["host"], context["date"],
              context["reps"]),
             "# ratios: ferry's speed with the value over its speed with the default (geometric mean over the",
             "# classes and directions the hint changes); a value is kept at >= %.2fx and no class below %.2fx" %
             (GAIN, TOLERANCE), "# load average during the measurement: %s" % context["load"], ""]
    for d in decisions:
        lines.append("# %s: %s" % (d["name"], EXPLAIN[d["name"]]))
        if d["value"]:
            per_class = ", ".join("%s %s %.2fx" % (c, op, r) for (c, op), r in sorted(d["ratios"].items()))
            lines.append("# measured %.2fx over the default (%s): %s; tried %s" %
                         (d["gain"], _default_of(d["name"]), per_class, _summary(d["tried"])))
            lines += [token.replace("=", " ", 1) for token in hint_text(d["name"], d["value"], context["ranks"]).split()]
        else:
            lines.append("# default %s kept: tried %s%s" % (_default_of(d["name"]), _summary(d["tried"]),
                                                           "; " + d["note"] if d["note"] else ""))
        lines.append("")
    if context.get("verified"):
        lines.append("# all lines together against the defaults: slowest class %s at %.2fx" % context["verified"])
    return "\n".join(lines) + "\n"


def _default_of(name):
    return next(p[3] for p in PARAMETERS if p[0] == name)

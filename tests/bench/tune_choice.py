"""ferry-tune's choice on made-up measurements: a value is kept only when
it is faster than the default by GAIN overall and nowhere slower than
TOLERANCE, only the directions a hint changes count, the weakest kept
value goes first when the set is slower together, and the file holds
"key value" lines with comments above them.
usage: tune_choice.py <tools/report>"""
import sys

sys.path.insert(0, sys.argv[1])
import tuning  # noqa: E402

CLASSES = [("coll-contig", "write"), ("coll-contig", "read"), ("coll-fine", "write"), ("coll-fine", "read"),
           ("indep-strided", "write"), ("indep-strided", "read")]


def doc_with(speeds):
    """speeds: {candidate label: factor over the default, or {(class, op): factor}}."""
    rows = []
    for case, op in CLASSES:
        contenders = {"ferry default": 100.0}
        for label, factor in speeds.items():
            f = factor.get((case, op), 1.0) if isinstance(factor, dict) else factor
            group = "indep" if label.startswith("ind_") else "coll"
            if case.startswith(group):
                contenders["ferry " + label] = 100.0 * f
        rows.append({"case": case, "op": op, "contenders": contenders})
    return {"results": rows}


def expect(cond, what):
    if not cond:
        print("tune_choice: FAILED: " + what)
        sys.exit(1)


def main():
    doc = doc_with({
        "cb_buffer_size=4m": 1.2,                                   # faster everywhere: kept
        "cb_buffer_size=16m": {("coll-fine", "read"): 0.9, ("coll-contig", "write"): 1.6},  # one class slower
        "cb_nodes=1": 1.03,                                         # not enough gain
        "romio_cb_write=enable": {("coll-fine", "write"): 1.3, ("coll-fine", "read"): 0.5},  # reads do not count
        "ind_rd_buffer_size=256k": {("indep-strided", "read"): 1.1},
    })
    decisions = {d["name"]: d for d in tuning.choose(doc, 4)}
    expect(decisions["cb_buffer_size"]["value"] == "4m", "cb_buffer_size 4m kept: %s" % decisions["cb_buffer_size"])
    expect(decisions["cb_nodes"]["value"] is None, "cb_nodes 1 gains too little")
    expect(decisions["romio_cb_write"]["value"] == "enable", "romio_cb_write judged on writes only")
    expect(decisions["ind_rd_buffer_size"]["value"] == "256k", "ind_rd_buffer_size judged on reads only")
    expect(decisions["ferry_cb_strategy"]["value"] is None, "no strategy measured: default")
    hints = tuning.combined_hints(list(decisions.values()), 4)
    expect(hints.split() == ["cb_buffer_size=4m", "romio_cb_write=enable", "ind_rd_buffer_size=256k"], hints)
    together = doc_with({"tuned": {("coll-fine", "read"): 0.8}})
    expect(tuning.slowest(together, "tuned") == (0.8, ("coll-fine", "read")), "slowest of the set together")
    kept = tuning.drop_weakest(list(decisions.values()), 0.8, ("coll-fine", "read"))
    expect([d["name"] for d in kept if d["value"]] == ["cb_buffer_size", "romio_cb_write"], "weakest dropped first")
    context = {"command": "ferry-tune x", "dir": "/x", "fs_type": "ext4", "ranks": 4, "host": "h", "date": "d",
               "reps": 5, "load": "0.1", "verified": ("coll-fine read", 1.0)}
    text = tuning.hints_file(kept, context)
    settings = [line for line in text.splitlines() if line and not line.startswith("#")]
    expect(settings == ["cb_buffer_size 4m", "romio_cb_write enable"], "file lines: %s" % settings)
    lines = text.splitlines()
    for i, line in enumerate(lines):
        expect(line.startswith("#") or not line or lines[i - 1].startswith("#"), "comment above %s" % line)
    expect("dropped" in text, "the dropped value is explained")
    print("tune_choice: every rule as expected")


main()

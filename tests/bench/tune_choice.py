"""ferry-tune's choice on made-up measurements: a value is kept only when
it is faster than the default by GAIN overall and nowhere slower than
TOLERANCE, only the directions a hint changes count, the weakest kept
value goes first when the set is slower together, and the file holds
"key value" lines with comments above them; the before/after check judges
each case on its median over alternating rounds.
usage: tune_choice.py <tools/report>"""
import json
import os
import sys
import tempfile

sys.path.insert(0, sys.argv[1])
import markdown  # noqa: E402
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
    expect(tuning.slowest([together], "tuned") == (0.8, ("coll-fine", "read")), "slowest of the set together")
    # One run's dip does not decide: per class the median over the confirming runs.
    dips = [doc_with({"tuned": {("coll-fine", "read"): r}}) for r in (0.5, 1.1, 1.2)]
    expect(tuning.slowest(dips, "tuned")[0] == 1.0, "median over runs: %s" % (tuning.slowest(dips, "tuned"),))
    expect(tuning.slowest(dips[:1], "tuned")[0] == 0.5, "a single run is its own median")
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
    again = tuning.drop_weakest_because(kept, "with the file the quick set's contig ran at 0.90x")
    expect([d["name"] for d in again if d["value"]] == ["cb_buffer_size"], "the quick set drops the weakest too")
    expect("quick set's contig ran at 0.90x" in tuning.hints_file(again, context), "and says why")
    check_before_after()
    print("tune_choice: every rule as expected")


def quick_round(parent, name, figure):
    """One round of the quick set: ompio's run "contig" with ferry at `figure` MiB/s."""
    out = os.path.join(parent, name)
    os.makedirs(os.path.join(out, "json", "ompio"))
    row = {"table": "the call alone", "case": "contiguous", "op": "write", "unit": "MiB/s",
           "higher_is_better": True, "contenders": {"host": 100.0, "ferry": figure}, "extra": {}}
    with open(os.path.join(out, "json", "ompio", "contig.json"), "w") as f:
        json.dump({"results": [row]}, f)
    return out


def check_before_after():
    with tempfile.TemporaryDirectory() as tmp:
        befores = [quick_round(tmp, "b%d" % i, v) for i, v in enumerate((100.0, 100.0, 100.0))]
        afters = [quick_round(tmp, "a%d" % i, v) for i, v in enumerate((40.0, 101.0, 99.0))]  # one dip
        worst, where = markdown.before_after(befores, afters, os.path.join(tmp, "ba.md"))
        expect(abs(worst - 0.99) < 1e-9, "before/after: the median of the rounds, not the dip: %s" % worst)
        expect(where == "contig on Open MPI OMPIO", "before/after names the workload: %s" % where)
        text = open(os.path.join(tmp, "ba.md")).read()
        expect("3 alternating rounds" in text and "| contig |" in text, "before/after table:\n" + text)


main()

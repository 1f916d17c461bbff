"""ferry-report --repeat on made-up rounds: each row's figures and ratios
are the median over the rounds that ran, rows that repeat a key (overlap's
table) are matched by position, a run that failed in some rounds keeps the
others and one that failed in all is marked failed, and a row below 1.0 is
behind only when every one of at least 5 rounds is below 1.0.
usage: report_rounds.py <tools/report>"""
import json
import os
import sys
import tempfile

sys.path.insert(0, sys.argv[1])
import markdown  # noqa: E402
import render  # noqa: E402
import repeats  # noqa: E402


def expect(cond, what):
    if not cond:
        print("report_rounds: FAILED: " + what)
        sys.exit(1)


def row(case, ferry, host, table="t"):
    return {"table": table, "case": case, "op": "write", "unit": "MiB/s", "higher_is_better": True,
            "contenders": {"ferry": ferry, "host": host}, "ratios": {"ferry/host": ferry / host}, "extra": {}}


def write_round(folder, host, rid, rows=None, failed=False):
    os.makedirs(os.path.join(folder, "json", host), exist_ok=True)
    base = os.path.join(folder, "json", host, rid)
    if failed:
        with open(base + ".failed", "w") as f:
            f.write("exit status 1\n")
        return
    with open(base + ".json", "w") as f:
        json.dump({"results": rows, "environment": {}}, f)


def main():
    out = tempfile.mkdtemp(prefix="report-rounds-")
    dirs = repeats.round_dirs(out, 5)
    expect(repeats.round_dirs(out, 1) == [out], "one round writes where a set without rounds writes")
    behind, noisy = [0.9, 0.95, 0.8, 0.99, 0.7], [0.9, 1.1, 0.8, 0.95, 1.2]
    for k, d in enumerate(dirs):
        write_round(d, "ompio", "a", [row("behind", 100 * behind[k], 100), row("noisy", 100 * noisy[k], 100),
                                      row("same", 10 * (k + 1), 1, "dup"), row("same", 20 * (k + 1), 1, "dup")])
        write_round(d, "ompio", "b", [row("x", 50, 100)], failed=k != 2)
        write_round(d, "ompio", "c", failed=True)
    repeats.merge(out, dirs)
    data, _ = render.load(out)
    rows = data["ompio"]["a"]["results"]
    expect(abs(rows[0]["ratios"]["ferry/host"] - 0.9) < 1e-9, "median ratio of the behind row")
    expect(abs(rows[1]["ratios"]["ferry/host"] - 0.95) < 1e-9, "median ratio of the noisy row")
    expect(rows[2]["contenders"]["ferry"] == 30 and rows[3]["contenders"]["ferry"] == 60,
           "rows with one key matched by position")
    expect(rows[0]["rounds"]["ferry/host"] == behind, "every round's ratio kept")
    expect(len(data["ompio"]["b"]["rounds_failed"]) == 4 and data["ompio"]["b"]["results"][0]["ratios"]["ferry/host"]
           == 0.5, "a run that failed in 4 rounds keeps the fifth")
    expect("failed_run" in data["ompio"]["c"], "a run that failed in every round is failed")
    expect(repeats.verdict(behind) == "behind" and repeats.verdict(noisy) == "noise", "the sign test")
    expect(repeats.verdict([0.9] * 4) == "too few rounds" and repeats.verdict([1.0, 0.5, 1.2]) is None,
           "fewer than 5 rounds give no verdict; a median of 1.0 is not below")
    text = markdown.below_one(data, [{"id": "a"}, {"id": "b"}, {"id": "c"}])
    expect("1 behind, 1 noise, 1 too few rounds" in text, "the report counts the verdicts: " + text.split("\n")[0])
    print("report_rounds: passed")


main()

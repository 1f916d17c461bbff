#!/usr/bin/env python3
"""The failure matrix of issue 30: checkpoint writes that must fail, and the
previous checkpoint standing after each.

usage: ckpt_faults.py <run_mpi.sh> <ckpt_faults> <work dir>

Groups (ckpt_faults.c has the cases):
  full      a full disk: a 1200 KiB tmpfs mounted here for the test (ferry's
            and the host's MPI-IO x steer/stack/gather x collective/independent,
            with part of the space left and with none), and ferry's injected
            ENOSPC; 4 ranks
  rerun     a second run in an old run's directory; a run that goes on after
            restart fell back; 3 ranks
  mismatch  definitions that differ between ranks, on 2, 3 and 4 ranks

A case that hangs is ended by the program's own alarm; this script then starts
the group again after it. It prints the matrix (cases, refused as they should
be, silent successes, errors of the wrong class or without the cause, lost
previous checkpoints, left temporary files, hangs, crashes) and fails unless every case was refused. The tmpfs is unmounted by its
path at the end (also one left by a killed run, before mounting); when it cannot
be mounted (not root, no CAP_SYS_ADMIN) the full-disk cases on a real file
system are skipped with a message and the injected ones still run.
"""
import os
import re
import subprocess
import sys

GROUPS = [("full", 4), ("rerun", 3), ("mismatch", 2), ("mismatch", 3), ("mismatch", 4)]
OUTCOMES = ["refused", "SILENT", "WRONG", "LOST", "TMP", "HANG", "CRASH"]


def unmount(path):
    if os.path.ismount(path):
        subprocess.run(["umount", path], check=False)


def mount_small_fs(path):
    """A 1200 KiB tmpfs at path, or None with the reason it could not be made."""
    unmount(path)  # a killed run's leftover
    os.makedirs(path, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1200k", "ckpt_faults", path],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        return "cannot mount a tmpfs at %s: %s" % (path, r.stdout.strip() or "mount failed")
    return None


def run_group(run_mpi, program, group, nprocs, where):
    """Runs every case of a group, starting again after a hang or a crash; returns {case: outcome}."""
    results, first = {}, 0
    while True:
        p = subprocess.run([run_mpi, "600", str(nprocs), program, group, where, str(first)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        begun = {}
        for line in p.stdout.splitlines():
            m = re.match(r"ckpt_faults: begin (\d+) (\S+)", line)
            if m:
                begun[int(m.group(1))] = m.group(2)
            m = re.match(r"ckpt_faults: case (\S+): (\w+): (.*)", line)
            if m:
                results[m.group(1)] = m.group(2)
                print("  %-44s %-8s %s" % (m.group(1), m.group(2), m.group(3)[:150]))
        hang = re.search(r"ckpt_faults: HANG (\d+)", p.stdout)
        last = max(begun) if begun else None
        if hang or (p.returncode != 0 and last is not None and begun[last] not in results):
            what = "HANG" if hang else "CRASH"
            i = int(hang.group(1)) if hang else last
            results[begun.get(i, "case-%d" % i)] = what
            print("  %-44s %s" % (begun.get(i, "case-%d" % i), what))
            if what == "CRASH":
                print("\n".join(p.stdout.splitlines()[-15:]))
            first = i + 1
            continue
        if p.returncode != 0 and not results:
            print(p.stdout)
            raise SystemExit("ckpt_faults: %s on %d ranks did not run" % (group, nprocs))
        return results


def main():
    run_mpi, program, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    mnt = os.path.join(work, "small_fs")
    why = mount_small_fs(mnt)
    if why:
        print("ckpt_faults: skipped the full-disk cases on a real file system: %s; "
              "only ferry's injected ENOSPC runs" % why)
    table = []
    try:
        for group, nprocs in GROUPS:
            print("ckpt_faults: %s on %d ranks" % (group, nprocs))
            where = ("-" if why else mnt) if group == "full" else work
            results = run_group(run_mpi, program, group, nprocs, where)
            table.append((group, nprocs, [sum(1 for o in results.values() if o == k) for k in OUTCOMES]))
    finally:
        unmount(mnt)
        if os.path.isdir(mnt) and not os.path.ismount(mnt):
            os.rmdir(mnt)
    print("\n| group | ranks | cases | " + " | ".join(OUTCOMES) + " |")
    print("|---|---|---|" + "---|" * len(OUTCOMES))
    for group, nprocs, counts in table:
        print("| %s | %d | %d | %s |" % (group, nprocs, sum(counts), " | ".join(str(c) for c in counts)))
    bad = sum(sum(counts[1:]) for _, _, counts in table)
    print("ckpt_faults: %d cases went wrong" % bad)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The mini-app run for 2N steps equals the run checkpointed at N and
restarted on other rank counts, bit for bit (issue 17).

usage: shelfsea_restart.py <run_mpi.sh> <shelfsea> <dir>

Run A: 3 ranks, 2N steps, final state written steered. Runs B: 3 ranks,
N steps, a checkpoint at N (stack collective on ferry, steer independent on
the host MPI-IO); each restarted on 2 and on 4 ranks (other decompositions,
reading with gather through ferry and with steer collective through the host
MPI-IO) and run to 2N. The domains leave land uncovered: the host MPI-IOs
wrote stale bytes there until ferry_ckpt set the file's size before writing
(docs/checkpoint.md). Every variable of every final state must equal A's byte for byte.
"""
import os
import shutil
import subprocess
import sys

import netCDF4

GRID = ["--nx", "97", "--ny", "83", "--nz", "5"]
N = 4


def run(run_mpi, app, ranks, *args):
    subprocess.run([run_mpi, "180", str(ranks), app] + GRID + list(args), check=True)


def arrays(path):
    with netCDF4.Dataset(path) as nc:
        assert nc.ferry_step == 2 * N, path
        return {v: nc[v][:].data.tobytes() for v in ("temp", "salt", "eta", "mask")}


def main():
    run_mpi, app, d = sys.argv[1:4]
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    run(run_mpi, app, 3, "--steps", str(2 * N), "--base", d + "/a", "--final", d + "/a.nc")
    want = arrays(d + "/a.nc")
    assert any(b != bytes(len(b)) for b in want.values())
    # The restarted runs write their final state steered (an image file), read back here.
    for name, opts, again in (("stack", ["--strategy", "stack"], ["--strategy", "gather"]),
                              ("steer", ["--independent", "--io", "host"], ["--io", "host"])):
        base = "%s/%s" % (d, name)
        run(run_mpi, app, 3, "--steps", str(N), "--every", str(N), "--base", base, *opts)
        for ranks in (2, 4):
            final = "%s_%d.nc" % (base, ranks)
            run(run_mpi, app, ranks, "--steps", str(2 * N), "--restart", "--base", base, "--final", final, *again)
            got = arrays(final)
            for v in want:
                assert got[v] == want[v], (final, v)
            print("shelfsea_restart: %s checkpoint at %d, restarted on %d ranks: bit for bit" % (name, N, ranks))
    shutil.rmtree(d)


if __name__ == "__main__":
    main()

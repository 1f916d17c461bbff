#!/usr/bin/env python3
"""Damaged checksummed containers through every reader (issue 29): 0 wrong
bytes returned with success.

A container with data checksums is written by NPROCS ranks (two files,
512-byte blocks, chunks of 1 to 9 blocks); CASES copies of it each get one
byte flipped, chosen by FERRY_TEST_SEED: in a chunk's data, in a chunk
trailer, or anywhere in a file; every fourth copy also has its completion
records wiped (an incomplete container, read with --incomplete or
allow_incomplete, where a stream may come back shorter than written but
never wrong). Every reader must fail or give exactly the stream's bytes:
  - the C serial, parallel and mapped readers (container_damage, one MPI job
    over all cases);
  - ferry-container cat (one stream), split (a failing stream leaves no
    file) and defrag (a failure leaves no container; a success must hold
    exactly the streams, read back checked);
  - the Python reader (tools/python/ferry_container.py), whole streams and a piece.

usage: container_damage.py RUN_MPI WRITER CHECKER TOOL READER NPROCS CASES
"""
import os
import random
import shutil
import subprocess
import sys
import tempfile

run_mpi, writer, checker, tool, reader_path, nprocs, ncases = sys.argv[1:8]
nprocs, ncases = int(nprocs), int(ncases)
sys.path.insert(0, os.path.dirname(reader_path))
import ferry_container as fc  # noqa: E402

seed = int(os.environ.setdefault("FERRY_TEST_SEED", str(os.getpid())))
base = tempfile.mkdtemp(prefix="ferry-container-damage-", dir=os.environ.get("FERRY_TEST_DIR", "/tmp"))
print("container_damage: %d ranks, %d cases, FERRY_TEST_SEED=%d, in %s" % (nprocs, ncases, seed, base))
outcomes = {}  # reader -> [returned the stream, failed]


def fail(why):
    print("FAIL container_damage: %s (FERRY_TEST_SEED=%d)" % (why, seed))
    sys.exit(1)


def tally(reader, ok):
    outcomes.setdefault(reader, [0, 0])[0 if ok else 1] += 1


def run(*args):
    p = subprocess.run(list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout, p.stderr


def files_of(path):
    names = [path]
    while os.path.exists("%s.%06d" % (path, len(names))):
        names.append("%s.%06d" % (path, len(names)))
    return names


def flip_one_byte(rng, good, path, incomplete):
    """Copies the container at good to path, damaged; returns what was flipped."""
    for k, src in enumerate(files_of(good)):
        shutil.copy(src, path if k == 0 else "%s.%06d" % (path, k))
    if incomplete:
        for name in files_of(path):
            with open(name, "r+b") as f:
                f.seek(fc.COMPLETION_OFFSET)
                f.write(bytes(fc.COMPLETION_SIZE))
    with fc.Container(good) as c:
        streams = [c.stream(s) for s in range(c.streams) if c.length(s) > 0]
        s = rng.choice(streams)
        b = rng.randrange(s.chunks())
        kind = rng.choice(["data"] * 9 + ["trailer"] * 3 + ["anywhere"] * 8)
        if kind == "data":
            name, at = s.file.path, s.chunk_at(b) + rng.randrange(s.used_in(b))
        elif kind == "trailer":
            name, at = s.file.path, s.chunk_at(b) + s.capacity + rng.randrange(fc.TRAILER_SIZE)
        else:
            sizes = [(f.path, f.size) for f in c.files]
            name, size = rng.choice(sizes)
            at = rng.randrange(size)
    name = path + name[len(good):]
    with open(name, "r+b") as f:
        f.seek(at)
        byte = f.read(1)[0]
        f.seek(at)
        f.write(bytes([byte ^ rng.randrange(1, 256)]))
    return "%s byte %d of %s%s" % (kind, at, os.path.basename(name), " (incomplete)" if incomplete else "")


def same_or_prefix(got, want, incomplete, what):
    if got != want and not (incomplete and want.startswith(got)):
        fail("%s returned wrong bytes with success (%d bytes, expected %d)" % (what, len(got), len(want)))


def python_reader(path, expected, incomplete, rng, what):
    try:
        with fc.Container(path, allow_incomplete=incomplete) as c:
            for s in range(c.streams):
                same_or_prefix(c.read(s), expected[s], incomplete, "%s: Python read of stream %d" % (what, s))
                at = rng.randrange(len(expected[s]) + 1)
                same_or_prefix(c.read(s, at, 5000), expected[s][at:at + 5000], incomplete,
                               "%s: Python read at %d of stream %d" % (what, at, s))
        tally("python", True)
    except fc.ContainerError as e:
        if isinstance(e, fc.ChecksumError) and "stream %d chunk %d" % (e.stream, e.chunk) not in str(e):
            fail("%s: a checksum error that does not name its stream and chunk: %s" % (what, e))
        tally("python", False)


def tools(path, expected, incomplete, rng, what, work):
    flag = ["--incomplete"] if incomplete else []
    s = rng.randrange(nprocs)
    out = os.path.join(work, "cat.out")
    status, _, _ = run(tool, "cat", path, str(s), out, *flag)
    if status == 0:
        with open(out, "rb") as f:
            same_or_prefix(f.read(), expected[s], incomplete, "%s: cat of stream %d" % (what, s))
        os.remove(out)
    elif os.path.exists(out):
        fail("%s: a failed cat left %s" % (what, out))
    tally("cat", status == 0)
    status, _, _ = run(tool, "split", path, os.path.join(work, "split"), *flag)
    for t in range(nprocs):
        name = os.path.join(work, "split.%06d" % t)
        if os.path.exists(name):
            with open(name, "rb") as f:
                same_or_prefix(f.read(), expected[t], incomplete, "%s: split of stream %d" % (what, t))
            os.remove(name)
        elif status == 0:
            fail("%s: split succeeded without stream %d" % (what, t))
    tally("split", status == 0)
    out = os.path.join(work, "defrag.ctr")
    status, _, _ = run(tool, "defrag", path, out, *flag)
    if status == 0:
        with fc.Container(out) as c:  # complete, and read with its checksums
            for t in range(nprocs):
                same_or_prefix(c.read(t), expected[t], incomplete, "%s: defrag of stream %d" % (what, t))
        os.remove(out)
    elif os.path.exists(out) or any(n.startswith("defrag.ctr") for n in os.listdir(work)):
        fail("%s: a failed defrag left a container: %s" % (what, os.listdir(work)))
    tally("defrag", status == 0)


def main():
    good = os.path.join(base, "good.ctr")
    status, out, err = run(run_mpi, "120", str(nprocs), writer, "write", good, "2", "512", "20000", base)
    if status != 0:
        fail("the writer failed: %s %s" % (out, err))
    expected = []
    for s in range(nprocs):
        with open(os.path.join(base, "expected.%06d" % s), "rb") as f:
            expected.append(f.read())
    rng = random.Random(seed)
    cases, work = [], os.path.join(base, "work")
    os.mkdir(work)
    for i in range(ncases):
        path = os.path.join(base, "case%03d.ctr" % i)
        incomplete = i % 4 == 3
        what = "case %d: %s" % (i, flip_one_byte(rng, good, path, incomplete))
        python_reader(path, expected, incomplete, rng, what)
        tools(path, expected, incomplete, rng, what, work)
        cases.append("%s %d\n" % (path, incomplete))
    with open(os.path.join(base, "cases"), "w") as f:
        f.writelines(cases)
    status, out, err = run(run_mpi, "600", str(nprocs), checker, base)
    sys.stdout.write(out.decode(errors="replace"))
    if status != 0:
        fail("the C readers: %s" % err.decode(errors="replace")[-3000:])
    for reader, (ok, failed) in sorted(outcomes.items()):
        print("container_damage: %s: %d returned the stream, %d failed, 0 wrong" % (reader, ok, failed))
        if ok == 0 or failed == 0:
            fail("%s never %s: the cases did not test it" % (reader, "succeeded" if ok == 0 else "failed"))
    shutil.rmtree(base)
    print("container_damage: passed")


main()

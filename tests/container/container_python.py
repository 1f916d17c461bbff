#!/usr/bin/env python3
"""The Python reader (tools/python/ferry_container.py) against the C reader
(ferry-container): containers written by MPI ranks (one file and two,
checksums on, several block sizes), the same list of streams and lengths,
the same bytes for every stream, the same verdicts on an intact file, on a
flipped data byte, on an incomplete one (lengths from the trailers) and on
a newer major version.

usage: container_python.py RUN_MPI WRITER TOOL READER NPROCS
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

run_mpi, writer, tool, reader_path, nprocs = sys.argv[1:6]
sys.path.insert(0, os.path.dirname(reader_path))
import ferry_container as fc  # noqa: E402

seed = os.environ.setdefault("FERRY_TEST_SEED", str(os.getpid()))
base = tempfile.mkdtemp(prefix="ferry-container-python-", dir=os.environ.get("FERRY_TEST_DIR", "/tmp"))
print("container_python: %s ranks, FERRY_TEST_SEED=%s, in %s" % (nprocs, seed, base))


def fail(why):
    print("FAIL container_python: %s (FERRY_TEST_SEED=%s)" % (why, seed))
    sys.exit(1)


def run(*args):
    p = subprocess.run(list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout, p.stderr


def c_lengths(path):
    """Stream -> length from `ferry-container dump`."""
    status, out, _ = run(tool, "dump", path)
    rows = re.findall(rb"^ +(\d+) +(\d+) +(\d+) +(\d+) +(\d+) ", out, re.M)
    return status, {int(r[0]): int(r[4]) for r in rows}


def compare(path, expect_dir, complete=True):
    c = fc.Container(path, allow_incomplete=not complete)
    status, lengths = c_lengths(path)
    if status != (0 if complete else 3):
        fail("dump of %s exited %d" % (path, status))
    if c.streams != int(nprocs) or lengths != {s: c.length(s) for s in range(c.streams)}:
        fail("stream lengths differ: C %s, Python %s" % (lengths, [c.length(s) for s in range(c.streams)]))
    for s in range(c.streams):
        flag = [] if complete else ["--incomplete"]
        status, c_bytes, err = run(tool, "cat", path, str(s), *flag)
        if status != 0 or c_bytes != c.read(s):
            fail("stream %d differs between the readers (%s)" % (s, err))
        with open(os.path.join(expect_dir, "expected.%06d" % s), "rb") as f:
            expected = f.read()
        if complete and c_bytes != expected:
            fail("stream %d differs from what was written" % s)
        if c.read(s, 3, 100) != c_bytes[3:103]:
            fail("a read at a position differs")
    if c.verify():
        fail("Python verify found %s" % c.verify())
    try:
        import numpy
        if c.length(0) >= 8 and not (c.read_array(0, "uint8") == numpy.frombuffer(c.read(0), "uint8")).all():
            fail("read_array differs")
    except ImportError:
        pass
    c.close()


def one_container(name, files, block, max_length):
    d = os.path.join(base, name)
    os.mkdir(d)
    path = os.path.join(d, "c.ctr")
    status, out, err = run(run_mpi, "120", nprocs, writer, "write", path, str(files), str(block), str(max_length), d)
    if status != 0:
        fail("the writer failed: %s %s" % (out, err))
    compare(path, d)
    return path, d


def flipped(path, d):
    shutil.copy(path, path + ".bad")
    for k in range(1, 10):
        if os.path.exists("%s.%06d" % (path, k)):
            shutil.copy("%s.%06d" % (path, k), "%s.bad.%06d" % (path, k))
    c = fc.Container(path)
    s = next(s for s in range(c.streams) if c.length(s) > 0 and c.stream(s).file.file_index == 0)
    at = c.stream(s).chunk_at(0) + c.stream(s).used_in(0) // 2
    c.close()
    with open(path + ".bad", "r+b") as f:
        f.seek(at)
        byte = f.read(1)
        f.seek(at)
        f.write(bytes([byte[0] ^ 0x10]))
    if run(tool, "verify", path + ".bad")[0] != 1:
        fail("C verify missed the flipped byte")
    if run(sys.executable, reader_path, "verify", path + ".bad")[0] != 1:
        fail("Python verify missed the flipped byte")


def copy_set(path, to):
    shutil.copy(path, to)
    shutil.copy(path + ".000001", to + ".000001")


def reseal(name, offset, fmt, value):
    """Writes value at offset of name's superblock and recomputes its CRC."""
    with open(name, "r+b") as f:
        head = bytearray(f.read(256))
        struct.pack_into(fmt, head, offset, value)
        struct.pack_into("<I", head, 252, fc.crc32c(bytes(head[:252])))
        f.seek(0)
        f.write(head)


def swapped(path):
    """A second file from elsewhere: both readers say which file of the set it is (issue 29 item 7)."""
    bad = path + ".swapped"
    copy_set(path, bad)
    shutil.copy(path, bad + ".000001")  # file 0 where file 1 belongs
    want = [b"file 1 of 2", b"says it is file 0 of 2"]
    copy_set(path, bad + "2")
    reseal(bad + "2.000001", 16, "<Q", fc.Container(path).files[0].id ^ 1)  # another container id
    for name, needles in ((bad, want), (bad + "2", [b"file 1 of 2", b"belongs to another container"])):
        status, _, err = run(tool, "dump", name)
        if status != 4 or not all(n in err for n in needles):
            fail("C reader on a swapped file: %d %s" % (status, err))
        status, _, err = run(sys.executable, reader_path, "list", name)
        if status != 1 or not all(n in err for n in needles):
            fail("Python reader on a swapped file: %d %s" % (status, err))


def absurd_counts(path):
    """A superblock claiming 2^31 streams, CRC recomputed: refused at once, in little memory (item 6)."""
    bad = path + ".absurd"
    shutil.copy(path, bad)  # a one-file container: its only file claims the streams
    reseal(bad, 32, "<I", 1 << 31)
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)); "
    code = limit + "import runpy, sys; sys.argv = ['r', 'list', %r]; runpy.run_path(%r, run_name='__main__')" % (
        bad, reader_path)
    try:
        p = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=20)
    except subprocess.TimeoutExpired:
        fail("the Python reader stalled on 2^31 streams")
    if p.returncode != 1 or b"says 2147483648" not in p.stderr or b"Traceback" in p.stderr:
        fail("Python reader on 2^31 streams: %d %s" % (p.returncode, p.stderr[-500:]))
    status, _, err = run(tool, "dump", bad)
    if status != 4 or b"says 2147483648" not in err:
        fail("C reader on 2^31 streams: %d %s" % (status, err))


def incomplete(path, d):
    with open(path, "r+b") as f:
        f.seek(fc.COMPLETION_OFFSET)
        f.write(bytes(fc.COMPLETION_SIZE))
    try:
        fc.Container(path)
        fail("Python opened an incomplete container")
    except fc.ContainerError as e:
        if e.status != 3:
            fail("incomplete container: status %d" % e.status)
    compare(path, d, complete=False)
    if run(sys.executable, reader_path, "list", path)[0] != 3:
        fail("list of an incomplete container did not exit 3")


def buddy():
    """Buddy copies (issue 29): file 1 deleted, both readers read every stream from its copy and say so,
    verify counts it; file 1 and its copy deleted: both readers name the lost streams."""
    os.environ["CONTAINER_WRITER_BUDDY"] = "1"
    path, d = one_container("buddy", 2, 512, 30000)
    del os.environ["CONTAINER_WRITER_BUDDY"]
    os.remove(path + ".000001")
    c = fc.Container(path)
    if len(c.notes) != 1 or "buddy copy" not in c.notes[0]:
        fail("Python reader's notes: %s" % c.notes)
    for s in range(c.streams):
        status, c_bytes, err = run(tool, "cat", path, str(s))
        with open(os.path.join(d, "expected.%06d" % s), "rb") as f:
            expected = f.read()
        if status != 0 or b"buddy copy" not in err or c_bytes != expected or c.read(s) != expected:
            fail("stream %d through the buddy copy: %d %s" % (s, status, err))
    c.close()
    for cmd in ([tool, "verify", path], [sys.executable, reader_path, "verify", path]):
        status, out, err = run(*cmd)
        if status != 1 or b"buddy copy" not in out + err:
            fail("%s verify with a buddy copy standing in: %d %s %s" % (cmd[0], status, out, err))
    os.remove(path + ".buddy")  # file 1's copy: file (1 + 1) mod 2 of the buddy set
    for cmd in ([tool, "dump", path], [sys.executable, reader_path, "list", path]):
        status, out, err = run(*cmd)
        if status != 4 or b"cannot be read" not in err:
            fail("%s with file 1 and its copy gone: %d %s" % (cmd[0], status, err))


def newer(path):
    with open(path, "r+b") as f:
        head = bytearray(f.read(256))
        struct.pack_into("<H", head, 8, 2)
        struct.pack_into("<I", head, 252, fc.crc32c(bytes(head[:252])))
        f.seek(0)
        f.write(head)
    status, _, err = run(sys.executable, reader_path, "list", path)
    if status != 4 or b"newer than this reader" not in err:
        fail("Python accepted format 2.0: %d %s" % (status, err))
    status, _, err = run(tool, "dump", path)
    if status != 4 or b"newer than this reader" not in err:
        fail("C accepted format 2.0: %d %s" % (status, err))


if fc.crc32c(b"123456789") != 0xE3069283:
    fail("crc32c check value")
absurd_counts(one_container("one", 1, 4096, 200000)[0])
path, d = one_container("two", 2, 512, 30000)
swapped(path)
flipped(path, d)
incomplete(path, d)
newer(path)
buddy()
shutil.rmtree(base)
print("container_python: passed")

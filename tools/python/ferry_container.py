#!/usr/bin/env python3
"""Read ferry task-local containers without ferry: a second implementation
of docs/format/container.md, written from that page alone (standard
library only; numpy is used when present, for read_array).

As a module:
    with Container("out.ctr") as c:
        print(c.streams)                  # number of streams
        data = c.read(3)                  # all of stream 3, as bytes
        part = c.read(3, 1000, 64)        # 64 bytes from position 1000
        arr = c.read_array(3, "float64")  # numpy array (needs numpy)
        problems = c.verify()             # [] when every check holds

When the container carries data checksums, every read checks each chunk it
returns bytes of (its trailer and the CRC of its data) and raises
ChecksumError (stream, chunk and file named) instead of returning a byte of
a chunk that fails; Container(path, check_data=False) reads without.

From the command line (exit status as ferry-container's: 0 fine, 1 damaged,
2 usage, 3 incomplete, 4 unreadable):
    ferry_container.py list PATH
    ferry_container.py cat PATH STREAM
    ferry_container.py split PATH PREFIX
    ferry_container.py verify PATH
Add --incomplete to read what an incomplete container's flushes recorded.

Buddy copies (written with params.buddy): when a file of the set is
missing or fails its checks, its streams are read from the buddy copy
(PATH.buddy, PATH.buddy.<k>: file (k + 1) mod n holds file k's streams);
c.notes says which, verify counts each as a problem.
"""
import os
import struct
import sys

SUPER_SIZE = 256
COMPLETION_OFFSET = 512
COMPLETION_SIZE = 64
TABLE_OFFSET = 1024
ENTRY_SIZE = 32
TRAILER_SIZE = 64
END_HEADER = 32
END_ENTRY = 16
MAJOR = 1
FLAG_CHECKSUMS = 1
BUDDY_ID_MASK = 0x5BD1E9955BD1E994  # the buddy set's container id is the primary's XOR this


def _buddy_name(path, k):
    return path + ".buddy" if k == 0 else "%s.buddy.%06d" % (path, k)


def _crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc_table()


def crc32c(data, crc=0):
    """CRC-32C (Castagnoli) of data, continuing from crc."""
    c = crc ^ 0xFFFFFFFF
    table = _TABLE
    for byte in data:
        c = table[(c ^ byte) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


class ContainerError(Exception):
    """The container cannot be read: status is the command-line exit status."""

    def __init__(self, message, status=4):
        super().__init__(message)
        self.status = status


class ChecksumError(ContainerError):
    """A chunk failed its checks on read: stream, chunk and file say which."""

    def __init__(self, stream, chunk, path, why):
        super().__init__("stream %d chunk %d in %s %s" % (stream, chunk, path, why), 4)
        self.stream, self.chunk, self.file = stream, chunk, path


def _sealed(record, crc_at):
    return crc32c(record[:crc_at]) == struct.unpack_from("<I", record, crc_at)[0]


def _align_up(x, b):
    return (x + b - 1) // b * b


class Stream:
    """Where one stream lives: its file, chunk geometry and length."""

    def __init__(self, sid, pfile, entry):
        self.id = sid
        self.file = pfile
        self.chunk_size = entry["chunk_size"]
        self.row_offset = entry["row_offset"]
        self.length = 0
        self.write_failed = False

    @property
    def capacity(self):
        return self.chunk_size - TRAILER_SIZE

    def chunk_at(self, b):
        return self.file.data_start + b * self.file.row_size + self.row_offset

    def chunks(self):
        return (self.length + self.capacity - 1) // self.capacity

    def used_in(self, b, length=None):
        length = self.length if length is None else length
        start = b * self.capacity
        return 0 if length <= start else min(self.capacity, length - start)


class PhysicalFile:
    """One file of a set, checked as the format's Reading section says."""

    def __init__(self, path):
        self.path = path
        try:
            self.handle = open(path, "rb")
        except OSError as e:
            raise ContainerError("%s: %s" % (path, e.strerror))
        self.size = os.fstat(self.handle.fileno()).st_size
        self._read_superblock()
        self._read_table()
        self.complete = self._read_completion()

    def pread(self, offset, size, what):
        if offset + size > self.size:
            raise ContainerError("%s: truncated: the %s needs %d bytes, the file has %d"
                                 % (self.path, what, offset + size, self.size))
        self.handle.seek(offset)
        data = self.handle.read(size)
        if len(data) != size:
            raise ContainerError("%s: truncated while reading the %s" % (self.path, what))
        return data

    def _bad(self, what):
        return ContainerError("%s: %s" % (self.path, what), 1)

    def _read_superblock(self):
        head = self.pread(0, min(SUPER_SIZE, self.size), "superblock")
        if head[:8] != b"FERRYCTR":
            raise self._bad("not a ferry container (no FERRYCTR magic)")
        if len(head) < SUPER_SIZE:
            raise self._bad("truncated: the superblock needs 256 bytes")
        major, minor = struct.unpack_from("<HH", head, 8)
        if major > MAJOR:
            raise ContainerError("%s: format %d.%d is newer than this reader (%d.x)" % (self.path, major, minor, MAJOR))
        if not _sealed(head, SUPER_SIZE - 4):
            raise self._bad("superblock checksum mismatch")
        (self.super_size, self.id, self.file_index, self.file_count, self.streams, self.local_streams,
         self.block_size, table_offset, self.data_start, self.row_size, trailer_size, self.flags,
         self.created, self.mapping) = struct.unpack_from("<IQIIIIQQQQIIQI", head, 12)
        self.major, self.minor = major, minor
        self._check_superblock(table_offset, trailer_size)

    def _check_superblock(self, table_offset, trailer_size):
        b = self.block_size
        if (self.super_size, table_offset, trailer_size) != (SUPER_SIZE, TABLE_OFFSET, TRAILER_SIZE):
            raise self._bad("superblock: record sizes differ from format 1")
        if b < 512 or b > 1 << 30 or b & (b - 1):
            raise self._bad("superblock: block size is not a power of two from 512 to 2^30")
        if not (self.file_count >= 1 and self.file_index < self.file_count and self.streams >= 1
                and 1 <= self.local_streams <= self.streams):
            raise self._bad("superblock: file or stream counts out of range")
        table_end = TABLE_OFFSET + ENTRY_SIZE * self.local_streams + 4
        if self.data_start != _align_up(table_end, b) or self.row_size % b or self.row_size < b * self.local_streams:
            raise self._bad("superblock: data start or row size inconsistent with the block size")

    def _read_table(self):
        n = self.local_streams
        raw = self.pread(TABLE_OFFSET, ENTRY_SIZE * n + 4, "stream table")
        if not _sealed(raw, ENTRY_SIZE * n):
            raise self._bad("stream table checksum mismatch")
        self.entries, offset = [], 0
        for t in range(n):
            sid, _, size, row_offset, asked = struct.unpack_from("<IIQQQ", raw, t * ENTRY_SIZE)
            ok = (sid < self.streams and (t == 0 or sid > self.entries[-1]["stream"]) and size >= self.block_size
                  and size % self.block_size == 0 and row_offset == offset and size <= self.row_size - offset)
            if not ok:
                raise self._bad("stream table entry %d inconsistent" % t)
            self.entries.append({"stream": sid, "chunk_size": size, "row_offset": row_offset, "asked": asked})
            offset += size
        if offset != self.row_size:
            raise self._bad("row size differs from the sum of the chunk sizes")

    def _read_completion(self):
        """True when complete; else self.damage says why not ("" never closed)."""
        raw = self.pread(COMPLETION_OFFSET, COMPLETION_SIZE, "completion record")
        self.how, self.lengths, self.failed, self.damage = 0, None, None, ""
        if raw == bytes(COMPLETION_SIZE):
            return False
        if raw[:8] != b"FERRYEND" or not _sealed(raw, COMPLETION_SIZE - 4):
            self.damage = "has a damaged completion record"
            return False
        cid, end_offset, end_size, end_crc, how = struct.unpack_from("<QQQII", raw, 8)
        n = self.local_streams
        try:
            if (cid != self.id or end_size != END_HEADER + END_ENTRY * n + 4 or end_offset < self.data_start
                    or (end_offset - self.data_start) % self.row_size):
                raise self._bad("completion record inconsistent")
            self._read_end(end_offset, end_size, end_crc)
        except ContainerError as e:
            # Closed, but what the record names fails its checks: read as an
            # incomplete file, whose chunk trailers say every stream's length.
            self.damage = "was closed, but its end table fails its checks (%s)" % e
            self.lengths, self.failed = None, None
            return False
        self.how = how
        return True

    def _read_end(self, end_offset, end_size, end_crc):
        n = self.local_streams
        raw = self.pread(end_offset, end_size, "end table")
        if crc32c(raw[:-4]) != end_crc:
            raise self._bad("end table differs from the one the completion record names")
        if raw[:8] != b"FERRYTBL" or not _sealed(raw, end_size - 4):
            raise self._bad("end table damaged")
        cid, count, _, rows = struct.unpack_from("<QIIQ", raw, 8)
        if cid != self.id or count != n:
            raise self._bad("end table belongs to another container")
        if rows != (end_offset - self.data_start) // self.row_size:
            raise self._bad("end table not after its last row")
        self.rows = rows
        self.lengths, self.failed = [], []
        for t in range(n):
            length, flags, _ = struct.unpack_from("<QII", raw, END_HEADER + t * END_ENTRY)
            self.lengths.append(length)
            self.failed.append(bool(flags & 1))

    def trailer(self, stream, b):
        """The valid trailer of chunk b of a stream of this file, as a dict, or None."""
        at = stream.chunk_at(b) + stream.capacity
        if at + TRAILER_SIZE > self.size:
            return None
        self.handle.seek(at)
        raw = self.handle.read(TRAILER_SIZE)
        if raw[:4] != b"FCHK" or not _sealed(raw, TRAILER_SIZE - 4):
            return None
        sid, cid, chunk, used, length, seq, data_crc = struct.unpack_from("<IQQQQQI", raw, 4)
        if cid != self.id or sid != stream.id or chunk != b or used > stream.capacity:
            return None
        return {"used": used, "length": length, "seq": seq, "data_crc": data_crc}

    def recover_length(self, stream):
        """What the stream's newest trailer recorded (the format's Recovering section)."""
        end = self.data_start + stream.row_offset + stream.chunk_size
        rows = 0 if self.size < end else (self.size - end) // self.row_size + 1
        best = None
        for b in range(rows):
            tr = self.trailer(stream, b)
            if tr and (best is None or tr["seq"] > best["seq"]):
                best = tr
        length = best["length"] if best else 0
        while length > 0:  # every byte inside the file
            last = (length - 1) // stream.capacity
            start = stream.chunk_at(last)
            if start + (length - last * stream.capacity) <= self.size:
                break
            length = last * stream.capacity + (self.size - start if start < self.size else 0)
        return length


class Container:
    """A container's whole set of files."""

    def __init__(self, path, allow_incomplete=False, check_data=True):
        self.path = path
        self.check_data = check_data
        self.files = []
        self.notes = []
        try:
            self._load_files()
            self.complete = all(f.complete for f in self.files)
            if not self.complete and not allow_incomplete:
                f = next(f for f in self.files if not f.complete)
                raise ContainerError("%s: incomplete (%s %s); 'ferry-container recover %s' completes it"
                                     % (path, f.path, f.damage or "was never closed", path), 3)
            self._set_lengths()
        except BaseException:
            self.close()
            raise

    def _load_files(self):
        self.notes = []
        try:
            first, failure = PhysicalFile(self.path), None
            count, streams, cid = first.file_count, first.streams, first.id
        except ContainerError as e:  # the buddy set's file 0 gives the counts, slot 0 its copy
            try:
                b = PhysicalFile(_buddy_name(self.path, 0))
            except ContainerError:
                raise e
            count, streams, cid = b.file_count, b.streams, b.id ^ BUDDY_ID_MASK
            b.handle.close()
            first, failure = None, e
        # Counts are checked before anything is sized by them (a damaged
        # superblock whose CRC was recomputed may claim 2^32 streams).
        if count > streams:
            raise ContainerError("%s: more files than streams" % self.path, 1)
        lost = []
        for k in range(count):
            try:
                if k == 0 and failure:
                    raise failure
                f = first if k == 0 else self._member(k, count, streams, cid)
            except ContainerError as e:
                f = self._copy(k, count, streams, cid, e, lost)
            if f:
                self.files.append(f)
        if lost:
            named = set(e["stream"] for f in self.files for e in f.entries)
            missing = ", ".join(str(s) for s in range(streams) if s not in named)
            raise ContainerError("%s: stream(s) %s cannot be read: %s" % (self.path, missing, lost[0]), 4)
        total = sum(f.local_streams for f in self.files)
        if total != streams:
            raise ContainerError("%s: the files hold %d streams, the superblock says %d"
                                 % (self.path, total, streams), 1)
        self._map_streams()

    def _member(self, k, count, streams, cid):
        f = PhysicalFile("%s.%06d" % (self.path, k))
        where = "%s: file %d of %d (%s)" % (self.path, k, count, f.path)
        if f.id != cid:
            f.handle.close()
            raise ContainerError("%s belongs to another container (id %016x, file 0's %016x)" % (where, f.id, cid), 1)
        if (f.file_index, f.file_count, f.streams) != (k, count, streams):
            f.handle.close()
            raise ContainerError("%s says it is file %d of %d with %d streams (swapped or renamed?)"
                                 % (where, f.file_index, f.file_count, f.streams), 1)
        return f

    def _copy(self, k, count, streams, cid, why, lost):
        """The buddy copy of file k's streams (file (k + 1) mod count of the buddy set), or None when
        it fails too (lost says why); without a buddy set, file k's own failure stands."""
        b = (k + 1) % count
        name = _buddy_name(self.path, b)
        try:
            f = PhysicalFile(name)
            if f.id != cid ^ BUDDY_ID_MASK or (f.file_index, f.file_count, f.streams) != (b, count, streams) \
                    or not f.complete:
                f.handle.close()
                raise ContainerError("%s is not a complete buddy copy of file %d" % (name, k), 1)
        except ContainerError as e:
            if not any(os.path.exists(_buddy_name(self.path, i)) for i in (0, 1 % count)):
                raise why
            lost.append("%s; and its buddy copy: %s" % (why, e))
            return None
        self.notes.append("file %d: %s; its streams are read from the buddy copy %s" % (k, why, name))
        return f

    def _map_streams(self):
        self._streams = [None] * self.files[0].streams  # (every file, or copy, has the set's count)
        for f in self.files:
            for e in f.entries:
                if self._streams[e["stream"]] is not None:
                    raise ContainerError("%s: stream %d is in two files" % (self.path, e["stream"]), 1)
                self._streams[e["stream"]] = Stream(e["stream"], f, e)
        if any(s is None for s in self._streams):
            raise ContainerError("%s: a stream is in no file" % self.path, 1)

    def _set_lengths(self):
        for f in self.files:
            for t, e in enumerate(f.entries):
                s = self._streams[e["stream"]]
                if f.complete:
                    s.length, s.write_failed = f.lengths[t], f.failed[t]
                else:
                    s.length = f.recover_length(s)
                if f.complete and s.chunks() > f.rows:
                    raise ContainerError("%s: stream %d's length exceeds the file's rows" % (self.path, s.id), 1)

    def close(self):
        for f in self.files:
            f.handle.close()
        self.files = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def streams(self):
        return len(self._streams)

    def stream(self, sid):
        if not 0 <= sid < len(self._streams):
            raise IndexError("no stream %d (the container has %d)" % (sid, len(self._streams)))
        return self._streams[sid]

    def length(self, sid):
        return self.stream(sid).length

    def read(self, sid, position=0, size=None):
        """Up to size bytes of stream sid from position (all that is left by
        default); with data checksums, each chunk read is checked whole."""
        s = self.stream(sid)
        end = s.length if size is None else min(s.length, position + size)
        checked = self.check_data and s.file.flags & FLAG_CHECKSUMS
        pieces = []
        while position < end:
            b, offset = divmod(position, s.capacity)
            take = min(end - position, s.capacity - offset)
            if checked:
                pieces.append(self._checked_chunk(s, b)[offset:offset + take])
            else:
                pieces.append(s.file.pread(s.chunk_at(b) + offset, take, "stream %d" % sid))
            position += take
        return b"".join(pieces)

    def _checked_chunk(self, s, b):
        """The used bytes of chunk b of stream s, checked against its trailer."""
        used = s.used_in(b)
        tr = s.file.trailer(s, b)
        if tr is None:
            raise ChecksumError(s.id, b, s.file.path, "has no valid trailer: its data cannot be checked")
        if tr["used"] != used:
            raise ChecksumError(s.id, b, s.file.path, "has a trailer recording %d bytes, the stream's length "
                                "gives %d" % (tr["used"], used))
        data = s.file.pread(s.chunk_at(b), used, "stream %d chunk %d" % (s.id, b))
        crc = crc32c(data)
        if crc != tr["data_crc"]:
            raise ChecksumError(s.id, b, s.file.path, "fails its data checksum (trailer 0x%08x, data 0x%08x)"
                                % (tr["data_crc"], crc))
        return data

    def read_array(self, sid, dtype):
        """Stream sid as a numpy array of dtype (needs numpy)."""
        import numpy
        return numpy.frombuffer(self.read(sid), dtype=dtype)

    def verify(self, data=True):
        """Every trailer and (with data) every data checksum: a list of problems."""
        problems = list(self.notes)  # a file the buddy copy stood in for: its streams are safe, it is not
        problems += ["file %d of %d %s: 'ferry-container recover' rebuilds it from the chunk trailers"
                     % (k, len(self.files), f.damage) for k, f in enumerate(self.files) if f.damage]
        for s in self._streams:
            for b in range(s.chunks()):
                problems.extend(self._verify_chunk(s, b, data))
        return problems

    def _verify_chunk(self, s, b, data):
        tr = s.file.trailer(s, b)
        used = s.used_in(b)
        where = "stream %d chunk %d" % (s.id, b)
        if tr is None:
            return ["%s: trailer damaged or missing" % where]
        if tr["used"] != used or tr["seq"] == 0 or tr["length"] < b * s.capacity + tr["used"]:
            return ["%s: trailer records %d bytes, the stream's length gives %d" % (where, tr["used"], used)]
        if data and s.file.flags & FLAG_CHECKSUMS:
            crc = crc32c(s.file.pread(s.chunk_at(b), used, where))
            if crc != tr["data_crc"]:
                return ["%s: data checksum mismatch (trailer 0x%08x, data 0x%08x)" % (where, tr["data_crc"], crc)]
        return []


def _main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    incomplete = "--incomplete" in argv
    if len(args) < 2 or args[0] not in ("list", "cat", "split", "verify"):
        sys.stderr.write(__doc__)
        return 2
    try:
        with Container(args[1], allow_incomplete=incomplete or args[0] in ("list", "verify")) as c:
            return _run(args, c)
    except ContainerError as e:
        sys.stderr.write("ferry_container.py: %s\n" % e)
        return e.status


def _run(args, c):
    for note in c.notes:
        sys.stderr.write("ferry_container.py: %s\n" % note)
    if args[0] == "list":
        print("streams %d files %d %s" % (c.streams, len(c.files), "complete" if c.complete else "INCOMPLETE"))
        for s in c._streams:
            print("%d %d %d %d %d" % (s.id, c.files.index(s.file), s.chunk_size, s.chunks(), s.length))
        return 0 if c.complete else 3
    if args[0] == "cat" and len(args) == 3:
        sys.stdout.buffer.write(c.read(int(args[2])))
        return 0
    if args[0] == "split" and len(args) == 3:
        for s in range(c.streams):
            data = c.read(s)  # whole and checked before any output of it exists
            with open("%s.%06d" % (args[2], s), "wb") as out:
                out.write(data)
        return 0
    if args[0] == "verify":
        problems = c.verify()
        for p in problems:
            print("problem: %s" % p)
        print("%s: %d problems%s" % (c.path, len(problems), "" if c.complete else " (incomplete: run recover)"))
        return 1 if problems else 0 if c.complete else 3
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv))

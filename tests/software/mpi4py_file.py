"""mpi4py's MPI.File over MPI-IO: an ordinary mpi4py script (Debian's
python3-mpi4py, no ferry), run once on the host's MPI-IO and once with
libferry-mpiio.so preloaded by software_compare.sh.

usage: mpi4py_file.py [twophase] <file> <ferry|host>

Empties the existing <file> (Set_size), writes it through a view whose filetype is a vector interleaving the
ranks' blocks (Set_view, Write_at_all, Write_all at the individual pointer,
Iwrite_at), reads it back (Read_at_all, Read_all after Seek, Iread_at),
checks sizes, positions, amode, atomicity, Fortran handles (py2f/f2py)
and that a closed handle equals MPI.FILE_NULL, that opening a missing file raises MPI.Exception, that
File.Delete removes a file; then writes <file>.shared through the shared
file pointer (Write_ordered, with a rank writing nothing, Write_ordered_begin/
end, Write_shared, Iwrite_shared), in atomic mode (Set_atomicity), with a
nonblocking collective (Iwrite_at_all) and a split collective
(Write_at_all_begin/end), and reads it back (Iread_at_all, Read_ordered
after Seek_shared). Get_info must hold "ferry_version" exactly when the last
argument is "ferry". With
"twophase", the hints romio_cb_write/romio_cb_read=enable and cb_nodes=2
make collective calls aggregate.
"""
import os
import sys
from array import array

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
path, mode = sys.argv[-2], sys.argv[-1]
hints = MPI.Info.Create()
if sys.argv[1:-2] == ["twophase"]:
    for key, value in (("romio_cb_write", "enable"), ("romio_cb_read", "enable"), ("cb_nodes", "2")):
        hints.Set(key, value)
BLOCK, NBLOCKS = 3, 4  # ints per block, blocks per rank in one filetype


def check(ok, what):
    if not ok:
        sys.stderr.write("mpi4py_file rank %d: %s\n" % (rank, what))
        sys.stderr.flush()
        comm.Abort(1)


def served_by_ferry(fh):
    info = fh.Get_info()
    found = info.Get("ferry_version") is not None
    info.Free()
    return found


def values(tag, n, r=None):
    r = rank if r is None else r
    return array("i", [tag * 100000 + r * 1000 + i for i in range(n)])


def set_interleaved_view(fh):
    vector = MPI.INT.Create_vector(NBLOCKS, BLOCK, BLOCK * size)
    filetype = vector.Create_resized(0, NBLOCKS * BLOCK * size * 4).Commit()
    fh.Set_view(rank * BLOCK * 4, MPI.INT, filetype, "native")
    filetype.Free()
    vector.Free()


def main_file():
    amode = MPI.MODE_CREATE | MPI.MODE_RDWR
    fh = MPI.File.Open(comm, path, amode, hints)
    check(served_by_ferry(fh) == (mode == "ferry"), "file served by the wrong MPI-IO")
    check(fh.Get_amode() == amode, "Get_amode")
    check(not fh.Get_atomicity(), "Get_atomicity")
    check(MPI.File.f2py(fh.py2f()) == fh, "f2py(py2f(fh)) is not fh")
    fh.Set_size(0)
    check(fh.Get_size() == 0, "Get_size after Set_size(0)")
    set_interleaved_view(fh)
    n = BLOCK * NBLOCKS  # one filetype's worth of ints
    first, second, third = values(1, n), values(2, n), values(3, n)
    status = MPI.Status()
    fh.Write_at_all(0, [first, MPI.INT], status)
    check(status.Get_count(MPI.INT) == n, "Write_at_all count")
    fh.Seek(n)
    fh.Write_all([second, MPI.INT])
    check(fh.Get_position() == 2 * n, "position after Write_all")
    fh.Iwrite_at(2 * n, [third, MPI.INT]).Wait()
    fh.Sync()
    comm.Barrier()
    fh.Sync()
    check(fh.Get_size() == 3 * n * size * 4, "Get_size")

    back = array("i", [-1] * (3 * n))
    fh.Read_at_all(0, [back, MPI.INT], status)
    check(status.Get_count(MPI.INT) == 3 * n, "Read_at_all count")
    check(back == first + second + third, "Read_at_all data")
    fh.Seek(n, MPI.SEEK_SET)
    part = array("i", [-1] * n)
    fh.Read_all([part, MPI.INT])
    check(part == second, "Read_all data")
    part = array("i", [-1] * n)
    fh.Iread_at(2 * n, [part, MPI.INT]).Wait()
    check(part == third, "Iread_at data")
    fh.Close()
    check(fh == MPI.FILE_NULL, "a closed file is not MPI.FILE_NULL")


def errors_and_delete():
    try:
        MPI.File.Open(comm, path + ".missing", MPI.MODE_RDONLY).Close()
        check(False, "opening a missing file succeeded")
    except MPI.Exception as e:
        check(e.Get_error_class() in (MPI.ERR_NO_SUCH_FILE, MPI.ERR_FILE), "missing file: class %d" % e.Get_error_class())
    scratch = path + ".scratch"
    MPI.File.Open(comm, scratch, MPI.MODE_CREATE | MPI.MODE_WRONLY).Close()
    comm.Barrier()
    if rank == 0:
        MPI.File.Delete(scratch)
        check(not os.path.exists(scratch), "File.Delete left the file")
    comm.Barrier()


def ordered_count(r):
    return (2, 0, 3, 1)[r % 4]  # rank 1 writes nothing


def shared_file():
    """Shared pointer, ordered, atomic, nonblocking collective and split collective
    calls on <file>.shared; shared-pointer writes other than ordered ones go one
    rank at a time so the file is deterministic."""
    fh = MPI.File.Open(comm, path + ".shared", MPI.MODE_CREATE | MPI.MODE_RDWR, hints)
    fh.Set_size(0)
    fh.Write_ordered([values(4, ordered_count(rank)), MPI.INT])
    split = values(5, ordered_count(rank))  # alive until the end call
    fh.Write_ordered_begin([split, MPI.INT])
    fh.Write_ordered_end([split, MPI.INT])
    for turn in range(size):
        if rank == turn:
            fh.Write_shared([values(6, 2), MPI.INT])
            fh.Iwrite_shared([values(7, 1), MPI.INT]).Wait()
        comm.Barrier()
    expected = array("i")
    for tag in (4, 5):
        for r in range(size):
            expected += values(tag, ordered_count(r), r)
    for r in range(size):
        expected += values(6, 2, r) + values(7, 1, r)
    end = fh.Get_position_shared()
    check(end == 4 * len(expected), "Get_position_shared %d, want %d" % (end, 4 * len(expected)))

    fh.Set_atomicity(True)
    check(fh.Get_atomicity(), "Get_atomicity after Set_atomicity(True)")
    fh.Write_at_all(end + 8 * rank, [values(8, 2), MPI.INT])
    fh.Set_atomicity(False)
    fh.Iwrite_at_all(end + 8 * (size + rank), [values(9, 2), MPI.INT]).Wait()
    split = values(10, 2)
    fh.Write_at_all_begin(end + 8 * (2 * size + rank), [split, MPI.INT])
    fh.Write_at_all_end([split, MPI.INT])
    for tag in (8, 9, 10):
        for r in range(size):
            expected += values(tag, 2, r)
    fh.Sync()
    comm.Barrier()
    fh.Sync()

    whole = array("i", [-1] * len(expected))
    fh.Iread_at_all(0, [whole, MPI.INT]).Wait()
    check(whole == expected, "Iread_at_all of the shared-pointer file")
    fh.Seek_shared(0)
    mine = array("i", [-1] * ordered_count(rank))
    fh.Read_ordered([mine, MPI.INT])
    check(mine == values(4, ordered_count(rank)), "Read_ordered")
    fh.Close()


main_file()
errors_and_delete()
shared_file()
if rank == 0:
    print("mpi4py_file: %d ranks%s, MPI.File written and read back (%s)" % (size, ", two-phase hints" if len(sys.argv) > 3 else "", mode))
hints.Free()

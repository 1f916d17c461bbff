"""mpi4py's MPI.File over MPI-IO: an ordinary mpi4py script (Debian's
python3-mpi4py, no ferry), run once on the host's MPI-IO and once with
libferry-mpiio.so preloaded by software_compare.sh.

usage: mpi4py_file.py [twophase] <file> <ferry|host>

Empties the existing <file> (Set_size), writes it through a view whose filetype is a vector interleaving the
ranks' blocks (Set_view, Write_at_all, Write_all at the individual pointer,
Iwrite_at), reads it back (Read_at_all, Read_all after Seek, Iread_at),
checks sizes, positions, amode, atomicity, Fortran handles (py2f/f2py)
and that a closed handle equals MPI.FILE_NULL, that opening a missing file raises MPI.Exception, that
File.Delete removes a file; then Write_ordered into <file>.ordered, unless
ferry's shared file pointers are not there yet (MPI_ERR_UNSUPPORTED_OPERATION:
skipped, said on stdout, and no <file>.ordered is left behind). Get_info
must hold "ferry_version" exactly when the last argument is "ferry". With
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


def values(tag, n):
    return array("i", [tag * 100000 + rank * 1000 + i for i in range(n)])


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


def ordered_file():
    fh = MPI.File.Open(comm, path + ".ordered", MPI.MODE_CREATE | MPI.MODE_WRONLY)
    data = values(4, rank + 2)  # ranks write different amounts
    try:
        fh.Write_ordered([data, MPI.INT])
    except MPI.Exception as e:
        fh.Close()
        check(mode == "ferry" and e.Get_error_class() == MPI.ERR_UNSUPPORTED_OPERATION,
              "Write_ordered: %s" % e.Get_error_string())
        comm.Barrier()
        if rank == 0:
            os.remove(path + ".ordered")
            print("mpi4py_file: Write_ordered skipped: ferry answers MPI_ERR_UNSUPPORTED_OPERATION")
        return
    fh.Close()


main_file()
errors_and_delete()
ordered_file()
if rank == 0:
    print("mpi4py_file: %d ranks%s, MPI.File written and read back (%s)" % (size, ", two-phase hints" if len(sys.argv) > 3 else "", mode))
hints.Free()

! container_fortran_f08: a `use mpi_f08` program passes its TYPE(MPI_Comm) as comm%MPI_VAL (the module
! takes INTEGER handles, so one .mod serves mpif.h, `use mpi` and `use mpi_f08`); streams of different
! lengths written and read back, every value checked, and a failing open's IERROR compared with the
! f08 module's MPI_ERR_NO_SUCH_FILE.
program container_fortran_f08
  use, intrinsic :: iso_fortran_env, only: int64, real64
  use mpi_f08
  use ferry_container
  implicit none
  type(ferry_container_t) :: c
  real(real64), allocatable :: x(:), y(:)
  character(len=1024) :: dir, path
  integer(int64) :: done
  integer :: rank, nranks, ierror, i
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  call get_environment_variable("FERRY_TEST_DIR", dir)
  if (len_trim(dir) == 0) dir = "/tmp"
  i = getpid()
  call MPI_Bcast(i, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
  write(path, '(a, "/container_fortran_f08.", i0, ".ctr")') trim(dir), i
  allocate(x(500 + 333 * rank), y(500 + 333 * rank))
  do i = 1, size(x)
    x(i) = real(rank, real64) * 1000 + i
  end do
  call ferry_container_open_write(MPI_COMM_WORLD%MPI_VAL, path, c, ierror=ierror)
  call expect(ierror == MPI_SUCCESS, "open_write")
  call ferry_container_write(c, x, done, ierror)
  call expect(ierror == MPI_SUCCESS .and. done == 8 * size(x), "write")
  call ferry_container_close(c, ierror)
  call expect(ierror == MPI_SUCCESS, "close")
  call ferry_container_open_read(MPI_COMM_WORLD%MPI_VAL, path, c, ierror)
  call ferry_container_read(c, y, done, ierror)
  call expect(ierror == MPI_SUCCESS .and. done == 8 * size(x) .and. all(y == x), "read back")
  call ferry_container_close(c, ierror)
  call ferry_container_open_read(MPI_COMM_WORLD%MPI_VAL, trim(path) // ".missing", c, ierror)
  call expect(ierror == MPI_ERR_NO_SUCH_FILE, "a missing file: MPI_ERR_NO_SUCH_FILE")
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) then
    open(newunit=i, file=trim(path), status="old")
    close(i, status="delete")
    print '(a)', "container_fortran_f08: passed"
  end if
  deallocate(x, y)
  call MPI_Finalize()
contains
  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) return
    print '("container_fortran_f08: rank ", i0, ": FAILED: ", a, ": ", a)', rank, what, ferry_container_error_message()
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end subroutine
end program container_fortran_f08

! The example of docs/container.md, "From Fortran" (kept equal to it; run as a test on 3 ranks).
program particles
  use, intrinsic :: iso_fortran_env, only: int64, real64
  use mpi
  use ferry_container
  implicit none
  type(ferry_container_t) :: c
  type(ferry_container_params_t) :: params
  real(real64), allocatable :: x(:, :), y(:, :)
  character(len=32) :: title, title_back
  integer(int64) :: n, done
  integer :: rank, ierr
  logical :: at_end

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  allocate(x(3, 1000 + 10 * rank))                 ! every rank its own length
  x = real(rank, real64)
  write(title, '("particles of rank ", i0)') rank

  params%chunk_size = 4 * 1024 * 1024              ! this rank's chunk size; zero fields keep the defaults
  call ferry_container_open_write(MPI_COMM_WORLD, "particles.ctr", c, params, ierr)   ! collective
  if (ierr /= MPI_SUCCESS) then
    print '(a)', ferry_container_error_message()
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  call ferry_container_write(c, title)             ! a CHARACTER record: its 32 bytes
  call ferry_container_write(c, size(x, 2, kind=int64))
  call ferry_container_write(c, x, done)           ! any type, any rank: 8 * size(x) bytes, no copy
  call ferry_container_flush(c)                    ! from here on it survives kill -9 of the job
  call ferry_container_close(c)                    ! collective; without IERROR an error aborts the job

  call ferry_container_open_read(MPI_COMM_WORLD, "particles.ctr", c)   ! each rank its own stream
  call ferry_container_read(c, title_back)
  call ferry_container_read(c, n)
  allocate(y(3, n))
  call ferry_container_read(c, y, done)            ! done < 8 * size(y) only at the end of the stream
  call ferry_container_eof(c, at_end)
  call ferry_container_close(c)
  if (title_back /= title .or. any(y /= x) .or. .not. at_end) call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  if (rank == 0) print '(a)', "particles: passed"
  call MPI_Finalize(ierr)
end program particles

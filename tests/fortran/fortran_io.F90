! Fortran MPI-IO through mpif.h, `use mpi` or `use mpi_f08` (one source,
! built for each binding: fortran_binding.h), run unmodified on the drop-in
! (LD_PRELOAD=libferry-mpiio.so). The bindings reach the C library by
! different names (Open MPI: PMPI_File_* and PMPI_File_f2c from all three;
! MPICH: MPI_File_* from mpif.h and use mpi, PMPI_File_open, _close,
! _set_view ... beside MPI_File_write_all ... from mpi_f08). A darray
! view written and read collectively; a subarray view with independent,
! nonblocking (a status array) and split collective calls; shared file
! pointers; offsets beyond 2 GiB; error handlers set from Fortran. Every
! value read back is checked, and every file must be served by ferry.
#include "fortran_binding.h"
program fortran_io
  use fortran_checks
  implicit none
  integer :: rank, nprocs, ierr

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call darray_collective()
  call subarray_independent()
  call shared_pointers()
  call beyond_2gib()
  call error_handlers()
  call user_datarep()
  if (rank == 0) write (*, '(3a)') 'fortran_io (', BINDING_NAME, '): every value checked, every file served by ferry'
  call MPI_Finalize(ierr)

contains

  ! Global array (3 * p1) x (4 * p2) of INTEGER, block-distributed over a
  ! p1 x p2 process grid; element (r, c) holds 1000 * r + c.
  subroutine darray_collective()
    integer, parameter :: lr = 3, lc = 4
    integer :: psizes(2), gsizes(2), distribs(2), dargs(2), coords(2)
    integer :: i, j, count
    DATATYPE_T :: darray
    FILE_T :: fh
    STATUS_T :: STATUS(status)
    integer :: local(lr, lc), back(lr, lc)
    integer, allocatable :: global(:, :)
    character(len=512) :: name
    psizes = 0
    call MPI_Dims_create(nprocs, 2, psizes, ierr)
    gsizes = [lr * psizes(1), lc * psizes(2)]
    distribs = MPI_DISTRIBUTE_BLOCK
    dargs = MPI_DISTRIBUTE_DFLT_DARG
    call MPI_Type_create_darray(nprocs, rank, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_FORTRAN, &
                                MPI_INTEGER, darray, ierr)
    call MPI_Type_commit(darray, ierr)
    coords = [rank / psizes(2), mod(rank, psizes(2))] ! darray ranks the grid row-major
    do j = 1, lc
      do i = 1, lr
        local(i, j) = 1000 * (coords(1) * lr + i) + coords(2) * lc + j
      end do
    end do
    call open_fresh('darray', name, fh)
    call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, darray, 'native', MPI_INFO_NULL, ierr)
    call must(ierr, 'set_view darray')
    call MPI_File_write_all(fh, local, lr * lc, MPI_INTEGER, status, ierr)
    call must(ierr, 'write_all')
    call MPI_Get_count(status, MPI_INTEGER, count, ierr)
    call check(count == lr * lc, 'write_all status count')
    call MPI_File_sync(fh, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_File_sync(fh, ierr)
    back = -1
    call MPI_File_read_at_all(fh, 0_MPI_OFFSET_KIND, back, lr * lc, MPI_INTEGER, status, ierr)
    call must(ierr, 'read_at_all darray')
    call check(all(back == local), 'darray read back through the view')
    ! The whole array in the file is in Fortran order: read it without a view.
    call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL, ierr)
    allocate (global(gsizes(1), gsizes(2)))
    call MPI_File_read_at(fh, 0_MPI_OFFSET_KIND, global, size(global), MPI_INTEGER, status, ierr)
    call must(ierr, 'read_at whole array')
    do j = 1, gsizes(2)
      do i = 1, gsizes(1)
        call check(global(i, j) == 1000 * i + j, 'darray element in the file')
      end do
    end do
    call MPI_File_close(fh, ierr)
    call check(fh == MPI_FILE_NULL, 'close sets MPI_FILE_NULL')
    call MPI_Type_free(darray, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (rank == 0) call MPI_File_delete(name, MPI_INFO_NULL, ierr)
  end subroutine darray_collective

  ! Global array (2 * nprocs) x 5 of DOUBLE PRECISION per page; rank r owns
  ! rows 2r+1:2r+2 (a strided subarray). Page 1 is written independently,
  ! page 2 by a nonblocking write while page 1 is read back, page 3 by a
  ! collective with MPI_STATUS_IGNORE; page 2 is read by a split collective.
  subroutine subarray_independent()
    integer, parameter :: lr = 2, nc = 5, n = lr * nc
    integer :: sizes(2), subsizes(2), starts(2), i, k, count
    DATATYPE_T :: subarray
    FILE_T :: fh
    REQUEST_T :: rq(2)
    STATUS_T :: STATUS(status), STATUSES(statuses, 2)
    double precision :: page(lr, nc, 3), back(lr, nc), whole(2 * nprocs, nc)
    integer(kind=MPI_OFFSET_KIND) :: position
    character(len=512) :: name
    sizes = [lr * nprocs, nc]
    subsizes = [lr, nc]
    starts = [lr * rank, 0]
    call MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_DOUBLE_PRECISION, &
                                  subarray, ierr)
    call MPI_Type_commit(subarray, ierr)
    do i = 1, 3
      page(:, :, i) = reshape([(1000d0 * i + 100 * rank + k / 4d0, k = 1, n)], [lr, nc])
    end do
    call open_fresh('subarray', name, fh)
    call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_DOUBLE_PRECISION, subarray, 'native', MPI_INFO_NULL, ierr)
    call must(ierr, 'set_view subarray')
    call MPI_File_write(fh, page(:, :, 1), n, MPI_DOUBLE_PRECISION, status, ierr)
    call must(ierr, 'write')
    call MPI_Get_count(status, MPI_DOUBLE_PRECISION, count, ierr)
    call check(count == n, 'write status count')
    call MPI_File_get_position(fh, position, ierr)
    call check(position == n, 'position after write')
    back = -1
    call MPI_File_iwrite_at(fh, int(n, MPI_OFFSET_KIND), page(:, :, 2), n, MPI_DOUBLE_PRECISION, rq(1), ierr)
    call must(ierr, 'iwrite_at')
    call MPI_File_iread_at(fh, 0_MPI_OFFSET_KIND, back, n, MPI_DOUBLE_PRECISION, rq(2), ierr)
    call must(ierr, 'iread_at')
    call MPI_Waitall(2, rq, statuses, ierr)
    call must(ierr, 'waitall')
    do i = 1, 2
      call MPI_Get_count(STATUS_OF(statuses, i), MPI_DOUBLE_PRECISION, count, ierr)
      call check(count == n, 'status array counts')
    end do
    call check(all(back == page(:, :, 1)), 'iread_at read back page 1')
    call MPI_File_write_at_all(fh, int(2 * n, MPI_OFFSET_KIND), page(:, :, 3), n, MPI_DOUBLE_PRECISION, &
                               MPI_STATUS_IGNORE, ierr)
    call must(ierr, 'write_at_all')
    call MPI_File_sync(fh, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_File_sync(fh, ierr)
    back = -1
    call MPI_File_read_at_all_begin(fh, int(n, MPI_OFFSET_KIND), back, n, MPI_DOUBLE_PRECISION, ierr)
    call must(ierr, 'read_at_all_begin')
    call MPI_File_read_at_all_end(fh, back, status, ierr)
    call must(ierr, 'read_at_all_end')
    call check(all(back == page(:, :, 2)), 'split collective read of page 2')
    ! Each page in the file: the ranks' rows stacked in Fortran order.
    call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, 'native', &
                           MPI_INFO_NULL, ierr)
    do i = 1, 3
      call MPI_File_read_at(fh, int((i - 1) * n * nprocs, MPI_OFFSET_KIND), whole, size(whole), &
                            MPI_DOUBLE_PRECISION, status, ierr)
      call must(ierr, 'read_at page')
      call check(all(whole(lr * rank + 1:lr * rank + lr, :) == page(:, :, i)), 'page in the file')
    end do
    call MPI_File_close(fh, ierr)
    call MPI_Type_free(subarray, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (rank == 0) call MPI_File_delete(name, MPI_INFO_NULL, ierr)
  end subroutine subarray_independent

  ! write_ordered: rank r writes r + 1 integers after ranks 0..r-1; then
  ! read_ordered reads them back, and write_shared appends one each.
  subroutine shared_pointers()
    integer :: i, total
    FILE_T :: fh
    STATUS_T :: STATUS(status)
    integer :: mine(nprocs), back(nprocs), appended(nprocs)
    integer(kind=MPI_OFFSET_KIND) :: position
    character(len=512) :: name
    total = nprocs * (nprocs + 1) / 2
    mine = [(100 * rank + i, i = 1, nprocs)]
    call open_fresh('shared', name, fh)
    call MPI_File_write_ordered(fh, mine, rank + 1, MPI_INTEGER, status, ierr)
    call must(ierr, 'write_ordered')
    call MPI_File_get_position_shared(fh, position, ierr)
    call check(position == 4 * total, 'shared pointer after write_ordered (bytes: the default view)')
    call MPI_File_seek_shared(fh, 0_MPI_OFFSET_KIND, MPI_SEEK_SET, ierr)
    back = -1
    call MPI_File_read_ordered(fh, back, rank + 1, MPI_INTEGER, status, ierr)
    call must(ierr, 'read_ordered')
    call check(all(back(1:rank + 1) == mine(1:rank + 1)), 'read_ordered read back')
    call MPI_File_write_shared(fh, rank, 1, MPI_INTEGER, status, ierr)
    call must(ierr, 'write_shared')
    call MPI_File_sync(fh, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_File_sync(fh, ierr)
    call MPI_File_read_at(fh, int(total * 4, MPI_OFFSET_KIND), appended, nprocs, MPI_INTEGER, status, ierr)
    call must(ierr, 'read_at appended')
    do i = 0, nprocs - 1
      call check(count(appended == i) == 1, 'write_shared: every rank appended once')
    end do
    call MPI_File_close(fh, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (rank == 0) call MPI_File_delete(name, MPI_INFO_NULL, ierr)
  end subroutine shared_pointers

  ! Rank r writes one DOUBLE PRECISION at 3 GiB + 8r (a sparse file), then
  ! reaches it by explicit offset, seek and a displaced view.
  subroutine beyond_2gib()
    integer(kind=MPI_OFFSET_KIND), parameter :: three_gib = 3_MPI_OFFSET_KIND * 1024 ** 3
    integer(kind=MPI_OFFSET_KIND) :: at, position, size, byte
    FILE_T :: fh
    STATUS_T :: STATUS(status)
    double precision :: value, back
    character(len=512) :: name
    at = three_gib + 8 * rank
    value = 0.5d0 + rank
    call open_fresh('large', name, fh)
    call MPI_File_write_at(fh, at, value, 1, MPI_DOUBLE_PRECISION, status, ierr)
    call must(ierr, 'write_at beyond 2 GiB')
    call MPI_File_sync(fh, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_File_sync(fh, ierr)
    call MPI_File_get_size(fh, size, ierr)
    call check(size == three_gib + 8 * nprocs, 'get_size beyond 2 GiB')
    call MPI_File_seek(fh, at, MPI_SEEK_SET, ierr)
    call MPI_File_get_position(fh, position, ierr)
    call check(position == at, 'get_position beyond 2 GiB')
    back = -1
    call MPI_File_read(fh, back, 1, MPI_DOUBLE_PRECISION, status, ierr)
    call check(back == value, 'read after seek beyond 2 GiB')
    call MPI_File_set_view(fh, three_gib, MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, 'native', &
                           MPI_INFO_NULL, ierr)
    call MPI_File_get_byte_offset(fh, int(rank, MPI_OFFSET_KIND), byte, ierr)
    call check(byte == at, 'get_byte_offset beyond 2 GiB')
    back = -1
    call MPI_File_read_at_all(fh, int(rank, MPI_OFFSET_KIND), back, 1, MPI_DOUBLE_PRECISION, status, ierr)
    call check(back == value, 'read_at_all through a view displaced beyond 2 GiB')
    call MPI_File_close(fh, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (rank == 0) call MPI_File_delete(name, MPI_INFO_NULL, ierr)
  end subroutine beyond_2gib

  ! A Fortran handler on a file and on MPI_FILE_NULL: called with the
  ! file's Fortran handle and the code; error strings name the file.
  subroutine error_handlers()
    integer :: class, code, length, value
    FILE_T :: fh
    ERRHANDLER_T :: handler, got
    STATUS_T :: STATUS(status)
    character(len=512) :: name
    character(len=MPI_MAX_ERROR_STRING) :: text
    call MPI_File_create_errhandler(file_handler, handler, ierr)
    call must(ierr, 'create_errhandler')
    call open_fresh('errors', name, fh)
    call MPI_File_set_errhandler(fh, handler, ierr)
    call must(ierr, 'set_errhandler')
    call MPI_File_get_errhandler(fh, got, ierr)
    call check(got == handler, 'get_errhandler returns the handler set')
    call MPI_File_read_at(fh, -1_MPI_OFFSET_KIND, value, 1, MPI_INTEGER, status, ierr)
    call check(ierr /= MPI_SUCCESS, 'read_at a negative offset fails')
    call check(handler_calls == 1 .and. handler_file == HANDLE_VALUE(fh), 'the handler got the file''s handle')
    call MPI_Error_class(handler_code, class, ierr)
    call check(class == MPI_ERR_ARG, 'the handler got an MPI_ERR_ARG code')
    call MPI_File_call_errhandler(fh, MPI_ERR_OTHER, ierr)
    call check(handler_calls == 2 .and. handler_code == MPI_ERR_OTHER, 'call_errhandler')
    call MPI_File_close(fh, ierr)
    call MPI_File_set_errhandler(MPI_FILE_NULL, handler, ierr)
    call MPI_File_open(MPI_COMM_WORLD, trim(name) // '-missing', MPI_MODE_RDONLY, MPI_INFO_NULL, fh, code)
    call check(handler_calls == 3 .and. handler_file == HANDLE_VALUE(MPI_FILE_NULL), &
               'open failure: handler on MPI_FILE_NULL')
    call MPI_Error_class(code, class, ierr)
    call check(class == MPI_ERR_NO_SUCH_FILE, 'open of a missing file: MPI_ERR_NO_SUCH_FILE')
    call MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN, ierr)
    call MPI_File_open(MPI_COMM_WORLD, trim(name) // '-missing', MPI_MODE_RDONLY, MPI_INFO_NULL, fh, code)
    call MPI_Error_string(code, text, length, ierr)
    call check(index(text(1:length), trim(name) // '-missing') > 0, 'the error string names the file')
    call MPI_Errhandler_free(handler, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (rank == 0) call MPI_File_delete(name, MPI_INFO_NULL, ierr)
  end subroutine error_handlers

  ! A representation registered from Fortran (fortran_checks' wide_*)
  ! converts: rank r writes 4 INTEGERs at etype offset 4r through a view in
  ! it; the file holds them as 8-byte values times 1000 and they read back.
  ! One registered with MPI_CONVERSION_FN_NULL moves native bytes.
  subroutine user_datarep()
    integer :: values(4), back(4), i
    integer(kind=8) :: raw(4)
    integer(kind=MPI_ADDRESS_KIND) :: state, extent
    FILE_T :: fh
    STATUS_T :: STATUS(status)
    character(len=512) :: name
#if defined(FERRY_USE_MPI) && defined(FERRY_HOST_MPICH)
    external :: MPI_CONVERSION_FN_NULL ! MPICH 4.0.2's mpi module leaves it undeclared
#endif
    state = 42
    values = [(rank * 100 + i * (-1) ** i, i = 1, 4)]
    call MPI_Register_datarep('ferry-fortran-wide', wide_read, wide_write, wide_extent, state, ierr)
    call must(ierr, 'register_datarep')
    call MPI_Register_datarep('ferry-fortran-null', MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, &
                              native_extent, state, ierr)
    call must(ierr, 'register_datarep with MPI_CONVERSION_FN_NULL')
    call open_fresh('datarep', name, fh)
    call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'ferry-fortran-wide', MPI_INFO_NULL, ierr)
    call must(ierr, 'set_view in a Fortran representation')
    call MPI_File_get_type_extent(fh, MPI_INTEGER, extent, ierr)
    call check(extent == 8, 'get_type_extent in the representation')
    call MPI_File_write_at_all(fh, int(4 * rank, MPI_OFFSET_KIND), values, 4, MPI_INTEGER, status, ierr)
    call must(ierr, 'write_at_all through the representation')
    call check(wide_writes > 0 .and. wide_state == 42, 'the write conversion ran with its extra_state')
    call MPI_File_sync(fh, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_File_sync(fh, ierr)
    back = -1
    call MPI_File_read_at_all(fh, int(4 * rank, MPI_OFFSET_KIND), back, 4, MPI_INTEGER, status, ierr)
    call check(wide_reads > 0 .and. all(back == values), 'read back through the representation')
    call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER8, MPI_INTEGER8, 'native', MPI_INFO_NULL, ierr)
    call MPI_File_read_at(fh, int(4 * rank, MPI_OFFSET_KIND), raw, 4, MPI_INTEGER8, status, ierr)
    call check(all(raw == 1000_8 * values), 'the file holds the converted values')
    call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'ferry-fortran-null', MPI_INFO_NULL, ierr)
    call must(ierr, 'set_view in a representation without conversion')
    call MPI_File_write_at_all(fh, int(4 * rank, MPI_OFFSET_KIND), values, 4, MPI_INTEGER, status, ierr)
    call MPI_File_sync(fh, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_File_sync(fh, ierr)
    call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL, ierr)
    back = -1
    call MPI_File_read_at(fh, int(4 * rank, MPI_OFFSET_KIND), back, 4, MPI_INTEGER, status, ierr)
    call check(all(back == values), 'MPI_CONVERSION_FN_NULL moved native bytes')
    call MPI_File_close(fh, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (rank == 0) call MPI_File_delete(name, MPI_INFO_NULL, ierr)
  end subroutine user_datarep

end program fortran_io

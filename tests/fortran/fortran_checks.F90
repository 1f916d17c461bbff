! Checks shared by the Fortran programs (fortran_io.F90), built once for
! each binding (fortran_binding.h); the module passes the MPI names on.
#include "fortran_binding.h"
module fortran_checks
#if defined(FERRY_USE_MPI_F08)
  use, intrinsic :: iso_c_binding, only : c_ptr, c_f_pointer
  use mpi_f08
#elif defined(FERRY_USE_MPI)
  use mpi
#endif
  implicit none
#if !defined(FERRY_USE_MPI) && !defined(FERRY_USE_MPI_F08)
  include 'mpif.h'
#endif
  ! What file_handler saw at its last call.
  integer :: handler_calls = 0, handler_file = -1, handler_code = 0
  ! Calls of the wide representation's conversion functions; their extra_state.
  integer :: wide_reads = 0, wide_writes = 0
  integer(kind=MPI_ADDRESS_KIND) :: wide_state = -1

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer :: rank, ierr
    if (ok) return
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    write (0, '(a,i0,2a)') 'rank ', rank, ': ', what
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end subroutine check

  ! An MPI call that must have succeeded: prints its error string if not.
  subroutine must(code, what)
    integer, intent(in) :: code
    character(len=*), intent(in) :: what
    character(len=MPI_MAX_ERROR_STRING) :: text
    integer :: length, ierr
    if (code == MPI_SUCCESS) return
    call MPI_Error_string(code, text, length, ierr)
    call check(.false., what // ' failed: ' // text(1:length))
  end subroutine must

  ! Every file of these tests must be served by ferry.
  subroutine check_ferry(fh)
    FILE_T, intent(in) :: fh
    INFO_T :: info
    integer :: ierr
    character(len=MPI_MAX_INFO_VAL) :: version
    logical :: flag
    call MPI_File_get_info(fh, info, ierr)
    call must(ierr, 'get_info')
    call MPI_Info_get(info, 'ferry_version', MPI_MAX_INFO_VAL, version, flag, ierr)
    call MPI_Info_free(info, ierr)
    call check(flag, 'file not served by ferry: no ferry_version in get_info')
  end subroutine check_ferry

  ! A fresh file name in $FERRY_TEST_DIR (default /tmp), the same on every rank.
  function shared_name(tag) result(name)
    character(len=*), intent(in) :: tag
    character(len=512) :: name, dir
    integer :: rank, status, ierr
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call get_environment_variable('FERRY_TEST_DIR', dir, status=status)
    if (status /= 0 .or. len_trim(dir) == 0) dir = '/tmp'
    write (name, '(4a,i0)') trim(dir), '/ferry-fortran-', tag, '-', getpid()
    call MPI_Bcast(name, len(name), MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)
  end function shared_name

  ! Opens a fresh file named after tag on every rank (CREATE, RDWR); ferry
  ! must serve it.
  subroutine open_fresh(tag, name, fh)
    character(len=*), intent(in) :: tag
    character(len=512), intent(out) :: name
    FILE_T, intent(out) :: fh
    integer :: ierr
    name = shared_name(tag)
    call MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh, ierr)
    call must(ierr, 'open')
    call check_ferry(fh)
  end subroutine open_fresh

  ! A file error handler: remembers its arguments.
  subroutine file_handler(fh, code)
    FILE_T :: fh
    integer :: code
    handler_calls = handler_calls + 1
    handler_file = HANDLE_VALUE(fh)
    handler_code = code
  end subroutine file_handler

  ! A user data representation: each INTEGER in 8 bytes, times 1000 (so an
  ! unconverted transfer shows). mpi_f08 passes the buffers as TYPE(C_PTR).
  subroutine wide_write(userbuf, datatype, count, filebuf, position, extra_state, ierror)
    CONVERSION_ARGUMENTS
    integer :: k
    CONVERSION_ARRAYS
    do k = 1, count
      FILE_AT(k) = 1000_8 * USER_AT(position + k)
    end do
    wide_writes = wide_writes + 1
    wide_state = extra_state
    ierror = MPI_SUCCESS
  end subroutine wide_write

  subroutine wide_read(userbuf, datatype, count, filebuf, position, extra_state, ierror)
    CONVERSION_ARGUMENTS
    integer :: k
    CONVERSION_ARRAYS
    do k = 1, count
      USER_AT(position + k) = int(FILE_AT(k) / 1000_8)
    end do
    wide_reads = wide_reads + 1
    ierror = MPI_SUCCESS
  end subroutine wide_read

  subroutine wide_extent(datatype, extent, extra_state, ierror)
    DATATYPE_T :: datatype
    integer(kind=MPI_ADDRESS_KIND) :: extent, extra_state
    integer :: ierror
    extent = 8
    ierror = MPI_SUCCESS
    if (datatype /= MPI_INTEGER) ierror = MPI_ERR_TYPE
  end subroutine wide_extent

  subroutine native_extent(datatype, extent, extra_state, ierror)
    DATATYPE_T :: datatype
    integer(kind=MPI_ADDRESS_KIND) :: extent, extra_state
    integer :: ierror, size
    call MPI_Type_size(datatype, size, ierror)
    extent = size
  end subroutine native_extent

end module fortran_checks

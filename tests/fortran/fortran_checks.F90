! Checks shared by the Fortran programs (fortran_io.F90), built once for
! each binding (fortran_binding.h); the module passes the MPI names on.
#include "fortran_binding.h"
module fortran_checks
#if defined(FERRY_USE_MPI_F08)
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

end module fortran_checks

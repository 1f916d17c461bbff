! The Fortran side of ferry-bench container's "fortran" contender (bench_container_fortran.c): the same
! container, parameters and pieces as the "ferry" contender, through the Fortran module ferry_container
! (use ferry_container) instead of the C API, so the two rows differ by the binding alone. Each
! subroutine is called from C and returns the MPI error class (0 on success).
module bench_container_fortran
  use, intrinsic :: iso_c_binding, only: c_char, c_int, c_int8_t, c_int64_t, c_null_char
  use ferry_container
  implicit none
  private

contains

  ! The Fortran CHARACTER of a NUL-terminated C string.
  function fortran_text(c_text) result(text)
    character(kind=c_char), intent(in) :: c_text(*)
    character(len=:), allocatable :: text
    integer :: n, i
    n = 0
    do while (c_text(n + 1) /= c_null_char)
      n = n + 1
    end do
    allocate(character(len=n) :: text)
    do i = 1, n
      text(i:i) = c_text(i)
    end do
  end function

  subroutine bench_fortran_open(comm, path, writing, params, container, ierror) bind(C, name="bench_fortran_open")
    integer(c_int), value :: comm, writing
    character(kind=c_char), intent(in) :: path(*)
    type(ferry_container_params_t), intent(in) :: params
    type(ferry_container_t), intent(inout) :: container
    integer(c_int), intent(out) :: ierror
    if (writing /= 0) then
      call ferry_container_open_write(comm, fortran_text(path), container, params, ierror)
    else
      call ferry_container_open_read(comm, fortran_text(path), container, ierror)
    end if
  end subroutine

  ! One piece: len bytes of data written or read (bytes_done tells how many).
  subroutine bench_fortran_transfer(container, writing, data, len, bytes_done, ierror) &
      bind(C, name="bench_fortran_transfer")
    type(ferry_container_t), intent(in) :: container
    integer(c_int), value :: writing
    integer(c_int64_t), value :: len
    integer(c_int8_t), intent(inout) :: data(len)
    integer(c_int64_t), intent(out) :: bytes_done
    integer(c_int), intent(out) :: ierror
    if (writing /= 0) then
      call ferry_container_write(container, data, bytes_done, ierror)
    else
      call ferry_container_read(container, data, bytes_done, ierror)
    end if
  end subroutine

  subroutine bench_fortran_close(container, metadata_calls, ierror) bind(C, name="bench_fortran_close")
    type(ferry_container_t), intent(inout) :: container
    integer(c_int64_t), intent(out) :: metadata_calls
    integer(c_int), intent(out) :: ierror
    type(ferry_container_info_t) :: info
    call ferry_container_info(container, info, ierror)
    metadata_calls = info%metadata_calls + 1     ! and the close of the file, as the C contender counts
    call ferry_container_close(container, ierror)
  end subroutine

end module bench_container_fortran

! container_fortran_serial: the serial API from Fortran in a program that never calls MPI_Init.
!
! usage: container_fortran_serial DIR [abort]      (DIR: where FERRY_TEST_DIR is unset)
!
! Creates a 3-stream container with ferry_container_serial_create (streams of different lengths and
! types, one left empty), reads it back (describe, stream, file, every byte), verifies it, then checks
! the error classes of a missing file, a stream out of range and a write to a closed set. With `abort`:
! a missing file without IERROR must print the message and end the program (exit status 1), as without
! MPI there is no job to abort.
program container_fortran_serial
  use, intrinsic :: iso_fortran_env, only: int8, int64, real64, output_unit
  use mpi, only: MPI_SUCCESS, MPI_ERR_ARG   ! the classes' names only: MPI is never initialized
  use ferry_container
  implicit none
  character(len=1024) :: dir, mode, path
  type(ferry_container_set_t) :: set
  integer :: unit
  call get_environment_variable("FERRY_TEST_DIR", dir)
  if (len_trim(dir) == 0) call get_command_argument(1, dir)
  call get_command_argument(2, mode)
  write(path, '(a, "/container_fortran_serial.", i0, ".ctr")') trim(dir), getpid()
  if (trim(mode) == "abort") then
    call ferry_container_serial_open(trim(path) // ".missing", set)
    write(output_unit, '(a)') "container_fortran_serial: FAILED: went on after an error without IERROR"
    stop 2
  end if
  call write_set(path)
  call read_set(path)
  call refusals(path)
  open(newunit=unit, file=trim(path), status="old")
  close(unit, status="delete")
  write(output_unit, '(a)') "container_fortran_serial: passed"

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) return
    write(output_unit, '("container_fortran_serial: FAILED: ", a, ": ", a)') what, ferry_container_error_message()
    stop 1
  end subroutine

  subroutine write_set(path)
    character(len=*), intent(in) :: path
    real(real64) :: x(700)
    character(len=20) :: long_text
    integer :: i, ierror
    x = [(i / 3.0_real64, i = 1, size(x))]
    call ferry_container_serial_create(path, [4096_int64, 4096_int64, 4096_int64], set, 4096_int64, 1, ierror)
    call check(ierror == MPI_SUCCESS, "serial_create")
    call ferry_container_serial_write(set, 0, x, ierror)
    long_text = "stream two, not this"
    call ferry_container_serial_write(set, 2, long_text(1:10), ierror)   ! a substring: its 10 bytes
    call check(ierror == MPI_SUCCESS, "serial_write")
    call ferry_container_serial_close(set, ierror)
    call check(ierror == MPI_SUCCESS, "serial_close")
  end subroutine

  subroutine read_set(path)
    character(len=*), intent(in) :: path
    type(ferry_container_info_t) :: info
    type(ferry_container_file_info_t) :: file
    real(real64) :: x(700)
    character(len=10) :: text
    integer(int8) :: nothing(4)
    integer(int64) :: done, problems
    integer :: streams, files, ierror, i
    logical :: complete
    call ferry_container_serial_open(path, set, ierror=ierror)
    call check(ierror == MPI_SUCCESS, "serial_open")
    call ferry_container_serial_describe(set, streams, files, complete, ierror)
    call check(ierror == MPI_SUCCESS .and. streams == 3 .and. files == 1 .and. complete, "serial_describe")
    call ferry_container_serial_file(set, 0, file, ierror)
    call check(ierror == MPI_SUCCESS .and. file%major == 1 .and. file%block_size == 4096, "serial_file")
    call ferry_container_serial_stream(set, 0, info, ierror)
    call check(ierror == MPI_SUCCESS .and. info%length == 8 * 700 .and. info%data_checksums == 1, "serial_stream")
    call ferry_container_serial_read(set, 0, 0_int64, x, done, ierror)
    call check(ierror == MPI_SUCCESS .and. done == 8 * 700 .and. all(x == [(i / 3.0_real64, i = 1, 700)]), "read stream 0")
    call ferry_container_serial_read(set, 1, 0_int64, nothing, done, ierror)
    call check(ierror == MPI_SUCCESS .and. done == 0, "read the empty stream 1")
    call ferry_container_serial_stream(set, 2, info, ierror)
    call check(ierror == MPI_SUCCESS .and. info%length == 10, "stream 2 holds the substring's 10 bytes")
    call ferry_container_serial_read(set, 2, 0_int64, text, done, ierror)
    call check(ierror == MPI_SUCCESS .and. done == 10 .and. text == "stream two", "read stream 2")
    call ferry_container_serial_close(set, ierror)
    call ferry_container_verify(path, problems, ierror=ierror)
    call check(ierror == MPI_SUCCESS .and. problems == 0, "verify")
  end subroutine

  subroutine refusals(path)
    character(len=*), intent(in) :: path
    type(ferry_container_info_t) :: info
    integer :: ierror
    call ferry_container_serial_open(trim(path) // ".missing", set, ierror=ierror)
    call check(ierror /= MPI_SUCCESS, "serial_open of a missing file succeeded")
    call check(index(ferry_container_error_message(), ".missing") > 0, "the message names the file")
    call ferry_container_serial_open(path, set, ierror=ierror)
    call ferry_container_serial_stream(set, 3, info, ierror)
    call check(ierror == MPI_ERR_ARG, "stream 3 of 3: MPI_ERR_ARG")
    call ferry_container_serial_close(set, ierror)
    call ferry_container_serial_write(set, 0, 1.0_real64, ierror)
    call check(ierror == MPI_ERR_ARG, "write to a closed set: MPI_ERR_ARG")
    call ferry_container_serial_close(set, ierror)
    call check(ierror == MPI_ERR_ARG, "close of a closed set: MPI_ERR_ARG")
  end subroutine

end program container_fortran_serial

! container_fortran: the Fortran module ferry_container (src/container_fortran) end to end, issue 29.
!
! usage: container_fortran FERRY-CONTAINER-TOOL [abort]
!
! Every rank writes a stream of its own length and types (an INTEGER(8) array, a REAL(8) matrix, a
! CHARACTER record, a strided INTEGER(8) section) in small chunks, with a flush between; the container is
! read back in parallel (open_read, with seek/tell/eof/info), with the mapped open (two streams per rank,
! select), serially (every stream, serial_stream/describe/chunk/file) and by the C tool `ferry-container
! verify` and `cat` as an independent oracle; every byte is compared with what the rank meant to write.
! ferry_container_open_write_modes: buddy copies (the file then deleted, read from its copy) and collective
! mode. Then error returns (container_fortran_serial has the serial create and write): bad paths, a write to
! a reader, a select out of range, a negative seek, a negative chunk size: IERROR holds the class,
! nothing crashes.
! With `abort`: a bad open without IERROR must print the message and abort the job (the test expects
! that output).
program container_fortran
  use, intrinsic :: iso_fortran_env, only: int8, int64, real64, output_unit
  use mpi
  use ferry_container
  implicit none
  integer :: rank, nranks, ierr
  character(len=1024) :: tool, mode, dir, path
  integer(int64) :: rank0_pid(1)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call get_command_argument(1, tool)
  call get_command_argument(2, mode)
  call get_environment_variable("FERRY_TEST_DIR", dir)
  if (len_trim(dir) == 0) dir = "/tmp"
  rank0_pid = getpid()
  call MPI_Bcast(rank0_pid, 1, MPI_INTEGER8, 0, MPI_COMM_WORLD, ierr)
  write(path, '(a, "/container_fortran.", i0, ".ctr")') trim(dir), rank0_pid(1)   ! blank-padded on purpose

  if (trim(mode) == "abort") then
    call abort_without_ierror(path)
  else
    call write_streams(path)
    call read_parallel(path)
    call read_mapped(path)
    if (rank == 0) call read_serial(path)
    if (rank == 0) call read_with_tool(path)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call write_modes(path, 0, 1)       ! buddy copies: file 0 then deleted, read from its copy
    call write_modes(path, 2, 0)       ! collective mode, groups of 2
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call error_returns(path)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (rank == 0) call remove_file(path)
    if (rank == 0) write(output_unit, '(a)') "container_fortran: passed"
  end if
  call MPI_Finalize(ierr)

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer :: ignored
    if (ok) return
    write(*, '("container_fortran: rank ", i0, ": FAILED: ", a)') rank, what
    flush(output_unit)
    call MPI_Abort(MPI_COMM_WORLD, 1, ignored)
  end subroutine

  subroutine check_ok(ierror, what)
    integer, intent(in) :: ierror
    character(len=*), intent(in) :: what
    call check(ierror == MPI_SUCCESS, what // " failed: " // ferry_container_error_message())
  end subroutine

  ! Stream r's pieces: lengths and values depend on r, so every stream differs.
  subroutine make_data(r, ints, reals, record)
    integer, intent(in) :: r
    integer(int64), allocatable, intent(out) :: ints(:)
    real(real64), allocatable, intent(out) :: reals(:, :)
    character(len=:), allocatable, intent(out) :: record
    integer :: i
    character(len=16) :: digits
    ints = [(int(r, int64) * 1000000_int64 + i * 7919_int64, i = 1, 1000 + 997 * r)]
    allocate(reals(3, 5 + r))
    reals = reshape([(real(r, real64) + real(i, real64) / 7.0_real64, i = 1, size(reals))], shape(reals))
    write(digits, '(i0)') r
    record = "rank " // trim(digits) // " was here" // repeat("!", r)
  end subroutine

  ! The bytes stream r must hold: the pieces in the order write_streams writes them.
  function expected_bytes(r) result(bytes)
    integer, intent(in) :: r
    integer(int8), allocatable :: bytes(:)
    integer(int64), allocatable :: ints(:)
    real(real64), allocatable :: reals(:, :)
    character(len=:), allocatable :: record
    call make_data(r, ints, reals, record)
    bytes = [transfer(ints, 0_int8, 8 * size(ints)), transfer(reals, 0_int8, 8 * size(reals)), &
             transfer(record, 0_int8, len(record)), transfer(ints(1::2), 0_int8, 8 * size(ints(1::2)))]
  end function

  subroutine write_streams(path)
    character(len=*), intent(in) :: path
    type(ferry_container_t) :: c
    type(ferry_container_params_t) :: params
    integer(int64), allocatable :: ints(:)
    real(real64), allocatable :: reals(:, :)
    character(len=:), allocatable :: record
    integer(int64) :: done, total
    integer :: ierror
    call make_data(rank, ints, reals, record)
    params%chunk_size = 4096          ! small chunks: every stream crosses several
    params%block_size = 4096
    call ferry_container_open_write(MPI_COMM_WORLD, path, c, params, ierror)
    call check_ok(ierror, "open_write")
    call ferry_container_write(c, ints, done, ierror)
    call check_ok(ierror, "write ints")
    call check(done == 8 * size(ints), "write ints: bytes_done")
    total = done
    call ferry_container_flush(c, ierror)
    call check_ok(ierror, "flush")
    call ferry_container_write(c, reals, done, ierror)
    call check(ierror == MPI_SUCCESS .and. done == 8 * size(reals), "write reals")
    total = total + done
    call ferry_container_write(c, record, done, ierror)
    call check(ierror == MPI_SUCCESS .and. done == len(record), "write record")
    total = total + done
    call ferry_container_write(c, ints(1::2), done, ierror)   ! a strided section: packed by the compiler
    call check(ierror == MPI_SUCCESS .and. done == 8 * size(ints(1::2)), "write strided section")
    total = total + done
    call ferry_container_tell(c, done, ierror)
    call check(ierror == MPI_SUCCESS .and. done == total, "tell after writing")
    call ferry_container_close(c, ierror)
    call check_ok(ierror, "close after writing")
  end subroutine

  ! ferry_container_open_write_modes: each rank's integers written with a write mode and read back; with
  ! buddy copies after the primary file is deleted (the reader takes them from PATH.buddy).
  subroutine write_modes(path, collector_size, buddy)
    character(len=*), intent(in) :: path
    integer, intent(in) :: collector_size, buddy
    type(ferry_container_t) :: c
    type(ferry_container_modes_t) :: modes
    integer(int64), allocatable :: ints(:), got(:)
    real(real64), allocatable :: reals(:, :)
    character(len=:), allocatable :: record
    integer(int64) :: done
    integer :: ierror, err
    call make_data(rank, ints, reals, record)
    allocate(got(size(ints)))
    modes%collector_size = collector_size
    modes%buddy = buddy
    call ferry_container_open_write_modes(MPI_COMM_WORLD, path, c, modes, ierror=ierror)
    call check_ok(ierror, "open_write_modes")
    call ferry_container_write(c, ints, done, ierror)
    call check(ierror == MPI_SUCCESS .and. done == 8 * size(ints), "write with a mode")
    call ferry_container_flush(c, ierror)      ! collective over the group in collective mode
    call check_ok(ierror, "flush with a mode")
    call ferry_container_close(c, ierror)
    call check_ok(ierror, "close with a mode")
    if (buddy == 1 .and. rank == 0) call remove_file(path)
    call MPI_Barrier(MPI_COMM_WORLD, err)
    call ferry_container_open_read(MPI_COMM_WORLD, path, c, ierror)
    call check_ok(ierror, "open_read after a mode")
    call ferry_container_read(c, got, done, ierror)
    call check(ierror == MPI_SUCCESS .and. all(got == ints), "read back what a mode wrote")
    call ferry_container_close(c, ierror)
    call MPI_Barrier(MPI_COMM_WORLD, err)
    if (buddy == 1 .and. rank == 0) call remove_file(trim(path) // ".buddy")
  end subroutine

  subroutine read_parallel(path)
    character(len=*), intent(in) :: path
    type(ferry_container_t) :: c
    type(ferry_container_info_t) :: info
    integer(int64), allocatable :: ints(:), got_ints(:), section(:)
    real(real64), allocatable :: reals(:, :), got_reals(:, :)
    character(len=:), allocatable :: record, got_record
    integer(int64) :: done, position, avail, first
    integer :: ierror
    logical :: at_end
    call make_data(rank, ints, reals, record)
    allocate(got_ints(size(ints)), got_reals(size(reals, 1), size(reals, 2)), section(size(ints)))
    allocate(character(len=len(record)) :: got_record)
    call ferry_container_open_read(MPI_COMM_WORLD, path, c, ierror)
    call check_ok(ierror, "open_read")
    call ferry_container_info(c, info, ierror)
    call check(ierror == MPI_SUCCESS .and. info%stream == rank .and. info%streams == nranks, "info: stream ids")
    call check(info%length == size(expected_bytes(rank), kind=int64), "info: stream length")
    call check(info%chunks > 2, "info: the stream spans several chunks")
    call ferry_container_read(c, got_ints, done, ierror)
    call check(ierror == MPI_SUCCESS .and. done == 8 * size(ints) .and. all(got_ints == ints), "read ints")
    call ferry_container_read(c, got_reals, done, ierror)
    call check(ierror == MPI_SUCCESS .and. all(got_reals == reals), "read reals")
    call ferry_container_read(c, got_record, done, ierror)
    call check(ierror == MPI_SUCCESS .and. got_record == record, "read record: '" // got_record // "'")
    section = -1
    call ferry_container_read(c, section(1::2), done, ierror)   ! unpacked into every other element
    call check(ierror == MPI_SUCCESS .and. done == 8 * size(section(1::2)), "read strided section: bytes")
    call check(all(section(1::2) == ints(1::2)) .and. all(section(2::2) == -1), "read strided section: values")
    call ferry_container_eof(c, at_end, ierror)
    call check(ierror == MPI_SUCCESS .and. at_end, "eof at the end")
    call ferry_container_read(c, got_ints, done, ierror)
    call check(ierror == MPI_SUCCESS .and. done == 0, "read at the end: 0 bytes, no error")
    call ferry_container_seek(c, 8_int64, MPI_SEEK_SET, ierror)
    call check_ok(ierror, "seek")
    call ferry_container_tell(c, position, ierror)
    call ferry_container_bytes_avail(c, avail, ierror)
    call check(position == 8 .and. avail == info%length - 8, "tell and bytes_avail after seek")
    call ferry_container_read(c, first, done, ierror)
    call check(ierror == MPI_SUCCESS .and. first == ints(2), "read a scalar after seek")
    call ferry_container_close(c, ierror)
    call check_ok(ierror, "close after reading")
    call check(.not. c_handle_set(c), "close leaves a null handle")
  end subroutine

  logical function c_handle_set(c)
    use, intrinsic :: iso_c_binding, only: c_associated
    type(ferry_container_t), intent(in) :: c
    c_handle_set = c_associated(c%handle)
  end function

  ! Two streams per rank: the last-but-rank one, then stream 0 (several ranks read the same stream).
  subroutine read_mapped(path)
    character(len=*), intent(in) :: path
    type(ferry_container_t) :: c
    type(ferry_container_info_t) :: info
    integer :: streams(2), k, ierror
    integer(int8), allocatable :: want(:), got(:)
    integer(int64) :: done
    streams = [nranks - 1 - rank, 0]
    call ferry_container_open_mapped(MPI_COMM_WORLD, path, streams, c, ierror)
    call check_ok(ierror, "open_mapped")
    do k = 2, 1, -1
      call ferry_container_select(c, k, ierror)
      call check_ok(ierror, "select")
      call ferry_container_info(c, info, ierror)
      call check(info%stream == streams(k), "mapped: the selected stream")
      want = expected_bytes(streams(k))
      allocate(got(size(want) + 5))
      call ferry_container_read(c, got, done, ierror)
      call check(ierror == MPI_SUCCESS .and. done == size(want), "mapped read: bytes_done")
      call check(all(got(1:size(want)) == want), "mapped read: bytes")
      deallocate(got)
    end do
    call ferry_container_close(c, ierror)
    call check_ok(ierror, "close mapped")
    ! Odd ranks name no stream at all (an empty array), even ranks their own.
    if (mod(rank, 2) == 1) then
      call ferry_container_open_mapped(MPI_COMM_WORLD, path, [integer ::], c, ierror)
    else
      call ferry_container_open_mapped(MPI_COMM_WORLD, path, [rank], c, ierror)
    end if
    call check_ok(ierror, "open_mapped with empty lists")
    if (mod(rank, 2) == 0) then
      want = expected_bytes(rank)
      allocate(got(size(want)))
      call ferry_container_read(c, got, done, ierror)
      call check(ierror == MPI_SUCCESS .and. done == size(want) .and. all(got == want), "mapped read, own stream")
    end if
    call ferry_container_close(c, ierror)
    call check_ok(ierror, "close mapped with empty lists")
  end subroutine

  subroutine read_serial(path)
    character(len=*), intent(in) :: path
    type(ferry_container_set_t) :: set
    type(ferry_container_info_t) :: info
    type(ferry_container_file_info_t) :: file
    type(ferry_container_chunk_t) :: place
    integer :: streams, files, s, ierror
    logical :: complete, incomplete
    integer(int8), allocatable :: want(:), got(:)
    integer(int64) :: done, problems
    call ferry_container_serial_open(path, set, ierror=ierror)
    call check_ok(ierror, "serial_open")
    call ferry_container_serial_describe(set, streams, files, complete, ierror)
    call check(ierror == MPI_SUCCESS .and. streams == nranks .and. files == 1 .and. complete, "serial_describe")
    call ferry_container_serial_file(set, 0, file, ierror)
    call check(ierror == MPI_SUCCESS .and. file%streams == nranks .and. file%complete == 1 .and. &
               file%block_size == 4096, "serial_file")
    do s = 0, nranks - 1
      want = expected_bytes(s)
      call ferry_container_serial_stream(set, s, info, ierror)
      call check(ierror == MPI_SUCCESS .and. info%length == size(want), "serial_stream: length")
      allocate(got(size(want)))
      call ferry_container_serial_read(set, s, 0_int64, got, done, ierror)
      call check(ierror == MPI_SUCCESS .and. done == size(want) .and. all(got == want), "serial_read")
      deallocate(got)
      call ferry_container_serial_chunk(set, s, 1_int64, place, ierror)
      call check(ierror == MPI_SUCCESS .and. place%used == 4096 - 64 .and. mod(place%offset, 4096_int64) == 0, &
                 "serial_chunk: a full, aligned second chunk")
    end do
    call ferry_container_serial_close(set, ierror)
    call check_ok(ierror, "serial_close")
    call ferry_container_verify(path, problems, incomplete, ierror)
    call check(ierror == MPI_SUCCESS .and. problems == 0 .and. .not. incomplete, "verify")
  end subroutine

  ! The C tool reads what the Fortran side wrote: verify, then every stream's bytes through `cat`.
  subroutine read_with_tool(path)
    character(len=*), intent(in) :: path
    character(len=2200) :: command, out
    integer :: s, status, unit, size_bytes
    integer(int8), allocatable :: want(:), got(:)
    call execute_command_line(trim(tool) // " verify " // trim(path) // " > /dev/null", exitstat=status)
    call check(status == 0, "ferry-container verify")
    do s = 0, nranks - 1
      write(out, '(a, ".cat", i0)') trim(path), s
      write(command, '(a, " cat ", a, 1x, i0, 1x, a)') trim(tool), trim(path), s, trim(out)
      call execute_command_line(trim(command), exitstat=status)
      call check(status == 0, "ferry-container cat")
      want = expected_bytes(s)
      open(newunit=unit, file=trim(out), access="stream", form="unformatted", status="old", action="read")
      inquire(unit=unit, size=size_bytes)
      call check(size_bytes == size(want), "ferry-container cat: length")
      allocate(got(size(want)))
      read(unit) got
      close(unit, status="delete")
      call check(all(got == want), "ferry-container cat: bytes")
      deallocate(got)
    end do
  end subroutine

  ! Bad input: the class in IERROR on every rank, a message naming the cause, no crash.
  subroutine error_returns(path)
    character(len=*), intent(in) :: path
    type(ferry_container_t) :: c
    type(ferry_container_set_t) :: set
    type(ferry_container_params_t) :: params
    integer :: ierror
    integer(int64) :: x(4), done
    call ferry_container_open_read(MPI_COMM_WORLD, trim(path) // ".missing", c, ierror)
    call check(ierror /= MPI_SUCCESS, "open_read of a missing file succeeded")
    call check(index(ferry_container_error_message(), ".missing") > 0, &
               "open_read message names the file: " // ferry_container_error_message())
    call check(.not. c_handle_set(c), "failed open leaves a null handle")
    call ferry_container_open_write(MPI_COMM_WORLD, "/nonexistent-directory/x.ctr", c, ierror=ierror)
    call check(ierror /= MPI_SUCCESS, "open_write in a missing directory succeeded")
    params%chunk_size = -1
    call ferry_container_open_write(MPI_COMM_WORLD, path, c, params, ierror)
    call check(ierror == MPI_ERR_ARG, "negative chunk size: MPI_ERR_ARG")
    call ferry_container_serial_open("/nonexistent-directory/x.ctr", set, ierror=ierror)
    call check(ierror /= MPI_SUCCESS, "serial_open of a missing file succeeded")
    call ferry_container_open_read(MPI_COMM_WORLD, path, c, ierror)
    call check_ok(ierror, "open_read again")
    call ferry_container_write(c, x, done, ierror)
    call check(ierror /= MPI_SUCCESS .and. done == 0, "write to a reader succeeded")
    call ferry_container_select(c, 2, ierror)
    call check(ierror == MPI_ERR_ARG, "select past the streams named: MPI_ERR_ARG")
    call ferry_container_seek(c, -1_int64, MPI_SEEK_SET, ierror)
    call check(ierror == MPI_ERR_ARG, "negative seek: MPI_ERR_ARG")
    call ferry_container_close(c, ierror)
    call check_ok(ierror, "close")
    call ferry_container_close(c, ierror)
    call check(ierror == MPI_ERR_ARG, "close of a closed handle: MPI_ERR_ARG")
  end subroutine

  subroutine abort_without_ierror(path)
    character(len=*), intent(in) :: path
    type(ferry_container_t) :: c
    call ferry_container_open_read(MPI_COMM_WORLD, trim(path) // ".missing", c)
    write(*, '(a)') "container_fortran: FAILED: the job went on after an error without IERROR"
  end subroutine

  subroutine remove_file(name)
    character(len=*), intent(in) :: name
    integer :: unit, status
    open(newunit=unit, file=trim(name), status="old", iostat=status)
    if (status == 0) close(unit, status="delete")
  end subroutine

end program container_fortran

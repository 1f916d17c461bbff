! ferry_container: the task-local container for Fortran programs (docs/container.md, "From Fortran").
!
! `use ferry_container`, link -lferry_fortran -lferry. The C API of include/ferry_container.h under the
! same names, as Fortran 2018 interfaces (ISO_C_BINDING, ISO_Fortran_binding descriptors) to the shim in
! shim.c, which calls the C API directly: no data are copied on the way.
!
! Invariants and conventions:
!   - Buffers are TYPE(*), DIMENSION(..), CONTIGUOUS: any type and kind, any rank, a scalar or a CHARACTER
!     record; the whole actual argument is written or read, its byte count (element size times elements)
!     is what moves. A contiguous array goes to the C call at its own address; a strided section is packed
!     by the compiler (CONTIGUOUS) before the call and unpacked after a read.
!   - Byte counts, lengths, positions and offsets are INTEGER(C_INT64_T) (the kind of MPI_OFFSET_KIND).
!   - Communicators are INTEGER handles (`use mpi`, mpif.h); with `use mpi_f08` pass comm%MPI_VAL. The
!     module uses no MPI module itself, so one .mod serves all three bindings.
!   - IERROR is optional and receives the MPI error class (MPI_SUCCESS, MPI_ERR_ARG, MPI_ERR_IO, ... as
!     `use mpi` names them); without it an error prints the message and aborts the job, as MPI's default
!     error handler does. ferry_container_error_message() gives the last error's message.
!   - Stream ids and file indices are 0-based, as in C (a stream id is the writer's rank); the position
!     given to ferry_container_select is 1-based: streams(i) of the array named at the mapped open.
!   - CHARACTER arguments lose their trailing blanks.
module ferry_container
  use, intrinsic :: iso_c_binding, only: c_char, c_int, c_int64_t, c_long_long, c_null_ptr, c_ptr, c_size_t, &
                                         c_f_pointer
  implicit none
  private

  public :: ferry_container_modes_t, ferry_container_open_write_modes
  public :: ferry_container_t, ferry_container_set_t, ferry_container_params_t, ferry_container_info_t, &
            ferry_container_file_info_t, ferry_container_chunk_t
  public :: FERRY_CONTAINER_FILE_PER_NODE, FERRY_CONTAINER_CHECKSUMS_OFF, FERRY_CONTAINER_INCOMPLETE_OK
  public :: FERRY_CONTAINER_COLLECTOR_PER_NODE
  public :: ferry_container_open_write, ferry_container_open_read, ferry_container_open_mapped, &
            ferry_container_close, ferry_container_write, ferry_container_read, ferry_container_flush, &
            ferry_container_seek, ferry_container_tell, ferry_container_bytes_avail, ferry_container_eof, &
            ferry_container_select, ferry_container_info
  public :: ferry_container_serial_open, ferry_container_serial_close, ferry_container_serial_describe, &
            ferry_container_serial_stream, ferry_container_serial_file, ferry_container_serial_read, &
            ferry_container_serial_chunk, ferry_container_serial_create, ferry_container_serial_write, &
            ferry_container_verify, ferry_container_recover, ferry_container_error_message

  !> params%files: one physical file per node.
  integer(c_int), parameter :: FERRY_CONTAINER_FILE_PER_NODE = -1
  !> params%data_checksums: no data checksums (they are on by default).
  integer(c_int), parameter :: FERRY_CONTAINER_CHECKSUMS_OFF = -1
  !> params%collector_size: one collector per node (collective mode).
  integer(c_int), parameter :: FERRY_CONTAINER_COLLECTOR_PER_NODE = -1
  !> ferry_container_serial_open's flags: open an incomplete container (writers never closed it).
  integer(c_int), parameter :: FERRY_CONTAINER_INCOMPLETE_OK = 1

  !> A container opened in parallel (C: ferry_container_t); null when not open.
  type, bind(C) :: ferry_container_t
    type(c_ptr) :: handle = c_null_ptr
  end type

  !> A container opened by the serial API (C: ferry_container_set_t).
  type, bind(C) :: ferry_container_set_t
    type(c_ptr) :: handle = c_null_ptr
  end type

  !> Settings of a container opened for writing; zero means the default (C: ferry_container_params_t).
  type, bind(C) :: ferry_container_params_t
    integer(c_int64_t) :: chunk_size = 0      ! this rank's chunk size on disk; default 1 MiB
    integer(c_int64_t) :: block_size = 0      ! alignment, a power of two; default the file system's
    integer(c_int) :: files = 0               ! 0 or 1: one file; n: n files; FERRY_CONTAINER_FILE_PER_NODE
    integer(c_int) :: data_checksums = 0      ! 0: on (default), FERRY_CONTAINER_CHECKSUMS_OFF: off
    integer(c_int) :: durable = 0             ! 1: flush and close also fsync
    integer(c_size_t) :: buffer_size = 0      ! this rank's write buffer; default 64 KiB
  end type

  !> The write modes of ferry_container_open_write_modes (C: ferry_container_modes_t); zero means off.
  type, bind(C) :: ferry_container_modes_t
    integer(c_int) :: collector_size = 0      ! collective mode: k ranks per collector; FERRY_CONTAINER_COLLECTOR_PER_NODE
    integer(c_int) :: buddy = 0               ! 1: also write every stream into the buddy set PATH.buddy
  end type

  !> What a handle or a set knows of one stream (C: ferry_container_info_t).
  type, bind(C) :: ferry_container_info_t
    integer(c_int) :: stream = 0, streams = 0, files = 0, file_index = 0
    integer(c_int64_t) :: length = 0, chunk_size = 0, chunk_capacity = 0, chunks = 0, block_size = 0
    integer(c_int) :: data_checksums = 0, write_failed = 0
    integer(c_long_long) :: metadata_calls = 0
  end type

  !> One physical file of a set (C: ferry_container_file_info_t); id is the container id's bits.
  type, bind(C) :: ferry_container_file_info_t
    integer(c_int) :: index = 0, major = 0, minor = 0, streams = 0, complete = 0
    integer(c_int64_t) :: size = 0, block_size = 0, data_start = 0, row_size = 0, rows = 0
    integer(c_long_long) :: id = 0
  end type

  !> Where a chunk of a stream lies (ferry_container_serial_chunk).
  type, bind(C) :: ferry_container_chunk_t
    integer(c_int) :: file_index = 0
    integer(c_int64_t) :: offset = 0          ! in that physical file
    integer(c_int64_t) :: used = 0            ! stream bytes it holds
  end type

  ! ---- Parallel API ----
  interface
    !> Collective over comm: creates the container at path, one stream per rank (stream id = rank).
    subroutine ferry_container_open_write(comm, path, container, params, ierror) &
        bind(C, name="ferry_container_f_open_write")
      import :: c_char, c_int, ferry_container_t, ferry_container_params_t
      integer(c_int), value :: comm
      character(len=*, kind=c_char), intent(in) :: path
      type(ferry_container_t), intent(inout) :: container
      type(ferry_container_params_t), intent(in), optional :: params
      integer(c_int), intent(out), optional :: ierror
    end subroutine

    !> ferry_container_open_write with write modes (collective mode, buddy copies).
    subroutine ferry_container_open_write_modes(comm, path, container, modes, params, ierror) &
        bind(C, name="ferry_container_f_open_write_modes")
      import :: c_char, c_int, ferry_container_t, ferry_container_params_t, ferry_container_modes_t
      integer(c_int), value :: comm
      character(len=*, kind=c_char), intent(in) :: path
      type(ferry_container_t), intent(inout) :: container
      type(ferry_container_modes_t), intent(in) :: modes
      type(ferry_container_params_t), intent(in), optional :: params
      integer(c_int), intent(out), optional :: ierror
    end subroutine

    !> Collective over comm: opens a complete container for reading, each rank its own stream.
    subroutine ferry_container_open_read(comm, path, container, ierror) bind(C, name="ferry_container_f_open_read")
      import :: c_char, c_int, ferry_container_t
      integer(c_int), value :: comm
      character(len=*, kind=c_char), intent(in) :: path
      type(ferry_container_t), intent(inout) :: container
      integer(c_int), intent(out), optional :: ierror
    end subroutine

    !> Collective over comm: any number of readers; each rank names the streams it reads (maybe none).
    subroutine ferry_container_open_mapped(comm, path, streams, container, ierror) &
        bind(C, name="ferry_container_f_open_mapped")
      import :: c_char, c_int, ferry_container_t
      integer(c_int), value :: comm
      character(len=*, kind=c_char), intent(in) :: path
      integer(c_int), intent(in) :: streams(:)
      type(ferry_container_t), intent(inout) :: container
      integer(c_int), intent(out), optional :: ierror
    end subroutine

    !> Collective: completes (writing) and closes the container; the handle is null afterwards.
    subroutine ferry_container_close(container, ierror) bind(C, name="ferry_container_f_close")
      import :: c_int, ferry_container_t
      type(ferry_container_t), intent(inout) :: container
      integer(c_int), intent(out), optional :: ierror
    end subroutine

    !> Appends buf (all its bytes) to this rank's stream; bytes_done is what was written.
    subroutine ferry_container_write(container, buf, bytes_done, ierror) bind(C, name="ferry_container_f_write")
      import :: c_int, c_int64_t, ferry_container_t
      type(ferry_container_t), intent(in) :: container
      type(*), dimension(..), intent(in), contiguous :: buf
      integer(c_int64_t), intent(out), optional :: bytes_done
      integer(c_int), intent(out), optional :: ierror
    end subroutine

    !> Fills buf from the selected stream; bytes_done < its size only at the end of the stream.
    subroutine ferry_container_read(container, buf, bytes_done, ierror) bind(C, name="ferry_container_f_read")
      import :: c_int, c_int64_t, ferry_container_t
      type(ferry_container_t), intent(in) :: container
      type(*), dimension(..), intent(inout), contiguous :: buf
      integer(c_int64_t), intent(out), optional :: bytes_done
      integer(c_int), intent(out), optional :: ierror
    end subroutine

    !> From now on what this rank wrote survives kill -9 of the job.
    subroutine ferry_container_flush(container, ierror) bind(C, name="ferry_container_f_flush")
      import :: c_int, ferry_container_t
      type(ferry_container_t), intent(in) :: container
      integer(c_int), intent(out), optional :: ierror
    end subroutine

    !> whence: MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END (the same values in C and Fortran).
    subroutine ferry_container_seek(container, offset, whence, ierror) bind(C, name="ferry_container_f_seek")
      import :: c_int, c_int64_t, ferry_container_t
      type(ferry_container_t), intent(in) :: container
      integer(c_int64_t), value :: offset
      integer(c_int), value :: whence
      integer(c_int), intent(out), optional :: ierror
    end subroutine

    subroutine ferry_container_tell(container, position, ierror) bind(C, name="ferry_container_f_tell")
      import :: c_int, c_int64_t, ferry_container_t
      type(ferry_container_t), intent(in) :: container
      integer(c_int64_t), intent(out) :: position
      integer(c_int), intent(out), optional :: ierror
    end subroutine

    !> Reading: bytes left in the stream; writing: bytes left in the current chunk.
    subroutine ferry_container_bytes_avail(container, bytes, ierror) bind(C, name="ferry_container_f_bytes_avail")
      import :: c_int, c_int64_t, ferry_container_t
      type(ferry_container_t), intent(in) :: container
      integer(c_int64_t), intent(out) :: bytes
      integer(c_int), intent(out), optional :: ierror
    end subroutine

    !> Mapped handles: makes streams(position) of the mapped open the selected stream (1-based).
    subroutine ferry_container_select(container, position, ierror) bind(C, name="ferry_container_f_select")
      import :: c_int, ferry_container_t
      type(ferry_container_t), intent(in) :: container
      integer(c_int), value :: position
      integer(c_int), intent(out), optional :: ierror
    end subroutine

    !> Describes the selected stream.
    subroutine ferry_container_info(container, info, ierror) bind(C, name="ferry_container_f_info")
      import :: c_int, ferry_container_t, ferry_container_info_t
      type(ferry_container_t), intent(in) :: container
      type(ferry_container_info_t), intent(out) :: info
      integer(c_int), intent(out), optional :: ierror
    end subroutine
  end interface

  ! ---- Serial API (no MPI_Init needed) ----
  interface
    !> Opens every file of the container at path; flags: 0 or FERRY_CONTAINER_INCOMPLETE_OK.
    subroutine ferry_container_serial_open(path, set, flags, ierror) bind(C, name="ferry_container_f_serial_open")
      import :: c_char, c_int, ferry_container_set_t
      character(len=*, kind=c_char), intent(in) :: path
      type(ferry_container_set_t), intent(inout) :: set
      integer(c_int), intent(in), optional :: flags
      integer(c_int), intent(out), optional :: ierror
    end subroutine

    !> Closes the set (a created one is completed first); the handle is null afterwards.
    subroutine ferry_container_serial_close(set, ierror) bind(C, name="ferry_container_f_serial_close")
      import :: c_int, ferry_container_set_t
      type(ferry_container_set_t), intent(inout) :: set
      integer(c_int), intent(out), optional :: ierror
    end subroutine

    subroutine ferry_container_serial_stream(set, stream, info, ierror) bind(C, name="ferry_container_f_serial_stream")
      import :: c_int, ferry_container_set_t, ferry_container_info_t
      type(ferry_container_set_t), intent(in) :: set
      integer(c_int), value :: stream
      type(ferry_container_info_t), intent(out) :: info
      integer(c_int), intent(out), optional :: ierror
    end subroutine

    subroutine ferry_container_serial_file(set, index, info, ierror) bind(C, name="ferry_container_f_serial_file")
      import :: c_int, ferry_container_set_t, ferry_container_file_info_t
      type(ferry_container_set_t), intent(in) :: set
      integer(c_int), value :: index
      type(ferry_container_file_info_t), intent(out) :: info
      integer(c_int), intent(out), optional :: ierror
    end subroutine

    !> Fills buf from stream at position; bytes_done < its size only at the end of the stream.
    subroutine ferry_container_serial_read(set, stream, position, buf, bytes_done, ierror) &
        bind(C, name="ferry_container_f_serial_read")
      import :: c_int, c_int64_t, ferry_container_set_t
      type(ferry_container_set_t), intent(in) :: set
      integer(c_int), value :: stream
      integer(c_int64_t), value :: position
      type(*), dimension(..), intent(inout), contiguous :: buf
      integer(c_int64_t), intent(out), optional :: bytes_done
      integer(c_int), intent(out), optional :: ierror
    end subroutine

    !> Where chunk `chunk` (0-based) of stream lies.
    subroutine ferry_container_serial_chunk(set, stream, chunk, place, ierror) &
        bind(C, name="ferry_container_f_serial_chunk")
      import :: c_int, c_int64_t, ferry_container_set_t, ferry_container_chunk_t
      type(ferry_container_set_t), intent(in) :: set
      integer(c_int), value :: stream
      integer(c_int64_t), value :: chunk
      type(ferry_container_chunk_t), intent(out) :: place
      integer(c_int), intent(out), optional :: ierror
    end subroutine

    !> A new one-file container of size(chunk_sizes) streams; append with ferry_container_serial_write.
    subroutine ferry_container_serial_create(path, chunk_sizes, set, block_size, data_checksums, ierror) &
        bind(C, name="ferry_container_f_serial_create")
      import :: c_char, c_int, c_int64_t, ferry_container_set_t
      character(len=*, kind=c_char), intent(in) :: path
      integer(c_int64_t), intent(in) :: chunk_sizes(:)
      type(ferry_container_set_t), intent(inout) :: set
      integer(c_int64_t), intent(in), optional :: block_size
      integer(c_int), intent(in), optional :: data_checksums
      integer(c_int), intent(out), optional :: ierror
    end subroutine

    !> Appends buf (all its bytes) to stream of a created set.
    subroutine ferry_container_serial_write(set, stream, buf, ierror) bind(C, name="ferry_container_f_serial_write")
      import :: c_int, ferry_container_set_t
      type(ferry_container_set_t), intent(in) :: set
      integer(c_int), value :: stream
      type(*), dimension(..), intent(in), contiguous :: buf
      integer(c_int), intent(out), optional :: ierror
    end subroutine
  end interface

  ! The shim's entry points behind the LOGICAL results and the message.
  interface
    subroutine c_eof(container, flag, ierror) bind(C, name="ferry_container_f_eof")
      import :: c_int, ferry_container_t
      type(ferry_container_t), intent(in) :: container
      integer(c_int), intent(out) :: flag
      integer(c_int), intent(out), optional :: ierror
    end subroutine

    subroutine c_serial_describe(set, streams, files, complete, ierror) &
        bind(C, name="ferry_container_f_serial_describe")
      import :: c_int, ferry_container_set_t
      type(ferry_container_set_t), intent(in) :: set
      integer(c_int), intent(out) :: streams, files, complete
      integer(c_int), intent(out), optional :: ierror
    end subroutine

    subroutine c_verify(path, problems, incomplete, ierror) bind(C, name="ferry_container_f_verify")
      import :: c_char, c_int, c_int64_t
      character(len=*, kind=c_char), intent(in) :: path
      integer(c_int64_t), intent(out), optional :: problems
      integer(c_int), intent(out) :: incomplete
      integer(c_int), intent(out), optional :: ierror
    end subroutine

    subroutine c_recover(path, recovered_bytes, was_complete, ierror) bind(C, name="ferry_container_f_recover")
      import :: c_char, c_int, c_int64_t
      character(len=*, kind=c_char), intent(in) :: path
      integer(c_int64_t), intent(out), optional :: recovered_bytes
      integer(c_int), intent(out) :: was_complete
      integer(c_int), intent(out), optional :: ierror
    end subroutine

    function c_error_message() bind(C, name="ferry_container_f_error_message")
      import :: c_ptr
      type(c_ptr) :: c_error_message
    end function

    function c_strlen(text) bind(C, name="strlen")
      import :: c_ptr, c_size_t
      type(c_ptr), value :: text
      integer(c_size_t) :: c_strlen
    end function
  end interface

contains

  !> at_end: the position is at (or past) the end of the selected stream.
  subroutine ferry_container_eof(container, at_end, ierror)
    type(ferry_container_t), intent(in) :: container
    logical, intent(out) :: at_end
    integer(c_int), intent(out), optional :: ierror
    integer(c_int) :: flag
    call c_eof(container, flag, ierror)
    at_end = flag /= 0
  end subroutine

  !> The set: its streams, files, and whether its writers completed it.
  subroutine ferry_container_serial_describe(set, streams, files, complete, ierror)
    type(ferry_container_set_t), intent(in) :: set
    integer(c_int), intent(out) :: streams, files
    logical, intent(out) :: complete
    integer(c_int), intent(out), optional :: ierror
    integer(c_int) :: flag
    call c_serial_describe(set, streams, files, flag, ierror)
    complete = flag /= 0
  end subroutine

  !> Checks every structure and checksum: MPI_SUCCESS when all hold, MPI_ERR_BAD_FILE when some do not
  !> (problems counts them); incomplete: the container was never closed (checked as recover sees it).
  subroutine ferry_container_verify(path, problems, incomplete, ierror)
    character(len=*, kind=c_char), intent(in) :: path
    integer(c_int64_t), intent(out), optional :: problems
    logical, intent(out), optional :: incomplete
    integer(c_int), intent(out), optional :: ierror
    integer(c_int) :: flag
    call c_verify(path, problems, flag, ierror)
    if (present(incomplete)) incomplete = flag /= 0
  end subroutine

  !> Completes an incomplete container in place with every flushed byte.
  subroutine ferry_container_recover(path, recovered_bytes, was_complete, ierror)
    character(len=*, kind=c_char), intent(in) :: path
    integer(c_int64_t), intent(out), optional :: recovered_bytes
    logical, intent(out), optional :: was_complete
    integer(c_int), intent(out), optional :: ierror
    integer(c_int) :: flag
    call c_recover(path, recovered_bytes, flag, ierror)
    if (present(was_complete)) was_complete = flag /= 0
  end subroutine

  !> The message of the last error on this thread ("" if none).
  function ferry_container_error_message() result(message)
    character(len=:), allocatable :: message
    character(kind=c_char), pointer :: chars(:)
    type(c_ptr) :: text
    integer :: n, i
    text = c_error_message()
    n = int(c_strlen(text))
    call c_f_pointer(text, chars, [n])
    allocate(character(len=n) :: message)
    do i = 1, n
      message(i:i) = chars(i)
    end do
  end function

end module ferry_container

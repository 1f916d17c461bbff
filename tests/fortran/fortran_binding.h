! What differs between the three Fortran bindings the programs are built
! for (preprocessed, included by fortran_checks.F90 and fortran_io.F90):
! mpif.h (default), `use mpi` (FERRY_USE_MPI) and `use mpi_f08`
! (FERRY_USE_MPI_F08). Every call passes IERROR, which mpi_f08 makes
! optional, so the calls themselves are the same source in all three.
! Expanded lines can be long: the programs build with -ffree-line-length-none.
#if defined(FERRY_USE_MPI_F08)
#define BINDING_NAME 'use mpi_f08'
#define FILE_T type(MPI_File)
#define DATATYPE_T type(MPI_Datatype)
#define REQUEST_T type(MPI_Request)
#define INFO_T type(MPI_Info)
#define ERRHANDLER_T type(MPI_Errhandler)
#define STATUS_T type(MPI_Status)
#define STATUS(name) name
#define STATUSES(name, n) name(n)
#define STATUS_OF(name, i) name(i)
#define HANDLE_VALUE(handle) handle%MPI_VAL
#define CONVERSION_ARGUMENTS type(c_ptr), value :: userbuf, filebuf; DATATYPE_T :: datatype; \
  integer :: count, ierror; integer(kind=MPI_OFFSET_KIND) :: position; integer(kind=MPI_ADDRESS_KIND) :: extra_state
#define CONVERSION_ARRAYS integer, pointer :: user(:); integer(kind=8), pointer :: file(:); \
  call c_f_pointer(userbuf, user, [position + count]); call c_f_pointer(filebuf, file, [count])
#define USER_AT(i) user(i)
#define FILE_AT(k) file(k)
#else
#if defined(FERRY_USE_MPI)
#define BINDING_NAME 'use mpi'
#else
#define BINDING_NAME 'mpif.h'
#endif
#define FILE_T integer
#define DATATYPE_T integer
#define REQUEST_T integer
#define INFO_T integer
#define ERRHANDLER_T integer
#define STATUS_T integer
#define STATUS(name) name(MPI_STATUS_SIZE)
#define STATUSES(name, n) name(MPI_STATUS_SIZE, n)
#define STATUS_OF(name, i) name(:, i)
#define HANDLE_VALUE(handle) handle
#define CONVERSION_ARGUMENTS integer :: userbuf(*), datatype, count, ierror; integer(kind=8) :: filebuf(*); \
  integer(kind=MPI_OFFSET_KIND) :: position; integer(kind=MPI_ADDRESS_KIND) :: extra_state
#define CONVERSION_ARRAYS
#define USER_AT(i) userbuf(i)
#define FILE_AT(k) filebuf(k)
#endif

/*
 * ferry: a parallel I/O library for MPI programs.
 *
 * The ferry_File_* functions have the signatures and semantics of the
 * MPI-3.1 MPI_File_* functions (MPI-3.1, chapter 13), with a ferry_File
 * handle in place of MPI_File. Everything else is MPI's own: amode bits
 * (MPI_MODE_*), whence values (MPI_SEEK_*), error classes, MPI_Info,
 * MPI_Status, MPI_Errhandler. The *_c functions are the MPI-4 large-count
 * forms; ferry offers them whatever MPI version the host implements.
 *
 * Every function returns MPI_SUCCESS or an error code whose class
 * (MPI_Error_class) is one of the standard classes and whose string
 * (ferry_Error_string, or MPI_Error_string on Open MPI) names the
 * operation, the file and the cause. Errors go
 * through the file's error handler; the default is MPI_ERRORS_RETURN and can
 * be changed by setting an error handler on FERRY_FILE_NULL.
 *
 * The drop-in library libferry-mpiio.so exports MPI_File_* with the host's
 * MPI_File type, each forwarding to the ferry_File_* function here.
 */
#ifndef FERRY_H
#define FERRY_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FERRY_VERSION_MAJOR 0
#define FERRY_VERSION_MINOR 1
#define FERRY_VERSION_PATCH 0
#define FERRY_VERSION_STRING "0.1.0"

#if defined(_WIN32)
#define FERRY_API
#elif defined(__GNUC__) || defined(__clang__)
#define FERRY_API __attribute__((visibility("default")))
#else
#define FERRY_API
#endif

typedef struct ferry_file *ferry_File;
#define FERRY_FILE_NULL ((ferry_File)0)

typedef void(ferry_File_errhandler_function)(ferry_File *, int *, ...);

/* MPI-4's MPI_Datarep_conversion_function_c (count in MPI_Count), which
 * MPI-3 hosts do not declare. */
typedef int(ferry_Datarep_conversion_function_c)(void *userbuf, MPI_Datatype datatype, MPI_Count count,
                                                 void *filebuf, MPI_Offset position, void *extra_state);

/* Returns the ferry version string, e.g. "0.1.0". */
FERRY_API const char *ferry_version(void);

/* Sets ferry up now rather than at its first use; call after MPI_Init.
 * MPI_Finalize runs MPI_COMM_SELF's delete callbacks in the reverse order
 * of their setting, and libraries (HDF5) close the files a program left
 * open in theirs: set up first, ferry's comes after them and its files
 * still work there. The drop-in calls it from MPI_Init and MPI_Init_thread.
 * Returns MPI_SUCCESS or an error class. */
FERRY_API int ferry_core_init(void);

/* Waits until no ferry thread works in the background: every nonblocking
 * request started, also those the program freed, has completed. MPI
 * forbids other threads' MPI calls while MPI_Finalize runs, so ferry's
 * MPI_Finalize (libferry's, and the drop-in's MPI_Finalize and
 * PMPI_Finalize) calls it before the host's; a program whose MPI_Finalize
 * reaches the host directly (linked with the MPI library before libferry)
 * should call it first. Not collective. */
FERRY_API void ferry_core_quiesce(void);

/* File manipulation (MPI-3.1 13.2) */
FERRY_API int ferry_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, ferry_File *fh);
FERRY_API int ferry_File_close(ferry_File *fh);
FERRY_API int ferry_File_delete(const char *filename, MPI_Info info);
FERRY_API int ferry_File_set_size(ferry_File fh, MPI_Offset size);
FERRY_API int ferry_File_preallocate(ferry_File fh, MPI_Offset size);
FERRY_API int ferry_File_get_size(ferry_File fh, MPI_Offset *size);
FERRY_API int ferry_File_get_group(ferry_File fh, MPI_Group *group);
FERRY_API int ferry_File_get_amode(ferry_File fh, int *amode);
FERRY_API int ferry_File_set_info(ferry_File fh, MPI_Info info);
FERRY_API int ferry_File_get_info(ferry_File fh, MPI_Info *info_used);

/* File views (13.3) */
FERRY_API int ferry_File_set_view(ferry_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                                  const char *datarep, MPI_Info info);
FERRY_API int ferry_File_get_view(ferry_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
                                  char *datarep);

/* Explicit offsets (13.4.2) */
FERRY_API int ferry_File_read_at(ferry_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                                 MPI_Status *status);
FERRY_API int ferry_File_read_at_all(ferry_File fh, MPI_Offset offset, void *buf, int count,
                                     MPI_Datatype datatype, MPI_Status *status);
FERRY_API int ferry_File_write_at(ferry_File fh, MPI_Offset offset, const void *buf, int count,
                                  MPI_Datatype datatype, MPI_Status *status);
FERRY_API int ferry_File_write_at_all(ferry_File fh, MPI_Offset offset, const void *buf, int count,
                                      MPI_Datatype datatype, MPI_Status *status);
FERRY_API int ferry_File_iread_at(ferry_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                                  MPI_Request *request);
FERRY_API int ferry_File_iwrite_at(ferry_File fh, MPI_Offset offset, const void *buf, int count,
                                   MPI_Datatype datatype, MPI_Request *request);
FERRY_API int ferry_File_iread_at_all(ferry_File fh, MPI_Offset offset, void *buf, int count,
                                      MPI_Datatype datatype, MPI_Request *request);
FERRY_API int ferry_File_iwrite_at_all(ferry_File fh, MPI_Offset offset, const void *buf, int count,
                                       MPI_Datatype datatype, MPI_Request *request);

/* Individual file pointers (13.4.3) */
FERRY_API int ferry_File_read(ferry_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status);
FERRY_API int ferry_File_read_all(ferry_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status);
FERRY_API int ferry_File_write(ferry_File fh, const void *buf, int count, MPI_Datatype datatype,
                               MPI_Status *status);
FERRY_API int ferry_File_write_all(ferry_File fh, const void *buf, int count, MPI_Datatype datatype,
                                   MPI_Status *status);
FERRY_API int ferry_File_iread(ferry_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request);
FERRY_API int ferry_File_iwrite(ferry_File fh, const void *buf, int count, MPI_Datatype datatype,
                                MPI_Request *request);
FERRY_API int ferry_File_iread_all(ferry_File fh, void *buf, int count, MPI_Datatype datatype,
                                   MPI_Request *request);
FERRY_API int ferry_File_iwrite_all(ferry_File fh, const void *buf, int count, MPI_Datatype datatype,
                                    MPI_Request *request);
FERRY_API int ferry_File_seek(ferry_File fh, MPI_Offset offset, int whence);
FERRY_API int ferry_File_get_position(ferry_File fh, MPI_Offset *offset);
FERRY_API int ferry_File_get_byte_offset(ferry_File fh, MPI_Offset offset, MPI_Offset *disp);

/* Shared file pointers (13.4.4) */
FERRY_API int ferry_File_read_shared(ferry_File fh, void *buf, int count, MPI_Datatype datatype,
                                     MPI_Status *status);
FERRY_API int ferry_File_write_shared(ferry_File fh, const void *buf, int count, MPI_Datatype datatype,
                                      MPI_Status *status);
FERRY_API int ferry_File_iread_shared(ferry_File fh, void *buf, int count, MPI_Datatype datatype,
                                      MPI_Request *request);
FERRY_API int ferry_File_iwrite_shared(ferry_File fh, const void *buf, int count, MPI_Datatype datatype,
                                       MPI_Request *request);
FERRY_API int ferry_File_read_ordered(ferry_File fh, void *buf, int count, MPI_Datatype datatype,
                                      MPI_Status *status);
FERRY_API int ferry_File_write_ordered(ferry_File fh, const void *buf, int count, MPI_Datatype datatype,
                                       MPI_Status *status);
FERRY_API int ferry_File_seek_shared(ferry_File fh, MPI_Offset offset, int whence);
FERRY_API int ferry_File_get_position_shared(ferry_File fh, MPI_Offset *offset);

/* Split collectives (13.4.5) */
FERRY_API int ferry_File_read_at_all_begin(ferry_File fh, MPI_Offset offset, void *buf, int count,
                                           MPI_Datatype datatype);
FERRY_API int ferry_File_read_at_all_end(ferry_File fh, void *buf, MPI_Status *status);
FERRY_API int ferry_File_write_at_all_begin(ferry_File fh, MPI_Offset offset, const void *buf, int count,
                                            MPI_Datatype datatype);
FERRY_API int ferry_File_write_at_all_end(ferry_File fh, const void *buf, MPI_Status *status);
FERRY_API int ferry_File_read_all_begin(ferry_File fh, void *buf, int count, MPI_Datatype datatype);
FERRY_API int ferry_File_read_all_end(ferry_File fh, void *buf, MPI_Status *status);
FERRY_API int ferry_File_write_all_begin(ferry_File fh, const void *buf, int count, MPI_Datatype datatype);
FERRY_API int ferry_File_write_all_end(ferry_File fh, const void *buf, MPI_Status *status);
FERRY_API int ferry_File_read_ordered_begin(ferry_File fh, void *buf, int count, MPI_Datatype datatype);
FERRY_API int ferry_File_read_ordered_end(ferry_File fh, void *buf, MPI_Status *status);
FERRY_API int ferry_File_write_ordered_begin(ferry_File fh, const void *buf, int count, MPI_Datatype datatype);
FERRY_API int ferry_File_write_ordered_end(ferry_File fh, const void *buf, MPI_Status *status);

/* File interoperability (13.5) */
FERRY_API int ferry_File_get_type_extent(ferry_File fh, MPI_Datatype datatype, MPI_Aint *extent);
FERRY_API int ferry_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                                     MPI_Datarep_conversion_function *write_conversion_fn,
                                     MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state);

/* Consistency and semantics (13.6) */
FERRY_API int ferry_File_set_atomicity(ferry_File fh, int flag);
FERRY_API int ferry_File_get_atomicity(ferry_File fh, int *flag);
FERRY_API int ferry_File_sync(ferry_File fh);

/* Error handling (8.3.4, 13.7) */
FERRY_API int ferry_File_create_errhandler(ferry_File_errhandler_function *file_errhandler_fn,
                                           MPI_Errhandler *errhandler);
FERRY_API int ferry_File_set_errhandler(ferry_File file, MPI_Errhandler errhandler);
FERRY_API int ferry_File_get_errhandler(ferry_File file, MPI_Errhandler *errhandler);
FERRY_API int ferry_File_call_errhandler(ferry_File fh, int errorcode);

/* MPI_Error_string that knows ferry's messages: MPICH 4.0 loses the string
 * of error codes added to predefined classes, so use this (or the drop-in
 * layer, which exports it as MPI_Error_string) to read ferry's messages.
 * Codes that are not ferry's go to the host's MPI_Error_string. */
FERRY_API int ferry_Error_string(int errorcode, char *string, int *resultlen);

/* Language interoperability (17.2.4) */
FERRY_API MPI_Fint ferry_File_c2f(ferry_File file);
FERRY_API ferry_File ferry_File_f2c(MPI_Fint file);

/* MPI-4 large-count forms */
FERRY_API int ferry_File_read_at_c(ferry_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                                   MPI_Datatype datatype, MPI_Status *status);
FERRY_API int ferry_File_read_at_all_c(ferry_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                                       MPI_Datatype datatype, MPI_Status *status);
FERRY_API int ferry_File_write_at_c(ferry_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                                    MPI_Datatype datatype, MPI_Status *status);
FERRY_API int ferry_File_write_at_all_c(ferry_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                                        MPI_Datatype datatype, MPI_Status *status);
FERRY_API int ferry_File_iread_at_c(ferry_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                                    MPI_Datatype datatype, MPI_Request *request);
FERRY_API int ferry_File_iwrite_at_c(ferry_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                                     MPI_Datatype datatype, MPI_Request *request);
FERRY_API int ferry_File_iread_at_all_c(ferry_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                                        MPI_Datatype datatype, MPI_Request *request);
FERRY_API int ferry_File_iwrite_at_all_c(ferry_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                                         MPI_Datatype datatype, MPI_Request *request);
FERRY_API int ferry_File_read_c(ferry_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                                MPI_Status *status);
FERRY_API int ferry_File_read_all_c(ferry_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                                    MPI_Status *status);
FERRY_API int ferry_File_write_c(ferry_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                                 MPI_Status *status);
FERRY_API int ferry_File_write_all_c(ferry_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                                     MPI_Status *status);
FERRY_API int ferry_File_iread_c(ferry_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                                 MPI_Request *request);
FERRY_API int ferry_File_iwrite_c(ferry_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                                  MPI_Request *request);
FERRY_API int ferry_File_iread_all_c(ferry_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                                     MPI_Request *request);
FERRY_API int ferry_File_iwrite_all_c(ferry_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                                      MPI_Request *request);
FERRY_API int ferry_File_read_shared_c(ferry_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                                       MPI_Status *status);
FERRY_API int ferry_File_write_shared_c(ferry_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                                        MPI_Status *status);
FERRY_API int ferry_File_iread_shared_c(ferry_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                                        MPI_Request *request);
FERRY_API int ferry_File_iwrite_shared_c(ferry_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                                         MPI_Request *request);
FERRY_API int ferry_File_read_ordered_c(ferry_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                                        MPI_Status *status);
FERRY_API int ferry_File_write_ordered_c(ferry_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                                         MPI_Status *status);
FERRY_API int ferry_File_read_at_all_begin_c(ferry_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                                             MPI_Datatype datatype);
FERRY_API int ferry_File_write_at_all_begin_c(ferry_File fh, MPI_Offset offset, const void *buf,
                                              MPI_Count count, MPI_Datatype datatype);
FERRY_API int ferry_File_read_all_begin_c(ferry_File fh, void *buf, MPI_Count count, MPI_Datatype datatype);
FERRY_API int ferry_File_write_all_begin_c(ferry_File fh, const void *buf, MPI_Count count,
                                           MPI_Datatype datatype);
FERRY_API int ferry_File_read_ordered_begin_c(ferry_File fh, void *buf, MPI_Count count, MPI_Datatype datatype);
FERRY_API int ferry_File_write_ordered_begin_c(ferry_File fh, const void *buf, MPI_Count count,
                                               MPI_Datatype datatype);
FERRY_API int ferry_File_get_type_extent_c(ferry_File fh, MPI_Datatype datatype, MPI_Count *extent);
/* NULL conversion functions (MPI_CONVERSION_FN_NULL_C) move native bytes. */
FERRY_API int ferry_Register_datarep_c(const char *datarep, ferry_Datarep_conversion_function_c *read_conversion_fn,
                                       ferry_Datarep_conversion_function_c *write_conversion_fn,
                                       MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state);

#ifdef __cplusplus
}
#endif
#endif /* FERRY_H */

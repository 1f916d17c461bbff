/*
 * File views and the individual file pointer (MPI-3.1 13.3, 13.4.3).
 *
 * This version accepts views whose etype and filetype are contiguous runs
 * of bytes (the default view, and e.g. etype = filetype = MPI_INT at some
 * displacement) in the "native" representation. Noncontiguous filetypes
 * and other representations return MPI_ERR_UNSUPPORTED_OPERATION /
 * MPI_ERR_UNSUPPORTED_DATAREP until the views issue lands.
 */
#include <stdint.h>
#include <string.h>

#include "datatype/datatype.h"
#include "mpiio/mpiio.h"

static int is_named(MPI_Datatype type)
{
    int ni, na, nd, combiner;
    MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner);
    return combiner == MPI_COMBINER_NAMED;
}

static void release_type(MPI_Datatype *type)
{
    if (*type != MPI_DATATYPE_NULL && !is_named(*type)) MPI_Type_free(type);
    *type = MPI_DATATYPE_NULL;
}

void ferry__view_init(ferry__view_t *view)
{
    view->disp = 0;
    view->etype = MPI_BYTE;
    view->filetype = MPI_BYTE;
    view->etype_size = 1;
    strcpy(view->datarep, "native");
}

void ferry__view_reset(ferry__view_t *view)
{
    release_type(&view->etype);
    release_type(&view->filetype);
    ferry__view_init(view);
}

/* A private reference to type: predefined types as they are, derived ones duplicated. */
static int keep_type(MPI_Datatype type, MPI_Datatype *kept)
{
    if (is_named(type)) {
        *kept = type;
        return 0;
    }
    return MPI_Type_dup(type, kept) == MPI_SUCCESS ? 0 : MPI_ERR_TYPE;
}

static int check_view(ferry_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                      const char *datarep, ferry__typeinfo_t *einfo)
{
    ferry__typeinfo_t finfo;
    const char *name = fh->filename;
    if (ferry__datatype_info(etype, einfo) != 0 || einfo->size == 0)
        return ferry__error_set(MPI_ERR_TYPE, "ferry: set_view '%s': invalid etype", name);
    if (ferry__datatype_info(filetype, &finfo) != 0 || finfo.size == 0)
        return ferry__error_set(MPI_ERR_TYPE, "ferry: set_view '%s': invalid filetype", name);
    if (finfo.size % einfo->size != 0)
        return ferry__error_set(MPI_ERR_TYPE, "ferry: set_view '%s': filetype size is not a multiple of the etype size",
                                name);
    if (disp == MPI_DISPLACEMENT_CURRENT)
        return ferry__error_set(MPI_ERR_UNSUPPORTED_OPERATION,
                                "ferry: set_view '%s': MPI_DISPLACEMENT_CURRENT needs shared file pointers", name);
    if (disp < 0) return ferry__error_set(MPI_ERR_ARG, "ferry: set_view '%s': negative displacement", name);
    if (!datarep) return ferry__error_set(MPI_ERR_ARG, "ferry: set_view '%s': NULL datarep", name);
    if (strcmp(datarep, "native") != 0)
        return ferry__error_set(MPI_ERR_UNSUPPORTED_DATAREP,
                                "ferry: set_view '%s': data representation '%s' is not supported yet (only native)",
                                name, datarep);
    if (!ferry__datatype_stream_contiguous(einfo, 2) || !ferry__datatype_stream_contiguous(&finfo, 2) ||
        finfo.true_lb != 0)
        return ferry__error_set(MPI_ERR_UNSUPPORTED_OPERATION,
                                "ferry: set_view '%s': noncontiguous etypes and filetypes are not supported yet", name);
    return 0;
}

int ferry_File_set_view(ferry_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                        const char *datarep, MPI_Info info)
{
    int cls = ferry__check_file(fh, "set_view");
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    ferry__typeinfo_t einfo;
    ferry__view_t next = {.disp = disp, .etype = MPI_DATATYPE_NULL, .filetype = MPI_DATATYPE_NULL};
    cls = check_view(fh, disp, etype, filetype, datarep, &einfo);
    if (cls == 0 && (keep_type(etype, &next.etype) != 0 || keep_type(filetype, &next.filetype) != 0))
        cls = ferry__error_set(MPI_ERR_TYPE, "ferry: set_view '%s': cannot duplicate the datatypes", fh->filename);
    cls = ferry__error_agree(fh->comm, cls, "set_view");
    if (cls != 0) {
        release_type(&next.etype);
        release_type(&next.filetype);
        return ferry__error_return(fh, cls);
    }
    next.etype_size = einfo.size;
    strcpy(next.datarep, "native");
    ferry__view_reset(&fh->view);
    fh->view = next;
    fh->position = 0;
    ferry__hints_apply(&fh->hints, info);
    return MPI_SUCCESS;
}

int ferry_File_get_view(ferry_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
                        char *datarep)
{
    int cls = ferry__check_file(fh, "get_view");
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    if (!disp || !etype || !filetype || !datarep)
        return ferry__error_return(fh, ferry__error_set(MPI_ERR_ARG, "ferry: get_view: NULL argument"));
    /* MPI-3.1 13.3: derived types are returned as new handles the caller frees. */
    if (keep_type(fh->view.etype, etype) != 0 || keep_type(fh->view.filetype, filetype) != 0)
        return ferry__error_return(fh, ferry__error_set(MPI_ERR_TYPE, "ferry: get_view: cannot duplicate datatypes"));
    *disp = fh->view.disp;
    strcpy(datarep, fh->view.datarep);
    return MPI_SUCCESS;
}

int ferry__view_byte_offset(ferry_File fh, MPI_Offset offset, MPI_Offset *byte_offset, const char *op)
{
    if (offset < 0) return ferry__error_set(MPI_ERR_ARG, "ferry: %s '%s': negative offset", op, fh->filename);
    if (offset > (INT64_MAX - fh->view.disp) / fh->view.etype_size)
        return ferry__error_set(MPI_ERR_ARG, "ferry: %s '%s': offset overflows a 64-bit byte offset", op,
                                fh->filename);
    *byte_offset = fh->view.disp + offset * fh->view.etype_size;
    return 0;
}

int ferry_File_seek(ferry_File fh, MPI_Offset offset, int whence)
{
    int cls = ferry__check_file(fh, "seek");
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    cls = ferry__check_not_sequential(fh, "seek");
    MPI_Offset base = 0;
    if (cls == 0 && whence == MPI_SEEK_CUR) base = fh->position;
    else if (cls == 0 && whence == MPI_SEEK_END) {
        MPI_Offset size = 0;
        cls = ferry__fs_size(fh->fs, &size);
        base = size > fh->view.disp ? (size - fh->view.disp + fh->view.etype_size - 1) / fh->view.etype_size : 0;
    } else if (cls == 0 && whence != MPI_SEEK_SET)
        cls = ferry__error_set(MPI_ERR_ARG, "ferry: seek '%s': invalid whence %d", fh->filename, whence);
    if (cls == 0 && (offset < -base || (offset > 0 && base > INT64_MAX - offset)))
        cls = ferry__error_set(MPI_ERR_ARG, "ferry: seek '%s': resulting position is negative or overflows",
                               fh->filename);
    if (cls == 0) fh->position = base + offset;
    return ferry__error_return(fh, cls);
}

int ferry_File_get_position(ferry_File fh, MPI_Offset *offset)
{
    int cls = ferry__check_file(fh, "get_position");
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    cls = ferry__check_not_sequential(fh, "get_position");
    if (cls == 0 && !offset) cls = ferry__error_set(MPI_ERR_ARG, "ferry: get_position: NULL argument");
    if (cls == 0) *offset = fh->position;
    return ferry__error_return(fh, cls);
}

int ferry_File_get_byte_offset(ferry_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    int cls = ferry__check_file(fh, "get_byte_offset");
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    if (!disp) return ferry__error_return(fh, ferry__error_set(MPI_ERR_ARG, "ferry: get_byte_offset: NULL argument"));
    return ferry__error_return(fh, ferry__view_byte_offset(fh, offset, disp, "get_byte_offset"));
}

#!/bin/sh
# Unmodified MPI-IO software on the drop-in layer: the same program, once on
# the host's MPI-IO and once with libferry-mpiio.so preloaded, must write
# identical files, and the preloaded run must be served by ferry.
#
# usage: software_compare.sh <run_mpi.sh> <libferry-mpiio.so> <nprocs> <preload-prefix> <file-name> <command...>
#
# The command runs as `<command...> <dir>/<file-name> host|ferry` (it checks
# the data it reads back and, through get_info, which MPI-IO served it); the
# file exists beforehand, 64 KiB of junk, so creating it must truncate it.
# Every file the host run leaves in its directory must be byte-identical in
# the ferry run's. The ferry run also writes FERRY_STATS json,
# which must name the file: a second proof that ferry served it.
#
# On Open MPI the reference is its ROMIO component (OMPI_MCA_io=romio321,
# ignored by MPICH) unless FERRY_HOST_IO names another: its default OMPIO
# (4.1.4) with romio_cb_write=enable and cb_nodes=2 on 3 ranks writes stale
# buffer bytes over parallel HDF5's data now and then (hdf5_rw twophase:
# values read back as 0 in about 1 run of 3, or 0xbe under ASan), so it is
# no reference there; but ROMIO's MPI_File_iwrite_at_all crashes (SIGSEGV,
# any arguments), so mpi4py_file.py runs against OMPIO (FERRY_HOST_IO=ompio).
#
# FERRY_TEST_REFERENCE_DIR puts the host's reference run elsewhere: on
# tools/cluster the hosts' read-modify-writes read stale pages of its
# caching clients (ROMIO 3.2.1 under parallel HDF5's filtered chunks failed
# "filter returned failure during read"), so the reference is made on this
# machine's local disk, which every namespace node sees, and ferry runs on
# the cluster's volume.
set -eu
run=$1; library=$2; nprocs=$3; prefix=$4; name=$5
shift 5
dir=$(mktemp -d "${FERRY_TEST_DIR:-/tmp}/ferry-software-XXXXXX")
reference=$dir
[ -n "${FERRY_TEST_REFERENCE_DIR:-}" ] && reference=$(mktemp -d "$FERRY_TEST_REFERENCE_DIR/ferry-software-XXXXXX")
trap 'rm -rf "$dir" "$reference"' EXIT
mkdir "$reference/host" "$dir/ferry"
head -c 65536 /dev/urandom >"$dir/junk"
cp "$dir/junk" "$reference/host/$name"
cp "$dir/junk" "$dir/ferry/$name"
if [ -n "$prefix" ]; then
  # Sanitized ferry inside Python, HDF5 or PnetCDF: their own leaks at exit are not ferry's.
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"
fi

OMPI_MCA_io=${FERRY_HOST_IO:-romio321} "$run" 120 "$nprocs" "$@" "$reference/host/$name" host
"$run" 120 "$nprocs" env "LD_PRELOAD=${prefix}${library}" "FERRY_STATS=json:$dir/stats.json" \
  "$@" "$dir/ferry/$name" ferry >"$dir/ferry.out"
cat "$dir/ferry.out"

grep -q "$dir/ferry/$name" "$dir/stats.json" || { echo "software_compare: no FERRY_STATS record of $name" >&2; exit 1; }
for host_file in "$reference/host"/*; do
  file=$(basename "$host_file")
  cmp "$host_file" "$dir/ferry/$file"
  echo "software_compare: $file identical ($(stat -c %s "$host_file") bytes)"
done

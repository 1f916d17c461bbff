#!/bin/sh
# Installs the build into a temporary prefix and builds a consumer with
# find_package(ferry) and another with pkg-config, then runs both.
# usage: install_test.sh <build-dir> <mpicc> <run_mpi.sh>
set -eu
build=$1; mpicc=$2; run=$3
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${FERRY_TEST_DIR:-/tmp}/ferry-install-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
test -f "$tmp/prefix/include/ferry.h"
ls "$tmp/prefix"/lib*/libferry-mpiio.so >/dev/null
cmake -S "$here/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DMPI_C_COMPILER="$mpicc" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
"$run" 60 1 "$tmp/consumer/consumer" "$tmp/cmake.out"
# A consumer with the other MPI is refused with a sentence naming both (issue 14).
case "$mpicc" in
  *openmpi*) other=mpicc.mpich; built=openmpi; pc_mpi=ompi-c ;;
  *mpich*) other=mpicc.openmpi; built=mpich; pc_mpi=mpich ;;
  *) other=""; built=""; pc_mpi="" ;;
esac
if [ -n "$other" ] && command -v "$other" >/dev/null; then
  if cmake -S "$here/consumer" -B "$tmp/wrong" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
       -DMPI_C_COMPILER="$(command -v "$other")" >"$tmp/wrong.out" 2>&1; then
    echo "install_test: a consumer built with $other found a ferry built with $built" >&2; exit 1
  fi
  # CMake wraps the sentence where the prefix's length puts it: join the lines before looking.
  tr -s ' \n' '  ' <"$tmp/wrong.out" | grep -q "was built with $built" || { cat "$tmp/wrong.out" >&2; exit 1; }
fi
libdir=$(dirname "$(ls "$tmp/prefix"/lib*/pkgconfig/ferry.pc)")
if [ -n "$pc_mpi" ]; then
  PKG_CONFIG_PATH="$libdir" pkg-config --print-requires ferry | grep -qx "$pc_mpi" ||
    { echo "install_test: ferry.pc does not require $pc_mpi" >&2; exit 1; }
fi
flags=$(PKG_CONFIG_PATH="$libdir" pkg-config --cflags --libs ferry)
# shellcheck disable=SC2086
"$mpicc" -o "$tmp/pc-consumer" "$here/consumer/main.c" $flags
LD_LIBRARY_PATH="$(dirname "$libdir")" "$run" 60 1 "$tmp/pc-consumer" "$tmp/pc.out"
echo "install_test: find_package and pkg-config consumers ok; a consumer with another MPI refused"

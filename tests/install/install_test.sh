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
  # (CMake wraps the message at a width, so where its lines break depends on the prefix's length)
  tr -s ' \n' '  ' < "$tmp/wrong.out" | grep -q "was built with $built" || { cat "$tmp/wrong.out" >&2; exit 1; }
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
# The Fortran module, when it was built: docs/container.md's example, compiled and linked as it says.
fortran=""
if [ -f "$tmp/prefix/include/ferry_container.mod" ]; then
  mpifort=$(command -v "$(basename "$mpicc" | sed 's/^mpicc/mpifort/')" || true)
  [ -n "$mpifort" ] || { echo "install_test: ferry_container.mod installed but no mpifort beside $mpicc" >&2; exit 1; }
  "$mpifort" -I"$tmp/prefix/include" -o "$tmp/particles" "$here/../container_fortran/container_fortran_example.f90" \
    -L"$(dirname "$libdir")" -lferry_fortran -lferry
  (cd "$tmp" && LD_LIBRARY_PATH="$(dirname "$libdir")" "$run" 60 2 "$tmp/particles") | grep -q "particles: passed"
  cmake -S "$here/consumer_fortran" -B "$tmp/consumer_fortran" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
    -DMPI_C_COMPILER="$mpicc" -DMPI_Fortran_COMPILER="$mpifort" >/dev/null
  cmake --build "$tmp/consumer_fortran" >/dev/null
  (cd "$tmp" && "$run" 60 2 "$tmp/consumer_fortran/particles") | grep -q "particles: passed"
  fortran="; the Fortran example built with -I and -lferry_fortran -lferry, and with find_package(ferry)"
fi
echo "install_test: find_package and pkg-config consumers ok; a consumer with another MPI refused$fortran"

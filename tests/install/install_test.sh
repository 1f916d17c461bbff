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
libdir=$(dirname "$(ls "$tmp/prefix"/lib*/pkgconfig/ferry.pc)")
flags=$(PKG_CONFIG_PATH="$libdir" pkg-config --cflags --libs ferry)
# shellcheck disable=SC2086
"$mpicc" -o "$tmp/pc-consumer" "$here/consumer/main.c" $flags
LD_LIBRARY_PATH="$(dirname "$libdir")" "$run" 60 1 "$tmp/pc-consumer" "$tmp/pc.out"
echo "install_test: find_package and pkg-config consumers ok"

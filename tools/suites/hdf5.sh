# Parallel HDF5's own tests, the testpar programs (sourced by
# tools/run-suites.sh, which defines suites_dir, launcher, subset and the
# helpers source_tree, record_runs).
#
# Built against the installed library, not a fresh one: Debian's
# libhdf5_<mpi>.so exports the internal symbols the tests use
# (debian/map_mpi.ver), so only the test helper library (test/libh5test)
# and the testpar programs are compiled, in a tree configured with the C
# options Debian's MPI flavours use (its H5pubconf.h then equals the
# installed one but for Fortran and C++ entries). That takes a minute per
# MPI where building the library takes a quarter of an hour.

hdf5_ranks=4
# The fast subset (tools/run-tests.sh), about a minute: t_mpi (MPI-IO
# itself), testphdf5's dataset tests (eidsetw2 and fill: the empty views
# of issue 19), t_pshutdown and t_prestart (files closed by HDF5's own
# MPI_Finalize hook). Each entry: a program and its arguments.
hdf5_subset_tests=(idsetw idsetr cdsetw cdsetr eidsetw2 selnone fill cchunk1 actualio atomicity)
hdf5_subset=(t_mpi "testphdf5$(printf ' -o %s' "${hdf5_subset_tests[@]}")" t_pshutdown t_prestart)

hdf5_package() {
  echo "libhdf5-$1-dev"
}

hdf5_build_dir() {
  echo "$suites_dir/build/$(basename "$1")-$2"
}

# The suite's own list of parallel programs (testpar/Makefile.am), then
# the two halves of testpflush.sh.
hdf5_programs() {
  sed -n 's/^TEST_PROG_PARA *= *//p' "$1/testpar/Makefile.am"
}

hdf5_build() {
  local mpi=$1 src build lib
  src=$(source_tree "$(hdf5_package "$mpi")") || return 1
  build=$(hdf5_build_dir "$src" "$mpi")
  [ -f "$build/.built" ] && return 0
  lib=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/hdf5/$mpi/libhdf5.so
  mkdir -p "$build"
  echo "run-suites: building HDF5's testpar against $lib ($build)" >&2
  (cd "$build" && CC=mpicc.$mpi "$src/configure" --with-pthread --enable-linux-lfs --enable-shared \
     --enable-build-mode=production --disable-sharedlib-rpath --with-zlib --with-default-api-version=v18 \
     --with-szlib --enable-hltools --enable-ros3-vfd --with-flavor="$mpi" --enable-unsupported \
     --enable-parallel=yes) >"$build/configure.log" 2>&1 || return 1
  # shellcheck disable=SC2046
  make -C "$build/test" -j2 libh5test.la LIBHDF5="$lib" >"$build/make.log" 2>&1 &&
    make -C "$build/testpar" -j2 $(hdf5_programs "$src") t_pflush1 t_pflush2 LIBHDF5="$lib" >>"$build/make.log" 2>&1 ||
    return 1
  touch "$build/.built"
}

# Runs every program (or the subset) once from <dir>/files, as the suite's
# `make check` would, each on hdf5_ranks ranks under the launcher.
hdf5_run() {
  local mpi=$1 dir=$2 src bin programs prog words
  src=$(source_tree "$(hdf5_package "$mpi")") || return 1
  bin="$(hdf5_build_dir "$src" "$mpi")/testpar"
  if [ "$subset" = 1 ]; then programs=("${hdf5_subset[@]}"); else read -ra programs <<<"$(hdf5_programs "$src")"; fi
  # As under `make check`, each program runs as ./<program> from a directory that holds the
  # programs (t_cache_image executes itself by that name) and takes the files they write.
  mkdir -p "$dir/files"
  for prog in "${programs[@]}" t_pflush1 t_pflush2; do ln -sf "$bin/${prog%% *}" "$dir/files/${prog%% *}"; done
  export FERRY_SUITES_LOG="$dir/log"
  for prog in "${programs[@]}"; do
    read -ra words <<<"$prog"
    (cd "$dir/files" && "$launcher" -n "$hdf5_ranks" "./${words[0]}" "${words[@]:1}")
  done
  if [ "$subset" = 0 ]; then
    # testpflush.sh: t_pflush1 exits without MPI_Finalize on purpose (its status is ignored there too),
    # t_pflush2 then checks what the flush left in the files.
    (cd "$dir/files" && FERRY_SUITES_LOG="" "$launcher" -n "$hdf5_ranks" ./t_pflush1)
    (cd "$dir/files" && "$launcher" -n "$hdf5_ranks" ./t_pflush2)
  fi
  record_runs "$dir/log" "" "$dir/results.tsv"
}

# HDF5's files hold object and modification times: no byte comparison.
hdf5_compare() {
  :
}

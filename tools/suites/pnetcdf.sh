# PnetCDF's own parallel tests, `make ptest2` and `make ptest4` in every
# test directory its configure enabled (sourced by tools/run-suites.sh,
# which defines suites_dir, launcher, subset and the helpers source_tree,
# record_runs).
#
# The suite's harness (each directory's parallel_run.sh: the programs,
# then ncvalidator on every file they wrote) runs unchanged, with the
# launcher as TESTMPIRUN and TESTSEQRUN. The tree is configured as Debian
# configures it (its defaults: C, C++ and Fortran). Debian builds PnetCDF
# for Open MPI only: for MPICH the library is the one built here; for Open
# MPI the programs link Debian's own libpnetcdf.a (libpnetcdf-dev, the
# build behind the installed libpnetcdf.so.0d), put in place of the
# library built here, so they test the installed code.

# The fast subset (tools/run-tests.sh): in the directory of the programs
# the issue found failing, those (tst_info: hints from PNETCDF_HINTS and
# the open's info; check_type, mix_collectives, test_fillvalue: fills that
# set empty views on some ranks) and a few that take other paths (redef's
# moves, flexible and varn types, nonblocking, vard), on 4 ranks.
pnetcdf_subset_dir=testcases
pnetcdf_subset_programs=(tst_info check_type mix_collectives test_fillvalue tst_vars_fill add_var flexible
                         varn_int nonblocking test_vard collective_error)

pnetcdf_package() {
  echo libpnetcdf-dev
}

pnetcdf_build_dir() {
  echo "$suites_dir/build/$(basename "$1")-$2"
}

pnetcdf_build() {
  local mpi=$1 src build
  src=$(source_tree "$(pnetcdf_package)") || return 1
  build=$(pnetcdf_build_dir "$src" "$mpi")
  [ -f "$build/.built" ] && return 0
  echo "run-suites: building PnetCDF and its tests for $mpi ($build)" >&2
  # Debian's source carries no configure script: its build runs autoreconf too.
  [ -x "$src/configure" ] || (cd "$src" && autoreconf -fi >autoreconf.log 2>&1) || return 1
  mkdir -p "$build"
  (cd "$build" && "$src/configure" MPICC="mpicc.$mpi" MPICXX="mpicxx.$mpi" MPIF77="mpif77.$mpi" \
     MPIF90="mpif90.$mpi") >"$build/configure.log" 2>&1 &&
    make -C "$build" -j2 >"$build/make.log" 2>&1 || return 1
  if [ "$mpi" = openmpi ]; then
    cp "/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/libpnetcdf.a" "$build/src/libs/.libs/libpnetcdf.a"
  fi
  make -C "$build/test" -j2 tests >"$build/make-tests.log" 2>&1 || return 1
  touch "$build/.built"
}

# A make variable's value in one of the build's makefiles.
pnetcdf_make_variable() {
  printf 'print-value:\n\t@echo $(%s)\n' "$2" | make -s -C "$1" -f Makefile -f - print-value
}

# Every enabled test directory (or the subset) with ptest2 and ptest4;
# each writes its files into <dir>/files/<directory>-np<N>.
pnetcdf_run() {
  local mpi=$1 dir=$2 src build d np
  src=$(source_tree "$(pnetcdf_package)") || return 1
  build=$(pnetcdf_build_dir "$src" "$mpi")
  if [ "$subset" = 1 ]; then
    pnetcdf_run_harness "$build" "$dir" "$pnetcdf_subset_dir" 4 check_PROGRAMS="${pnetcdf_subset_programs[*]}"
    return
  fi
  for d in $(pnetcdf_make_variable "$build/test" PTEST_SUBDIRS); do
    for np in 2 4; do pnetcdf_run_harness "$build" "$dir" "$d" "$np"; done
  done
}

# One directory's `make ptest<np> [make arguments]`, its files into
# <dir>/files/<directory>-np<np>, its results appended to <dir>/results.tsv.
pnetcdf_run_harness() {
  local build=$1 dir=$2 d=$3 np=$4 status
  shift 4
  local out="$dir/files/$d-np$np" logs="$dir/log/$d-np$np"
  mkdir -p "$out" "$logs"
  FERRY_SUITES_LOG="$logs" make -C "$build/test/$d" "ptest$np" TESTOUTDIR="$out" TESTMPIRUN="$launcher -n NP" \
    TESTSEQRUN="$launcher --serial" "$@" >"$logs/make.out" 2>&1
  status=$?
  record_runs "$logs" "$d/np$np: " "$dir/results.tsv"
  # A harness that stopped outside the programs it ran (parallel_run.sh exits at the first failure).
  if [ $status -ne 0 ] && ! awk -F'\t' '$2 != 0 { bad = 1 } END { exit !bad }' "$logs/runs.tsv" 2>/dev/null; then
    printf '%s\tfailed\tmake ptest%s: %s\n' "$d/np$np" "$np" "$(tail -n 1 "$logs/make.out")" >>"$dir/results.tsv"
  fi
}

# Runs again on the host the program that wrote <file> (found in the
# run's runs.tsv), writing to <copy> instead, with Open MPI's io component
# <io> (empty: the host's default); prints the copy's path.
pnetcdf_rerun_on_host() {
  local mpi=$1 logs=$2 file=$3 copy=$4 io=$5 n status np cwd command words
  while IFS=$'\t' read -r n status np cwd command; do
    read -ra words <<<"$command"
    [ "$np" != serial ] && [[ "$file" == "${words[-1]}"* ]] || continue
    (cd "$cwd" && FERRY_SUITES_MPI=$mpi FERRY_SUITES_LOG="" FERRY_SUITES_PRELOAD="" FERRY_SUITES_HOST_IO=$io \
       "$launcher" -n "$np" "${words[@]:0:${#words[@]}-1}" "$copy") >/dev/null 2>&1
    echo "$copy${file#"${words[-1]}"}"
    return
  done < <(cat "$logs"/*/runs.tsv)
}

# Whether <ferry>'s bytes that differ from <host>'s are all zeros, in runs
# of adjacent bytes each holding a place where <host> differs from <again>,
# the host's file from a second run: holes the format leaves (PnetCDF never
# writes the padding between variables) into which the host writes stale
# memory. A run, not every byte: stale memory (a pointer's upper bytes)
# may repeat from one run to the next (check_type.nc's bytes 7171-7172).
pnetcdf_only_host_noise() {
  [ -f "$3" ] && [ "$(stat -c %s "$1")" = "$(stat -c %s "$2")" ] || return 1
  awk 'NR == FNR { noisy[$1] = 1; next }
       $1 != last + 1 { if (started && !seen) bad = 1; seen = 0; started = 1 }
       { if ($1 in noisy) seen = 1; if ($3 != 0) bad = 1; last = $1 }
       END { if (started && !seen) bad = 1; exit bad }' <(cmp -l "$1" "$3") <(cmp -l "$1" "$2")
}

# Why ferry's file may differ from the host's, judged by running the
# program on the host again: the host writes those bytes differently each
# run (MPICH 4.0's ROMIO and Open MPI's OMPIO, check_type on 4 ranks), or,
# on Open MPI, ROMIO writes ferry's file exactly where OMPIO does not
# (OMPIO 4.1.4's read_at_all reports the whole count for a read that
# crosses the end of file, so PnetCDF's moves on redef copy bytes that do
# not exist: add_var). Prints the reason; status 1 when there is none.
pnetcdf_explain_difference() {
  local mpi=$1 host=$2 ferry=$3 name=$4 again romio
  again=$(pnetcdf_rerun_on_host "$mpi" "$host/log" "$host/files/$name" "$host/again-${name//\//-}" "")
  if pnetcdf_only_host_noise "$host/files/$name" "$ferry/files/$name" "$again"; then
    echo "identical but for $(cmp -l "$host/files/$name" "$ferry/files/$name" | wc -l) bytes the host writes differently each run (ferry: zeros)"
    return 0
  fi
  [ "$mpi" = openmpi ] || return 1
  romio=$(pnetcdf_rerun_on_host "$mpi" "$host/log" "$host/files/$name" "$host/romio-${name//\//-}" romio321)
  [ -f "$romio" ] && cmp -s "$romio" "$ferry/files/$name" || return 1
  echo "differs from OMPIO's ($(cmp "$host/files/$name" "$ferry/files/$name" 2>&1 | sed 's/.*differ: //; s/.*EOF on .*after/EOF after/')); identical to ROMIO's"
}

# The files written over ferry: valid for pnetcdf-bin's ncvalidator, and
# byte for byte those the host's run wrote unless the host explains the
# difference (recorded, with the reason, in the ferry run's results).
pnetcdf_compare() {
  local mpi=$1 host=$2 ferry=$3 file name why
  [ -d "$host/files" ] && [ -d "$ferry/files" ] || return 0
  while IFS= read -r file; do
    name=${file#"$host/files/"}
    if [ ! -f "$ferry/files/$name" ]; then
      printf 'file %s\tfailed\tthe host run wrote it, the ferry run did not\n' "$name" >>"$ferry/results.tsv"
    elif cmp -s "$file" "$ferry/files/$name"; then
      printf 'file %s\tpassed\t\n' "$name" >>"$ferry/results.tsv"
    elif why=$(pnetcdf_explain_difference "$mpi" "$host" "$ferry" "$name"); then
      printf 'file %s\tpassed\t%s\n' "$name" "$why" >>"$ferry/results.tsv"
      echo "run-suites: $ferry/files/$name: $why" >&2
    else
      printf 'file %s\tfailed\tdiffers from the host run'"'"'s: %s\n' "$name" \
        "$(cmp "$file" "$ferry/files/$name" 2>&1 | head -n 1 | sed 's/.*differ: //')" >>"$ferry/results.tsv"
    fi
  done < <(find "$host/files" -type f | sort)
  while IFS= read -r file; do
    name=${file#"$ferry/files/"}
    if /usr/bin/ncvalidator -q "$file" >/dev/null 2>&1; then
      printf 'ncvalidator %s\tpassed\t\n' "$name" >>"$ferry/results.tsv"
    else
      printf 'ncvalidator %s\tfailed\t%s\n' "$name" "$(/usr/bin/ncvalidator "$file" 2>&1 | grep -m 1 -i error)" \
        >>"$ferry/results.tsv"
    fi
  done < <(find "$ferry/files" -type f -name '*.nc*' | sort)
}

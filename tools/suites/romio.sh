# ROMIO's and MPICH's own MPI-IO test programs (issue 33): every program of
# src/mpi/romio/test and test/mpi/io in the source of the installed MPICH
# (sourced by tools/run-suites.sh, which defines suites_dir, launcher,
# subset and the helpers source_tree, first_error_line).
#
# Nothing of MPICH is built but the programs: each is compiled alone with
# mpicc.<mpi> (mpif77.<mpi> for the Fortran ones), so one source serves
# both MPIs. What MPICH's configure would substitute is substituted here:
# in romio/test's *.c.in and *.f.in the printf format of MPI_Offset
# (@LL@) and its Fortran type (@FORTRAN_MPI_OFFSET@, integer*8 on both
# MPIs) and ROMIO's default getarg calls; test/mpi/io's programs link the
# suite's mtest helpers (util/mtest.c, mtest_common.c, mtest_single.c)
# with an mpitestconf.h written here for Linux (POSIX threads, no GPU).
#
# Each program runs as its suite runs it: romio/test's ranks and arguments
# from its runtests script (the file name "testfile" for $FILENAME),
# test/mpi/io's from its testlist; romio/test's programs that runtests
# leaves out (performance, 4 GB files, external32, creat_excl, big_extents)
# with the ranks in romio_extra_runs. Each program runs in a directory of
# its own under <dir>/files. Judged as the suites judge: test/mpi/io by
# MPICH's runtests (exit status 0, a line " No Errors" and no other
# output), romio/test by exit status 0 and the program's own success line
# (" No Errors" for all but the six in romio_success_lines).

# romio/test's programs runtests does not run: name, ranks, arguments. large_array and large_file
# write 4 GB files, coll_perf a 14 GB one (a 2176 x 1152 x 1408 array of ints, written and read twice:
# 1.5-3 minutes on Open MPI here, over 5 on MPICH under load): the default timeout of 1800 s is kept.
# coll_perf's ranks hold the whole array in memory, 14 GB together (large_array's 8 GB): two suites at
# once on a 23 GB machine woke the kernel's OOM killer (it killed one coll_perf rank).
romio_extra_runs=("perf 4 -fname testfile" "coll_perf 4 -fname testfile" "fperf 4 -fname testfile"
                  "large_array 4 -fname testfile" "large_file 1 -fname testfile" "external32 2"
                  "creat_excl 4 -fname testfile" "big_extents 4 testfile")
# romio/test's programs without a " No Errors" line: what each prints when it succeeded.
declare -A romio_success_lines=(
  [perf]="Read bandwidth after file sync" [fperf]="Read bandwidth after file sync"
  [coll_perf]="Collective read bandwidth" [large_array]="data read back is correct"
  [large_file]="Data read back is correct" [external32]="external32 datarep is BIG ENDIAN")
# The fast subset (tools/run-tests.sh): the programs of issue 33's four items and a few of each kind.
romio_subset=(romio/syshints romio/file_info romio/noncontig_coll2 romio/shared_fp romio/error io/setinfo
              io/tst_fileview io/i_noncontig_coll io/zero_count io/userioerr)

romio_package() {
  echo libmpich-dev
}

romio_build_dir() {
  echo "$suites_dir/build/$(basename "$1")-$2"
}

# Every program as "<suite dir>/<name> <ranks> [arguments]", in the suites' order.
romio_runs() {
  local src=$1 test=$1/src/mpi/romio/test
  sed -nE 's#^\s*\$mpirun -np ([0-9]+) \./([^ ]+) ?(.*)$#romio/\2 \1 \3#p' "$test/runtests.in" |
    sed "s#\$FILENAME#testfile#; s#\$srcdir#$test#"
  printf 'romio/%s\n' "${romio_extra_runs[@]}"
  sed -nE 's#^([a-z0-9_]+) ([0-9]+)(.*)$#io/\1 \2\3#p' "$src/test/mpi/io/testlist.in" |
    sed -E 's/ mem=[0-9.]+//; s/ arg=/ /'
}

# romio/test's *.in with what ROMIO's configure substitutes for a 64-bit MPI_Offset.
romio_substitute() {
  sed -e 's/@LL@/lld/g; s/@FORTRAN_MPI_OFFSET@/integer*8/g; s/@F77MPIOINC@//g' \
      -e 's/@F77GETARG@/call getarg(i,str)/g; s/@F77IARGC@/iargc()/g' "$1" >"$2"
}

# test/mpi's configuration header, what its configure finds on Linux.
romio_mtest_header() {
  cat >"$1/mpitestconf.h" <<'EOF'
/* Written by ferry's tools/suites/romio.sh for MPICH's test/mpi utilities. */
#define HAVE_STDARG_H 1
#define HAVE_STRING_H 1
#define HAVE_UNISTD_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_MPI_INIT_THREAD 1
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_PTHREAD_H 1
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX
EOF
}

# MPI-1's MPI_LB and MPI_UB as an Open MPI built with --enable-mpi1-compatibility declares them.
romio_mpi1_header() {
  cat >"$1/mpi1_compat.h" <<'EOF'
/* Written by ferry's tools/suites/romio.sh: Open MPI's MPI-1 bounds markers, still in its library. */
#include <mpi.h>
#ifndef MPI_LB
OMPI_DECLSPEC extern struct ompi_predefined_datatype_t ompi_mpi_lb;
OMPI_DECLSPEC extern struct ompi_predefined_datatype_t ompi_mpi_ub;
#define MPI_LB OMPI_PREDEFINED_GLOBAL(MPI_Datatype, ompi_mpi_lb)
#define MPI_UB OMPI_PREDEFINED_GLOBAL(MPI_Datatype, ompi_mpi_ub)
#endif
EOF
}

# Compiles one program; a program that does not compile is left out (its run says so).
romio_compile() {
  local log=$1 out=$2
  shift 2
  echo "+ $* -o $out" >>"$log"
  "$@" -o "$out" >>"$log" 2>&1 || echo "run-suites: $out did not compile (see $log)" >&2
}

romio_build() {
  local mpi=$1 src build test io f name cflags=(-O2)
  src=$(source_tree "$(romio_package)") || return 1
  build=$(romio_build_dir "$src" "$mpi")
  [ -f "$build/.built" ] && return 0
  test=$src/src/mpi/romio/test io=$src/test/mpi
  # Open MPI 4's mpi.h hides MPI-1's MPI_LB and MPI_UB (noncontig*.c use them); its library keeps them.
  [ "$mpi" = openmpi ] && cflags+=(-DOMPI_OMIT_MPI1_COMPAT_DECLS=0 -DOMPI_REMOVED_USE_STATIC_ASSERT=0
                                   -include "$build/include/mpi1_compat.h")
  echo "run-suites: building ROMIO's and MPICH's MPI-IO tests for $mpi ($build)" >&2
  rm -rf "$build"
  mkdir -p "$build/romio" "$build/io" "$build/include"
  : >"$build/make.log"
  romio_mtest_header "$build/include"
  romio_mpi1_header "$build/include"
  for f in "$test"/*.in; do
    case $f in *.c.in | *.f.in) romio_substitute "$f" "$build/romio/$(basename "${f%.in}")" ;; esac
  done
  for f in "$test"/*.c "$build"/romio/*.c; do
    name=$(basename "${f%.c}")
    romio_compile "$build/make.log" "$build/romio/$name" "mpicc.$mpi" "${cflags[@]}" "$f" -lm
  done
  for f in "$build"/romio/*.f; do
    romio_compile "$build/make.log" "${f%.f}" "mpif77.$mpi" -O2 "$f"
  done
  for f in mtest mtest_common mtest_single; do
    "mpicc.$mpi" "${cflags[@]}" -c -I"$build/include" -I"$io/include" "$io/util/$f.c" -o "$build/io/$f.o" \
      >>"$build/make.log" 2>&1 || return 1
  done
  for f in "$io"/io/*.c; do
    name=$(basename "${f%.c}")
    romio_compile "$build/make.log" "$build/io/$name" "mpicc.$mpi" "${cflags[@]}" -I"$build/include" -I"$io/include" \
      "$f" "$build"/io/mtest*.o -lm
  done
  touch "$build/.built"
}

# Whether one program's output is its suite's success: "passed", or the reason it is not.
romio_judge() {
  local program=$1 out=$2 status=$3 name=${1#*/} line
  if [ "$status" != 0 ]; then
    # The MPI error the program reported, when it reported one, before the launcher's abort messages.
    line=$(grep -m 1 -E 'MPI_ERR_|Error at line|Found [0-9]+ errors|expected |Signal: ' "$out" | cut -c1-200)
    [ "$status" = 124 ] || [ "$status" = 137 ] || [ -z "$line" ] || { echo "$line"; return; }
    first_error_line "$out" "$status"
  elif [ "${program%%/*}" = io ]; then
    # MPICH's test/mpi/runtests: " No Errors" and nothing else (Fortran's STOP and "Test Passed" aside).
    line=$(grep -v -E '^\s*(No [Ee]rrors|Test Passed)\s*$|FORTRAN STOP' "$out" | head -n 1)
    if ! grep -q -E '^\s*No [Ee]rrors\s*$' "$out"; then echo "no \"No Errors\": $(first_error_line "$out" 0)"
    elif [ -n "$line" ]; then echo "unexpected output: $line" | cut -c1-200
    else echo passed; fi
  elif grep -q -E "${romio_success_lines[$name]:-^\s*No [Ee]rrors\s*$}" "$out" && ! grep -q 'readbuf=' "$out"; then
    echo passed
  else
    echo "no success line: $(first_error_line "$out" 0)"
  fi
}

# Runs every program (or the subset) once, each in <dir>/files/<suite dir>-<name>; the files of a
# passed program are removed (large_array and large_file write 4 GB each).
romio_run() {
  local mpi=$1 dir=$2 src bin entry program np words cwd status verdict
  src=$(source_tree "$(romio_package)") || return 1
  bin=$(romio_build_dir "$src" "$mpi")
  export FERRY_SUITES_LOG="$dir/log"
  while read -r program np words; do
    if [ "$subset" = 1 ] && [[ " ${romio_subset[*]} " != *" $program "* ]]; then continue; fi
    cwd="$dir/files/${program/\//-}"
    mkdir -p "$cwd"
    if [ ! -x "$bin/$program" ]; then
      printf '%s\tfailed\tnot built for %s (see %s/make.log)\n' "$program" "$mpi" "$bin" >>"$dir/results.tsv"
      continue
    fi
    entry=$(($(find "$dir/log" -maxdepth 1 -name '*.out' | wc -l) + 1))
    # shellcheck disable=SC2086 # the arguments are words
    (cd "$cwd" && "$launcher" -n "$np" "$bin/$program" $words) </dev/null >/dev/null 2>&1
    status=$?
    verdict=$(romio_judge "$program" "$dir/log/$entry.out" "$status")
    if [ "$verdict" = passed ]; then
      printf '%s\tpassed\t\n' "$program" >>"$dir/results.tsv"
      rm -rf "$cwd"
    else
      printf '%s\tfailed\t%s\n' "$program" "$verdict" >>"$dir/results.tsv"
      find "$cwd" -type f -size +64M -delete
    fi
  done < <(romio_runs "$src")
}

# The programs check their own data: no files to compare.
romio_compare() {
  :
}

#!/usr/bin/env bash
# Parallel HDF5's and PnetCDF's own test suites on the host's MPI-IO and
# over ferry's drop-in (LD_PRELOAD=libferry-mpiio.so), against Open MPI and
# against MPICH (issue 19): a drop-in is trusted when the libraries' own
# tests pass on it. Also, on request, ROMIO's and MPICH's own MPI-IO test
# programs (--suite romio, issue 33).
#
# Sources: the Debian source packages of the installed libhdf5-*-dev,
# libpnetcdf-dev and libmpich-dev (apt-get source, after adding a deb-src entry beside the
# deb one when there is none). Builds (tools/suites/hdf5.sh, pnetcdf.sh, romio.sh)
# are cached under FERRY_SUITES_DIR (default /var/tmp/ferry-suites), so a
# rerun only runs. Each invocation writes into its own directory there,
# runs/<date>-<pid>/<suite>-<mpi>-<run>-<mode>/, with every program's output.
#
# usage: tools/run-suites.sh [--mpi openmpi|mpich]... [--suite hdf5|pnetcdf|romio]... [--build-only]
#                            [--runs N] [--host-runs N] [--host-only] [--subset]
#                            [--dropin <libferry-mpiio.so> [--preload-prefix <libs>]]
#   --build-only  fetch and build, run nothing
#   --runs N      every (suite, MPI) N times on the host and N times on ferry (default 1)
#   --host-runs N the host's MPI-IO only in the first N of them (default: all; ferry is what is judged,
#                 and a whole HDF5 run takes 20-30 min per MPI here)
#   --host-only   the host's MPI-IO only, no ferry run (another host: FERRY_SUITES_HOST_IO=romio321);
#                 the host's failures then set the exit status
#   --subset      the fast subset tools/run-tests.sh runs (tests/software/)
#   --if-built    run only suites built already, exit 77 (skipped) when none is: no fetch, no build
#                 (tools/run-tests.sh's subset: a fresh machine's fetch and builds take too long for CI)
#   --dropin      the drop-in to test (default: build/release-<mpi>, built by tools/setup.sh);
#                 with it only one --mpi. --preload-prefix: what LD_PRELOAD needs before it (libasan)
# environment: FERRY_SUITES_DIR, FERRY_SUITES_TIMEOUT (seconds per program, default 1800),
#              FERRY_SUITES_HOST_IO (Open MPI's io component for the host runs, e.g. romio321 for its
#              ROMIO 3.2.1; default its own: OMPIO; the ferry runs preload ferry over either)
# Prints one markdown table (suite, MPI, run, host, ferry, failures with their first error line);
# exit status 0 only when every run of every suite passed over ferry (the host's failures are shown).
set -uo pipefail

root_dir=$(cd "$(dirname "$0")/.." && pwd)
suites_dir=${FERRY_SUITES_DIR:-/var/tmp/ferry-suites}
launcher="$root_dir/tools/suites/mpirun.sh"
mpis=() suites=() runs=1 host_runs="" host_only=0 subset=0 build_only=0 if_built=0 dropin="" preload_prefix=""
# Tools to unpack and build the sources; pnetcdf-bin's ncvalidator checks the files written over ferry.
suite_packages=(dpkg-dev autoconf automake libtool gfortran pnetcdf-bin)

# shellcheck source=suites/hdf5.sh
. "$root_dir/tools/suites/hdf5.sh"
# shellcheck source=suites/pnetcdf.sh
. "$root_dir/tools/suites/pnetcdf.sh"
# shellcheck source=suites/romio.sh
. "$root_dir/tools/suites/romio.sh"

parse_arguments() {
  while [ $# -gt 0 ]; do
    case "$1" in
      --mpi) mpis+=("$2"); shift 2 ;;
      --suite) suites+=("$2"); shift 2 ;;
      --runs) runs=$2; shift 2 ;;
      --host-runs) host_runs=$2; shift 2 ;;
      --host-only) host_only=1; shift ;;
      --subset) subset=1; shift ;;
      --build-only) build_only=1; shift ;;
      --if-built) if_built=1; shift ;;
      --dropin) dropin=$2; shift 2 ;;
      --preload-prefix) preload_prefix=$2; shift 2 ;;
      *) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
    esac
  done
  [ ${#mpis[@]} -eq 0 ] && mpis=(openmpi mpich)
  [ ${#suites[@]} -eq 0 ] && suites=(hdf5 pnetcdf)
  [ -z "$host_runs" ] && host_runs=$runs
  # Sanitized ferry inside HDF5 and PnetCDF: their own leaks at exit are not ferry's.
  [ -n "$preload_prefix" ] && export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"
  if [ -n "$dropin" ] && [ ${#mpis[@]} -ne 1 ]; then
    echo "run-suites: --dropin goes with exactly one --mpi" >&2; exit 2
  fi
}

install_suite_packages() {
  [ "$if_built" = 1 ] && return 0 # what built the suites installed them
  "$root_dir/tools/setup.sh" || exit 1
  local missing=() p
  for p in "${suite_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "run-suites needs: apt-get install ${missing[*]} (as root)" >&2; exit 1
  fi
  apt-get -o DPkg::Lock::Timeout=900 update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq "${missing[@]}" >/dev/null
}

# apt-get source needs a deb-src entry; Debian 12 images carry only deb ones.
# One is added beside them (deb822, as /etc/apt/sources.list.d/debian.sources).
ensure_deb_src() {
  if grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then return 0; fi
  [ "$(id -u)" -eq 0 ] || { echo "run-suites: apt-get source needs a deb-src entry (run as root)" >&2; exit 1; }
  cat >/etc/apt/sources.list.d/ferry-deb-src.sources <<'EOF'
# Added by ferry's tools/run-suites.sh: source packages for apt-get source.
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  apt-get -o DPkg::Lock::Timeout=900 update -qq
}

# Where the source tree of the source package behind an installed binary
# package is unpacked: <source>-<upstream version> (fetched or not).
source_dir() {
  local source version upstream
  source=$(dpkg-query -W -f='${source:Package}' "$1") || exit 1
  version=$(dpkg-query -W -f='${source:Version}' "$1")
  upstream=${version#*:}
  echo "$suites_dir/src/$source-${upstream%-*}"
}

# The source tree of the source package behind an installed binary package:
# prints its directory, fetched and unpacked (Debian patches applied) once.
source_tree() {
  local binary=$1 source version dir
  dir=$(source_dir "$binary") || exit 1
  if [ ! -d "$dir" ]; then
    source=$(dpkg-query -W -f='${source:Package}' "$binary")
    version=$(dpkg-query -W -f='${source:Version}' "$binary")
    ensure_deb_src
    mkdir -p "$suites_dir/src"
    (cd "$suites_dir/src" && apt-get source -qq "$source=$version" >"$source.log" 2>&1) ||
      { echo "run-suites: apt-get source $source=$version failed:" >&2; cat "$suites_dir/src/$source.log" >&2; exit 1; }
  fi
  echo "$dir"
}

# The first line of a program's output that tells why it failed.
first_error_line() {
  local out=$1 status=$2 line
  if [ "$status" = 124 ] || [ "$status" = 137 ]; then
    echo "timed out after ${FERRY_SUITES_TIMEOUT:-1800} s: $(tail -n 1 "$out")"
    return
  fi
  line=$(grep -m 1 -E 'ERROR|[Ee]rror|FAIL|[Ff]ail|[Aa]bort|Assertion|signal|Segmentation|not a netCDF' "$out" |
         grep -v -E 'no errors|with no error|0 failures')
  echo "${line:-exit status $status: $(tail -n 1 "$out")}" | cut -c1-200
}

# Appends to <results> one line per program the launcher ran into <logdir>:
# "<label><program> [<file> for serial runs]", passed or failed, and why.
record_runs() {
  local logdir=$1 label=$2 results=$3 n status np cwd command name
  [ -f "$logdir/runs.tsv" ] || return 0
  while IFS=$'\t' read -r n status np cwd command; do
    read -ra words <<<"$command"
    name=$(basename "${words[0]}")
    [ "$np" = serial ] && name+=" $(basename "${words[${#words[@]} - 1]}")"
    if [ "$status" = 0 ]; then
      printf '%s%s\tpassed\t\n' "$label" "$name" >>"$results"
    else
      printf '%s%s\tfailed\t%s\n' "$label" "$name" "$(first_error_line "$logdir/$n.out" "$status")" >>"$results"
    fi
  done <"$logdir/runs.tsv"
}

# The drop-in a ferry run preloads for one MPI (with its prefix).
preload_for() {
  local mpi=$1
  if [ -n "$dropin" ]; then
    echo "${preload_prefix}$dropin"
    return
  fi
  "$root_dir/tools/setup.sh" "release-$mpi" >&2 || exit 1 # its progress lines are not the path
  echo "$root_dir/build/release-$mpi/src/libferry-mpiio.so"
}

# One run of one suite in one mode; leaves <dir>/results.tsv: program, status, first error line.
run_once() {
  local suite=$1 mpi=$2 mode=$3 dir=$4 preload=""
  [ "$mode" = ferry ] && preload=$(preload_for "$mpi")
  rm -rf "$dir"
  mkdir -p "$dir/log"
  FERRY_SUITES_MPI=$mpi FERRY_SUITES_PRELOAD=$preload FERRY_SUITES_LOG="$dir/log" FERRY_STATS="json:$dir/stats.json" \
    "${suite}_run" "$mpi" "$dir" >"$dir/harness.out" 2>&1
  [ "$mode" = ferry ] && ! grep -qs '"file"' "$dir/stats.json" &&
    printf 'ferry\tfailed\tno FERRY_STATS record: the drop-in served no file\n' >>"$dir/results.tsv"
  touch "$dir/results.tsv"
}

# "PASS (n)" or "FAIL (k of n)" for a run directory.
verdict() {
  local results=$1/results.tsv total failed
  total=$(wc -l <"$results")
  failed=$(awk -F'\t' '$2 != "passed"' "$results" | wc -l)
  if [ "$failed" -eq 0 ] && [ "$total" -gt 0 ]; then echo "PASS ($total)"; else echo "FAIL ($failed of $total)"; fi
}

# "<mode>: `program`: first error line; ..." for the failures of a run directory.
failures() {
  awk -F'\t' -v mode="$2" '$2 != "passed" { printf "%s%s: `%s`: %s", sep, mode, $1, $3; sep = "; " }' \
    "$1/results.tsv" | tr '|' '/'
}

# Whether one suite is built for one MPI already (nothing fetched or built to tell).
suite_built() {
  local dir
  dir=$(source_dir "$("${1}_package" "$2")") || return 1
  [ -f "$suites_dir/build/$(basename "$dir")-$2/.built" ]
}

# Builds one suite for one MPI once, whoever else asks at the same time
# (another worktree's tools/run-tests.sh): one lock per build.
build_locked() {
  local suite=$1 mpi=$2
  mkdir -p "$suites_dir/build"
  (flock 9 && "${suite}_build" "$mpi") 9>"$suites_dir/build/.lock-$suite-$mpi"
}

# Runs one suite N times on both; prints the table rows; status 1 on any failure.
run_suite() {
  local suite=$1 mpi=$2 runs_dir=$3 run base line status=0
  for run in $(seq 1 "$runs"); do
    base="$runs_dir/$suite-$mpi-$run"
    [ "$run" -le "$host_runs" ] && run_once "$suite" "$mpi" host "$base-host"
    if [ "$host_only" = 1 ]; then
      echo "| $suite | $mpi | $run | $(verdict "$base-host") | not run | $(failures "$base-host" host) |"
      [[ "$(verdict "$base-host")" != PASS* ]] && status=1
      continue
    fi
    run_once "$suite" "$mpi" ferry "$base-ferry"
    if [ -d "$base-host" ]; then
      "${suite}_compare" "$mpi" "$base-host" "$base-ferry"
      line="| $suite | $mpi | $run | $(verdict "$base-host") | $(verdict "$base-ferry") |"
      line+=" $(failures "$base-host" host) $(failures "$base-ferry" ferry) |"
    else
      line="| $suite | $mpi | $run | not run | $(verdict "$base-ferry") | $(failures "$base-ferry" ferry) |"
    fi
    echo "$line"
    # ferry is judged: a host failure is the host's (OMPIO 4.1.4 fails testphdf5's atomicity test now and
    # then: it reads another rank's bytes in atomic mode), shown in the table but not failing the run.
    [[ "$(verdict "$base-ferry")" != PASS* ]] && status=1
    echo "run-suites: $suite $mpi run $run done ($(date +%T)): $base-*" >&2
  done
  return $status
}

main() {
  parse_arguments "$@"
  install_suite_packages
  local suite mpi status=0 rows=() runs_dir
  runs_dir="$suites_dir/runs/$(date +%Y%m%d-%H%M%S)-$$"
  for mpi in "${mpis[@]}"; do
    for suite in "${suites[@]}"; do
      if [ "$if_built" = 1 ] && ! suite_built "$suite" "$mpi"; then
        echo "run-suites: $suite is not built for $mpi (tools/run-suites.sh --build-only --mpi $mpi): skipped" >&2
        continue
      elif ! build_locked "$suite" "$mpi"; then
        rows+=("| $suite | $mpi | - | build failed | build failed | see $suites_dir/build |")
        status=1
      elif [ "$build_only" = 0 ]; then
        mapfile -t -O ${#rows[@]} rows < <(run_suite "$suite" "$mpi" "$runs_dir"; echo "status $?")
        [ "${rows[-1]}" = "status 0" ] || status=1
        unset 'rows[-1]'
      fi
    done
  done
  [ "$build_only" = 1 ] && return $status
  [ ${#rows[@]} -eq 0 ] && [ "$if_built" = 1 ] && return 77
  echo "| suite | MPI | run | host | ferry | failures (program: first error line) |"
  echo "|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  return $status
}

main "$@"; exit $?

#!/usr/bin/env bash
# Installs what ferry needs (Debian 12 packages) and builds one configuration.
#
# usage: tools/setup.sh <config>    config: openmpi | mpich | asan | release-openmpi | release-mpich
# FERRY_BUILD_JOBS=N limits the build to N parallel jobs (default: ninja's own).
# The build goes to build/<config>. When packages are missing and we are not
# root, prints the exact install command and exits 1.
set -euo pipefail

root_dir=$(cd "$(dirname "$0")/.." && pwd)
# The last four are the unmodified MPI-IO software the drop-in is tested with (tests/software/).
packages=(build-essential cmake ninja-build pkg-config python3 openmpi-bin libopenmpi-dev mpich libmpich-dev
          libhdf5-openmpi-dev libhdf5-mpich-dev libpnetcdf-dev python3-mpi4py)
packages+=(strace)  # issue 16: tools/bench/bench-container-syscalls.sh counts metadata system calls
packages+=(netcdf-bin pnetcdf-bin python3-netcdf4 python3-xarray python3-matplotlib python3-numpy)  # issue 17: checkpoint oracles (ncdump, ncvalidator, netCDF4/xarray) and plots
packages+=(python3-matplotlib)  # issue 18: tools/ferry-report draws the report's plots with it
packages+=(gfortran)  # issue 15: Fortran programs on the drop-in (tests/fortran), NAS BT-IO
packages+=(clang-format)  # issue 14: tools/checks/check-format.sh (git clang-format) checks that changed C lines follow .clang-format

install_missing_packages() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local cmd="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "ferry needs these Debian packages: ${missing[*]}" >&2
    echo "run as root:  $cmd" >&2
    exit 1
  fi
  echo "ferry: installing ${missing[*]}"
  # Several sessions may install at once: wait for dpkg's lock instead of failing.
  apt-get -o DPkg::Lock::Timeout=900 update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq "${missing[@]}" >/dev/null
}

configure_and_build() {
  local config=$1 args=()
  case "$config" in
    openmpi) args=(-DFERRY_MPI=openmpi -DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
    mpich) args=(-DFERRY_MPI=mpich -DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
    asan) args=(-DFERRY_MPI=openmpi -DFERRY_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug) ;;
    release-openmpi) args=(-DFERRY_MPI=openmpi -DCMAKE_BUILD_TYPE=Release -DFERRY_BUILD_TESTS=OFF) ;;
    release-mpich) args=(-DFERRY_MPI=mpich -DCMAKE_BUILD_TYPE=Release -DFERRY_BUILD_TESTS=OFF) ;;
    *) echo "unknown configuration '$config'" >&2; exit 2 ;;
  esac
  local log="$root_dir/build/$config.log"
  mkdir -p "$root_dir/build"
  if ! cmake -S "$root_dir" -B "$root_dir/build/$config" -G Ninja -DFERRY_WERROR=ON "${args[@]}" >"$log" 2>&1; then
    echo "ferry: configuring $config failed (whole log: build/$config.log):" >&2
    tail -n 40 "$log" >&2
    exit 1
  fi
  build_with_progress "$config" "$log"
}

# ninja, its "[done/total]" lines shown as a line at every 20%, everything kept
# in the log; when the build fails, the compiler's messages (the log without
# ninja's status lines) are printed.
build_with_progress() {
  local config=$1 log=$2 start=$SECONDS status=0
  ninja -C "$root_dir/build/$config" ${FERRY_BUILD_JOBS:+-j "$FERRY_BUILD_JOBS"} 2>&1 | tee -a "$log" | awk -v config="$config" '
    /^\[[0-9]+\/[0-9]+\] / { split(substr($1, 2), n, "/"); step = int(5 * n[1] / n[2])
      if (step > shown) { printf "ferry: building %s %3d%% (%s)\n", config, 20 * step, n[1] "/" n[2] + 0; fflush(); shown = step } }' \
    || status=$?
  if [ $status -ne 0 ]; then
    echo "ferry: building $config failed (whole log: build/$config.log); the compiler said:" >&2
    # ninja's part of the log, without its "[done/total] Building ..." lines
    sed -n '/^ninja: Entering directory/,$p' "$log" | grep -v -E '^(\[[0-9]+/[0-9]+\] |ninja: Entering)' | head -n 100 >&2
    exit 1
  fi
  echo "ferry: built $config in $((SECONDS - start)) s"
}

install_missing_packages
[ $# -ge 1 ] && configure_and_build "$1"
exit 0

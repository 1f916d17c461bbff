#!/bin/sh
# kill -9 during a checkpoint leaves the previous one valid and restart uses it.
# usage: ckpt_crash.sh <run_mpi.sh> <ckpt_crash> <scratch-dir>
# The writer (3 ranks) checkpoints back to back; each rank is killed with
# SIGKILL (by the process ids it wrote) 0-9 ms after the script saw a later
# checkpoint's temporary file, which must fall inside that checkpoint (the
# temporary file still exists afterwards; tried up to 20 times). The script
# polls without sleeping and the delay is short because a checkpoint lasts
# only some milliseconds: a fixed delay after step 1 often killed the writer
# before step 2 had begun, and 0-80 ms after the file appeared missed the
# checkpoint in 10 attempts of 10 on a fast machine. Then
# ferry-ckpt restarts on 2 ranks and checks every value of the step it found.
set -u
run_mpi=$1 program=$2 dir=$3
for attempt in $(seq 1 20); do
  rm -rf "$dir" && mkdir -p "$dir"
  "$run_mpi" 120 3 "$program" write "$dir" >"$dir/writer.log" 2>&1 &
  launcher=$!
  waited=0
  while [ ! -f "$dir/ready" ] && [ $waited -lt 600 ]; do sleep 0.1; waited=$((waited + 1)); done
  [ -f "$dir/ready" ] || { echo "ckpt_crash: the writer never finished step 1"; cat "$dir/writer.log"; exit 1; }
  pids=$(cat "$dir/pids")
  delay="0.00$(( $(od -An -N2 -tu2 /dev/urandom) % 10 ))"
  deadline=$(( $(date +%s) + 60 ))
  while ! ls "$dir"/*.tmp >/dev/null 2>&1 && [ "$(date +%s)" -lt $deadline ]; do :; done
  sleep "$delay"
  for pid in $pids; do kill -9 "$pid" 2>/dev/null; done
  wait $launcher 2>/dev/null
  ls "$dir"
  if ls "$dir"/*.tmp >/dev/null 2>&1; then
    echo "ckpt_crash: killed during a checkpoint (attempt $attempt)"
    "$run_mpi" 120 2 "$program" restart "$dir" || exit 1
    rm -rf "$dir"
    exit 0
  fi
  echo "ckpt_crash: killed between checkpoints, trying again"
done
echo "ckpt_crash: never killed inside a checkpoint in 20 attempts"
exit 1

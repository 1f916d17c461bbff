#!/bin/sh
# docs/hints.md must hold exactly the table ferry-bench prints from the hint table.
# usage: hints_doc_current.sh <run_mpi.sh> <ferry-bench> <docs/hints.md>
set -eu
run=$1; bench=$2; doc=$3
expected=$("$run" 60 1 "$bench" hints | grep '^|')
actual=$(grep '^|' "$doc")
if [ "$expected" != "$actual" ]; then
  echo "docs/hints.md is stale; regenerate its table with: ferry-bench hints" >&2
  echo "$expected" >&2
  exit 1
fi
echo "hints_doc_current: docs/hints.md matches the hint table"

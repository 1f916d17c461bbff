#!/usr/bin/env bash
# One markdown table of program by configuration from the run directories
# of tools/run-suites.sh (each holds results.tsv: program, passed|failed,
# first error line), with the number passed per column below it.
#
# usage: tools/suites/table.sh <label>=<run directory>...
#   e.g. tools/suites/table.sh OMPIO=runs/<a>/romio-openmpi-1-host "ROMIO 3.2.1=runs/<b>/romio-openmpi-1-host" ...
# A cell is "pass" or "fail: <first error line>"; a program missing from a run is "-".
set -euo pipefail

if [ $# -eq 0 ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
fi
for column in "$@"; do
  [ -f "${column#*=}/results.tsv" ] || { echo "table.sh: no ${column#*=}/results.tsv" >&2; exit 1; }
done

# Columns in the order given, programs in the order of the first run that names them.
labels="" files=()
for column in "$@"; do
  labels+="${column%%=*}"$'\t'
  files+=("${column#*=}/results.tsv")
done
# Each line prefixed with its column's number (an empty run is still a column).
for i in "${!files[@]}"; do sed "s/^/$((i + 1))\t/" "${files[$i]}"; done |
  awk -F'\t' -v labels="$labels" -v columns=${#files[@]} '
  {
    column = $1
    if (!($2 in known)) { known[$2] = 1; order[++programs] = $2 }
    cell = ($3 == "passed") ? "pass" : "fail: " $4
    gsub(/\|/, "/", cell)
    cells[$2, column] = cell
    if ($3 == "passed") passed[column]++
    total[column]++
  }
  END {
    column = columns
    split(labels, label, "\t")
    header = "| program |"; rule = "|---|"
    for (c = 1; c <= column; c++) { header = header " " label[c] " |"; rule = rule "---|" }
    print header; print rule
    for (p = 1; p <= programs; p++) {
      line = "| `" order[p] "` |"
      for (c = 1; c <= column; c++) line = line " " (((order[p], c) in cells) ? cells[order[p], c] : "-") " |"
      print line
    }
    line = "| passed |"
    for (c = 1; c <= column; c++) line = line " " passed[c] + 0 " of " total[c] + 0 " |"
    print line
  }'

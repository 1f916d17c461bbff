#!/usr/bin/env bash
# The house rules of docs/architecture.md that a program can check, run first
# by tools/run-tests.sh (so by CI): function size and parameter count, include
# directions between modules, and the tests of these two checkers. Python 3
# standard library only; a second or two.
#
# usage: tools/checks/check-rules.sh
set -uo pipefail
tools_dir=$(cd "$(dirname "$0")" && pwd)
status=0
out=$(python3 "$tools_dir/test_checks.py" 2>&1) || { echo "$out" >&2; status=1; }
python3 "$tools_dir/check_functions.py" | tail -1 || status=1
python3 "$tools_dir/check_includes.py" || status=1
[ $status -eq 0 ] || echo "ferry: house rules broken (docs/architecture.md, CONTRIBUTING.md)" >&2
exit $status

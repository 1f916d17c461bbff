#!/usr/bin/env bash
# Checks that the C lines changed since a base commit are formatted as
# .clang-format says (clang-format 14, Debian 12's clang-format package).
# Only changed lines: the tree as a whole is not reformatted (see .clang-format).
# Prints the diff that would fix them; exit 1 when there is one.
#
# usage: tools/checks/check-format.sh [base]     (default: the merge base with main)
#        git clang-format <base>          formats those lines in place instead
set -euo pipefail
cd "$(dirname "$0")/../.."
base=$(git merge-base "${1:-main}" HEAD)
# dropin_generated.c is written by tools/gen/gen_dropin.py, not by hand.
out=$(git clang-format --diff "$base" -- '*.c' '*.h' ':!src/dropin/dropin_generated.c' 2>&1) || true
case "$out" in
  "" | "no modified files to format" | "clang-format did not modify any files")
    echo "check_format: the C lines changed since ${base:0:12} are formatted" ;;
  *) echo "$out"; echo "check_format: run 'git clang-format ${base:0:12}' to format the lines above" >&2; exit 1 ;;
esac

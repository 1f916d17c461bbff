#!/bin/sh
# The command-line contract of a program of commands on tools/cli (issue 32
# item 5): --help (alone or after a command) prints usage on stdout, nothing
# on stderr, exit status 0; an unknown option, an unknown command, no command
# or a wrong number of arguments is refused on stderr, nothing on stdout,
# exit status 2. An MPI tool (RUN_MPI given, not "-") prints --help once
# under the launcher with 2 ranks.
# Before issue 32, ferry-container and ferry-ckpt printed usage on stderr
# with exit status 2 for --help.
#
# usage: tools_cli.sh RUN_MPI|- TOOL COMMAND...   (every command the tool has)
run_mpi=$1 tool=$2
shift 2
name=$(basename "$tool")
dir=$(mktemp -d "${FERRY_TEST_DIR:-/tmp}/ferry-tools-cli-XXXXXX") || exit 1
fail() { echo "FAIL tools_cli $name: $*"; echo "--- stdout"; cat "$dir/out"; echo "--- stderr"; cat "$dir/err"; rm -rf "$dir"; exit 1; }

# run STATUS ARGS...: runs the tool, checks its exit status
run() {
  want=$1
  shift
  "$tool" "$@" > "$dir/out" 2> "$dir/err"
  got=$?
  [ "$got" -eq "$want" ] || fail "'$name $*' exited $got, expected $want"
}
helps() { # ARGS... print help on stdout and nothing on stderr
  run 0 "$@"
  grep -q "^usage: " "$dir/out" || fail "'$name $*' printed no usage on stdout"
  [ -s "$dir/err" ] && fail "'$name $*' wrote to stderr"
  return 0
}
refuses() { # WHAT ARGS...: refused with a message containing WHAT on stderr, nothing on stdout
  what=$1
  shift
  run 2 "$@"
  grep -q -- "$what" "$dir/err" || fail "'$name $*' did not say \"$what\" on stderr"
  [ -s "$dir/out" ] && fail "'$name $*' wrote to stdout"
  return 0
}

helps --help
helps -h
for command in "$@"; do
  grep -q "^  $command " "$dir/out" || fail "'$name --help' does not list '$command'"
done
for command in "$@"; do
  helps "$command" --help
  grep -q "^usage: .*$name $command" "$dir/out" || fail "'$name $command --help' is not $command's usage"
  refuses "unknown option '--no-such-option'" "$command" --no-such-option "$dir/x"
  refuses "too few arguments" "$command"
done
refuses "unknown option '--no-such-option'" --no-such-option
refuses "unknown command 'no-such-command'" no-such-command
refuses "no command given"

# Under the launcher: one copy of the help, from rank 0.
[ "$run_mpi" = - ] && { rm -rf "$dir"; echo "tools_cli $name: passed"; exit 0; }
"$run_mpi" 60 2 "$tool" --help > "$dir/out" 2> "$dir/err" || fail "'$name --help' on 2 ranks exited $?"
copies=$(grep -c "^usage: $name <command>" "$dir/out")
[ "$copies" -eq 1 ] || fail "'$name --help' on 2 ranks printed the program's usage $copies times"
rm -rf "$dir"
echo "tools_cli $name: passed"

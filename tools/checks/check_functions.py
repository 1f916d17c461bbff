#!/usr/bin/env python3
"""Function size and parameter count of ferry's C code (docs/architecture.md).

usage: tools/checks/check_functions.py [--root DIR] [--report N] [--max-lines L] [--max-params P] [paths...]
       (default paths: src tools apps; exit 1 when a function breaks a limit
       and is not on the allowlist, or an allowlisted one no longer needs it)

A function's length is the number of lines from its name to its closing
brace, so a function that fits on a screen with its signature passes. Its
parameters are the entries of its parameter list ("void" is none, "..." is
one). The parser is a small lexer, not a compiler: it blanks comments,
strings and preprocessor lines, then takes every brace block at file level
that follows a parenthesised list as a function body. That is exact for
ferry's code, which has no K&R definitions and no braces inside macros at
file level.

Today's exceptions are listed in tools/checks/function-limits-allowlist.txt, one
`path:function` a line with a comment. The list may only shrink: an entry
whose function now fits, or no longer exists, is an error too, so the line
is deleted when the function is split.
"""
import argparse
import os
import re
import statistics
import sys

ALLOWLIST = os.path.join("tools", "checks", "function-limits-allowlist.txt")  # relative to the tree checked
MAX_LINES = 66  # the longest function when the limit was set (issue 14): none may grow past it
MAX_PARAMS = 6  # STYLE.md: "at most about six parameters: more means a context struct"

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
NOT_FUNCTIONS = {"if", "for", "while", "switch", "return", "sizeof", "_Alignof", "__attribute__"}


def blank_comments_and_literals(text):
    """text with comments, string and character literals and preprocessor
    lines replaced by spaces; newlines kept so positions keep their line."""
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#":
            # a directive, with its backslash continuations
            while i < n and not (text[i] == "\n" and text[i - 1] != "\\"):
                out.append("\n" if text[i] == "\n" else " ")
                i += 1
            continue
        if c == "/" and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        if c == "/" and text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (j - i - 1) + c)
            i = j + 1
            continue
        out.append(c)
        if c == "\n":
            at_line_start = True
        elif not c.isspace():
            at_line_start = False
        i += 1
    return "".join(out)


def matching(text, start, opening, closing, step):
    """Index of the bracket matching text[start], scanning by step (+1 or -1)."""
    depth = 0
    i = start
    while 0 <= i < len(text):
        if text[i] == opening:
            depth += 1
        elif text[i] == closing:
            depth -= 1
            if depth == 0:
                return i
        i += step
    return -1


def count_parameters(params):
    params = params.strip()
    if params in ("", "void"):
        return 0
    depth, count = 0, 1
    for c in params:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            count += 1
    return count


def functions_in(path):
    """(name, first line, last line, parameter count) of each function defined in path."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = blank_comments_and_literals(f.read())
    found = []
    i = 0
    while True:
        i = text.find("{", i)
        if i < 0:
            return found
        end = matching(text, i, "{", "}", 1)
        if end < 0:
            return found
        head = text[:i].rstrip()
        if head.endswith(")"):
            open_paren = matching(text, len(head) - 1, ")", "(", -1)
            name = IDENTIFIER.search(text[:open_paren].rstrip())
            if name and name.group(0) not in NOT_FUNCTIONS:
                first = text.count("\n", 0, name.start()) + 1
                last = text.count("\n", 0, end) + 1
                params = count_parameters(text[open_paren + 1:len(head) - 1])
                found.append((name.group(0), first, last, params))
        i = end + 1


def c_files(paths):
    for top in paths:
        if os.path.isfile(top):
            yield top
            continue
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(d for d in dirnames if d != "build" and not d.startswith("."))
            for name in sorted(filenames):
                if name.endswith((".c", ".h")):
                    yield os.path.join(dirpath, name)


def read_allowlist(path):
    """{'path:function': comment}; '#' lines and blank lines skipped."""
    allowed = {}
    if not os.path.exists(path):
        return allowed
    with open(path, encoding="utf-8") as f:
        for line in f:
            entry = line.split("#", 1)[0].strip()
            if entry:
                allowed[entry] = line.strip()
    return allowed


def measure(root, paths):
    """[(relative path, name, lines, params, first line)] over the C files under paths."""
    rows = []
    for path in c_files(paths):
        rel = os.path.relpath(path, root)
        for name, first, last, params in functions_in(path):
            rows.append((rel, name, last - first + 1, params, first))
    return rows


def report(rows, top):
    lengths = sorted(r[2] for r in rows)
    print(f"functions: {len(rows)}; lines: median {statistics.median(lengths):g}, "
          f"mean {statistics.mean(lengths):.1f}, 90th percentile {lengths[int(0.9 * (len(lengths) - 1))]}, "
          f"max {lengths[-1]}; over 40 lines: {sum(1 for n in lengths if n > 40)}")
    params = sorted(r[3] for r in rows)
    print(f"parameters: median {statistics.median(params):g}, max {params[-1]}; "
          f"over {MAX_PARAMS}: {sum(1 for p in params if p > MAX_PARAMS)}")
    if top:
        print(f"longest {top}:")
        for rel, name, lines, nparams, first in sorted(rows, key=lambda r: -r[2])[:top]:
            print(f"  {lines:4d} lines  {rel}:{first} {name}")
        print(f"most parameters {top}:")
        for rel, name, lines, nparams, first in sorted(rows, key=lambda r: -r[3])[:top]:
            print(f"  {nparams:4d} params {rel}:{first} {name}")


def violations(rows, max_lines, max_params, allowed):
    """The errors: functions over a limit and not allowlisted, and stale allowlist entries."""
    errors = []
    over = set()
    for rel, name, lines, params, first in rows:
        why = []
        if lines > max_lines:
            why.append(f"{lines} lines (limit {max_lines})")
        if params > max_params:
            why.append(f"{params} parameters (limit {max_params})")
        if not why:
            continue
        over.add(f"{rel}:{name}")
        if f"{rel}:{name}" not in allowed:
            errors.append(f"{rel}:{first}: {name}: {', '.join(why)}: split it, or pass a struct")
    for entry in sorted(set(allowed) - over):
        errors.append(f"{ALLOWLIST}: '{entry}' is within the limits now (or gone): "
                      "delete its line")
    return errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*", help="files or folders (default: src tools apps bench)")
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        help="the source tree whose allowlist applies (default: this checkout)")
    parser.add_argument("--report", type=int, default=0, metavar="N", help="also list the N longest functions")
    parser.add_argument("--max-lines", type=int, default=MAX_LINES)
    parser.add_argument("--max-params", type=int, default=MAX_PARAMS)
    args = parser.parse_args()
    paths = args.paths or [os.path.join(args.root, d) for d in ("src", "tools", "apps", "bench")]
    rows = measure(args.root, paths)
    if not rows:
        print("check_functions: no C functions found", file=sys.stderr)
        return 1
    report(rows, args.report)
    allowed = read_allowlist(os.path.join(args.root, ALLOWLIST)) if not args.paths else {}
    errors = violations(rows, args.max_lines, args.max_params, allowed)
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        return 1
    print(f"check_functions: every function within {args.max_lines} lines and {args.max_params} parameters"
          + (f" ({len(allowed)} allowlisted)" if allowed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())

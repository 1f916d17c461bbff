#!/usr/bin/env python3
"""Include directions between ferry's modules (docs/architecture.md).

usage: tools/checks/check_includes.py [--root DIR] [--graph]
       exit 1 when a module include closes a cycle and is not on the
       allowlist, when a file includes another module's private header
       (<module>/*_int.h), or when an allowlist line is no longer needed

A module is a folder under src/. Module A includes module B when a file under
src/A/ has `#include "B/..."` (a name without a folder counts when it lies
beside the including file). The modules and these includes form a graph;
every include edge inside a strongly connected part of it lies on a cycle.
The graph must be acyclic, except for the edges listed in
tools/checks/include-cycle-allowlist.txt (today's cycle, issue 14), one
`A -> B  # why` a line. That list may only shrink: a listed edge that is no
longer on a cycle is an error too, so its line is deleted when the cycle is
broken.

A private header, <module>/<name>_int.h, is for the module's own files and
its tests (tests/<module>/) only; other modules, tools, benchmarks and
applications include the module's public header.

Some modules may be included only by the modules named in INCLUDED_ONLY_BY:
core/ (the file object) only by the layers that create a file or run beside
it. The lists only shrink (issue 32 took coll/ and indep/ off core/'s: the
data path sees a request and its read-only target, request/request.h).

Every module has a row in the table of modules of docs/architecture.md
(a line starting "| `<module>/` |"), so a new module is described where the
rules are.

--graph prints the module graph instead (Markdown: floors, then a Mermaid
drawing) for docs/architecture.md.
"""
import argparse
import os
import re
import sys

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)
SCANNED = ("src", "tests", "tools", "bench", "apps")
ALLOWLIST = os.path.join("tools", "checks", "include-cycle-allowlist.txt")
ARCHITECTURE = os.path.join("docs", "architecture.md")
# {module: the modules that may include it}; every other includer fails.
INCLUDED_ONLY_BY = {
    "core": ("async", "mpiio", "sharedfp"),
}


def modules_of(root):
    src = os.path.join(root, "src")
    return sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)) and not d.startswith("."))


def c_files(root):
    for top in SCANNED:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = sorted(d for d in dirnames if d != "build" and not d.startswith("."))
            for name in sorted(filenames):
                if name.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(dirpath, name), root)


def owner(rel, modules):
    """The module a file belongs to (src/<m>/... or its tests, tests/<m>/...), else None."""
    parts = rel.split(os.sep)
    if len(parts) > 2 and parts[0] in ("src", "tests") and parts[1] in modules:
        return parts[1]
    return None


def included_module(root, rel, name, modules):
    """The module whose file `#include "name"` in rel names, else None (public or system headers)."""
    first = name.split("/", 1)[0]
    if "/" in name and first in modules:
        return first
    beside = os.path.normpath(os.path.join(os.path.dirname(rel), name))
    if os.path.exists(os.path.join(root, beside)):
        return owner(beside, modules) if beside.startswith("src" + os.sep) else None
    return None


def scan(root):
    """({(A, B): [site...]} between src modules, [private-header errors], modules)."""
    modules = modules_of(root)
    edges, errors = {}, []
    for rel in c_files(root):
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        me = owner(rel, modules)
        for match in INCLUDE.finditer(text):
            name = match.group(1)
            target = included_module(root, rel, name, modules)
            if target is None or target == me:
                continue
            site = f"{rel}:{text.count(chr(10), 0, match.start()) + 1}"
            if os.path.basename(name).endswith("_int.h"):
                errors.append(f"{site}: includes \"{name}\", module {target}'s private header: "
                              f"include its public header {target}/{target}.h (or move what you need there)")
            if rel.startswith("src" + os.sep) and me is not None:
                edges.setdefault((me, target), []).append(site)
    return edges, errors, modules


def strongly_connected(modules, edges):
    """{module: component id}: Tarjan's algorithm, iterative."""
    succ = {m: sorted(b for a, b in edges if a == m) for m in modules}
    index, low, comp, stack, on_stack = {}, {}, {}, [], set()
    counter = 0
    for start in modules:
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack.add(v)
            if i < len(succ[v]):
                work.append((v, i + 1))
                w = succ[v][i]
                if w not in index:
                    work.append((w, 0))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            for w in succ[v]:
                if w in on_stack:
                    low[v] = min(low[v], low[w])
            if low[v] == index[v]:
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp[w] = v
                    if w == v:
                        break
    return comp


def cycle_edges(modules, edges):
    comp = strongly_connected(modules, edges)
    return {e for e in edges if comp[e[0]] == comp[e[1]]}, comp


def path_back(edges, start, goal):
    """A shortest module path start -> ... -> goal (breadth first), for the message."""
    came = {start: None}
    todo = [start]
    while todo:
        v = todo.pop(0)
        if v == goal:
            path = []
            while v is not None:
                path.append(v)
                v = came[v]
            return path[::-1]
        for a, b in sorted(edges):
            if a == v and b not in came:
                came[b] = v
                todo.append(b)
    return [start, goal]


def read_allowlist(path):
    """{(A, B): line}; '#' comments and blank lines skipped."""
    allowed = {}
    if not os.path.exists(path):
        return allowed
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            entry = line.split("#", 1)[0].strip()
            if not entry:
                continue
            parts = [p.strip() for p in entry.split("->")]
            if len(parts) != 2 or not all(parts):
                raise SystemExit(f"{path}:{number}: expected 'A -> B  # why', got: {line.strip()}")
            allowed[tuple(parts)] = line.strip()
    return allowed


def culprits(edges, modules, allowed, new):
    """The new cycle edges whose removal leaves the fewest new cycle edges: one
    include reaching up pulls many edges below it onto the cycle."""
    left = {}
    for e in new:
        rest = {k: v for k, v in edges.items() if k != e}
        left[e] = len(cycle_edges(modules, rest)[0] - set(allowed))
    fewest = min(left.values())
    return sorted(e for e in new if left[e] == fewest)


def violations(edges, modules, allowed):
    cyclic, _ = cycle_edges(modules, edges)
    errors = []
    new = cyclic - set(allowed)
    if len(new) > 1:
        for a, b in culprits(edges, modules, allowed, new):
            errors.append(f"{edges[(a, b)][0]}: this include of {b}/ from {a}/ most likely closes the cycles "
                          f"below (without it, the fewest new cycle edges remain)")
    for a, b in sorted(new):
        loop = " -> ".join([a] + path_back(edges, b, a))
        errors.append(f"{edges[(a, b)][0]}: module include cycle {loop}: the include of {b}/ from {a}/ is new; "
                      f"include in the direction of docs/architecture.md, or move the shared piece down")
    for a, b in sorted(set(allowed) - cyclic):
        errors.append(f"{ALLOWLIST}: '{a} -> {b}' is no longer on an include cycle: delete its line")
    return errors


def restricted(edges):
    """Errors for the includes of a module from one not in its INCLUDED_ONLY_BY list."""
    return [f"{sites[0]}: includes {b}/, which only {', '.join(INCLUDED_ONLY_BY[b])} may include "
            f"(tools/checks/check_includes.py, INCLUDED_ONLY_BY): use what it builds on (base/, a module's public header)"
            for (a, b), sites in sorted(edges.items()) if b in INCLUDED_ONLY_BY and a not in INCLUDED_ONLY_BY[b]]


def undescribed(root, modules):
    """Errors for the modules without a row in docs/architecture.md's table of modules."""
    path = os.path.join(root, ARCHITECTURE)
    if not os.path.exists(path):
        return [f"{ARCHITECTURE}: missing: it describes the modules and these rules"]
    with open(path, encoding="utf-8") as f:
        rows = {line.split("|")[1].strip() for line in f if line.startswith("| `")}
    return [f"{ARCHITECTURE}: module {m}/ has no row in the table of modules: add one (CONTRIBUTING.md)"
            for m in modules if f"`{m}/`" not in rows]


def floors(modules, edges):
    """{module: floor}: 1 for a module that includes no other, else one above the highest it includes
    (a cycle's modules share one floor)."""
    _, comp = cycle_edges(modules, edges)
    floor = {}

    def of(c, seen=()):
        if c in floor:
            return floor[c]
        below = {comp[b] for a, b in edges if comp[a] == c and comp[b] != c}
        floor[c] = 1 + max((of(d) for d in below), default=0)
        return floor[c]

    return {m: of(comp[m]) for m in modules}


def print_graph(modules, edges):
    cyclic, _ = cycle_edges(modules, edges)
    floor = floors(modules, edges)
    print("| floor | module | includes | included by |")
    print("|---|---|---|---|")
    for m in sorted(modules, key=lambda m: (-floor[m], m)):
        out = ", ".join(b + ("*" if (m, b) in cyclic else "") for a, b in sorted(edges) if a == m)
        into = ", ".join(a for a, b in sorted(edges) if b == m)
        print(f"| {floor[m]} | {m} | {out or '-'} | {into or '-'} |")
    print()
    print("```mermaid")
    print("graph TD")
    for a, b in sorted(edges):
        print(f"  {a} {'-.->' if (a, b) in cyclic else '-->'} {b}")
    for m in modules:
        if not any(m in e for e in edges):
            print(f"  {m}")
    print("```")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        help="the source tree (default: this checkout)")
    parser.add_argument("--graph", action="store_true", help="print the module graph (Markdown) and exit")
    args = parser.parse_args()
    edges, errors, modules = scan(args.root)
    if args.graph:
        print_graph(modules, edges)
        return 0
    allowed = read_allowlist(os.path.join(args.root, ALLOWLIST))
    errors += violations(edges, modules, allowed) + restricted(edges) + undescribed(args.root, modules)
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        return 1
    print(f"check_includes: {len(modules)} modules, {len(edges)} include edges, no new cycle"
          + (f" ({len(allowed)} known cycle edges allowlisted, issue 14)" if allowed else "")
          + ", no private header included from outside its module, no restricted module included from outside"
          + " its list, every module described")
    return 0


if __name__ == "__main__":
    sys.exit(main())

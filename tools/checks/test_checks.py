#!/usr/bin/env python3
"""Tests of the house-rule checkers (tools/checks/check_functions.py, tools/checks/check_includes.py):
each must pass on a clean tree and fail, naming the culprit, on a planted
violation. Run by tools/checks/check-rules.sh (so by tools/run-tests.sh).

usage: tools/checks/test_checks.py [-v]
"""
import os
import subprocess
import sys
import tempfile
import unittest

TOOLS = os.path.dirname(os.path.abspath(__file__))


def run(checker, root, *args):
    """(exit status, stdout + stderr) of tools/<checker> on the tree at root."""
    p = subprocess.run([sys.executable, os.path.join(TOOLS, checker), "--root", root, *args],
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout + p.stderr


class Tree:
    """A scratch source tree: write(path, text) creates files under it."""

    def __init__(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="ferry-checks-")
        self.root = self.tmp.name
        os.makedirs(os.path.join(self.root, "tools"))

    def write(self, rel, text):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    def close(self):
        self.tmp.cleanup()


def function(name, body_lines, params="int a"):
    body = "".join(f"    a += {i}; /* {{ not a brace */\n" for i in range(body_lines))
    return f"static int {name}({params})\n{{\n{body}    return a;\n}}\n"


class FunctionLimits(unittest.TestCase):
    def setUp(self):
        self.tree = Tree()
        self.tree.write("src/m/m.c", function("fits", 62) + 'static const char *s = "}{";\n')

    def tearDown(self):
        self.tree.close()

    def test_clean_tree_passes(self):
        status, out = run("check_functions.py", self.tree.root)
        self.assertEqual(status, 0, out)
        self.assertIn("max 66", out)  # 62 body lines + name, two braces, return

    def test_long_function_fails(self):
        self.tree.write("src/m/long.c", function("too_long", 63))
        status, out = run("check_functions.py", self.tree.root)
        self.assertEqual(status, 1, out)
        self.assertIn("src/m/long.c:1: too_long: 67 lines (limit 66)", out)

    def test_many_parameters_fail(self):
        self.tree.write("src/m/wide.c", function("wide", 1, ", ".join(f"int a{i}" for i in range(7))))
        status, out = run("check_functions.py", self.tree.root)
        self.assertEqual(status, 1, out)
        self.assertIn("wide: 7 parameters (limit 6)", out)

    def test_allowlisted_passes_and_stale_entry_fails(self):
        self.tree.write("src/m/wide.c", function("wide", 1, ", ".join(f"int a{i}" for i in range(7))))
        self.tree.write("tools/checks/function-limits-allowlist.txt", "src/m/wide.c:wide  # 7: planted\n")
        status, out = run("check_functions.py", self.tree.root)
        self.assertEqual(status, 0, out)
        self.tree.write("src/m/wide.c", function("wide", 1, "int a"))
        status, out = run("check_functions.py", self.tree.root)
        self.assertEqual(status, 1, out)
        self.assertIn("'src/m/wide.c:wide' is within the limits now", out)


class IncludeDirections(unittest.TestCase):
    def setUp(self):
        self.tree = Tree()
        self.tree.write("src/low/low.h", "#pragma once\n")
        self.tree.write("src/low/low_int.h", "#pragma once\n")
        self.tree.write("src/mid/mid.h", '#include "low/low.h"\n')
        self.tree.write("src/top/top.c", '#include "mid/mid.h"\n#include "low/low.h"\n#include <stdio.h>\n')
        self.tree.write("docs/architecture.md", "| module | job |\n|---|---|\n" +
                        "".join(f"| `{m}/` | the {m} |\n" for m in ("top", "mid", "low")))

    def tearDown(self):
        self.tree.close()

    def test_acyclic_tree_passes(self):
        status, out = run("check_includes.py", self.tree.root)
        self.assertEqual(status, 0, out)
        self.assertIn("3 modules, 3 include edges, no new cycle", out)

    def test_new_cycle_fails(self):
        self.tree.write("src/low/low.c", '\n/* reaches back up */\n#include "top/top.h"\n')
        status, out = run("check_includes.py", self.tree.root)
        self.assertEqual(status, 1, out)
        self.assertIn("src/low/low.c:3: module include cycle low -> top -> low", out)
        self.assertIn("src/low/low.c:3: this include of top/ from low/ most likely closes the cycles", out)
        self.assertNotIn("this include of low/ from mid/", out)

    def test_allowlisted_cycle_passes_but_a_new_edge_on_it_fails(self):
        self.tree.write("src/low/low.c", '#include "mid/mid.h"\n')
        self.tree.write("tools/checks/include-cycle-allowlist.txt", "low -> mid  # planted\nmid -> low  # planted\n")
        status, out = run("check_includes.py", self.tree.root)
        self.assertEqual(status, 0, out)
        self.tree.write("src/low/more.c", '#include "top/top.h"\n')
        status, out = run("check_includes.py", self.tree.root)
        self.assertEqual(status, 1, out)
        self.assertIn("module include cycle low -> top -> low", out)
        self.assertIn("module include cycle top -> low -> top", out)  # top -> low now closes a cycle too
        self.assertNotIn("low -> mid -> low", out)

    def test_stale_allowlist_entry_fails(self):
        self.tree.write("tools/checks/include-cycle-allowlist.txt", "mid -> low  # no cycle any more\n")
        status, out = run("check_includes.py", self.tree.root)
        self.assertEqual(status, 1, out)
        self.assertIn("'mid -> low' is no longer on an include cycle: delete its line", out)

    def test_private_header_from_another_module_fails(self):
        self.tree.write("src/top/peek.c", '#include "low/low_int.h"\n')
        self.tree.write("tests/low/low_test.c", '#include "low/low_int.h"\n')  # a module's own tests may
        status, out = run("check_includes.py", self.tree.root)
        self.assertEqual(status, 1, out)
        self.assertIn("src/top/peek.c:1: includes \"low/low_int.h\", module low's private header", out)
        self.assertNotIn("low_test.c", out)

    def test_core_included_from_outside_its_list_fails(self):
        self.tree.write("src/core/core.h", "#pragma once\n")
        self.tree.write("src/mpiio/open.c", '#include "core/core.h"\n')  # on the list
        self.tree.write("src/low/alloc.c", '#include <stdlib.h>\n#include "core/core.h"\n')
        status, out = run("check_includes.py", self.tree.root)
        self.assertEqual(status, 1, out)
        self.assertIn("src/low/alloc.c:2: includes core/, which only", out)
        self.assertNotIn("src/mpiio/open.c", out)

    def test_data_path_including_core_fails(self):
        """coll/ and indep/ see a request and its target (request/), never the file object (issue 32)."""
        self.tree.write("src/core/core.h", "#pragma once\n")
        self.tree.write("src/coll/coll.h", '#include "core/core.h"\n')
        self.tree.write("src/indep/indep.c", '#include "core/core.h"\n')
        status, out = run("check_includes.py", self.tree.root)
        self.assertEqual(status, 1, out)
        self.assertIn("src/coll/coll.h:1: includes core/, which only async, mpiio, sharedfp may include", out)
        self.assertIn("src/indep/indep.c:1: includes core/, which only", out)

    def test_undescribed_module_fails(self):
        self.tree.write("src/new/new.c", '#include "low/low.h"\n')
        status, out = run("check_includes.py", self.tree.root)
        self.assertEqual(status, 1, out)
        self.assertIn("module new/ has no row in the table of modules", out)

    def test_graph_lists_floors(self):
        status, out = run("check_includes.py", self.tree.root, "--graph")
        self.assertEqual(status, 0, out)
        self.assertIn("| 3 | top | low, mid | - |", out)
        self.assertIn("| 1 | low | - | mid, top |", out)


if __name__ == "__main__":
    unittest.main()

"""The fields every ferry-bench JSON result must have (docs/report.md).

check(doc) returns the list of problems, empty when the document is
complete: every field present with its type, every result row with at
least one contender, and ratios wherever a ferry contender meets another.
"""

NUMBER = (int, float)

TOP = {"schema": str, "workload": str, "command": str, "launcher": str, "started": str, "seconds": NUMBER,
       "environment": dict, "host_mpi": dict, "parameters": dict, "results": list, "failed": bool}
ENVIRONMENT = {"hostname": str, "kernel": str, "cpus": NUMBER, "ranks": NUMBER, "dir": str, "fs_type": str,
               "ferry_version": str, "ferry_hints_file": str, "load_start": NUMBER + (type(None),),
               "load_end": NUMBER + (type(None),)}
HOST_MPI = {"name": str, "version": str, "io": str, "library": str}
ROW = {"table": str, "case": str, "op": str, "unit": str, "higher_is_better": bool, "contenders": dict,
       "ratios": dict, "extra": dict}
UNITS = {"MiB/s", "GB/s", "fraction", "s", "ms", "us", "ns", "MiB"}  # MiB: memory held, lower is better


def _fields(obj, spec, where, problems):
    for key, kind in spec.items():
        if key not in obj:
            problems.append("%s: no field '%s'" % (where, key))
        elif not isinstance(obj[key], kind) or (kind is NUMBER and isinstance(obj[key], bool)):
            problems.append("%s: '%s' is %s" % (where, key, type(obj[key]).__name__))


def _numbers(mapping, where, problems, allow_null):
    for key, value in mapping.items():
        if not (isinstance(value, NUMBER) and not isinstance(value, bool)) and not (allow_null and value is None):
            problems.append("%s: '%s' is not a number" % (where, key))


def _row(row, i, problems):
    where = "results[%d]" % i
    missing = []
    _fields(row, ROW, where, missing)
    problems += missing
    if missing:
        return
    if row["unit"] not in UNITS:
        problems.append("%s: unknown unit '%s'" % (where, row["unit"]))
    if not row["contenders"]:
        problems.append("%s: no contender" % where)
    _numbers(row["contenders"], where + ".contenders", problems, allow_null=True)
    _numbers(row["ratios"], where + ".ratios", problems, allow_null=True)
    _numbers(row["extra"], where + ".extra", problems, allow_null=True)
    names = list(row["contenders"])
    ferries = [n for n in names if n.startswith("ferry")]
    others = [n for n in names if not n.startswith("ferry")]
    for f in ferries:
        for o in others:
            if "%s/%s" % (f, o) not in row["ratios"]:
                problems.append("%s: no ratio %s/%s" % (where, f, o))


def check(doc):
    problems = []
    if not isinstance(doc, dict):
        return ["not a JSON object"]
    _fields(doc, TOP, "top level", problems)
    if problems:
        return problems
    if doc["schema"] != "ferry-bench/1":
        problems.append("schema is '%s', not ferry-bench/1" % doc["schema"])
    _fields(doc["environment"], ENVIRONMENT, "environment", problems)
    _fields(doc["host_mpi"], HOST_MPI, "host_mpi", problems)
    if not doc["results"]:
        problems.append("no results")
    for i, row in enumerate(doc["results"]):
        _row(row, i, problems)
    return problems

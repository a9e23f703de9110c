#!/usr/bin/env python3
"""Time and peak memory of `perfsim import --perfmon`, `perfsim redact` and `perfsim series` as
their inputs grow (issue 44: each was quadratic in columns or instances). For each size N:

- import, three shapes of a two-row perfmon log of N columns: "instances" (one counter of N
  Process instances, as relog -c "\\Process(*)\\..." writes them), "objects" (N objects the
  profile does not know, one counter each) and "counters" (one custom object with N counters);
- redact and series on the capture the "instances" import made (N instances of Process), series
  asking for `\\Process(*)\\% Processor Time` (N columns).

Each run is a child process: wall seconds and its own peak RSS (wait4's ru_maxrss). Linear means
the time and RSS columns grow by about the factor N grows (x10 per row below), not its square.

usage: scale_inputs.py [--perfsim build/cli/perfsim] [--sizes 10000,100000,1000000]
                       [--only import,redact,series] [--dir /tmp] [--timeout 600]
Prints a table and one JSON line: {"bench": "scale_inputs", "rows": [...]}.
"""
import argparse
import json
import os
import shlex
import subprocess
import tempfile
import time

HEAD = '"(PDH-CSV 4.0) (Coordinated Universal Time)(0)"'
TIMES = ['"01/02/2026 00:00:00.000"', '"01/02/2026 00:00:15.000"']


def column(shape, i):
    if shape == "instances":
        return f"\\\\BENCHHOST\\Process(app{i})\\% Processor Time"
    if shape == "objects":
        return f"\\\\BENCHHOST\\Bench Object {i}\\Count"
    return f"\\\\BENCHHOST\\Bench Counters\\Count {i}"


def write_log(path, shape, n):
    with open(path, "w", encoding="utf-8", newline="\r\n") as f:
        f.write(HEAD + "".join(',"' + column(shape, i) + '"' for i in range(n)) + "\n")
        for r, t in enumerate(TIMES):
            f.write(t + "".join(f',"{(i + r) % 100}"' for i in range(n)) + "\n")


def run(cmd, timeout):
    """(wall seconds, peak RSS KiB, exit code) of one child; stdout discarded."""
    start = time.monotonic()
    with open(os.devnull, "wb") as null:
        p = subprocess.Popen(["timeout", str(timeout)] + cmd, stdout=null, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - start
    err = p.stderr.read().decode(errors="replace").strip()
    p.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        print(f"  exit {code}: {' '.join(cmd)}\n  {err[-400:]}")
    return wall, usage.ru_maxrss, code


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perfsim", default="build/cli/perfsim")
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--only", default="import,redact,series")
    ap.add_argument("--dir", default=tempfile.gettempdir())
    ap.add_argument("--timeout", type=int, default=600)
    args = ap.parse_args()
    exe = shlex.split(args.perfsim)
    only = set(args.only.split(","))
    rows = []
    work = tempfile.mkdtemp(prefix="perfsim-scale-", dir=args.dir)
    print(f"{'run':<28}{'N':>10}{'MB in':>9}{'seconds':>10}{'peak RSS MiB':>14}")

    def row(name, n, size, measured):
        wall, rss, code = measured
        rows.append({"run": name, "n": n, "input_bytes": size, "seconds": round(wall, 3),
                     "peak_rss_kib": rss, "exit": code})
        print(f"{name:<28}{n:>10}{size / 1e6:>9.1f}{wall:>10.2f}{rss / 1024:>14.1f}" +
              ("" if code == 0 else f"  (exit {code})"))

    for n in [int(s) for s in args.sizes.split(",")]:
        for shape in ("instances", "objects", "counters"):
            log = os.path.join(work, f"{shape}-{n}.csv")
            cap = os.path.join(work, f"{shape}-{n}.perfcap")
            write_log(log, shape, n)
            if "import" in only or shape == "instances":
                row(f"import --perfmon ({shape})", n, os.path.getsize(log),
                    run(exe + ["import", "--perfmon", log, "-o", cap], args.timeout))
            os.remove(log)
            if shape != "instances" or not os.path.exists(cap):
                if os.path.exists(cap):
                    os.remove(cap)
                continue
            size = os.path.getsize(cap)
            if "redact" in only:
                out = os.path.join(work, f"redacted-{n}.perfcap")
                row("redact", n, size, run(exe + ["redact", cap, "-o", out], args.timeout))
                for p in (out, os.path.join(work, f"redacted-{n}.map.json")):
                    if os.path.exists(p):
                        os.remove(p)
            if "series" in only:
                row("series \\Process(*)\\...", n, size,
                    run(exe + ["series", cap, "-c", "\\Process(*)\\% Processor Time"], args.timeout))
            os.remove(cap)
    os.rmdir(work)
    print(json.dumps({"bench": "scale_inputs", "rows": rows}))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Multi-core scaling of `perfsim serve` (issue 35): the same `perfsim load` against `perfsim serve
--threads T` for T = 1, 2, 4, 8 (those up to the cores there are), in one run; calls/s as a ratio
to T x the 1-thread calls/s of the same round (1.0 = linear; the goal is >= 0.8).

Needs only the perfsim binary (and python3's standard library): `--perfsim "CMD..."` is a command
prefix, e.g. `--perfsim "./lib/ld-linux-x86-64.so.2 --library-path lib ./perfsim"`. The served host
is made with `perfsim synth --profile 2016` (no data files needed), H hosts of it on loopback
addresses 127.77.0.1.. in a fleet file, frozen timeline (recorded answers), so the server's work is
the calls', not a timeline's.

Separation: with taskset and more cores than T, the server runs on cores 0..T-1 and the load on the
rest (the load gets `--threads` = 4 per core it has), so neither steals the other's cores; where
the cores do not suffice (T = all of them) both run unpinned and the row says "shared". Each row
also gives the server's CPU use in cores (utime + stime from /proc over the load's run): near T
means the server was saturated; well under T means the load generator was the limit, and that
row's ratio says nothing about the server.

Prints a table and one JSON line: {"bench": "scaling", "rows": [...], ...}.
usage: scaling.py [--perfsim CMD] [--threads 1,2,4,8] [--seconds 5] [--rounds 1] [--hosts 16]
                  [--collectors 8] [--query 238] [--capture F.perfcap] [--no-taskset] [--serve-args "..."]
"""
import argparse
import json
import os
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """utime + stime of a process (all its threads), from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def free_port(address):
    with socket.socket() as s:
        s.bind((address, 0))
        return s.getsockname()[1]


def cores_available():
    return sorted(os.sched_getaffinity(0))


def pinned(cmd, cores, use_taskset):
    if not use_taskset or not cores:
        return cmd
    return ["taskset", "-c", ",".join(str(c) for c in cores)] + cmd


def start_server(perfsim, fleet, hosts, threads, cores, use_taskset, err, extra):
    cmd = pinned(perfsim + ["serve", "--fleet", fleet, "--threads", str(threads), "--json"] + extra,
                 cores, use_taskset)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True)
    listening = 0
    deadline = time.monotonic() + 60
    while listening < hosts:
        line = p.stdout.readline()
        if not line or time.monotonic() > deadline:
            p.kill()
            p.wait()
            raise SystemExit(f"perfsim serve --threads {threads} did not list its {hosts} hosts: {' '.join(cmd)}")
        if json.loads(line).get("event") == "listening":
            listening += 1
    return p


def one_row(args, perfsim, fleet, threads, cores, use_taskset, workdir):
    server_cores = cores[:threads] if len(cores) > threads else []
    load_cores = cores[threads:] if server_cores else []
    shared = not server_cores
    load_threads = 4 * (len(load_cores) or len(cores))
    with open(os.path.join(workdir, f"serve-{threads}.err"), "a") as err:
        server = start_server(perfsim, fleet, args.hosts, threads, server_cores, use_taskset, err,
                              shlex.split(args.serve_args))
        try:
            cpu0, t0 = cpu_seconds(server.pid), time.monotonic()
            load = subprocess.run(
                pinned(perfsim + ["load", fleet, "--collectors", str(args.collectors), "--duration",
                                  str(args.seconds), "--query", args.query, "--threads", str(load_threads),
                                  "--json"], load_cores, use_taskset),
                capture_output=True, text=True, timeout=args.seconds + 120)
            cpu1, t1 = cpu_seconds(server.pid), time.monotonic()
        finally:
            server.terminate()
            server.wait(timeout=30)
    if load.returncode != 0:
        raise SystemExit(f"perfsim load failed ({load.returncode}) against --threads {threads}:\n{load.stderr}"
                         f"{load.stdout[-2000:]}")
    r = json.loads(load.stdout)
    o = r["overall"]
    return {"threads": threads, "calls_per_s": o["calls_per_s"], "calls": o["calls"],
            "p50_ms": o["latency_ms"]["p50"], "p99_ms": o["latency_ms"]["p99"],
            "server_cpu_cores": round((cpu1 - cpu0) / (t1 - t0), 2), "load_threads": load_threads,
            "server_cores": server_cores, "load_cores": load_cores, "shared": shared}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--perfsim", default="perfsim", help="command prefix that runs perfsim")
    ap.add_argument("--threads", default="1,2,4,8", help="server thread counts (those above the cores are left out)")
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--rounds", type=int, default=1, help="each T once per round; figures are medians")
    ap.add_argument("--hosts", type=int, default=16)
    ap.add_argument("--collectors", type=int, default=8, help="sessions per host")
    ap.add_argument("--query", default="238", help="value each poll reads (238: small calls; Global: ~1 MB)")
    ap.add_argument("--capture", help="capture to serve (default: perfsim synth --profile 2016)")
    ap.add_argument("--no-taskset", action="store_true", help="run server and load unpinned")
    ap.add_argument("--serve-args", default="", help="more `perfsim serve` options, e.g. \"--journal-size 0\"")
    args = ap.parse_args()

    perfsim = shlex.split(args.perfsim)
    cores = cores_available()
    use_taskset = not args.no_taskset and shutil.which("taskset") is not None
    wanted = [int(t) for t in args.threads.split(",")]
    threads = [t for t in wanted if t <= len(cores)]
    if 1 not in threads:
        threads = [1] + threads  # the baseline
    with tempfile.TemporaryDirectory(prefix="perfsim-scaling-") as d:
        capture = args.capture
        if not capture:
            capture = os.path.join(d, "host.perfcap")
            subprocess.run(perfsim + ["synth", "--profile", "2016", "-o", capture], check=True,
                           stdout=subprocess.DEVNULL)
        fleet = os.path.join(d, "fleet.toml")
        with open(fleet, "w") as f:
            f.write(f'[[host]]\naddresses = "127.77.0.0/24"\nport = {free_port("127.77.0.1")}\n'
                    f'count = {args.hosts}\nname = "SCALE-{{n}}"\ncapture = "{capture}"\ntimeline = "frozen:0"\n')
        rows = {t: [] for t in threads}
        for rnd in range(args.rounds):
            for t in (threads if rnd % 2 == 0 else list(reversed(threads))):  # alternate the order
                rows[t].append(one_row(args, perfsim, fleet, t, cores, use_taskset, d))

    base = statistics.median(r["calls_per_s"] for r in rows[1])
    out = []
    print(f"perfsim serve scaling: {len(cores)} cores, {args.hosts} hosts x {args.collectors} collectors, "
          f"query {args.query}, {args.seconds:g} s x {args.rounds} round(s)")
    print(f"{'threads':>7} {'calls/s':>10} {'ratio':>6} {'p50 ms':>7} {'p99 ms':>7} {'server cpu':>10} "
          f"{'load thr':>8}  placement")
    for t in threads:
        rs = rows[t]
        cps = statistics.median(r["calls_per_s"] for r in rs)
        ratio = cps / (t * base) if base else 0.0
        row = {"threads": t, "calls_per_s": round(cps, 1), "ratio_to_linear": round(ratio, 3),
               "ratios_per_round": [round(r["calls_per_s"] / (t * b["calls_per_s"]), 3)
                                    for r, b in zip(rs, rows[1])],
               "p50_ms": statistics.median(r["p50_ms"] for r in rs),
               "p99_ms": statistics.median(r["p99_ms"] for r in rs),
               "server_cpu_cores": statistics.median(r["server_cpu_cores"] for r in rs),
               "load_threads": rs[0]["load_threads"], "server_cores": rs[0]["server_cores"],
               "load_cores": rs[0]["load_cores"], "shared": rs[0]["shared"]}
        out.append(row)
        place = "shared (too few cores to separate)" if row["shared"] else \
            f"server {row['server_cores'][0]}-{row['server_cores'][-1]}, load {row['load_cores'][0]}-{row['load_cores'][-1]}" \
            if use_taskset else "unpinned"
        print(f"{t:>7} {cps:>10.0f} {ratio:>6.2f} {row['p50_ms']:>7.3f} {row['p99_ms']:>7.3f} "
              f"{row['server_cpu_cores']:>10.2f} {row['load_threads']:>8}  {place}")
    print(json.dumps({"bench": "scaling", "cores": len(cores), "hosts": args.hosts, "collectors": args.collectors,
                      "query": args.query, "serve_args": args.serve_args, "seconds": args.seconds, "rounds": args.rounds,
                      "taskset": use_taskset, "rows": out}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""A python3-samba collector that reads two hosts served from one capture, A with an event on its
timeline (replayer/events.h) and B without, across the event (issue 31, part 2). The layouts and
formulas below are written from Microsoft's documentation of the structures and counter types
(PERF_DATA_BLOCK, PERF_OBJECT_TYPE, PERF_ELAPSED_TIME: elapsed = (object PerfTime - data) /
object PerfFreq; PERF_COUNTER_COUNTER: a 32-bit count, rate = delta / time), not taken from perfsim.

  collector_events.py [--address A] --a PORT --b PORT --out FILE reboot --speed S --poll P --tries N
      reads A and B (Global), then polls A every P real seconds on the same connection until a
      call fails (the reset: at most N polls), then connects again every P seconds until Global
      answers (at most N tries, or --reconnects R) and reads A and B again.
  collector_events.py --a PORT --b PORT --out FILE wrap --reads N
      A and B on step timelines: reads Global of each N times in lockstep (sample k at the k-th read).
  collector_events.py --a PORT --b PORT --out FILE reads --reads N
      the same reads; reports each read's objects, its Process instances in order, named as PDH
      names duplicates (Microsoft, Handling Duplicate Instance Names: svchost, svchost#1, ...), with
      their ids and elapsed times, and Thread instances whose parent lies outside the Process object.
  collector_events.py --a PORT --b PORT --out FILE names --reads N
      the same reads, each after reading A's names as a collector refreshing them does: Counter 009
      and Help 009 (HKEY_PERFORMANCE_DATA), and over HKEY_LOCAL_MACHINE Perflib's Last Counter and
      Last Help and Perflib\\009's Counter (Microsoft, Retrieving Counter Names and Help Text;
      MS-RRP 3.1.5.17 BaseRegQueryValue); Global is named with the table just read.
Writes a JSON summary (see each mode). Exit status: 0 done (the caller judges), 2 bad use,
3 python3-samba missing.
"""
import argparse
import json
import struct
import sys
import time

from collector_formatted import connect_hkpd, names_009, query  # exits 3 without python3-samba

PERF_DELTA_COUNTER = 0x00400000
PERF_COUNTER_BASE = 0x00030000
SUBTYPE = 0x00070000
PERF_ELAPSED_TIME = 0x30240500
PERF_COUNTER_RAWCOUNT = 0x00010000


def cumulative(ctype, previous):
    """A two-sample type, or the base that follows one (read twice, differenced)."""
    if ctype & PERF_DELTA_COUNTER:
        return True
    if (ctype & SUBTYPE) == PERF_COUNTER_BASE:
        return previous is not None and bool(previous & PERF_DELTA_COUNTER or previous in (0x30020400, 0x40020500))
    return ctype in (0x30020400, 0x40020500)  # PERF_AVERAGE_TIMER, PERF_AVERAGE_BULK


def parse(data, table):
    """Global -> {"perf_time", "freq", "t100": PerfTime100nSec (the wall clock), "values":
    {"Obj(inst)\\Counter": (type, size, raw)}, "uptime": System Up Time seconds, "pids": {"inst": pid}}."""
    total, header, count = struct.unpack_from("<III", data, 20)
    perf_time, freq, t100 = struct.unpack_from("<qqq", data, 56)
    out = {"perf_time": perf_time, "freq": freq, "t100": t100, "values": {}, "uptime": None, "pids": {}, "elapsed": {},
           "instances": {}, "bad_parents": 0}
    off = header
    for _ in range(count):
        obj_total, definition, obj_header, title = struct.unpack_from("<IIII", data, off)
        num_counters, _, num_instances = struct.unpack_from("<Iii", data, off + 32)
        obj_time, obj_freq = struct.unpack_from("<qq", data, off + 48)
        name = table.get(title, str(title))
        counters, at = [], off + obj_header
        for _ in range(num_counters):
            length, name_index = struct.unpack_from("<II", data, at)
            ctype, size, offset = struct.unpack_from("<III", data, at + 28)
            counters.append((table.get(name_index, str(name_index)), ctype, size, offset))
            at += length
        blocks, at = [], off + definition
        if num_instances < 0:
            blocks.append(("", at))
        out["instances"][name] = max(num_instances, 0)
        seen = {}
        for _ in range(max(num_instances, 0)):
            length, _, parent, _, name_off, name_len = struct.unpack_from("<IIIIII", data, at)
            inst = data[at + name_off:at + name_off + name_len].decode("utf-16-le").rstrip("\0")
            if struct.unpack_from("<I", data, at + 4)[0]:  # a parent object: PDH's "parent/name"
                inst = f"{parent}/{inst}"
                if name == "Thread" and parent >= out["instances"].get("Process", 0):
                    out["bad_parents"] += 1  # Process comes first in Global (object 230 < 232)
            n = seen.get(inst, 0)  # duplicates named as PDH does: x, x#1, ...
            seen[inst] = n + 1
            blocks.append((inst if n == 0 else f"{inst}#{n}", at + length))
            at += length + struct.unpack_from("<I", data, at + length)[0]
        for inst, block in blocks:
            previous = None
            for cname, ctype, size, offset in counters:
                if size in (4, 8):
                    raw = struct.unpack_from("<Q" if size == 8 else "<I", data, block + offset)[0]
                    key = f"{name}({inst})\\{cname}"
                    if cumulative(ctype, previous):
                        out["values"][key] = (ctype, size, raw)
                    if name == "System" and cname == "System Up Time" and ctype == PERF_ELAPSED_TIME:
                        out["uptime"] = (obj_time - raw) / obj_freq
                    if name == "Process" and cname == "ID Process":
                        out["pids"][inst] = raw
                    if name == "Process" and cname == "Elapsed Time" and ctype == PERF_ELAPSED_TIME:
                        out["elapsed"][inst] = (obj_time - raw) / obj_freq
                previous = ctype
        off += obj_total
    return out


ADDRESS = "127.0.0.1"


def read(port, table=None):
    conn, hkpd = connect_hkpd(port, ADDRESS)
    if table is None:
        table = names_009(query(conn, hkpd, "Counter 009"))
    return conn, hkpd, table, parse(query(conn, hkpd, "Global"), table)


def delta(size, a, b):
    return (b - a) & 0xFFFFFFFF if size == 4 else b - a


def reboot(args):
    """{"reset_after": polls before the call failed, "reconnects": tries until Global answered,
    "uptime": [A before, A after], "perf_time_s": [A after PerfTime / PerfFreq], "served_s": A's wall
    clock (PerfTime100nSec) from the first read to the one after the reboot, "carried": counters
    of A above B's growth since the first read, "checked": how many compared, "pids_same": processes
    whose id did not change (Idle and System excepted), "pids_checked"}."""
    conn, hkpd, table, a0 = read(args.a)
    _, _, _, b0 = read(args.b, table)
    reset_after = None
    for i in range(args.tries):
        time.sleep(args.poll)
        try:
            query(conn, hkpd, "Global")
        except Exception:  # the host went down: the connection is reset or closed
            reset_after = i + 1
            break
    reconnects, a1 = None, None
    for i in range(args.reconnects if args.reconnects is not None else args.tries):
        try:
            _, _, _, a1 = read(args.a, table)
            reconnects = i + 1
            break
        except Exception:
            time.sleep(args.poll)
    out = {"reset_after": reset_after, "reconnects": reconnects, "uptime": [a0["uptime"], None]}
    if a1 is None:
        json.dump(out, open(args.out, "w"))
        return
    _, _, _, b1 = read(args.b, table)
    out["uptime"][1] = a1["uptime"]
    out["perf_time_s"] = a1["perf_time"] / a1["freq"]
    out["served_s"] = (a1["t100"] - a0["t100"]) / 1e7
    carried, checked = [], 0
    for key, (ctype, size, raw) in a1["values"].items():
        if key not in b0["values"] or key not in b1["values"]:
            continue
        grown = delta(size, b0["values"][key][2], b1["values"][key][2])
        checked += 1
        # Since the reboot (after the first read) A grew at most what B grew since that read;
        # slack for the two hosts' moments differing by milliseconds.
        if raw > grown * 1.05 + 16:
            carried.append({"counter": key, "after": raw, "b_growth": grown, "before": a0["values"].get(key, [0, 0, 0])[2]})
    out["carried"] = carried[:20]
    out["carried_count"] = len(carried)
    out["checked"] = checked
    same = [p for p in a1["pids"] if p in a0["pids"] and a0["pids"][p] not in (0, 4) and a0["pids"][p] == a1["pids"][p]]
    out["pids_same"] = same
    out["pids_checked"] = sum(1 for p in a1["pids"] if p in a0["pids"] and a0["pids"][p] not in (0, 4))
    json.dump(out, open(args.out, "w"))


def lockstep(args):
    """Global of A and of B read --reads times, alternately, each on one connection."""
    ca, ha, table, a = read(args.a)
    cb, hb, _, b = read(args.b, table)
    reads_a, reads_b = [a], [b]
    for _ in range(args.reads - 1):
        reads_a.append(parse(query(ca, ha, "Global"), table))
        reads_b.append(parse(query(cb, hb, "Global"), table))
    return reads_a, reads_b


def wrap(args):
    """{"pairs": [{"checked": n, "wrapped": n, "grew": n, "unequal": [...]}, ...]} for each pair of
    consecutive reads: 32-bit cumulative counters whose A delta mod 2^32 differs from B's
    (unequal), whose raw A value went down (wrapped), and how many grew in B (grew)."""
    reads_a, reads_b = lockstep(args)
    pairs = []
    for k in range(len(reads_a) - 1):
        a0, a1, b0, b1 = reads_a[k]["values"], reads_a[k + 1]["values"], reads_b[k]["values"], reads_b[k + 1]["values"]
        p = {"checked": 0, "wrapped": 0, "grew": 0, "unequal": [], "near_top": 0}
        for key, (ctype, size, raw) in a1.items():
            if size != 4 or key not in a0 or key not in b0 or key not in b1:
                continue
            p["checked"] += 1
            da, db = delta(4, a0[key][2], raw), delta(4, b0[key][2], b1[key][2])
            if da != db:
                p["unequal"].append({"counter": key, "a": [a0[key][2], raw], "b": [b0[key][2], b1[key][2]]})
            if db >= 2:
                p["grew"] += 1
                p["wrapped"] += raw < a0[key][2]
            p["near_top"] += a0[key][2] >= 0xF0000000
        p["unequal"] = p["unequal"][:10]
        pairs.append(p)
    json.dump({"pairs": pairs}, open(args.out, "w"))


def reads(args):
    """{"a": [read, ...], "b": [read, ...]}, each read {"objects": names in order, "process": [[name,
    pid, elapsed s], ...] in the object's order, "bad_parents": Thread instances whose parent is no
    Process instance, "threads": Thread instances}."""
    reads_a, reads_b = lockstep(args)

    def summary(r):
        return {"objects": list(r["instances"].keys()),
                "process": [[i, pid, r["elapsed"].get(i)] for i, pid in r["pids"].items()],
                "bad_parents": r["bad_parents"], "threads": r["instances"].get("Thread", 0)}

    json.dump({"a": [summary(r) for r in reads_a], "b": [summary(r) for r in reads_b]}, open(args.out, "w"))


def names(args):
    """{"a": [read, ...], "b": [read, ...]}: each A read {"last_counter", "last_help", "counter":
    {index: name} (Counter 009), "help": {index: text} (Help 009), "reg_counter": {index: name}
    (Perflib\\009 Counter), "objects": Global's objects in order, "values": {"Obj()\\Counter": raw}
    for single-instance objects, "perf_time", "freq"}; each B read {"objects"}."""
    from samba.dcerpc import security, winreg
    ca, ha = connect_hkpd(args.a)
    cb, hb = connect_hkpd(args.b)
    hklm = ca.OpenHKLM(None, security.SEC_FLAG_MAXIMUM_ALLOWED)

    def open_key(path):
        name = winreg.String()
        name.name = path
        return ca.OpenKey(hklm, name, 0, security.SEC_FLAG_MAXIMUM_ALLOWED)

    perflib = open_key("SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib")
    perflib_009 = open_key("SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib\\009")
    b_table = names_009(query(cb, hb, "Counter 009"))
    reads_a, reads_b = [], []
    for _ in range(args.reads):
        counter = query(ca, ha, "Counter 009")
        table = names_009(counter)
        r = {"last_counter": struct.unpack("<I", query(ca, perflib, "Last Counter")[:4])[0],
             "last_help": struct.unpack("<I", query(ca, perflib, "Last Help")[:4])[0],
             "declared_last": counter.decode("utf-16-le").split("\0")[:2],
             "counter": table, "help": names_009(query(ca, ha, "Help 009")),
             "reg_counter": names_009(query(ca, perflib_009, "Counter"))}
        g = parse(query(ca, ha, "Global"), table)
        r["objects"] = list(g["instances"].keys())
        r["values"] = {k: v[2] for k, v in g["values"].items() if "()" in k}
        r["perf_time"], r["freq"] = g["perf_time"], g["freq"]
        reads_a.append(r)
        reads_b.append({"objects": list(parse(query(cb, hb, "Global"), b_table)["instances"].keys())})
    json.dump({"a": reads_a, "b": reads_b}, open(args.out, "w"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", type=int, required=True)
    ap.add_argument("--b", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--address", default="127.0.0.1", help="where A and B listen")
    sub = ap.add_subparsers(dest="mode", required=True)
    r = sub.add_parser("reboot")
    r.add_argument("--poll", type=float, default=0.2)
    r.add_argument("--tries", type=int, default=100)
    r.add_argument("--reconnects", type=int, default=None, help="tries to connect again (default --tries)")
    w = sub.add_parser("wrap")
    w.add_argument("--reads", type=int, default=4)
    c = sub.add_parser("reads")
    c.add_argument("--reads", type=int, default=3)
    n = sub.add_parser("names")
    n.add_argument("--reads", type=int, default=6)
    args = ap.parse_args()
    global ADDRESS
    ADDRESS = args.address
    {"reboot": reboot, "wrap": wrap, "reads": reads, "names": names}[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""A collector that polls Global with python3-samba faster than, as fast as and slower than a
capture's interval and checks every rate it computes against the recorded samples (issue 31):
the formulas below are PDH's (Microsoft, "Calculating Counter Values"), written here from the
counter types, not taken from perfsim.

  collector_between.py --port P --out FILE record N
      reads Global N times from a `--timeline step` host (sample k at the k-th read, clocks as
      recorded) and writes the recorded samples' raw values to FILE.
  collector_between.py --port P --out FILE --recorded FILE2 --speed S live SECONDS...
      against a realtime host at --speed S: for each poll interval (recorded seconds), polls
      Global every interval / S real seconds (at least 5 pairs) and computes every two-sample
      counter of Processor, Process, PhysicalDisk and Network Interface between consecutive polls.
      Where a poll falls on the recorded timeline comes from its served PerfTime100nSec (which
      runs with the timeline), placed once from the first poll's Processor(_Total) idle time.
      The expected value of a pair is the same formula over the recorded samples' raw values at
      those two moments, linear between samples: within one recorded interval, that interval's
      rate. A value passes within 1 % of the expected one, or within what one count more or less
      of each raw value changes it (an integer counter at a short poll).
Writes {"checked": {interval: {object: n}}, "failures": [...], "pairs": {interval: [inside, across]}}.
Exit status: 0 done (the caller judges), 2 bad use, 3 python3-samba missing.
"""
import argparse
import bisect
import json
import struct
import sys
import time

from collector_formatted import connect_hkpd, names_009, query  # exits 3 without python3-samba

OBJECTS = ("Processor", "Process", "PhysicalDisk", "Network Interface")
PERF_DELTA_COUNTER = 0x00400000
PERF_COUNTER_BASE = 0x00030000
SUBTYPE = 0x00070000
PERF_COUNTER_COUNTER = 0x10410400
PERF_COUNTER_BULK_COUNT = 0x10410500
PERF_COUNTER_TIMER = 0x20410500
PERF_COUNTER_TIMER_INV = 0x21410500
PERF_100NSEC_TIMER = 0x20510500
PERF_100NSEC_TIMER_INV = 0x21510500
PERF_AVERAGE_TIMER = 0x30020400
PERF_AVERAGE_BULK = 0x40020500
PERF_SAMPLE_FRACTION = 0x20C20400
PERF_COUNTER_DELTA = 0x00400400
PERF_COUNTER_LARGE_DELTA = 0x00400500
PERF_PRECISION_100NS_TIMER = 0x20570500
PERF_COUNTER_100NS_QUEUELEN_TYPE = 0x00550500


def two_sample(t):
    return bool(t & PERF_DELTA_COUNTER) or t in (PERF_AVERAGE_TIMER, PERF_AVERAGE_BULK)


def sample(data, table):
    """Global -> {"t100", "time", "freq", "values": {"Obj(inst)\\Counter": (type, raw, base raw)}}."""
    total, header, count = struct.unpack_from("<III", data, 20)
    time_, freq, t100 = struct.unpack_from("<qqq", data, 56)
    values, off = {}, header
    for _ in range(count):
        obj_total, definition, obj_header, title = struct.unpack_from("<IIII", data, off)
        num_counters, _, num_instances = struct.unpack_from("<Iii", data, off + 32)
        name = table.get(title)
        if name in OBJECTS:
            counters, at = [], off + obj_header
            for _ in range(num_counters):
                length, name_index = struct.unpack_from("<II", data, at)
                ctype, size, offset = struct.unpack_from("<III", data, at + 28)
                counters.append((table.get(name_index, str(name_index)), ctype, size, offset))
                at += length
            blocks, at = [], off + definition
            if num_instances < 0:
                blocks.append(("", at))
            seen = {}
            for _ in range(max(num_instances, 0)):
                length, _, _, _, name_off, name_len = struct.unpack_from("<IIIIII", data, at)
                inst = data[at + name_off:at + name_off + name_len].decode("utf-16-le").rstrip("\0")
                n = seen.get(inst, 0)  # duplicates named as PDH does: x, x#1, ...
                seen[inst] = n + 1
                blocks.append((inst if n == 0 else f"{inst}#{n}", at + length))
                at += length + struct.unpack_from("<I", data, at + length)[0]
            for inst, block in blocks:
                for j, (cname, ctype, size, offset) in enumerate(counters):
                    if not two_sample(ctype) or (ctype & SUBTYPE) == PERF_COUNTER_BASE:
                        continue
                    raw = struct.unpack_from("<Q" if size == 8 else "<I", data, block + offset)[0]
                    base = None
                    if j + 1 < len(counters) and (counters[j + 1][1] & SUBTYPE) == PERF_COUNTER_BASE:
                        b = counters[j + 1]
                        base = struct.unpack_from("<Q" if b[2] == 8 else "<I", data, block + b[3])[0]
                    values[f"{name}({inst})\\{cname}"] = (ctype, size, raw, base)
        off += obj_total
    return {"t100": t100, "time": time_, "freq": freq, "values": values}


def formula(ctype, dn, db, dt100, dtime, freq):
    """PDH's value from the differences of raw value (dn), base (db), PerfTime100nSec and PerfTime."""
    secs = dtime / freq
    if ctype in (PERF_COUNTER_COUNTER, PERF_COUNTER_BULK_COUNT):
        return dn / secs
    if ctype == PERF_COUNTER_TIMER:
        return 100.0 * dn / dtime
    if ctype == PERF_COUNTER_TIMER_INV:
        return 100.0 * (1.0 - dn / dtime)
    if ctype == PERF_100NSEC_TIMER:
        return 100.0 * dn / dt100
    if ctype == PERF_100NSEC_TIMER_INV:
        return 100.0 * (1.0 - dn / dt100)
    if ctype == PERF_PRECISION_100NS_TIMER:  # its base is its own 100 ns timestamp
        return 100.0 * dn / db if db else 0.0
    if ctype == PERF_COUNTER_100NS_QUEUELEN_TYPE:
        return dn / dt100
    if ctype == PERF_AVERAGE_TIMER:
        return (dn / freq) / db if db else 0.0
    if ctype == PERF_AVERAGE_BULK:
        return dn / db if db else 0.0
    if ctype == PERF_SAMPLE_FRACTION:
        return 100.0 * dn / db if db else 0.0
    if ctype in (PERF_COUNTER_DELTA, PERF_COUNTER_LARGE_DELTA):
        return float(dn)
    raise ValueError(f"counter type {ctype:#x} is not handled by this collector")


def delta(size, a, b):
    return (b - a) & 0xFFFFFFFF if size == 4 else b - a


def record(conn, hkpd, table, n):
    return [sample(query(conn, hkpd, "Global"), table) for _ in range(n)]


class Recorded:
    """The recorded samples as functions of the recorded time (linear between samples)."""

    def __init__(self, samples):
        self.s = samples
        self.t = [x["t100"] - samples[0]["t100"] for x in samples]

    def at(self, pos, key):
        """(raw, base, PerfTime) at recorded time pos, or None where the counter is not in both samples."""
        k = bisect.bisect_right(self.t, pos) - 1
        if k < 0 or k + 1 >= len(self.s):
            return None
        a, b = self.s[k], self.s[k + 1]
        if key not in a["values"] or key not in b["values"]:
            return None
        f = (pos - self.t[k]) / (self.t[k + 1] - self.t[k])
        _, size, ra, ba = a["values"][key]
        _, _, rb, bb = b["values"][key]
        if size == 8 and (rb < ra or (ba is not None and bb < ba)):
            return None  # went back in the recording (a process left _Total): PDH shows no value there
        raw = ra + f * delta(size, ra, rb)
        base = None if ba is None else ba + f * delta(size, ba, bb)
        return raw, base, a["time"] + f * (b["time"] - a["time"]), k

    def idle_position(self, idle):
        """Recorded time at which Processor(_Total)'s idle time (PERF_100NSEC_TIMER_INV raw) is `idle`."""
        key = "Processor(_Total)\\% Processor Time"
        v = [x["values"][key][2] for x in self.s]
        k = bisect.bisect_right(v, idle) - 1
        if k < 0 or k + 1 >= len(v):
            raise ValueError(f"idle time {idle} outside the recording's first loop")
        return self.t[k] + (idle - v[k]) / (v[k + 1] - v[k]) * (self.t[k + 1] - self.t[k])


def check(rec, polls, interval_s, out):
    """Every pair of consecutive polls: each two-sample counter against the recorded value."""
    key0 = "Processor(_Total)\\% Processor Time"
    pos0 = rec.idle_position(polls[0]["values"][key0][2])
    pos = [pos0 + (p["t100"] - polls[0]["t100"]) for p in polls]  # served time runs with the timeline
    counts = {o: 0 for o in OBJECTS}
    inside = across = 0
    for (p, q), (u, w) in zip(zip(polls, polls[1:]), zip(pos, pos[1:])):
        same = None
        for key, (ctype, size, raw0, base0) in p["values"].items():
            if key not in q["values"]:
                continue
            _, _, raw1, base1 = q["values"][key]
            ra, rb = rec.at(u, key), rec.at(w, key)
            if ra is None or rb is None:
                continue
            same = ra[3] == rb[3]
            dt100, dtime, freq = q["t100"] - p["t100"], q["time"] - p["time"], q["freq"]
            got = formula(ctype, delta(size, raw0, raw1), None if base0 is None else delta(size, base0, base1), dt100,
                          dtime, freq)
            wrap = (lambda d: d % 2**32) if size == 4 else (lambda d: d)  # a 32-bit count wraps
            dn, db = wrap(rb[0] - ra[0]), None if ra[1] is None else wrap(rb[1] - ra[1])
            want = formula(ctype, dn, db, w - u, rb[2] - ra[2], freq)
            # One count more or less in the served raw value (and base): integer counters over a short poll.
            slack = max(abs(formula(ctype, dn + a, None if db is None else db + b, w - u, rb[2] - ra[2], freq) - want)
                        for a in (-1, 0, 1) for b in (-1, 0, 1))
            counts[key.split("(")[0]] += 1
            if abs(got - want) > 0.01 * abs(want) + slack + 1e-9:
                out["failures"].append({"interval": interval_s, "counter": key, "got": got, "want": want,
                                        "recorded_s": [u / 1e7, w / 1e7], "same_interval": same})
        if same is not None:
            inside += same
            across += not same
    out["checked"][str(interval_s)] = counts
    out["pairs"][str(interval_s)] = [inside, across]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--recorded")
    p.add_argument("--speed", type=float, default=1.0)
    p.add_argument("--pairs", type=int, default=5)
    p.add_argument("mode", choices=["record", "live"])
    p.add_argument("args", nargs="+", type=float)
    a = p.parse_args()
    conn, hkpd = connect_hkpd(a.port)
    table = names_009(query(conn, hkpd, "Counter 009"))
    if a.mode == "record":
        with open(a.out, "w") as f:
            json.dump(record(conn, hkpd, table, int(a.args[0])), f)
        return 0
    if not a.recorded:
        print("collector_between: live needs --recorded FILE", file=sys.stderr)
        return 2
    with open(a.recorded) as f:
        rec = Recorded(json.load(f))
    out = {"checked": {}, "failures": [], "pairs": {}}
    for interval in a.args:
        polls, period = [], interval / a.speed
        # Bounded: pairs + 1 polls, each at its own moment (the poll interval, not a wait for perfsim).
        start = time.monotonic()
        for i in range(a.pairs + 1):
            time.sleep(max(0.0, start + i * period - time.monotonic()))
            polls.append(sample(query(conn, hkpd, "Global"), table))
        check(rec, polls, interval, out)
    conn.CloseKey(hkpd)
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

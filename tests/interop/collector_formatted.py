#!/usr/bin/python3
"""A collector that formats counters the way PDH does (100 ns timers, counts per second, raw counts), reading from a perfsim server with
python3-samba (ncacn_ip_tcp, anonymous): it resolves object and counter names through
"Counter 009" (names repeat across objects, so a counter is the one of that name inside the
object), reads Global --samples times and computes each counter's value between consecutive
samples and over the whole run (first to last sample).

Usage: collector_formatted.py --port P --out FILE --samples N PATH...
PATH is Object(Instance)\\Counter, e.g. "Processor Information(_Total)\\% Processor Time".
FILE gets {"series": {PATH: [value per interval]}, "overall": {PATH: value}, "indices": {...}}.
Exit status: 0 done, 1 a path did not resolve or a type is not handled, 3 python3-samba missing.
"""
import argparse
import json
import re
import struct
import sys

try:
    from samba import WERRORError, credentials, param
    from samba.dcerpc import security, winreg
except ImportError as e:
    print(f"python3-samba is not importable ({e}); run scripts/install-deps.sh", file=sys.stderr)
    sys.exit(3)

ERROR_MORE_DATA = 234
PERF_100NSEC_TIMER = 0x20510500
PERF_100NSEC_TIMER_INV = 0x21510500
PERF_COUNTER_COUNTER = 0x10410400
PERF_COUNTER_BULK_COUNT = 0x10410500
PERF_COUNTER_RAWCOUNT = 0x00010000
PERF_COUNTER_LARGE_RAWCOUNT = 0x00010100
PERF_RAW_FRACTION = 0x20020400
PERF_LARGE_RAW_FRACTION = 0x20020500
PERF_AVERAGE_TIMER = 0x30020400
PERF_AVERAGE_BULK = 0x40020500
PERF_100NSEC_QUEUELEN = 0x00550500  # PERF_COUNTER_100NS_QUEUELEN_TYPE
PERF_NO_INSTANCES = -1


def connect_hkpd(port, address="127.0.0.1"):
    """An anonymous python3-samba winreg connection to address:port and its HKPD handle."""
    lp = param.LoadParm()
    creds = credentials.Credentials()
    creds.guess(lp)
    creds.set_anonymous()
    conn = winreg.winreg(f"ncacn_ip_tcp:{address}[{port}]", lp, creds)
    return conn, conn.OpenHKPD(None, security.SEC_FLAG_MAXIMUM_ALLOWED)


def query(conn, hkpd, name):
    """QueryValue with a buffer that doubles until the value fits (bounded: 16 tries)."""
    s = winreg.String()
    s.name = name
    offer = 65536
    for _ in range(16):
        try:
            _, data, _, _ = conn.QueryValue(hkpd, s, 0, [], offer, 0)
            return bytes(data)
        except WERRORError as e:
            if e.args[0] != ERROR_MORE_DATA:
                raise
            offer *= 2
    raise RuntimeError(f"{name}: still ERROR_MORE_DATA at {offer} bytes")


def names_009(data):
    strings = data.decode("utf-16-le").split("\0")
    table = {}
    for i in range(0, len(strings) - 1, 2):
        if strings[i].isdigit():
            table[int(strings[i])] = strings[i + 1]
    return table


def parse_block(data):
    """PERF_DATA_BLOCK -> ((PerfTime100nSec, PerfTime, PerfFreq), {object index: (counters,
    instances)}); counters are (name index, type, size, offset), instances {name: counter block}."""
    total, header, count = struct.unpack_from("<III", data, 20)
    clocks = struct.unpack_from("<qqq", data, 72), struct.unpack_from("<qq", data, 56)
    times = (clocks[0][0], clocks[1][0], clocks[1][1])
    objects, off = {}, header
    for _ in range(count):
        obj_total, definition, obj_header, title = struct.unpack_from("<IIII", data, off)
        num_counters, _, num_instances = struct.unpack_from("<Iii", data, off + 32)
        counters, at = [], off + obj_header
        for _ in range(num_counters):
            length, name_index = struct.unpack_from("<II", data, at)
            ctype, size, offset = struct.unpack_from("<III", data, at + 28)
            counters.append((name_index, ctype, size, offset))
            at += length
        instances, at = {}, off + definition
        if num_instances == PERF_NO_INSTANCES:
            instances[""] = data[at:at + struct.unpack_from("<I", data, at)[0]]
        for _ in range(max(num_instances, 0)):
            length, _, _, _, name_off, name_len = struct.unpack_from("<IIIIII", data, at)
            name = data[at + name_off:at + name_off + name_len].decode("utf-16-le").rstrip("\0")
            block = at + length
            instances[name] = data[block:block + struct.unpack_from("<I", data, block)[0]]
            at = block + struct.unpack_from("<I", data, block)[0]
        objects[title] = (counters, instances)
        off += obj_total
    return times, objects


def resolve(path, table, sample):
    """(object index, instance, counter name index, type, size, offset, base) for PATH in this host;
    base is the (size, offset) of the counter definition after it (a base counter follows its counter)."""
    m = re.fullmatch(r"(.+?)(?:\((.*)\))?\\(.+)", path)
    if not m:
        raise ValueError(f"{path}: not Object(Instance)\\Counter")
    obj_name, inst, ctr_name = m.group(1), m.group(2) or "", m.group(3)
    for index, (counters, _) in sample.items():
        if table.get(index) != obj_name:
            continue
        for k, (name_index, ctype, size, offset) in enumerate(counters):
            if table.get(name_index) == ctr_name:
                base = counters[k + 1][2:] if k + 1 < len(counters) else None
                return index, inst, name_index, ctype, size, offset, base
    raise ValueError(f"{path}: no object {obj_name!r} with a counter {ctr_name!r} in Global")


def raw(sample, where):
    """(N, B): the counter's raw value and its base's (None without one)."""
    index, inst, _, _, size, offset, base = where
    block = sample[index][1][inst]
    n = struct.unpack_from("<Q" if size == 8 else "<I", block, offset)[0]
    b = struct.unpack_from("<Q" if base[0] == 8 else "<I", block, base[1])[0] if base else None
    return n, b


def formatted(where, t0, v0, t1, v1):
    """PDH's formulas ("Calculating Counter Values", Windows Server 2003 Deployment Kit counter types):
    100 ns timers over PerfTime100nSec, counts per second over PerfTime/PerfFreq, fractions and
    averages over the base counter that follows the counter."""
    ctype = where[3]
    (v0, b0), (v1, b1) = v0, v1
    if ctype in (PERF_RAW_FRACTION, PERF_LARGE_RAW_FRACTION):
        return 100.0 * v1 / b1
    if ctype == PERF_AVERAGE_TIMER:  # seconds per operation: (dN / PerfFreq) / dB
        return (v1 - v0) / t1[2] / (b1 - b0)
    if ctype == PERF_AVERAGE_BULK:
        return (v1 - v0) / (b1 - b0)
    if ctype == PERF_100NSEC_QUEUELEN:  # dN / dPerfTime100nSec
        return (v1 - v0) / (t1[0] - t0[0])
    if ctype == PERF_100NSEC_TIMER_INV:
        return 100.0 * (1.0 - (v1 - v0) / (t1[0] - t0[0]))
    if ctype == PERF_100NSEC_TIMER:
        return 100.0 * (v1 - v0) / (t1[0] - t0[0])
    if ctype in (PERF_COUNTER_COUNTER, PERF_COUNTER_BULK_COUNT):
        if ctype == PERF_COUNTER_COUNTER:
            v0, v1 = v0 & 0xFFFFFFFF, v1 & 0xFFFFFFFF
            if v1 < v0:
                v1 += 1 << 32  # a 32-bit count wrapped between the samples
        return (v1 - v0) / ((t1[1] - t0[1]) / t1[2])
    if ctype in (PERF_COUNTER_RAWCOUNT, PERF_COUNTER_LARGE_RAWCOUNT):
        return float(v1)
    raise ValueError(f"counter type {ctype:#x} is not handled by this collector")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--samples", type=int, required=True)
    p.add_argument("paths", nargs="+")
    args = p.parse_args()
    conn, hkpd = connect_hkpd(args.port)
    table = names_009(query(conn, hkpd, "Counter 009"))
    samples = [parse_block(query(conn, hkpd, "Global")) for _ in range(args.samples)]
    conn.CloseKey(hkpd)
    out = {"series": {}, "overall": {}, "indices": {}}
    try:
        for path in args.paths:
            where = resolve(path, table, samples[0][1])
            out["indices"][path] = [where[0], where[2]]
            values = [(t, raw(objs, where)) for t, objs in samples]
            out["series"][path] = [formatted(where, *a, *b) for a, b in zip(values, values[1:])]
            out["overall"][path] = formatted(where, *values[0], *values[-1])
    except (ValueError, KeyError) as e:
        print(f"collector_formatted: {e}", file=sys.stderr)
        return 1
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

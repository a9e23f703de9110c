#!/usr/bin/python3
"""A small impacket collector that computes formatted counter values from two polls, as a
collector under `perfsim check`'s value verdict does (issue 47). Its formulas are its own (Microsoft,
"Calculating Counter Values" and the counter-type pages), written apart from perfsim's
perfdata/counters.cpp: `check` agreeing with them is the test of both.
  value_collector.py [--format csv|json] [--stdout] [--off PATH=DELTA] [--exit N] [--polls N]
                     [--interval S] [--reconnect] [--fresh-after-reset] [--mod32] PATH...
PATH as PDH writes it, without the machine: \\Processor(_Total)\\% Processor Time. Reads Counter
009 for the names, then the objects' index list twice (0.5 s apart) on one connection, and writes
\\\\HOST\\PATH,VALUE (or a JSON line) per path to $PERFSIM_VALUES_OUT (to stdout with --stdout).
--off adds DELTA to one path's value (a wrong collector); --exit N exits N after writing.
--interval S: the polls S seconds apart (default 0.5). --reconnect: a connection the host closed
(a reboot) is made again and the polling goes on; its answers are differenced with the ones before
the reset (the bug reset-after-reboot catches), or with --fresh-after-reset the polls start anew
(a new boot). PERF_COUNTER_COUNTER is differenced as plain numbers (the bug counter-wrap-32bit
catches), or with --mod32 modulo 2^32, as PDH does.
A counter type it has no formula for is an error (exit 2), so the test knows what it covers."""
import json
import os
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import impacket_hkpd as hk  # noqa: E402

COUNTER_COUNTER, BULK_COUNT = 0x10410400, 0x10410500
RAWCOUNT, LARGE_RAWCOUNT = 0x00010000, 0x00010100
TIMER_100NS, TIMER_100NS_INV = 0x20510500, 0x21510500
RAW_FRACTION, ELAPSED_TIME = 0x20020400, 0x30240500
AVERAGE_TIMER, AVERAGE_BULK, COUNTER_TIMER = 0x30020400, 0x40020500, 0x20410500
BUFFER = 4 * 1024 * 1024


def recv_or_raise(self, forceRecv=0, count=0):
    """impacket's TCPTransport.recv loops forever on a closed connection (recv gives b''): raise
    instead, so a host that closed it (a reboot) is noticed."""
    sock, buf = self.get_socket(), b""
    while True:
        data = sock.recv(count - len(buf) if count else 8192)
        if not data:
            raise ConnectionResetError("the host closed the connection")
        buf += data
        if not count or len(buf) >= count:
            return buf


hk.transport.TCPTransport.recv = recv_or_raise


def query(dce, hkpd, name):
    """One call: an empty lpData with lpcbData = 4 MB and lpcbLen 0 (impacket packs no buffer
    bytes), so a large answer costs nothing to send."""
    r = hk.query_value(dce, hkpd, name, 0, BUFFER)
    return b"".join(r["lpData"])


def names_of(raw):
    """Counter 009: index -> name (lower case); a name may stand at several indices."""
    parts = raw.decode("utf-16-le").split("\x00")
    return {int(parts[i]): parts[i + 1].lower() for i in range(0, len(parts) - 1, 2)
            if parts[i].isdigit() and parts[i + 1]}


def u32(b, at):
    return struct.unpack_from("<L", b, at)[0]


def i64(b, at):
    return struct.unpack_from("<q", b, at)[0]


def block_of(b):
    """{clocks, system, objects: {index: {clocks, counters: [(name, type, size, offset)], instances: {name: data}}}}"""
    name_len, name_off = u32(b, 80), u32(b, 84)
    blk = {"perf_time": i64(b, 56), "perf_freq": i64(b, 64), "time_100ns": i64(b, 72),
           "system": b[name_off:name_off + name_len].decode("utf-16-le").rstrip("\x00"), "objects": {}}
    at = u32(b, 24)
    for _ in range(u32(b, 28)):
        total, definition, header, index = u32(b, at), u32(b, at + 4), u32(b, at + 8), u32(b, at + 12)
        count, instances = u32(b, at + 32), struct.unpack_from("<l", b, at + 40)[0]
        obj = {"perf_time": i64(b, at + 48), "perf_freq": i64(b, at + 56), "counters": [], "instances": {}}
        c = at + header
        for _ in range(count):
            obj["counters"].append((u32(b, c + 4), u32(b, c + 28), u32(b, c + 32), u32(b, c + 36)))
            c += u32(b, c)
        i = at + definition
        if instances < 0:
            obj["instances"][""] = b[i:i + u32(b, i)]
        for _ in range(max(instances, 0)):
            noff, nlen = u32(b, i + 16), u32(b, i + 20)
            name = b[i + noff:i + noff + nlen].decode("utf-16-le").rstrip("\x00")
            data = i + u32(b, i)
            obj["instances"].setdefault(name, b[data:data + u32(b, data)])
            i = data + u32(b, data)
        blk["objects"][index] = obj
        at += total
    return blk


def raw(data, counters, k):
    _, _, size, offset = counters[k]
    return struct.unpack_from("<Q" if size == 8 else "<L", data, offset)[0]


def formatted(b0, b1, index, instance, counter, names):
    o0, o1 = b0["objects"][index], b1["objects"][index]
    counters = o1["counters"]
    k = next(i for i, c in enumerate(counters) if names.get(c[0]) == counter.lower())
    ctype = counters[k][1]
    d0, d1 = o0["instances"][instance], o1["instances"][instance]
    n0, n1 = raw(d0, counters, k), raw(d1, counters, k)
    seconds = (b1["perf_time"] - b0["perf_time"]) / b1["perf_freq"]
    if ctype == COUNTER_COUNTER and MOD32:
        return ((n1 - n0) & 0xFFFFFFFF) / seconds
    if ctype in (COUNTER_COUNTER, BULK_COUNT):
        return (n1 - n0) / seconds
    if ctype in (RAWCOUNT, LARGE_RAWCOUNT):
        return float(n1)
    if ctype == TIMER_100NS:
        return 100.0 * (n1 - n0) / (b1["time_100ns"] - b0["time_100ns"])
    if ctype == TIMER_100NS_INV:
        return 100.0 * (1.0 - (n1 - n0) / (b1["time_100ns"] - b0["time_100ns"]))
    if ctype == COUNTER_TIMER:
        return 100.0 * (n1 - n0) / (b1["perf_time"] - b0["perf_time"])
    if ctype == RAW_FRACTION:
        return 100.0 * n1 / raw(d1, counters, k + 1)
    if ctype == ELAPSED_TIME:
        return (o1["perf_time"] - n1) / o1["perf_freq"]
    if ctype == AVERAGE_TIMER:
        return ((n1 - n0) / b1["perf_freq"]) / (raw(d1, counters, k + 1) - raw(d0, counters, k + 1))
    if ctype == AVERAGE_BULK:
        return (n1 - n0) / (raw(d1, counters, k + 1) - raw(d0, counters, k + 1))
    print(f"no formula for counter type 0x{ctype:08x}", file=sys.stderr)
    sys.exit(2)


def split(path):
    """\\Object(Instance)\\Counter -> (object, instance, counter)."""
    head, counter = path[1:].rsplit("\\", 1)
    if head.endswith(")"):
        obj, inst = head[:-1].split("(", 1)
        return obj, inst, counter
    return head, "", counter


MOD32 = False


def connect():
    dce, hkpd = hk.open_hkpd(os.environ["PERFSIM_ADDR"], os.environ["PERFSIM_PORT"])
    return dce, hkpd, names_of(query(dce, hkpd, "Counter 009"))


def main():
    global MOD32
    args, fmt, to_stdout, off, code, polls = sys.argv[1:], "csv", False, {}, 0, 2
    interval, reconnect, fresh = 0.5, False, False
    while args and args[0].startswith("--"):
        opt = args.pop(0)
        if opt == "--format":
            fmt = args.pop(0)
        elif opt == "--stdout":
            to_stdout = True
        elif opt == "--off":
            p, d = args.pop(0).rsplit("=", 1)
            off[p] = float(d)
        elif opt == "--exit":
            code = int(args.pop(0))
        elif opt == "--polls":
            polls = int(args.pop(0))
        elif opt == "--interval":
            interval = float(args.pop(0))
        elif opt == "--reconnect":
            reconnect = True
        elif opt == "--fresh-after-reset":
            reconnect = fresh = True
        elif opt == "--mod32":
            MOD32 = True
    dce, hkpd, names = connect()
    index = {}
    for i, n in sorted(names.items()):
        index.setdefault(n, i)
    wanted = [(p,) + split(p) for p in args]
    objects = sorted({index[o.lower()] for _, o, _, _ in wanted})
    asked = " ".join(str(i) for i in objects)
    blocks = []
    while len(blocks) < polls:
        if blocks:
            time.sleep(interval)  # sleep-ok: the collector's own poll interval, what a rate is computed over
        try:
            blocks.append(block_of(query(dce, hkpd, asked)))
        except (ConnectionError, OSError):
            if not reconnect:
                raise
            while True:  # the host is down for a while after a reboot: its calls are closed
                try:
                    dce, hkpd, names = connect()
                    break
                except (ConnectionError, OSError, hk.DCERPCException):
                    # sleep-ok: a collector's back-off between connects while the host is down
                    time.sleep(0.2)
            if fresh:
                blocks = []
    hk.close(dce, hkpd)
    lines = []
    for path, obj, inst, counter in wanted:
        if len(blocks) < 2:  # one poll: 0, as collectors that report a rate's first sample do
            v = 0.0
        else:
            v = formatted(blocks[-2], blocks[-1], index[obj.lower()], inst, counter, names)
        v += off.get(path, 0.0)
        full = f"\\\\{blocks[-1]['system']}{path}"
        lines.append(json.dumps({"path": full, "value": v}) if fmt == "json" else f"{full},{v!r}")
    text = "".join(line + "\n" for line in lines)
    if to_stdout:
        print("poll done:", len(blocks), "answers")  # prose around the values, as a real collector's
        sys.stdout.write(text)
    else:
        with open(os.environ["PERFSIM_VALUES_OUT"], "w") as f:
            f.write(text)
    return code


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Issue 44: what one crafted file costs each command that reads it (peak RSS of the process).

M1: the bundled 2016 capture with its first LZ4-packed registry record claiming a raw size of
1 GiB (CRC made right again, so only the size checks stand in the way). C1: a copy whose
fingerprint is nested 60,000 levels deep, and a JSON fleet file nested 200,000 deep. AD1:
`perfsim serve --admin` on the bundled host (realtime timeline), 60 reboot events posted (40-byte
bodies), its VmRSS before and after.

  python3 bench/inputs/crafted_inputs.py PERFSIM [PERFSIM_BEFORE]

Prints, per command: exit status (a signal as -N) and peak resident memory (wait4's ru_maxrss).
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

SYNC = 0x7AC41FD9
HEADER = 13  # sync crc length type


def crc32c(data: bytes) -> int:
    table = crc32c.table
    if table is None:
        table = crc32c.table = []
        for i in range(256):
            c = i
            for _ in range(8):
                c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
            table.append(c)
    c = 0xFFFFFFFF
    for b in data:
        c = table[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


crc32c.table = None


def records(buf: bytes):
    pos = 16
    while pos + HEADER <= len(buf) and struct.unpack_from("<I", buf, pos)[0] == SYNC:
        length = struct.unpack_from("<I", buf, pos + 8)[0]
        yield pos, buf[pos + 12], length
        pos += HEADER + length


def claim_1gib(src: str, out: str) -> int:
    buf = bytearray(open(src, "rb").read())
    for pos, rtype, length in records(buf):
        if rtype != 2:  # registry
            continue
        at = pos + HEADER
        at += 4 + struct.unpack_from("<I", buf, at)[0]  # key
        at += 4 + struct.unpack_from("<I", buf, at)[0] + 4  # name, type
        if buf[at] != 1:  # LZ4
            continue
        struct.pack_into("<I", buf, at + 1, 1 << 30)
        struct.pack_into("<I", buf, pos + 4, crc32c(bytes(buf[pos + 8 : pos + HEADER + length])))
        open(out, "wb").write(buf)
        return pos
    raise SystemExit("no LZ4-packed registry record in " + src)


def run(argv):
    with open(os.devnull, "wb") as null:
        p = subprocess.Popen(argv, stdout=null, stderr=subprocess.PIPE)
        err = p.stderr.read().decode(errors="replace")
        _, status, usage = os.wait4(p.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return code, usage.ru_maxrss, err.strip().splitlines()[-1:] if err.strip() else []


def deep_fingerprint(perfsim: str, tmp: str, depth: int) -> str:
    """A synth capture whose fingerprint record nests `depth` arrays (a fresh file, no patching)."""
    out = os.path.join(tmp, "deep.perfcap")
    small = os.path.join(tmp, "small.perfcap")
    subprocess.run([perfsim, "synth", "--profile", "2016", "--duration", "60", "-o", small], check=True,
                   stdout=subprocess.DEVNULL)
    buf = bytearray(open(small, "rb").read())
    for pos, rtype, length in records(buf):
        if rtype == 5:  # fingerprint: str json
            body = b'{"findings": ' + b"[" * depth + b"]" * depth + b"}"
            rec = struct.pack("<IIIB", SYNC, 0, 4 + len(body), 5) + struct.pack("<I", len(body)) + body
            rec = rec[:4] + struct.pack("<I", crc32c(rec[8:])) + rec[8:]
            # Dropping the index trailer: the reader scans (and finds the new record).
            end = pos + HEADER + length
            data = bytes(buf[:pos]) + rec + bytes(buf[end:])
            idx = [p for p, t, _ in records(data) if t == 7]
            if idx:
                data = data[: idx[0]]
            open(out, "wb").write(data)
            return out
    raise SystemExit("no fingerprint record")


def vm_rss_kb(pid: int) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def posted_events(perfsim: str, events: int = 60):
    """Server VmRSS (KB) before and after `events` reboots posted to its one host, and the last answer."""
    p = subprocess.Popen([perfsim, "serve", "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--json"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        port = None
        while port is None:
            line = json.loads(p.stdout.readline())
            if line.get("event") == "admin":
                port = line["port"]
        base = f"http://127.0.0.1:{port}/api/hosts/PERFSIM-2016/events"
        time.sleep(0.5)
        before = vm_rss_kb(p.pid)
        status = 0
        for i in range(events):
            body = json.dumps({"kind": "reboot", "at_s": 30 + i}).encode()
            req = urllib.request.Request(base, body, {"Content-Type": "application/json"}, method="POST")
            try:
                status = urllib.request.urlopen(req).status
            except urllib.error.HTTPError as e:
                status = e.code
        return before, vm_rss_kb(p.pid), status
    finally:
        p.terminate()
        p.wait()


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    here = os.path.dirname(os.path.abspath(__file__))
    bundled = os.path.join(here, "..", "..", "captures", "default-2016.perfcap")
    with tempfile.TemporaryDirectory() as tmp:
        m1 = os.path.join(tmp, "claims-1gib.perfcap")
        at = claim_1gib(bundled, m1)
        fleet = os.path.join(tmp, "fleet.json")
        open(fleet, "w").write('{"host": [{"listen": "127.0.0.1:0", "x": ' + "[" * 200000 + "]" * 200000 + "}]}")
        for perfsim in sys.argv[1:]:
            print(f"== {perfsim}")
            print(f"M1: {m1} ({os.path.getsize(m1):,} bytes), registry record at offset {at} claims 1 GiB")
            out = os.path.join(tmp, "out.perfcap")
            for args in (["validate", m1], ["inspect", m1], ["series", m1, "-c", "\\Processor(_Total)\\% Processor Time"], ["diff", m1, m1],
                         ["redact", m1, "-o", out]):
                code, kb, err = run([perfsim] + args)
                print(f"  {args[0]:9} exit {code:4}  peak RSS {kb / 1024:8.1f} MB  {' '.join(err)[:110]}")
            deep = deep_fingerprint(perfsim, tmp, 60000)
            print(f"C1: fingerprint nested 60,000 deep; JSON fleet nested 200,000 deep")
            for args in (["validate", deep], ["diff", deep, deep], ["redact", deep, "-o", out],
                         ["serve", "--listen", "127.0.0.1:0", "--capture", deep],
                         ["serve", "--list-hosts", "--fleet", fleet]):
                code, kb, err = run(["timeout", "20", perfsim] + args)
                print(f"  {args[0]:9} exit {code:4}  peak RSS {kb / 1024:8.1f} MB  {' '.join(err)[:110]}")
            before, after, status = posted_events(perfsim)
            print(f"AD1: 60 reboots posted: serve VmRSS {before / 1024:.1f} -> {after / 1024:.1f} MB "
                  f"({(after - before) / 60:.0f} KB an event), last answer {status}")


if __name__ == "__main__":
    main()

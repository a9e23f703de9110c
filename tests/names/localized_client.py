#!/usr/bin/python3
"""A collector that uses localized names, as on a German host: it reads a name table
(`Counter 007`, `Counter 009`, `Counter CurrentLanguage`, ...), resolves an object and a counter by
their names in it, asks for the object by index twice (a stepping host serves the next sample each
time) and formats the counter between the two samples. Prints one JSON object on stdout:
  {"tables": {VALUE: hex of the bytes received}, "reads": [{lang, object, counter, object_index,
   counter_index, type, value}], "errors": [...]}
Usage: localized_client.py --port P --client samba|impacket --tables "Counter 007" ...
       --read LANG OBJECT COUNTER (repeatable) --perflib 804 ... (HKLM Perflib\\<LANG> Counter, Help)"""
import argparse
import json
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))

ERROR_MORE_DATA = 234
PERFLIB = "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib"
PERF_COUNTER_COUNTER = 0x10410400
PERF_COUNTER_BULK_COUNT = 0x10410500
PERF_COUNTER_RAWCOUNT = 0x00010000
PERF_COUNTER_LARGE_RAWCOUNT = 0x00010100


class SambaClient:
    def __init__(self, port):
        from samba import WERRORError, credentials, param
        from samba.dcerpc import security, winreg
        self.WERRORError, self.winreg = WERRORError, winreg
        lp = param.LoadParm()
        creds = credentials.Credentials()
        creds.guess(lp)
        creds.set_anonymous()
        self.conn = winreg.winreg(f"ncacn_ip_tcp:127.0.0.1[{port}]", lp, creds)
        self.access = security.SEC_FLAG_MAXIMUM_ALLOWED
        self.hkpd = self.conn.OpenHKPD(None, self.access)

    def perflib(self, lang, value):
        """HKLM\\...\\Perflib\\<lang> <value>, as a collector reads it over HKLM."""
        k = self.winreg.String()
        k.name = PERFLIB + "\\" + lang
        key = self.conn.OpenKey(self.conn.OpenHKLM(None, self.access), k, 0, self.access)
        return self.query(value, key)

    def query(self, name, key=None):
        s = self.winreg.String()
        s.name = name
        offer = 65536
        for _ in range(12):
            try:
                _, data, _, _ = self.conn.QueryValue(key or self.hkpd, s, 0, [], offer, 0)
                return bytes(data)
            except self.WERRORError as e:
                if e.args[0] != ERROR_MORE_DATA:
                    raise RuntimeError(f"{name}: WERROR {e.args[0]}")
                offer *= 2
        raise RuntimeError(f"{name}: still ERROR_MORE_DATA at {offer} bytes")


class ImpacketClient:
    def __init__(self, port):
        from impacket.dcerpc.v5 import rrp, transport
        self.rrp = rrp
        t = transport.DCERPCTransportFactory(f"ncacn_ip_tcp:127.0.0.1[{port}]")
        t.set_connect_timeout(10)
        self.dce = t.get_dce_rpc()
        self.dce.connect()
        self.dce.bind(rrp.MSRPC_UUID_RRP)
        self.hkpd = rrp.hOpenPerformanceData(self.dce)["phKey"]

    def perflib(self, lang, value):
        hklm = self.rrp.hOpenLocalMachine(self.dce)["phKey"]
        key = self.rrp.hBaseRegOpenKey(self.dce, hklm, PERFLIB + "\\" + lang)["phkResult"]
        _, data = self.rrp.hBaseRegQueryValue(self.dce, key, value)
        # impacket hands REG_MULTI_SZ back decoded; a collector wants the bytes as sent.
        if isinstance(data, str):
            return data.encode("utf-16-le")
        return bytes(data)

    def query(self, name):
        import impacket_hkpd as hk  # a growing buffer: a 2008+ host's size said is not usable
        return hk.read_value(self.dce, self.hkpd, name)[1]


def name_map(data):
    """REG_MULTI_SZ table -> {text: first index}, as a collector resolves names."""
    strings = data.decode("utf-16-le").split("\0")
    out = {}
    for i in range(0, len(strings) - 1, 2):
        if strings[i].isdigit():
            out.setdefault(strings[i + 1], int(strings[i]))
    return out


def find_counter(data, object_index, counter_index):
    """(counter type, value, perf_time, perf_freq) of the object's first instance (or its only block)."""
    total, header, count = struct.unpack_from("<III", data, 20)
    off = header
    for _ in range(count):
        obj_total, def_len, hdr_len, title = struct.unpack_from("<IIII", data, off)
        if title != object_index:
            off += obj_total
            continue
        num_counters, _, num_instances = struct.unpack_from("<IiI", data, off + 32)
        num_instances = struct.unpack_from("<i", data, off + 40)[0]
        perf_time, perf_freq = struct.unpack_from("<qq", data, off + 48)
        c = off + hdr_len
        for _ in range(num_counters):
            byte_len, name_idx = struct.unpack_from("<II", data, c)
            ctype, csize, coff = struct.unpack_from("<III", data, c + 28)
            if name_idx == counter_index:
                break
            c += byte_len
        else:
            raise RuntimeError(f"object {object_index} has no counter {counter_index}")
        block = off + def_len
        if num_instances > 0:  # the first instance's counter block follows its definition
            block += struct.unpack_from("<I", data, block)[0]
        fmt = "<Q" if csize == 8 else "<I"
        return ctype, struct.unpack_from(fmt, data, block + coff)[0], perf_time, perf_freq
    raise RuntimeError(f"object {object_index} is not in the answer")


def formatted(ctype, a, b):
    if ctype in (PERF_COUNTER_COUNTER, PERF_COUNTER_BULK_COUNT):
        return (b[1] - a[1]) / ((b[2] - a[2]) / b[3])
    if ctype in (PERF_COUNTER_RAWCOUNT, PERF_COUNTER_LARGE_RAWCOUNT):
        return float(b[1])
    raise RuntimeError(f"counter type {ctype:#x} is not formatted by this collector")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--client", choices=["samba", "impacket"], required=True)
    p.add_argument("--tables", nargs="*", default=[])
    p.add_argument("--read", nargs=3, action="append", default=[], metavar=("LANG", "OBJECT", "COUNTER"))
    p.add_argument("--perflib", nargs="*", default=[], metavar="LANG")
    args = p.parse_args()
    out = {"client": args.client, "tables": {}, "perflib": {}, "reads": [], "errors": []}
    try:
        c = SambaClient(args.port) if args.client == "samba" else ImpacketClient(args.port)
        for name in args.tables:
            out["tables"][name] = c.query(name).hex()
        for lang in args.perflib:
            out["perflib"][lang] = {v: c.perflib(lang, v).hex() for v in ("Counter", "Help")}
        for lang, obj, ctr in args.read:
            names = name_map(c.query(f"Counter {lang}"))
            if obj not in names or ctr not in names:
                out["errors"].append(f"Counter {lang} has no {obj!r} or no {ctr!r}")
                continue
            oi, ci = names[obj], names[ctr]
            a = find_counter(c.query(str(oi)), oi, ci)
            b = find_counter(c.query(str(oi)), oi, ci)
            out["reads"].append({"lang": lang, "object": obj, "counter": ctr, "object_index": oi,
                                 "counter_index": ci, "type": a[0], "perf_times": [a[2], b[2]],
                                 "value": formatted(a[0], a, b)})
    except Exception as e:  # reported, the test prints it
        out["errors"].append(f"{type(e).__name__}: {e}")
    print(json.dumps(out, ensure_ascii=False))
    sys.stdout.flush()
    sys.exit(1 if out["errors"] else 0)


if __name__ == "__main__":
    main()

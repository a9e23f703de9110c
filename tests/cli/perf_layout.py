#!/usr/bin/python3
"""Reads HKEY_PERFORMANCE_DATA values from a perfsim server with impacket over ncacn_ip_tcp and
writes, per value, the PERF_DATA_BLOCK as a collector walks it (MS-RRP BaseRegQueryValue on the
HKPD key; the layout from Microsoft's winperf.h documentation: PERF_DATA_BLOCK, PERF_OBJECT_TYPE,
PERF_COUNTER_DEFINITION, PERF_INSTANCE_DEFINITION, PERF_COUNTER_BLOCK): system name, objects,
counter definitions, instances (name, parent, counter block bytes as hex).
Usage: perf_layout.py --port P --out FILE.json [VALUE ...] (default Global)."""
import argparse
import json
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
try:
    import impacket_hkpd as hk
    from impacket.dcerpc.v5 import rrp
except ImportError as e:
    print(f"python3-impacket is missing: {e}", file=sys.stderr)
    sys.exit(77)


def utf16(data, off, length):
    return data[off:off + length].decode("utf-16-le").rstrip("\0")


def walk(data):
    total, header, count = struct.unpack_from("<III", data, 20)
    name_len, name_off = struct.unpack_from("<II", data, 80)
    block = {"total": total, "system_name": utf16(data, name_off, name_len), "objects": []}
    off = header
    for _ in range(count):
        if off >= total:
            break
        o_total, def_len, hdr_len, index = struct.unpack_from("<IIII", data, off)
        n_counters, _, n_instances = struct.unpack_from("<Iii", data, off + 32)
        obj = {"index": index, "counters": [], "num_instances": n_instances, "instances": []}
        c = off + hdr_len
        for _ in range(n_counters):
            c_len, c_index = struct.unpack_from("<II", data, c)
            c_type, c_size, c_offset = struct.unpack_from("<III", data, c + 28)
            obj["counters"].append([c_index, c_type, c_size, c_offset])
            c += c_len
        p = off + def_len
        if n_instances == -1:
            (b_len,) = struct.unpack_from("<I", data, p)
            obj["block"] = data[p:p + b_len].hex()
        for _ in range(max(n_instances, 0)):
            i_len, parent_title, parent_inst, _, n_off, n_len = struct.unpack_from("<IIIiII", data, p)
            if i_len % 8 or (p + i_len) % 8:
                raise ValueError(f"object {index}: counter block at {p + i_len} not 8-byte aligned")
            (b_len,) = struct.unpack_from("<I", data, p + i_len)
            obj["instances"].append({"name": utf16(data, p + n_off, n_len), "parent": [parent_title, parent_inst],
                                     "block": data[p + i_len:p + i_len + b_len].hex()})
            p += i_len + b_len
        block["objects"].append(obj)
        off += o_total
    return block


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("values", nargs="*", default=["Global"])
    args = ap.parse_args()
    dce, hkpd = hk.open_hkpd("127.0.0.1", args.port)
    out = {}
    for value in args.values:
        _, data = hk.read_value(dce, hkpd, value)
        out[value] = walk(bytes(data))
    hk.close(dce, hkpd)
    with open(args.out, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()

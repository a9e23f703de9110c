"""What both interop collectors share: the sequence they run, how they record what they received
and the checks a collector can make on its own (PERF signature, TotalByteLength == size, name
tables decode). The client-specific scripts (collector_samba.py, collector_impacket.py) only
provide a Session that talks to the server with their library.

Output (in --out DIR): result.json and values/<n>.bin, the raw bytes of each value received.
Exit status: 0 all self-checks passed, 1 some failed (listed in result.json "failures" and on
stderr), 3 a client library is missing.
"""
import argparse
import json
import os
import struct
import sys
import traceback

PERFLIB_KEY = "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib"
UNKNOWN_NAME = "NoSuchValue"
# The HKPD values a collector reads, in the order it reads them.
PERF_VALUES = ["Counter 009", "Help 009", "Global", "238", "230 232", "Costly", UNKNOWN_NAME]
NAME_TABLES = ("Counter 009", "Help 009")

REG_BINARY, REG_DWORD, REG_MULTI_SZ = 3, 4, 7
ERROR_MORE_DATA = 234
ERROR_INVALID_HANDLE = 6
PERF_DATA_BLOCK_SIZE = 88


def missing_library(what, err):
    print(f"{what} is not importable by {sys.executable} ({err}); run scripts/install-deps.sh",
          file=sys.stderr)
    sys.exit(3)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--out", required=True)
    # Over SMB (ncacn_np, \\PIPE\\winreg through smbd) instead of ncacn_ip_tcp.
    p.add_argument("--smb", action="store_true")
    p.add_argument("--address", default="127.0.0.1")
    p.add_argument("--epm", action="store_true",
                   help="over TCP, bind without a port: the endpoint mapper (port 135) names it")
    p.add_argument("--user", default="", help="SMB account; empty = anonymous")
    p.add_argument("--password", default="")
    p.add_argument("--smb1", action="store_true", help="offer only SMB1 (NT LM 0.12)")
    p.add_argument("--open-only", action="store_true",
                   help="stop after OpenHKPD; result.json says its status (access checks)")
    return p.parse_args()


class Recorder:
    """Collects what the client received into result.json and values/*.bin."""

    def __init__(self, client, out_dir, port):
        self.out_dir = out_dir
        os.makedirs(os.path.join(out_dir, "values"), exist_ok=True)
        self.result = {"client": client, "port": port, "values": [], "names": {},
                       "objects": {}, "query_info": {}, "enum_values": {}, "close": [],
                       "failures": []}

    def fail(self, message):
        self.result["failures"].append(message)
        print(f"{self.result['client']}: CHECK FAILED: {message}", file=sys.stderr)

    def save_bytes(self, data):
        n = sum(1 for _ in os.scandir(os.path.join(self.out_dir, "values")))
        rel = f"values/{n}.bin"
        with open(os.path.join(self.out_dir, rel), "wb") as f:
            f.write(data)
        return rel

    def add_value(self, key, name, status, vtype, size, data, attempts):
        entry = {"key": key, "name": name, "status": status, "type": vtype, "size": size,
                 "attempts": attempts}
        if data is not None:
            entry["file"] = self.save_bytes(data)
            entry["length"] = len(data)
        self.result["values"].append(entry)
        return entry

    def write(self):
        with open(os.path.join(self.out_dir, "result.json"), "w") as f:
            json.dump(self.result, f, indent=1)


def perf_objects(data):
    """Walks a PERF_DATA_BLOCK; returns (object title indices, problems)."""
    problems = []
    if len(data) < PERF_DATA_BLOCK_SIZE:
        return [], [f"{len(data)} bytes is shorter than a PERF_DATA_BLOCK"]
    if data[:8] != "PERF".encode("utf-16-le"):
        problems.append(f"signature {data[:8]!r} is not UTF-16 'PERF'")
    total, header, count = struct.unpack_from("<III", data, 20)
    if total != len(data):
        problems.append(f"TotalByteLength {total} != {len(data)} bytes received")
    objects, off = [], header
    for i in range(count):
        if off + 16 > len(data):
            problems.append(f"object {i} at {off} runs past the end")
            break
        obj_total, _, _, title = struct.unpack_from("<IIII", data, off)
        if obj_total == 0 or off + obj_total > len(data):
            problems.append(f"object {i} at {off}: TotalByteLength {obj_total} out of bounds")
            break
        objects.append(title)
        off += obj_total
    return objects, problems


def name_pairs(data):
    """REG_MULTI_SZ `index\\0text\\0...\\0\\0` -> [[index_text, text], ...]; raises on damage."""
    text = data.decode("utf-16-le")
    if not text.endswith("\0\0") and text != "\0":
        raise ValueError("table does not end with an empty string")
    strings = text[:-2].split("\0") if len(text) > 1 else []
    if len(strings) % 2:
        raise ValueError(f"{len(strings)} strings do not make index/text pairs")
    pairs = [[strings[i], strings[i + 1]] for i in range(0, len(strings), 2)]
    for idx, _ in pairs:
        if not idx.isdigit():
            raise ValueError(f"index {idx!r} is not decimal")
    return pairs


def check_value(rec, entry, data):
    """The checks a collector can make on one value it received."""
    name = entry["name"]
    if entry["status"] != 0 or data is None:
        rec.fail(f"{name}: status {entry['status']}, no data")
        return
    if entry["size"] is not None and entry["size"] != len(data):
        rec.fail(f"{name}: data_size {entry['size']} != {len(data)} bytes returned")
    if name in NAME_TABLES:
        if entry["type"] != REG_MULTI_SZ:
            rec.fail(f"{name}: type {entry['type']}, expected REG_MULTI_SZ")
        try:
            rec.result["names"][name] = name_pairs(data)
        except (ValueError, UnicodeDecodeError) as e:
            rec.fail(f"{name}: name table does not decode: {e}")
        return
    if entry["key"] != "HKPD":
        return
    if entry["type"] != REG_BINARY:
        rec.fail(f"{name}: type {entry['type']}, expected REG_BINARY")
    objects, problems = perf_objects(data)
    for p in problems:
        rec.fail(f"{name}: {p}")
    rec.result["objects"][name] = objects


def check_session(rec):
    """Checks across values: Last Counter matches the Counter table's declared last index."""
    counter = rec.result["names"].get("Counter 009")
    last = next((v for v in rec.result["values"] if v["name"] == "Last Counter"), None)
    if last is None or last.get("length") != 4:
        rec.fail(f"Last Counter: not a DWORD: {last}")
    elif counter:
        with open(os.path.join(rec.out_dir, last["file"]), "rb") as f:
            value = struct.unpack("<I", f.read())[0]
        if counter[0][0] != "1" or int(counter[0][1]) != value:
            rec.fail(f"Last Counter {value} != the Counter table's first pair {counter[0]}")
    for name in PERF_VALUES:
        if name not in NAME_TABLES and name not in rec.result["objects"]:
            rec.fail(f"{name}: no PERF_DATA_BLOCK received")
    unknown = rec.result["objects"].get(UNKNOWN_NAME)
    if unknown:
        rec.fail(f"{UNKNOWN_NAME}: expected no objects, got {unknown}")


def run(client, session_factory):
    """session_factory(args) -> Session with the methods used below."""
    args = parse_args()
    rec = Recorder(client, args.out, args.port)
    rec.result.update({"address": args.address, "transport": "smb" if args.smb else "tcp"})
    try:
        s = session_factory(args)
        rec.result["dialect"] = s.dialect() if hasattr(s, "dialect") else None
        if args.open_only:
            rec.result["open_hkpd"] = s.open_hkpd_status()
            rec.write()
            sys.exit(0)
        hkpd = s.open_hkpd()
        for name in PERF_VALUES:
            entry, data = s.query_value(rec, "HKPD", hkpd, name)
            check_value(rec, entry, data)
        hklm = s.open_hklm()
        perflib = s.open_key(hklm, PERFLIB_KEY)
        entry, data = s.query_value(rec, "Perflib", perflib, "Last Counter")
        if entry["status"] != 0 or entry["type"] != REG_DWORD:
            rec.fail(f"Last Counter: status {entry['status']} type {entry['type']}")
        for label, h in (("HKPD", hkpd), ("Perflib", perflib)):
            rec.result["query_info"][label] = s.query_info_key(h)
            rec.result["enum_values"][label] = [s.enum_value(rec, h, i)
                                                for i in range(rec.result["query_info"][label]["num_values"])]
        rec.result["version"] = s.get_version(hklm)
        for h in (perflib, hklm, hkpd):
            rec.result["close"].append(s.close_key(h))
        # A handle already closed must be refused, not crash the server or the session.
        rec.result["close_again"] = s.close_key(hkpd)
        if rec.result["close"] != [0, 0, 0]:
            rec.fail(f"CloseKey statuses {rec.result['close']}")
        if rec.result["close_again"] != ERROR_INVALID_HANDLE:
            rec.fail(f"second CloseKey gave {rec.result['close_again']}, expected {ERROR_INVALID_HANDLE}")
        s.disconnect()
        check_session(rec)
    except Exception as e:  # the session broke: report it with the trace, keep what was received
        rec.fail(f"session aborted: {type(e).__name__}: {e}")
        traceback.print_exc()
    rec.write()
    sys.exit(1 if rec.result["failures"] else 0)

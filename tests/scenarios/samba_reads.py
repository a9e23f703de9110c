#!/usr/bin/python3
"""python3-samba reads for the scenario tests, printed as one JSON object on stdout.
  names  --lang LLL : Counter LLL over HKEY_PERFORMANCE_DATA (--hive text / nls: a bare Counter
                      over HKEY_PERFORMANCE_TEXT / _NLSTEXT) and Perflib's Last Counter over HKLM: {"entries": n, "highest": i, "last_counter": k, "duplicates": [...],
                      "names": {index: name} for the indices asked with --index}
  value  --key K --value V : one HKLM value: {"type": t, "dword": d} (REG_DWORD) or {"type": t}
Usage: samba_reads.py --address A --port P names|value ..."""
import argparse
import json
import struct
import sys

try:
    from samba import credentials, param
    from samba.dcerpc import winreg, misc, security
except ImportError as e:
    print(f"python3-samba is not importable by {sys.executable} ({e})", file=sys.stderr)
    sys.exit(3)

PERFLIB = "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib"


def connect(address, port):
    lp = param.LoadParm()
    c = credentials.Credentials()
    c.guess(lp)
    c.set_anonymous()
    return winreg.winreg(f"ncacn_ip_tcp:{address}[{port}]", lp, c)


def name(s):
    n = winreg.String()
    n.name = s
    return n


def query(conn, handle, value, size=1 << 16):
    """QueryValue with a buffer grown by doubling (bounded): (type, bytes)."""
    for _ in range(12):
        try:
            t, data, _, _ = conn.QueryValue(handle, name(value), 0, [], size, 0)
            return t, bytes(data)
        except Exception as e:  # WERRORError(234) asks for more
            if e.args and e.args[0] == 234:
                size *= 2
                continue
            raise
    raise RuntimeError(f"{value}: no size worked")


def multi_sz(data):
    return [s for s in data.decode("utf-16-le").split("\0") if s]


def names(conn, args):
    if args.hive == "data":
        hive = conn.OpenHKPD(None, security.SEC_FLAG_MAXIMUM_ALLOWED)
        _, data = query(conn, hive, f"Counter {args.lang}")
    else:
        open_hive = conn.OpenHKPT if args.hive == "text" else conn.OpenHKPN
        hive = open_hive(None, security.SEC_FLAG_MAXIMUM_ALLOWED)
        _, data = query(conn, hive, "Counter")
    strings = multi_sz(data)
    pairs = [(int(strings[i]), strings[i + 1]) for i in range(0, len(strings) - 1, 2)]
    seen, dups = {}, []
    for idx, text in pairs:
        if text in seen and text not in dups:
            dups.append(text)
        seen.setdefault(text, idx)
    hklm = conn.OpenHKLM(None, security.SEC_FLAG_MAXIMUM_ALLOWED)
    perflib = conn.OpenKey(hklm, name(PERFLIB), 0, security.SEC_FLAG_MAXIMUM_ALLOWED)
    _, lc = query(conn, perflib, "Last Counter", 64)
    table = dict(pairs)
    return {"entries": len(pairs), "highest": max(i for i, _ in pairs),
            "last_counter": struct.unpack("<I", lc[:4])[0], "duplicates": dups,
            "names": {str(i): table.get(i) for i in args.index}}


def value(conn, args):
    hklm = conn.OpenHKLM(None, security.SEC_FLAG_MAXIMUM_ALLOWED)
    key = conn.OpenKey(hklm, name(args.key), 0, security.SEC_FLAG_MAXIMUM_ALLOWED)
    t, data = query(conn, key, args.value, 64)
    out = {"type": t}
    if t == misc.REG_DWORD:
        out["dword"] = struct.unpack("<I", data[:4])[0]
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--address", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("op", choices=["names", "value"])
    p.add_argument("--lang", default="009")
    p.add_argument("--hive", choices=["data", "text", "nls"], default="data")
    p.add_argument("--index", type=int, action="append", default=[])
    p.add_argument("--key", default="")
    p.add_argument("--value", default="")
    args = p.parse_args()
    conn = connect(args.address, args.port)
    print(json.dumps(names(conn, args) if args.op == "names" else value(conn, args)))


if __name__ == "__main__":
    main()

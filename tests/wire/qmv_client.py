#!/usr/bin/python3
"""python3-samba's QueryMultipleValues and QueryMultipleValues2 on Perflib's "Last Counter" and
"Last Help" (a first name of 2 mod 4 bytes, issue 30), over ncacn_ip_tcp, anonymously. Prints one
JSON object: per call the names, types, lengths and the DWORDs read from the buffer, and under
"query_value" each name's DWORD as a plain QueryValue of the same key reads it (the host's value).
Usage: qmv_client.py --port P"""
import argparse
import json
import struct
import sys

from samba import WERRORError, credentials, param
from samba.dcerpc import security, winreg

PERFLIB = "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib"
NAMES = ["Last Counter", "Last Help"]


def entries():
    out = []
    for n in NAMES:
        e = winreg.QueryMultipleValue()
        b = winreg.ValNameBuf()
        b.name = n
        b.size = 2 * (len(n) + 1)
        e.ve_valuename = b
        out.append(e)
    return out


def describe(values, buf):
    return [{"name": v.ve_valuename.name, "type": v.ve_type, "len": v.ve_valuelen,
             "dword": struct.unpack_from("<I", bytes(buf), v.ve_valueptr)[0]} for v in values]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    args = ap.parse_args()
    lp = param.LoadParm()
    creds = credentials.Credentials()
    creds.guess(lp)
    creds.set_anonymous()
    conn = winreg.winreg(f"ncacn_ip_tcp:127.0.0.1[{args.port}]", lp, creds)
    hklm = conn.OpenHKLM(None, security.SEC_FLAG_MAXIMUM_ALLOWED)
    name = winreg.String()
    name.name = PERFLIB
    key = conn.OpenKey(hklm, name, 0, security.SEC_FLAG_MAXIMUM_ALLOWED)
    result = {}
    try:
        values, buf = conn.QueryMultipleValues(key, entries(), [0] * 64)
        result["qmv"] = describe(values, buf)
    except (WERRORError, RuntimeError) as e:
        result["qmv_error"] = str(e)
    try:
        values, buf, needed = conn.QueryMultipleValues2(key, entries(), [0] * 64)
        result["qmv2"] = describe(values, buf)
        result["qmv2_needed"] = needed
    except (WERRORError, RuntimeError) as e:
        result["qmv2_error"] = str(e)
    result["query_value"] = {}
    for n in NAMES:
        s = winreg.String()
        s.name = n
        _, data, _, _ = conn.QueryValue(key, s, 0, [0] * 4, 4, 0)
        result["query_value"][n] = struct.unpack_from("<I", bytes(data))[0]
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

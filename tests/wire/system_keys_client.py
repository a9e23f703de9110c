#!/usr/bin/python3
"""impacket's winreg (MS-RRP over ncacn_ip_tcp, anonymously) reading the keys system tools read
(issue 30): Session Manager\\Environment, CurrentVersion, ProductOptions, ComputerName; and, to
compare them with, the Processor object (238) of HKEY_PERFORMANCE_DATA: its instance names and
the PERF_DATA_BLOCK's system name. Prints one JSON object.
Usage: system_keys_client.py --port P"""
import argparse
import json
import struct
import sys

from impacket.dcerpc.v5 import rrp, transport

KEYS = {
    "env": ("SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Environment",
            ["NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE", "PROCESSOR_IDENTIFIER", "PROCESSOR_LEVEL",
             "PROCESSOR_REVISION", "OS", "ComSpec", "windir"]),
    "cv": ("SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion",
           ["ProductName", "CurrentVersion", "CurrentBuild", "CurrentBuildNumber", "CSDVersion", "InstallDate",
            "EditionID"]),
    "po": ("SYSTEM\\CurrentControlSet\\Control\\ProductOptions", ["ProductType"]),
    "cn": ("SYSTEM\\CurrentControlSet\\Control\\ComputerName\\ComputerName", ["ComputerName"]),
}


def read_values(dce, hklm, path, names):
    out = {}
    key = rrp.hBaseRegOpenKey(dce, hklm, path, samDesired=rrp.KEY_READ)["phkResult"]
    for n in names:
        try:
            vtype, data = rrp.hBaseRegQueryValue(dce, key, n)
        except rrp.DCERPCSessionError as e:
            out[n] = {"error": e.get_error_code()}
            continue
        if isinstance(data, str):
            data = data.rstrip("\0")
        out[n] = {"type": vtype, "value": data}
    rrp.hBaseRegCloseKey(dce, key)
    return out


def processor_instances(data):
    """Instance names of object 238 in a PERF_DATA_BLOCK, and the block's system name."""
    _, header, count = struct.unpack_from("<III", data, 20)
    name_len, name_off = struct.unpack_from("<II", data, 80)
    system = data[name_off:name_off + name_len].decode("utf-16-le").rstrip("\0")
    off, names = header, None
    for _ in range(count):
        total, definition, _, title = struct.unpack_from("<IIII", data, off)
        if title == 238:
            (num,) = struct.unpack_from("<i", data, off + 40)
            names, at = [], off + definition
            for _ in range(max(num, 0)):
                length, name_at, name_bytes = struct.unpack_from("<I", data, at)[0], *struct.unpack_from("<II", data, at + 16)
                names.append(data[at + name_at:at + name_at + name_bytes].decode("utf-16-le").rstrip("\0"))
                at += length
                (block,) = struct.unpack_from("<I", data, at)
                at += block
            break
        off += total
    return system, names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    args = ap.parse_args()
    t = transport.DCERPCTransportFactory(f"ncacn_ip_tcp:127.0.0.1[{args.port}]")
    dce = t.get_dce_rpc()
    dce.connect()
    dce.bind(rrp.MSRPC_UUID_RRP)
    hklm = rrp.hOpenLocalMachine(dce)["phKey"]
    result = {k: read_values(dce, hklm, path, names) for k, (path, names) in KEYS.items()}
    hkpd = rrp.hOpenPerformanceData(dce)["phKey"]
    _, data = rrp.hBaseRegQueryValue(dce, hkpd, "238", dataLen=65536)
    result["system_name"], result["processor_instances"] = processor_instances(bytes(data))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""A recorded collector session, replayed: the winreg calls PDH and typical collectors make (HKLM
Perflib values, the name tables, HKPD Global/Costly/index lists with the buffer sizes collectors
offer, HKPT/HKPN, enumeration), each answer's raw NDR stub printed as one JSON line (opnum, what
was asked, length, SHA-256). Policy handles in open answers are zeroed: the server draws them at
random. Used by scripts/identical-outputs.sh to show that a change leaves every answer
byte-identical. Usage: answers.py --port P"""
import argparse
import hashlib
import json
import sys

try:
    from impacket.dcerpc.v5 import rrp, transport
except ImportError as e:
    print(f"python3-impacket is missing ({e}); run scripts/install-deps.sh", file=sys.stderr)
    sys.exit(3)

PERFLIB = "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib"
CURRENT_VERSION = "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion"


class Session:
    def __init__(self, port):
        t = transport.DCERPCTransportFactory(f"ncacn_ip_tcp:127.0.0.1[{port}]")
        t.set_connect_timeout(10)
        self.dce = t.get_dce_rpc()
        self.dce.connect()
        self.dce.bind(rrp.MSRPC_UUID_RRP)

    def raw(self, label, req, handle_answer=False):
        self.dce.call(req.opnum, req)
        stub = self.dce.recv()
        shown = (b"\0" * 20 + stub[20:]) if handle_answer and len(stub) >= 24 else stub
        print(json.dumps({"opnum": req.opnum, "asked": label, "len": len(stub),
                          "sha256": hashlib.sha256(shown).hexdigest()}))
        return stub

    def open_hive(self, cls, label):
        req = cls()
        req["ServerName"] = rrp.NULL
        req["samDesired"] = 0x02000000
        stub = self.raw(label, req, handle_answer=True)
        return getattr(rrp, cls.__name__ + "Response")(stub)["phKey"]

    def open_key(self, hkey, path):
        req = rrp.BaseRegOpenKey()
        req["hKey"] = hkey
        req["lpSubKey"] = path + "\x00"
        req["dwOptions"] = 0
        req["samDesired"] = 0x20019
        stub = self.raw("open " + path, req, handle_answer=True)
        return rrp.BaseRegOpenKeyResponse(stub)["phkResult"]

    def query(self, hkey, name, size, data=True):
        req = rrp.BaseRegQueryValue()
        req["hKey"] = hkey
        req["lpValueName"] = name + "\x00"
        req["lpType"] = 0
        if data:
            req["lpData"] = b" " * min(size, 64)
        else:
            req["lpData"] = rrp.NULL
        req["lpcbData"] = size
        req["lpcbLen"] = size
        self.raw(f"query {name!r} size {size} data {data}", req)

    def enum_value(self, hkey, index):
        req = rrp.BaseRegEnumValue()
        req["hKey"] = hkey
        req["dwIndex"] = index
        req["lpValueNameIn"] = " " * 64
        req["lpType"] = 0
        req["lpData"] = b" " * 16
        req["lpcbData"] = 4096
        req["lpcbLen"] = 4096
        self.raw(f"enum value {index}", req)

    def info(self, hkey, label):
        req = rrp.BaseRegQueryInfoKey()
        req["hKey"] = hkey
        req["lpClassIn"] = rrp.NULL
        self.raw("info " + label, req)

    def close(self, hkey, label):
        req = rrp.BaseRegCloseKey()
        req["hKey"] = hkey
        self.raw("close " + label, req, handle_answer=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    args = p.parse_args()
    s = Session(args.port)

    hklm = s.open_hive(rrp.OpenLocalMachine, "OpenHKLM")
    for path, values in ((CURRENT_VERSION, ("CurrentVersion", "CurrentBuildNumber", "ProductName")),
                         (PERFLIB, ("Last Counter", "Last Help", "Version", "Disable Performance Counters")),
                         (PERFLIB + "\\009", ("Counter", "Help")),
                         ("SYSTEM\\CurrentControlSet\\Services\\PerfProc\\Performance", ("Library", "Open"))):
        k = s.open_key(hklm, path)
        for v in values:
            s.query(k, v, 0, data=False)
            s.query(k, v, 1 << 20)
        s.info(k, path)
        for i in range(3):
            s.enum_value(k, i)
        s.close(k, path)
    s.close(hklm, "HKLM")

    hkpd = s.open_hive(rrp.OpenPerformanceData, "OpenHKPD")
    for name in ("Global", "Costly", "238", "230 238", "2 4 6", "Counter 009", "Help 009", "Nonexistent"):
        for size, data in ((0, False), (16, True), (65536, True), (4 << 20, True)):
            s.query(hkpd, name, size, data)
    s.info(hkpd, "HKPD")
    for i in range(3):
        s.enum_value(hkpd, i)
    s.close(hkpd, "HKPD")

    for cls, label in ((rrp.OpenPerformanceText, "OpenHKPT"), (rrp.OpenPerformanceNlsText, "OpenHKPN")):
        k = s.open_hive(cls, label)
        for name in ("Counter", "Help"):
            s.query(k, name, 0, data=False)
            s.query(k, name, 4 << 20)
        s.close(k, label)


if __name__ == "__main__":
    main()

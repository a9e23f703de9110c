#!/usr/bin/python3
"""Polls many SMB hosts at once, each at its own address (\\\\ADDR\\PIPE\\winreg): worker processes
share the addresses; each opens all of its sessions first (so they are open together), then per
host OpenHKPD, Global and a small index query ("238"), and reports what each host answered.

Usage: poll_fleet.py --client samba|impacket --port P --out FILE --workers W [--values V,...]
                    [--transport smb|tcp] ADDR...   (tcp: python3-samba only)
FILE gets {ADDR: {"dialect", VALUE: {"name", "objects"}...} or {"error": text}} (--values, default
Global,238: SystemName and NumObjectTypes of each answer).
Exit status: 0 done (per-host errors are in FILE), 3 the client library is missing.
"""
import argparse
import json
import multiprocessing
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))

ERROR_MORE_DATA = 234


def block_facts(data):
    """(SystemName, NumObjectTypes) of a PERF_DATA_BLOCK."""
    if data[:8] != "PERF".encode("utf-16-le"):
        raise ValueError("no PERF signature")
    num_objects = struct.unpack_from("<I", data, 28)[0]
    length, offset = struct.unpack_from("<II", data, 80)
    return data[offset:offset + length].decode("utf-16-le").rstrip("\0"), num_objects


class Samba:
    tcp = False  # --transport tcp: ncacn_ip_tcp to ADDR[PORT] instead of \\ADDR\PIPE\winreg

    def __init__(self, address, port):
        from samba import credentials, param
        from samba.dcerpc import security, winreg
        self.winreg, self.security = winreg, security
        lp = param.LoadParm()
        lp.set("smb ports", str(port))
        lp.set("client min protocol", "NT1")  # NT1-only hosts (2000/XP/2003) among them
        creds = credentials.Credentials()
        creds.guess(lp)
        creds.set_anonymous()
        binding = f"ncacn_ip_tcp:{address}[{port}]" if Samba.tcp else f"ncacn_np:{address}[\\pipe\\winreg]"
        self.conn = winreg.winreg(binding, lp, creds)

    def dialect(self):
        return None

    def poll(self, value):
        from samba import WERRORError
        hkpd = self.conn.OpenHKPD(None, self.security.SEC_FLAG_MAXIMUM_ALLOWED)
        s = self.winreg.String()
        s.name = value
        offer = 65536
        for _ in range(16):
            try:
                _, data, _, _ = self.conn.QueryValue(hkpd, s, 0, [], offer, 0)
                self.conn.CloseKey(hkpd)
                return bytes(data)
            except WERRORError as e:
                if e.args[0] != ERROR_MORE_DATA:
                    raise
                offer *= 2
        raise RuntimeError(f"{value}: still ERROR_MORE_DATA at {offer} bytes")

    def close(self):
        self.conn = None


class Impacket:
    def __init__(self, address, port):
        from impacket.dcerpc.v5 import rrp, transport
        from impacket.smbconnection import SMBConnection
        self.rrp = rrp
        self.smb = SMBConnection(address, address, sess_port=port, timeout=30)
        self.smb.login("", "")
        t = transport.SMBTransport(address, port, r"\winreg", smb_connection=self.smb)
        self.dce = t.get_dce_rpc()
        self.dce.connect()
        self.dce.bind(rrp.MSRPC_UUID_RRP)

    def dialect(self):
        from impacket import smb
        d = self.smb.getDialect()
        return "NT1" if d == smb.SMB_DIALECT else f"0x{d:04x}"

    def poll(self, value):
        hkpd = self.rrp.hOpenPerformanceData(self.dce)["phKey"]
        import impacket_hkpd as hk  # a growing buffer: a 2008+ host's size said is not usable
        _, data = hk.read_value(self.dce, hkpd, value)
        self.rrp.hBaseRegCloseKey(self.dce, hkpd)
        return bytes(data)

    def close(self):
        self.dce.disconnect()
        self.smb.close()


def work(job):
    client, port, addresses, values, tcp = job
    Samba.tcp = tcp
    cls = Samba if client == "samba" else Impacket
    sessions, out = {}, {}
    for a in addresses:  # all of this worker's sessions open at once
        try:
            sessions[a] = cls(a, port)
        except Exception as e:  # noqa: BLE001 - reported per host
            out[a] = {"error": f"connect: {type(e).__name__}: {e}"}
    for a, s in sessions.items():
        try:
            out[a] = {"dialect": s.dialect()}
            for v in values:
                out[a][v] = dict(zip(("name", "objects"), block_facts(s.poll(v))))
        except Exception as e:  # noqa: BLE001
            out[a] = {"error": f"poll: {type(e).__name__}: {e}"}
    for s in sessions.values():
        try:
            s.close()
        except Exception:  # noqa: BLE001 - closing is best effort
            pass
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--client", choices=["samba", "impacket"], required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--values", default="Global,238", help="HKPD values each host is asked, comma-separated")
    p.add_argument("--transport", choices=["smb", "tcp"], default="smb", help="tcp: python3-samba over ncacn_ip_tcp")
    p.add_argument("addresses", nargs="+")
    args = p.parse_args()
    try:
        if args.client == "samba":
            import samba.dcerpc.winreg  # noqa: F401
        else:
            import impacket.dcerpc.v5.rrp  # noqa: F401
    except ImportError as e:
        print(f"{args.client} is not importable ({e}); run scripts/install-deps.sh", file=sys.stderr)
        return 3
    n = max(1, min(args.workers, len(args.addresses)))
    jobs = [(args.client, args.port, args.addresses[i::n], args.values.split(","), args.transport == "tcp")
            for i in range(n)]
    result = {}
    with multiprocessing.Pool(n) as pool:
        for part in pool.map(work, jobs):
            result.update(part)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Reads Global from a perfsim server twice with a real client, python3-samba or impacket, and
prints what it saw as JSON: per sample the block's clocks (PerfTime100nSec, PerfTime, PerfFreq)
and every object {title index: {"counters": [[index, type, size, offset]], "instances": {name:
counter block as hex}}}. The block walk is tests/interop/collector_formatted.py's parse_block.

Usage: read_provider.py --port P --client samba|impacket
Exit status: 0 read, 1 a call failed, 3 the client library is missing."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
import collector_formatted as formatted  # noqa: E402  (python3-samba; exits 3 without it)


def impacket_global(port):
    try:
        from impacket.dcerpc.v5 import rrp, transport
    except ImportError as e:
        print(f"impacket is not importable ({e}); run scripts/install-deps.sh", file=sys.stderr)
        sys.exit(3)
    t = transport.DCERPCTransportFactory(f"ncacn_ip_tcp:127.0.0.1[{port}]")
    dce = t.get_dce_rpc()
    dce.connect()
    dce.bind(rrp.MSRPC_UUID_RRP)
    hkpd = rrp.hOpenPerformanceData(dce)["phKey"]
    # hBaseRegQueryValue grows its buffer on ERROR_MORE_DATA itself.
    return lambda: bytes(rrp.hBaseRegQueryValue(dce, hkpd, "Global", 65536)[1])


def samba_global(port):
    conn, hkpd = formatted.connect_hkpd(port)
    return lambda: formatted.query(conn, hkpd, "Global")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--client", choices=["samba", "impacket"], required=True)
    a = p.parse_args()
    read = samba_global(a.port) if a.client == "samba" else impacket_global(a.port)
    samples = []
    for _ in range(2):
        times, objects = formatted.parse_block(read())
        samples.append({"times": list(times),
                        "objects": {str(k): {"counters": [list(c) for c in v[0]],
                                             "instances": {n: b.hex() for n, b in v[1].items()}}
                                    for k, v in objects.items()}})
    json.dump({"samples": samples}, sys.stdout)


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # a failed call: say which, exit 1
        print(f"read_provider: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)

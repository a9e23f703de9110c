#!/usr/bin/python3
"""An unauthenticated client flooding a host with small QueryValue calls, each naming a value of
--name-length characters (what once grew a --journal file by 289 MiB in 20 s): impacket's raw
BaseRegQueryValue on HKPD over one connection, at most --calls calls and --seconds seconds.
Prints one JSON line: {"calls": N, "seconds": S}.
Usage: flood_client.py --port P [--calls 20000] [--seconds 5] [--name-length 200]."""
import argparse
import json
import sys
import time

try:
    from impacket.dcerpc.v5 import rrp, transport
    from impacket.dcerpc.v5.rpcrt import DCERPCException
except ImportError as e:
    print(f"python3-impacket is missing ({e}); run scripts/install-deps.sh", file=sys.stderr)
    sys.exit(3)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--calls", type=int, default=20000)
    p.add_argument("--seconds", type=float, default=5)
    p.add_argument("--name-length", type=int, default=200)
    args = p.parse_args()
    t = transport.DCERPCTransportFactory(f"ncacn_ip_tcp:127.0.0.1[{args.port}]")
    t.set_connect_timeout(10)
    dce = t.get_dce_rpc()
    dce.connect()
    dce.bind(rrp.MSRPC_UUID_RRP)
    hkpd = rrp.hOpenPerformanceData(dce)["phKey"]
    name = ("Flood" * (args.name_length // 5 + 1))[: args.name_length] + "\x00"
    start, calls = time.monotonic(), 0
    while calls < args.calls and time.monotonic() - start < args.seconds:
        req = rrp.BaseRegQueryValue()
        req["hKey"] = hkpd
        req["lpValueName"] = name
        req["lpType"] = 0
        req["lpData"] = b" " * 8  # a small buffer: the answer is short whatever the name
        req["lpcbData"] = 8
        req["lpcbLen"] = 0
        try:
            dce.request(req)
        except DCERPCException:
            pass  # not found, more data: the call was made and journaled all the same
        calls += 1
    print(json.dumps({"calls": calls, "seconds": round(time.monotonic() - start, 3)}))


if __name__ == "__main__":
    main()

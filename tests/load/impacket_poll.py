#!/usr/bin/python3
"""An independent collector for cross-checking call counts: impacket (not perfsim's client) opens
HKEY_PERFORMANCE_DATA on ADDR:PORT and reads --value --reads times with a buffer large enough for
one call each (hBaseRegQueryValue asks the size first, so each read is counted as it is made).
Prints one JSON line: {"calls": N} (OpenHKPD, each QueryValue, CloseKey).
Usage: impacket_poll.py --addr A --port P [--value 238] [--reads 25]."""
import argparse
import json
import sys

try:
    from impacket.dcerpc.v5 import rrp, transport
except ImportError as e:
    print(f"python3-impacket is missing ({e}); run scripts/install-deps.sh", file=sys.stderr)
    sys.exit(3)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--addr", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--value", default="238")
    p.add_argument("--reads", type=int, default=25)
    args = p.parse_args()
    t = transport.DCERPCTransportFactory(f"ncacn_ip_tcp:{args.addr}[{args.port}]")
    t.set_connect_timeout(10)
    dce = t.get_dce_rpc()
    dce.connect()
    dce.bind(rrp.MSRPC_UUID_RRP)
    hkpd = rrp.hOpenPerformanceData(dce)["phKey"]
    calls = 1
    for _ in range(args.reads):
        req = rrp.BaseRegQueryValue()
        req["hKey"] = hkpd
        req["lpValueName"] = args.value + "\x00"
        req["lpType"] = 0
        req["lpData"] = b" " * 65536  # one call: larger than any answer to a small index query
        req["lpcbData"] = 65536
        req["lpcbLen"] = 65536
        dce.request(req)
        calls += 1
    rrp.hBaseRegCloseKey(dce, hkpd)
    calls += 1
    dce.disconnect()
    print(json.dumps({"calls": calls}))


if __name__ == "__main__":
    main()

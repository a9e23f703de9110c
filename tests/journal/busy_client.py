#!/usr/bin/python3
"""A collector that retries after ERROR_BUSY (170) with a fixed back-off, as windows_exporter does
(~50 ms): impacket's raw BaseRegQueryValue on HKPD `Global`, --polls successful reads at most
--tries calls in all. Prints one JSON line: the statuses it met. Then closes its handle.
Usage: busy_client.py --port P [--polls 3] [--backoff-ms 50] [--tries 30]."""
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
    p.add_argument("--polls", type=int, default=3)
    p.add_argument("--backoff-ms", type=int, default=50)
    p.add_argument("--tries", type=int, default=30)
    args = p.parse_args()
    t = transport.DCERPCTransportFactory(f"ncacn_ip_tcp:127.0.0.1[{args.port}]")
    t.set_connect_timeout(10)
    dce = t.get_dce_rpc()
    dce.connect()
    dce.bind(rrp.MSRPC_UUID_RRP)
    hkpd = rrp.hOpenPerformanceData(dce)["phKey"]
    statuses, polls = [], 0
    for _ in range(args.tries):
        req = rrp.BaseRegQueryValue()
        req["hKey"] = hkpd
        req["lpValueName"] = "Global\x00"
        req["lpType"] = 0
        req["lpData"] = b" " * 512
        req["lpcbData"] = 4 << 20  # big enough for any bundled host's Global
        req["lpcbLen"] = 0
        try:
            dce.request(req)
            status = 0
        except DCERPCException as e:
            status = e.get_error_code() if hasattr(e, "get_error_code") else -1
        statuses.append(status)
        if status == 170:
            time.sleep(args.backoff_ms / 1000)
            continue
        polls += 1
        if polls >= args.polls:
            break
    rrp.hBaseRegCloseKey(dce, hkpd)
    print(json.dumps({"statuses": statuses, "polls": polls}))


if __name__ == "__main__":
    main()

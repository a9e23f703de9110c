#!/usr/bin/python3
"""An unauthenticated client flooding a host with small QueryValue calls, each naming a value of
--name-length characters (what once grew a --journal file by 289 MiB in 20 s): impacket's raw
BaseRegQueryValue on HKPD over one connection, at most --calls calls and --seconds seconds.
Prints one JSON line: {"calls": N, "seconds": S}.
Usage: flood_client.py --port P [--calls 20000] [--seconds 5] [--name-length 200]."""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
try:
    import impacket_hkpd as hk
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
    dce, hkpd = hk.open_hkpd("127.0.0.1", args.port)
    name = ("Flood" * (args.name_length // 5 + 1))[: args.name_length]
    start, calls = time.monotonic(), 0
    while calls < args.calls and time.monotonic() - start < args.seconds:
        try:
            hk.query_value(dce, hkpd, name, 8, 8)  # a small buffer: the answer is short whatever the name
        except hk.DCERPCException:
            pass  # not found, more data: the call was made and journaled all the same
        calls += 1
    print(json.dumps({"calls": calls, "seconds": round(time.monotonic() - start, 3)}))


if __name__ == "__main__":
    main()

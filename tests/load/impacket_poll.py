#!/usr/bin/python3
"""An independent collector for cross-checking call counts: impacket (not perfsim's client) opens
HKEY_PERFORMANCE_DATA on ADDR:PORT and reads --value --reads times with a buffer large enough for
one call each (hBaseRegQueryValue asks the size first, so each read is counted as it is made).
Prints one JSON line: {"calls": N} (OpenHKPD, each QueryValue, CloseKey).
Usage: impacket_poll.py --addr A --port P [--value 238] [--reads 25]."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
try:
    import impacket_hkpd as hk
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
    dce, hkpd = hk.open_hkpd(args.addr, args.port)
    calls = 1
    for _ in range(args.reads):
        hk.query_value(dce, hkpd, args.value, 65536, 65536, 65536)  # one call: larger than any small answer
        calls += 1
    hk.close(dce, hkpd)
    calls += 1
    print(json.dumps({"calls": calls}))


if __name__ == "__main__":
    main()

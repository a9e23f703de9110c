#!/usr/bin/python3
"""A collector that retries after ERROR_BUSY (170) with a fixed back-off, as windows_exporter does
(~50 ms): impacket's raw BaseRegQueryValue on HKPD `Global`, --polls successful reads at most
--tries calls in all. Prints one JSON line: the statuses it met. Then closes its handle.
Usage: busy_client.py --port P [--polls 3] [--backoff-ms 50] [--tries 30]."""
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
    p.add_argument("--polls", type=int, default=3)
    p.add_argument("--backoff-ms", type=int, default=50)
    p.add_argument("--tries", type=int, default=30)
    args = p.parse_args()
    dce, hkpd = hk.open_hkpd("127.0.0.1", args.port)
    statuses, polls = [], 0
    for _ in range(args.tries):
        try:
            hk.query_value(dce, hkpd, "Global", 512, 4 << 20)  # offered: big enough for any bundled host's Global
            status = 0
        except hk.DCERPCException as e:
            status = e.get_error_code() if hasattr(e, "get_error_code") else -1
        statuses.append(status)
        if status == 170:
            time.sleep(args.backoff_ms / 1000)
            continue
        polls += 1
        if polls >= args.polls:
            break
    hk.close(dce, hkpd)
    print(json.dumps({"statuses": statuses, "polls": polls}))


if __name__ == "__main__":
    main()

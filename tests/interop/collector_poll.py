#!/usr/bin/python3
"""Polls one counter as fast as it can with python3-samba (ncacn_ip_tcp, anonymous), for the
--speed test: each poll's monotonic time, the answer's PerfTime100nSec and the counter's raw value.
It reads only the counter's object (its index as the value name), so polls are a few ms apart.

Usage: collector_poll.py --port P --out FILE (--seconds S | --count N) PATH
FILE gets {"type": counter type, "polls": [[monotonic s, PerfTime100nSec, raw], ...]}.
Exit status: 0 done, 1 the path did not resolve, 3 python3-samba missing.
"""
import argparse
import json
import sys
import time

from collector_formatted import connect_hkpd, names_009, parse_block, query, raw, resolve  # exits 3 without python3-samba


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--seconds", type=float, default=0)
    p.add_argument("--count", type=int, default=0)
    p.add_argument("path")
    args = p.parse_args()
    conn, hkpd = connect_hkpd(args.port)
    table = names_009(query(conn, hkpd, "Counter 009"))
    try:
        where = resolve(args.path, table, parse_block(query(conn, hkpd, "Global"))[1])
    except (ValueError, KeyError) as e:
        print(f"collector_poll: {e}", file=sys.stderr)
        return 1
    polls = []
    end = time.monotonic() + args.seconds
    # Bounded: --count polls, or as many as fit in --seconds (at most 100,000).
    while len(polls) < 100000 and (len(polls) < args.count if args.count else time.monotonic() < end):
        times, objs = parse_block(query(conn, hkpd, str(where[0])))  # (PerfTime100nSec, PerfTime, PerfFreq)
        polls.append([time.monotonic(), times[0], raw(objs, where)[0]])  # the counter, not its base
    conn.CloseKey(hkpd)
    with open(args.out, "w") as f:
        json.dump({"type": where[3], "polls": polls}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())

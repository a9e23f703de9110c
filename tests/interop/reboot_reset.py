#!/usr/bin/python3
"""A collector polling Processor ("238") on one connection to a host that reboots (the
reset-after-reboot scenario), until a call raises or --seconds pass: impacket's own
rrp.hBaseRegQueryValue (--client impacket) or python3-samba's QueryValue (--client samba).
Prints one JSON line: {"local_port": the client's TCP port (impacket; null for samba),
"polls": answers before the error, "error": the exception's class, "errno": its errno
(104 = ECONNRESET) or null, "status": python3-samba's NTSTATUS or null,
"since_last_answer_s": seconds from the last answer to the error, "elapsed_s": from the first call}.
Exits 0 when a call raised, 1 when none did in time, 3 without the client library.
Usage: reboot_reset.py --client impacket|samba --address A --port P [--seconds S] [--interval I]."""
import argparse
import json
import os
import sys
import time


def impacket_client(args):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
    try:
        from impacket.dcerpc.v5 import rrp
        import impacket_hkpd as hk
    except ImportError as e:
        print(f"python3-impacket missing: {e}", file=sys.stderr)
        sys.exit(3)
    dce, hkpd = hk.open_hkpd(args.address, args.port)
    local_port = dce.get_rpc_transport().get_socket().getsockname()[1]
    # 64 KiB of buffer: Processor of a 4-CPU host fits, so each call is one call.
    return local_port, lambda: rrp.hBaseRegQueryValue(dce, hkpd, "238", 65536)


def samba_client(args):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from collector_formatted import connect_hkpd, query  # exits 3 without python3-samba
    conn, hkpd = connect_hkpd(args.port, args.address)
    return None, lambda: query(conn, hkpd, "238")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--client", choices=["impacket", "samba"], required=True)
    ap.add_argument("--address", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--seconds", type=float, default=40)
    ap.add_argument("--interval", type=float, default=0.5)
    args = ap.parse_args()

    local_port, call = (impacket_client if args.client == "impacket" else samba_client)(args)
    start = time.monotonic()
    last_answer = start
    polls = 0
    while time.monotonic() - start < args.seconds:
        try:
            call()
        except Exception as e:  # the reboot: what the client raises is what this reports
            now = time.monotonic()
            print(json.dumps({"local_port": local_port, "polls": polls, "error": type(e).__name__,
                              "errno": getattr(e, "errno", None),
                              "status": e.args[0] if type(e).__name__ == "NTSTATUSError" else None, "detail": str(e)[:200],
                              "since_last_answer_s": round(now - last_answer, 3),
                              "elapsed_s": round(now - start, 3)}))
            return 0
        polls += 1
        last_answer = time.monotonic()
        time.sleep(args.interval)  # sleep-ok: the poll interval, as a collector's
    print(json.dumps({"local_port": local_port, "polls": polls, "error": None}))
    return 1


if __name__ == "__main__":
    sys.exit(main())

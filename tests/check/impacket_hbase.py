#!/usr/bin/python3
"""impacket's own rrp.hBaseRegQueryValue reading Global, as a collector built on it does: on
ERROR_MORE_DATA it retries with the size the answer carried, and its retry counter never passes 1
(impacket/dcerpc/v5/rrp.py), so against a host that echoes the offered size (Windows 2000) it
never returns. Endpoint from $PERFSIM_ADDR/$PERFSIM_PORT (perfsim check).
  impacket_hbase.py [--max-calls N]
With --max-calls it gives up after N calls (exit 1): the loop bounded by what the host answered,
not by a wall-clock timeout that a slow machine may reach before the loop shows."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import impacket_hkpd as hk  # noqa: E402
from impacket.dcerpc.v5 import rrp  # noqa: E402

dce, hkpd = hk.open_hkpd(os.environ["PERFSIM_ADDR"], os.environ["PERFSIM_PORT"])
if len(sys.argv) == 3 and sys.argv[1] == "--max-calls":
    limit, request = int(sys.argv[2]), dce.request
    calls = 0

    def counted(*args, **kwargs):
        global calls
        calls += 1
        if calls > limit:
            print(f"gave up after {limit} calls", file=sys.stderr)
            sys.exit(1)
        return request(*args, **kwargs)

    dce.request = counted
vtype, data = rrp.hBaseRegQueryValue(dce, hkpd, "Global")
print(f"Global: {len(data)} bytes")
hk.close(dce, hkpd)

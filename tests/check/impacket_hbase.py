#!/usr/bin/python3
"""impacket's own rrp.hBaseRegQueryValue reading Global, as a collector built on it does: on
ERROR_MORE_DATA it retries with the size the answer carried, and its retry counter never passes 1
(impacket/dcerpc/v5/rrp.py), so against a host that echoes the offered size (Windows 2000) it
never returns. Endpoint from $PERFSIM_ADDR/$PERFSIM_PORT (perfsim check)."""
import os

from impacket.dcerpc.v5 import rrp, transport

t = transport.DCERPCTransportFactory(f"ncacn_ip_tcp:{os.environ['PERFSIM_ADDR']}[{os.environ['PERFSIM_PORT']}]")
t.set_connect_timeout(10)
dce = t.get_dce_rpc()
dce.connect()
dce.bind(rrp.MSRPC_UUID_RRP)
hkpd = rrp.hOpenPerformanceData(dce)["phKey"]
vtype, data = rrp.hBaseRegQueryValue(dce, hkpd, "Global")
print(f"Global: {len(data)} bytes")
rrp.hBaseRegCloseKey(dce, hkpd)
dce.disconnect()

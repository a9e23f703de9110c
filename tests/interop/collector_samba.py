#!/usr/bin/python3
"""Reads performance data from a perfsim server with python3-samba (librpc) over
ncacn_ip_tcp, anonymously, doing the size probe / growing-buffer dance a collector does.
Samba's bindings raise WERRORError for any result but WERR_OK and drop the out parameters, so
on ERROR_MORE_DATA the buffer grows by doubling. Usage: collector_samba.py --port P --out DIR."""
import collector_common as common

try:
    from samba import WERRORError, credentials, param
    from samba.dcerpc import security, winreg
except ImportError as e:
    common.missing_library("python3-samba", e)

SMALL_BUFFER = 64
# The probe, 64 bytes, then doubling from 128 passes the 64 MiB a response can carry: a 2008+ host
# says no usable size (windows/README.md, "A buffer too small").
MAX_ATTEMPTS = 24


def werror(e):
    return e.args[0]


class SambaSession:
    def __init__(self, args):
        lp = param.LoadParm()
        creds = credentials.Credentials()
        creds.guess(lp)
        if args.user:
            creds.set_username(args.user)
            creds.set_password(args.password)
        else:
            creds.set_anonymous()
        if args.smb:
            # The SMB port comes from smb.conf's "smb ports"; a port= binding option is ignored.
            lp.set("smb ports", str(args.port))
            if args.smb1:
                lp.set("client max protocol", "NT1")
                lp.set("client min protocol", "NT1")
            binding = f"ncacn_np:{args.address}[\\pipe\\winreg]"
        elif args.epm:
            binding = f"ncacn_ip_tcp:{args.address}"  # no port: librpc asks the endpoint mapper on 135
        else:
            binding = f"ncacn_ip_tcp:{args.address}[{args.port}]"
        self.conn = winreg.winreg(binding, lp, creds)

    def open_hkpd(self):
        return self.conn.OpenHKPD(None, security.SEC_FLAG_MAXIMUM_ALLOWED)

    def open_hkpd_status(self):
        try:
            self.conn.CloseKey(self.open_hkpd())
            return 0
        except WERRORError as e:
            return werror(e)

    def open_hklm(self):
        return self.conn.OpenHKLM(None, security.SEC_FLAG_MAXIMUM_ALLOWED)

    def open_key(self, parent, path):
        name = winreg.String()
        name.name = path
        return self.conn.OpenKey(parent, name, 0, security.SEC_FLAG_MAXIMUM_ALLOWED)

    def _query(self, handle, name, offer, attempts):
        """One QueryValue; offer None sends a NULL data pointer. Returns (status, type, size, data)."""
        s = winreg.String()
        s.name = name
        try:
            if offer is None:
                vtype, data, size, _ = self.conn.QueryValue(handle, s, 0, None, 0, 0)
            else:
                vtype, data, size, _ = self.conn.QueryValue(handle, s, 0, [], offer, 0)
            result = (0, vtype, size, None if data is None else bytes(data))
        except WERRORError as e:
            result = (werror(e), None, None, None)
        attempts.append({"offered": offer, "status": result[0], "size": result[2]})
        return result

    def query_value(self, rec, key, handle, name):
        attempts = []
        # 1. Size probe with a NULL buffer (MS-RRP: success and the size; some hosts: MORE_DATA).
        status, _, probed, _ = self._query(handle, name, None, attempts)
        # 2. A small first buffer, as collectors that start small do.
        status, vtype, size, data = self._query(handle, name, SMALL_BUFFER, attempts)
        offer = max(probed or 0, 2 * SMALL_BUFFER)
        # 3. Grow until it fits: the probed size first, then doubling.
        while status == common.ERROR_MORE_DATA and len(attempts) < MAX_ATTEMPTS:
            status, vtype, size, data = self._query(handle, name, offer, attempts)
            offer *= 2
        entry = rec.add_value(key, name, status, vtype, size, data, attempts)
        return entry, data

    def query_info_key(self, handle):
        r = self.conn.QueryInfoKey(handle, winreg.String())
        keys = ["classname", "num_subkeys", "max_subkeylen", "max_classlen", "num_values",
                "max_valnamelen", "max_valbufsize", "secdescsize", "last_changed_time"]
        info = dict(zip(keys, r))
        info["classname"] = info["classname"].name
        self.last_info = info
        return info

    def enum_value(self, rec, handle, index):
        offer = max(self.last_info["max_valbufsize"], 1)
        for _ in range(MAX_ATTEMPTS):
            name = winreg.ValNameBuf()
            name.size = 2 * (self.last_info["max_valnamelen"] + 1)
            try:
                name, vtype, value, size, length = self.conn.EnumValue(handle, index, name, 0, [], offer, 0)
            except WERRORError as e:
                if werror(e) != common.ERROR_MORE_DATA:
                    return {"index": index, "status": werror(e)}
                offer *= 2
                continue
            return {"index": index, "status": 0, "name": name.name, "type": vtype, "size": size,
                    "file": rec.save_bytes(bytes(value[:length]))}
        return {"index": index, "status": common.ERROR_MORE_DATA}

    def get_version(self, handle):
        return self.conn.GetVersion(handle)

    def close_key(self, handle):
        try:
            self.conn.CloseKey(handle)
            return 0
        except WERRORError as e:
            return werror(e)

    def disconnect(self):
        del self.conn


if __name__ == "__main__":
    common.run("samba-python", SambaSession)

#!/usr/bin/python3
"""Request stubs of the srvsvc and wkssvc calls perfsim answers, packed by Samba's own NDR
(python3-samba ndr_pack_in), as rpcclient and `net rpc` send them.
Usage: netapi_requests.py OUTDIR  (writes NAME.bin per request; names listed on stdout)"""
import os
import sys

from samba.dcerpc import srvsvc, wkssvc
from samba.ndr import ndr_pack_in


def server_get_info(level):
    r = srvsvc.NetSrvGetInfo()
    r.in_server_unc = "\\\\127.0.0.1"
    r.in_level = level
    return r


def wksta_get_info(level):
    r = wkssvc.NetWkstaGetInfo()
    r.in_server_name = "\\\\127.0.0.1"
    r.in_level = level
    return r


def share_enum(level):
    r = srvsvc.NetShareEnumAll()
    ctr = srvsvc.NetShareInfoCtr()
    ctr.level = level
    ctr.ctr = srvsvc.NetShareCtr0() if level == 0 else srvsvc.NetShareCtr1()
    r.in_server_unc = "\\\\127.0.0.1"
    r.in_info_ctr = ctr
    r.in_max_buffer = 0xFFFFFFFF
    r.in_resume_handle = 0
    return r


def main(out):
    requests = {f"srvsvc_NetSrvGetInfo_{lvl}": server_get_info(lvl) for lvl in (100, 101, 102, 103)}
    requests.update({f"srvsvc_NetShareEnumAll_{lvl}": share_enum(lvl) for lvl in (0, 1)})
    requests.update({f"wkssvc_NetWkstaGetInfo_{lvl}": wksta_get_info(lvl) for lvl in (100, 101, 102, 103)})
    for name, req in requests.items():
        with open(os.path.join(out, name + ".bin"), "wb") as f:
            f.write(ndr_pack_in(req))
        print(name)


if __name__ == "__main__":
    main(sys.argv[1])

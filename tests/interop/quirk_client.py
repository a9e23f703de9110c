#!/usr/bin/python3
"""One collector move against a perfsim host, printed as JSON on stdout, for the quirk tests.
  probe  (impacket, raw BaseRegQueryValue): one call per --offers entry ("null" = NULL data
         pointer), reporting status, data_size, data_length and the objects received.
  hquery (impacket's own hBaseRegQueryValue and its ERROR_MORE_DATA retry loop).
  grow   (impacket, raw): a collector's loop from --start bytes: the size the host says when
         larger than the offer, else --step bytes more, until WERR_OK.
  field  what collectors in the field do, one connection: impacket's own hBaseRegQueryValue for
         each --hquery VALUE, stopped after --max-calls QueryValues (it never stops by itself),
         each call's offer, status and size recorded; a fixed-step collector for each --step-value
         VALUE (from --start, --step more after each ERROR_MORE_DATA, the size said ignored).
Usage: quirk_client.py --port P [--address A] --op probe|hquery|grow|field --name VALUE [--offers ...]
       [--start N --step N] [--hquery VALUE ... --step-value VALUE ... --max-calls N]"""
import argparse
import json
import struct
import sys

import collector_common as common

try:
    from impacket.dcerpc.v5 import rrp, transport
    from impacket.dcerpc.v5.dtypes import NULL
    from impacket.dcerpc.v5.rpcrt import DCERPCException
except ImportError as e:
    common.missing_library("python3-impacket", e)


def describe(data):
    if data is None or len(data) < common.PERF_DATA_BLOCK_SIZE:
        return {"data_len": None if data is None else len(data)}
    objects, problems = common.perf_objects(data)
    total, header, declared = struct.unpack_from("<III", data, 20)
    return {"data_len": len(data), "total": total, "header": header, "declared_objects": declared,
            "objects": objects, "problems": problems}


def impacket_hkpd(port, address="127.0.0.1"):
    t = transport.DCERPCTransportFactory(f"ncacn_ip_tcp:{address}[{port}]")
    t.set_connect_timeout(10)
    dce = t.get_dce_rpc()
    dce.connect()
    dce.bind(rrp.MSRPC_UUID_RRP)
    try:
        return dce, rrp.hOpenPerformanceData(dce)["phKey"], 0
    except DCERPCException as e:
        return dce, None, e.get_error_code()


def probe(args):
    dce, hkpd, status = impacket_hkpd(args.port, args.address)
    if hkpd is None:
        return {"open_status": status}
    return {"open_status": 0, "calls": [query_once(dce, hkpd, args.name, o) for o in args.offers.split(",")]}


def query_once(dce, hkpd, name, offer):
    req = rrp.BaseRegQueryValue()
    req["hKey"] = hkpd
    req["lpValueName"] = name + "\x00"
    req["lpType"] = 0
    if offer == "null":
        req["lpData"] = NULL
        req["lpcbData"] = 0
        req["lpcbLen"] = 0
    else:
        req["lpData"] = b" " * min(int(offer), 512)  # the size offered is lpcbData; no need to ship it
        req["lpcbData"] = int(offer)
        req["lpcbLen"] = 0
    try:
        resp = dce.request(req)
        status = 0
    except DCERPCException as e:
        resp = e.get_packet() if hasattr(e, "get_packet") else None
        status = e.get_error_code() if hasattr(e, "get_error_code") else -1
        if resp is None or not hasattr(resp, "fields"):
            return {"offered": None if offer == "null" else int(offer), "status": status, "rpc_fault": True}
    data = b"".join(resp["lpData"]) if resp["lpData"] not in (None, NULL) else None
    entry = {"offered": None if offer == "null" else int(offer), "status": status, "size": resp["lpcbData"], "length": resp["lpcbLen"]}
    entry.update(describe(data if status == 0 else None))
    return entry


def grow(args):
    """A collector's loop: start with --start bytes; on ERROR_MORE_DATA take the size the host
    said when it is larger than the offer, otherwise grow the buffer by --step."""
    dce, hkpd, status = impacket_hkpd(args.port, args.address)
    if hkpd is None:
        return {"open_status": status}
    attempts, offer = [], args.start
    for _ in range(args.max_tries):
        entry = query_once(dce, hkpd, args.name, str(offer))
        attempts.append({k: entry.get(k) for k in ("offered", "status", "size", "length", "data_len")})
        if entry["status"] == 0:
            return {**entry, "status": 0, "attempts": attempts, "offered": offer}
        if entry["status"] != 234:
            return {"status": entry["status"], "attempts": attempts}
        offer = entry["size"] if entry.get("size", 0) > offer else offer + args.step
    return {"status": -1, "attempts": attempts}


def hquery(args):
    dce, hkpd, status = impacket_hkpd(args.port, args.address)
    if hkpd is None:
        return {"open_status": status}
    try:
        vtype, value = rrp.hBaseRegQueryValue(dce, hkpd, args.name)
        return {"status": 0, **describe(bytes(value))}
    except DCERPCException as e:
        return {"status": e.get_error_code() if hasattr(e, "get_error_code") else -1}


class Looping(Exception):
    """hBaseRegQueryValue made --max-calls QueryValues and was still going."""


def counted_hquery(dce, hkpd, name, max_calls):
    """impacket's own hBaseRegQueryValue, its QueryValues counted and bounded through dce.request."""
    calls, request = [], dce.request

    def counting(req, *a, **kw):
        if isinstance(req, rrp.BaseRegQueryValue):
            if len(calls) >= max_calls:
                raise Looping()
            calls.append({"offered": req["lpcbData"]})
        try:
            resp = request(req, *a, **kw)
        except DCERPCException as e:
            if calls and hasattr(e, "get_packet") and hasattr(e.get_packet(), "fields"):
                calls[-1].update(status=e.get_error_code(), size=e.get_packet()["lpcbData"])
            raise
        if calls:
            calls[-1].update(status=0, size=resp["lpcbData"])
        return resp

    dce.request = counting
    try:
        vtype, value = rrp.hBaseRegQueryValue(dce, hkpd, name)
        data = value if isinstance(value, bytes) else None
        return {"status": 0, "type": vtype, "calls": calls, **describe(data)}
    except Looping:
        return {"status": "looping", "calls": calls}
    except DCERPCException as e:
        return {"status": e.get_error_code() if hasattr(e, "get_error_code") else -1, "calls": calls}
    finally:
        dce.request = request


def fixed_step(dce, hkpd, name, start, step, max_tries):
    attempts, offer = [], start
    for _ in range(max_tries):
        entry = query_once(dce, hkpd, name, str(offer))
        attempts.append({k: entry.get(k) for k in ("offered", "status", "size", "data_len")})
        if entry["status"] != 234:
            return {**entry, "attempts": attempts, "offered": offer}
        offer += step
    return {"status": -1, "attempts": attempts}


def field(args):
    dce, hkpd, status = impacket_hkpd(args.port, args.address)
    if hkpd is None:
        return {"open_status": status}
    return {"open_status": 0,
            "hquery": {n: counted_hquery(dce, hkpd, n, args.max_calls) for n in args.hquery},
            "step": {n: fixed_step(dce, hkpd, n, args.start, args.step, args.max_tries) for n in args.step_value}}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--address", default="127.0.0.1")
    p.add_argument("--op", choices=["probe", "hquery", "grow", "field"], required=True)
    p.add_argument("--name", default="Global")
    p.add_argument("--offers", default="null")
    p.add_argument("--start", type=int, default=65536)
    p.add_argument("--step", type=int, default=65536)
    p.add_argument("--max-tries", type=int, default=200)
    p.add_argument("--hquery", action="append", default=[])
    p.add_argument("--step-value", action="append", default=[])
    p.add_argument("--max-calls", type=int, default=20)
    args = p.parse_args()
    print(json.dumps({"probe": probe, "hquery": hquery, "grow": grow, "field": field}[args.op](args)))
    sys.stdout.flush()


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Bridge to Samba's own NDR (python3-samba) for the winreg codec cross-check tests.

  samba_ndr.py unpack-out OP BLOB PRESET OUT   ndr_unpack_out(winreg.OP, BLOB) -> JSON of out_*/result
  samba_ndr.py unpack-in  OP BLOB OUT          ndr_unpack_in -> JSON of in_*
  samba_ndr.py pack-in    OP SPEC OUT          build winreg.OP from SPEC (JSON), ndr_pack_in -> OUT
  samba_ndr.py pack-out   OP SPEC OUT          same with ndr_pack_out

SPEC/PRESET are JSON objects of attributes. A dict with "__type": "winreg.String" builds that
Samba type; {"__guid": "..."} builds a misc.GUID. PRESET sets in_* fields that Samba's out-pull
needs for array sizes (in_num_values, in_offered). Exits non-zero when Samba rejects the blob.
"""
import json
import sys

from samba.dcerpc import misc, winreg
from samba.ndr import ndr_pack_in, ndr_pack_out, ndr_unpack_in, ndr_unpack_out

MODULES = {"winreg": winreg, "misc": misc}


def build(value):
    if isinstance(value, dict):
        if "__guid" in value:
            return misc.GUID(value["__guid"])
        module, name = value["__type"].split(".")
        obj = getattr(MODULES[module], name)()
        for key, item in value.items():
            if key != "__type":
                setattr(obj, key, build(item))
        return obj
    if isinstance(value, list):
        return [build(item) for item in value]
    return value


def to_json(value):
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [to_json(item) for item in value]
    if isinstance(value, (bytes, bytearray)):
        return list(value)
    if isinstance(value, misc.GUID):
        return str(value)
    fields = {}
    for key in dir(value):
        if key.startswith("_"):
            continue
        item = getattr(value, key)
        if not callable(item):
            fields[key] = to_json(item)
    return fields


def op_object(name, spec):
    obj = getattr(winreg, name)()
    for key, item in spec.items():
        setattr(obj, key, build(item))
    return obj


def fields_with(obj, prefixes):
    # Only touch the wanted side: reading in_* arrays of an out-only object follows NULLs.
    return {k: to_json(getattr(obj, k)) for k in dir(obj) if k.startswith(prefixes)}


def main(argv):
    command, op = argv[1], argv[2]
    if command == "unpack-out":
        with open(argv[4]) as f:
            obj = op_object(op, json.load(f))
        with open(argv[3], "rb") as f:
            ndr_unpack_out(obj, f.read())
        result = fields_with(obj, ("out_", "result"))
        out = argv[5]
    elif command == "unpack-in":
        obj = getattr(winreg, op)()
        with open(argv[3], "rb") as f:
            ndr_unpack_in(obj, f.read())
        result = fields_with(obj, ("in_",))
        out = argv[4]
    elif command in ("pack-in", "pack-out"):
        with open(argv[3]) as f:
            obj = op_object(op, json.load(f))
        blob = ndr_pack_in(obj) if command == "pack-in" else ndr_pack_out(obj)
        with open(argv[4], "wb") as f:
            f.write(blob)
        return 0
    else:
        raise SystemExit("unknown command " + command)
    with open(out, "w") as f:
        json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/python3
"""A python3-samba collector for `perfsim import --perfmon`'s blank-cell test: reads Global
--samples times from a perfsim server and, per PATH, says for each sample whether the instance is
there and for each interval the value PDH's formula gives (tests/interop/collector_formatted.py),
or null when the instance is missing from either sample or the formula has no value (a zero
denominator), as PDH reports no data.

Usage: perfmon_blank_client.py --interop DIR --port P --out FILE --samples N PATH...
FILE gets {"present": {PATH: [bool per sample]}, "values": {PATH: [value or null per interval]},
"indices": {PATH: [object index, counter index]}}.
"""
import argparse
import json
import sys

# Types whose value is one sample's (raw counts and fractions): PDH shows them without the sample before.
ONE_SAMPLE = (0x00010000, 0x00010100, 0x20020400, 0x20020500)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--interop", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--address", default="127.0.0.1")
    p.add_argument("--out", required=True)
    p.add_argument("--samples", type=int, required=True)
    p.add_argument("paths", nargs="+")
    args = p.parse_args()
    sys.path.insert(0, args.interop)
    import collector_formatted as cf  # noqa: E402 (python3-samba checked there)

    conn, hkpd = cf.connect_hkpd(args.port, args.address)
    table = cf.names_009(cf.query(conn, hkpd, "Counter 009"))
    samples = [cf.parse_block(cf.query(conn, hkpd, "Global")) for _ in range(args.samples)]
    conn.CloseKey(hkpd)
    out = {"present": {}, "values": {}, "indices": {}}
    for path in args.paths:
        where = next((cf.resolve(path, table, objs) for _, objs in samples if _has_object(path, table, objs)), None)
        if where is None:
            print(f"{path}: object never served", file=sys.stderr)
            return 1
        index, inst = where[0], where[1]
        out["indices"][path] = [where[0], where[2]]
        present = [index in objs and inst in objs[index][1] for _, objs in samples]
        values = []
        one_sample = where[3] in ONE_SAMPLE
        for k in range(1, len(samples)):
            if not present[k] or not (one_sample or present[k - 1]):
                values.append(None)
                continue
            (t0, o0), (t1, o1) = samples[k - 1], samples[k]
            if one_sample:  # the formula reads the current sample only
                t0, o0 = t1, o1
            try:
                values.append(cf.formatted(where, t0, cf.raw(o0, where), t1, cf.raw(o1, where)))
            except ZeroDivisionError:
                values.append(None)
        out["present"][path], out["values"][path] = present, values
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    return 0


def _has_object(path, table, objs):
    name = path.split("(")[0].split("\\")[0]
    return any(table.get(index) == name for index in objs)


if __name__ == "__main__":
    sys.exit(main())

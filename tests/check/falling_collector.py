#!/usr/bin/python3
"""Collectors that fall for a built-in scenario's bug, one per --bug, for tests/check (issue 56:
no scenario passes the collector it exists to catch). Each is scripts/examples/perf_collector.py
(python3-samba) with the one mistake its scenario's field report describes, so the test shows
`perfsim check` failing it and naming the bug, where the example collector passes.
  falling_collector.py --bug NAME   (address and port from $PERFSIM_ADDR, $PERFSIM_PORT)
NAME:
  busy-at-once      busy-exchange: retries ERROR_BUSY at once, 20 times, then gives up the poll
  plus-16k          global-slow-growing: grows the Global buffer by 16 KB after each ERROR_MORE_DATA
  current-language  german-host: takes the names from Counter CurrentLanguage (German there)
  last-counter      corrupt-name-table: sizes its name array by Perflib's Last Counter (IndexError)
  single-instance   no-instances: takes NumInstances <= 0 for a single counter block, reports its
                    first counter as \\\\HOST\\Network Interface\\NAME to $PERFSIM_VALUES_OUT
  process-230       server2022-process-v2: asks Process by its well-known index 230, no names read
Exit 0 when it believes it read the host, 1 when it found no data where it looked."""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "examples"))
import perf_collector as pc  # noqa: E402
from samba import WERRORError  # noqa: E402

PERFLIB = "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Perflib"


def query_once(conn, hkey, name, size):
    vtype, data, _size, length = conn.QueryValue(hkey, pc.wstring(name), 0, [], size, 0)
    return vtype, bytes(data[:length])


def busy_at_once(conn, hkpd):
    for _ in range(20):
        try:
            query_once(conn, hkpd, "Global", pc.FIRST_SIZE)
            return 0
        except WERRORError as e:
            if e.args[0] != pc.ERROR_BUSY:
                raise
    print("host busy after 20 retries")
    return 0


def plus_16k(conn, hkpd):
    size = pc.FIRST_SIZE
    for _ in range(300):
        try:
            query_once(conn, hkpd, "Global", size)
            return 0
        except WERRORError as e:
            if e.args[0] != pc.ERROR_MORE_DATA:
                raise
            size += 16384
    raise RuntimeError("Global: still ERROR_MORE_DATA after 300 tries")


def current_language(conn, hkpd):
    names = pc.names_of(query_once(conn, hkpd, "Counter CurrentLanguage", 1 << 20)[1])
    if "Processor" not in names:
        print(f"no object named Processor among {len(names)} names", file=sys.stderr)
        return 1
    return 0


def last_counter(conn, hkpd):
    hklm = conn.OpenHKLM(None, pc.MAXIMUM_ALLOWED)
    key = conn.OpenKey(hklm, pc.wstring(PERFLIB), 0, pc.MAXIMUM_ALLOWED)
    last = struct.unpack("<L", query_once(conn, key, "Last Counter", 64)[1][:4])[0]
    conn.CloseKey(key)
    conn.CloseKey(hklm)
    table = [None] * (last + 1)
    parts = query_once(conn, hkpd, "Counter 009", 1 << 20)[1].decode("utf-16-le").split("\x00")
    for i in range(0, len(parts) - 1, 2):
        if parts[i].isdigit():
            table[int(parts[i])] = parts[i + 1]  # IndexError past Last Counter
    return 0


def single_instance(conn, hkpd):
    names = pc.names_of(query_once(conn, hkpd, "Counter 009", 1 << 20)[1])
    by_index = {v: k for k, v in names.items()}
    blob = query_once(conn, hkpd, "510", 1 << 20)[1]
    header = struct.unpack_from("<L", blob, 24)[0]
    definition, header_len, index = struct.unpack_from("<LLL", blob, header + 4)
    instances = struct.unpack_from("<l", blob, header + 40)[0]
    if instances > 0:
        return 0
    # The mistake: NumInstances <= 0 read as "no instances, one counter block after the definitions".
    first_counter = header + header_len
    counter_name, = struct.unpack_from("<L", blob, first_counter + 4)
    offset, = struct.unpack_from("<L", blob, first_counter + 36)
    value, = struct.unpack_from("<L", blob, header + definition + offset)
    name_length, name_offset = struct.unpack_from("<LL", blob, 80)  # PERF_DATA_BLOCK.SystemName*
    host = blob[name_offset:name_offset + name_length].decode("utf-16-le").rstrip("\x00")
    with open(os.environ["PERFSIM_VALUES_OUT"], "a") as out:
        out.write(f"\\\\{host}\\{by_index.get(index, index)}\\{by_index.get(counter_name, counter_name)},{value}\n")
    return 0


def process_230(conn, hkpd):
    objects = pc.objects_of(query_once(conn, hkpd, "230", 1 << 20)[1])
    if 230 not in objects:
        print("Process (230): not in the answer", file=sys.stderr)
        return 1
    return 0


BUGS = {"busy-at-once": busy_at_once, "plus-16k": plus_16k, "current-language": current_language,
        "last-counter": last_counter, "single-instance": single_instance, "process-230": process_230}


def main():
    if len(sys.argv) != 3 or sys.argv[1] != "--bug" or sys.argv[2] not in BUGS:
        print(f"usage: falling_collector.py --bug {{{','.join(BUGS)}}}", file=sys.stderr)
        return 2
    conn = pc.connect(os.environ.get("PERFSIM_ADDR", "127.0.0.1"), os.environ["PERFSIM_PORT"])
    hkpd = conn.OpenHKPD(None, pc.MAXIMUM_ALLOWED)
    try:
        return BUGS[sys.argv[2]](conn, hkpd)
    finally:
        conn.CloseKey(hkpd)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""A small, well-behaved HKEY_PERFORMANCE_DATA collector over MS-RRP (python3-samba's winreg
client), as `perfsim check` expects one to behave: the template of README.md's CI job, and what
tests/check runs against every built-in TCP scenario. (python3-samba rather than impacket: impacket
packs a request's buffer byte by byte in Python, 46 s for global-slow-growing's 2 MB Global.)

What makes it well-behaved (scenarios/README.md, [expect]):
  - ERROR_MORE_DATA: it grows the buffer itself (doubling from 64 KB, up to 64 MB, at most 10
    tries) and never trusts the size the answer carries: MS-RRP 3.1.5.17 says lpcbData is only
    meaningful on success, and Windows 2000 echoes the offered size there.
  - ERROR_BUSY: transient; retried after 50, 100, 200 ... ms, at most 5 times, then the poll is
    given up and the host reported busy (exit 0: a result, not a crash).
  - Names come from Counter 009 (English, whatever the host's language; duplicates keep the
    first), objects are found by index in the answer and walked by TotalByteLength (winperf.h).
  - When Process is missing it uses Process V2, or reads PerfProc's Disable Performance Counters
    to say why.
  - Every handle it opens, it closes (BaseRegCloseKey).
  - Anonymous, or $PERFSIM_USER/$PERFSIM_PASSWORD when set (perfsim check --user).
  - Over SMB (when $PERFSIM_SMB_PORT is set: perfsim check --smb) it reads every host in
    $PERFSIM_ENDPOINTS through \\PIPE\\winreg. A pipe that is not available yet (Remote Registry
    trigger-starting: rapid7/ruby_smb PR 149) is opened again after a short wait, at most 3
    times; Access is denied on HKEY_PERFORMANCE_DATA is reported with the account and the groups
    it needs, not retried (Microsoft, "Limited User Access Support").

  - With --poll-for S it polls every --interval seconds (default 1) for S seconds, so a
    scenario's event (a reboot, a wrap) comes while it polls: a connection the host reset is
    made again after the interval, as often as it takes (a rebooting host refuses calls while it
    is down).

Usage: perf_collector.py [--poll-for S [--interval S]] [ADDR PORT]  (default: $PERFSIM_ADDR and
$PERFSIM_PORT, as perfsim check sets them). Exit 0: a poll result was printed for every host; 1: a
host could not be read.
"""
import os
import struct
import sys
import time

from samba import WERRORError, credentials, param
from samba.dcerpc import security, winreg

ERROR_ACCESS_DENIED, ERROR_MORE_DATA, ERROR_BUSY = 5, 234, 170
PIPE_OPENS, PIPE_WAIT_S = 3, 0.2
REG_DWORD = 4
FIRST_SIZE, MAX_SIZE, MAX_TRIES = 64 * 1024, 64 * 1024 * 1024, 10
BUSY_RETRIES, BUSY_FIRST_WAIT_S = 5, 0.05
PERFPROC = "SYSTEM\\CurrentControlSet\\Services\\PerfProc\\Performance"
MAXIMUM_ALLOWED = security.SEC_FLAG_MAXIMUM_ALLOWED


class HostBusy(Exception):
    pass


def wstring(text):
    s = winreg.String()
    s.name = text
    return s


def query(conn, hkey, name, size=FIRST_SIZE):
    """(type, bytes) of value `name`, growing the buffer on ERROR_MORE_DATA and backing off on
    ERROR_BUSY, both bounded."""
    tries, busy = 0, 0
    while True:
        tries += 1
        try:
            vtype, data, _size, length = conn.QueryValue(hkey, wstring(name), 0, [], size, 0)
            return vtype, bytes(data[:length])
        except WERRORError as e:
            code = e.args[0]
            if code == ERROR_MORE_DATA and tries < MAX_TRIES and size < MAX_SIZE:
                size = min(size * 2, MAX_SIZE)  # our own growth, not the size the answer says
            elif code == ERROR_BUSY and busy < BUSY_RETRIES:
                time.sleep(BUSY_FIRST_WAIT_S * (2 ** busy))
                busy += 1
            elif code == ERROR_BUSY:
                raise HostBusy(f"{name}: ERROR_BUSY after {busy} retries") from e
            else:
                raise


def names_of(raw):
    """Counter 009 (REG_MULTI_SZ "index\\0name\\0..."): name -> the first index that has it."""
    parts = raw.decode("utf-16-le", "replace").split("\x00")
    by_name = {}
    for i in range(0, len(parts) - 1, 2):
        if parts[i].strip().isdigit() and parts[i + 1]:
            by_name.setdefault(parts[i + 1], int(parts[i]))
    return by_name


def objects_of(blob):
    """{ObjectNameTitleIndex: NumInstances} of a PERF_DATA_BLOCK, each object reached by the
    previous one's TotalByteLength (winperf.h: PERF_DATA_BLOCK.HeaderLength at 24,
    NumObjectTypes at 28; PERF_OBJECT_TYPE.TotalByteLength at 0, ObjectNameTitleIndex at 12,
    NumInstances at 40)."""
    if blob[:8] != "PERF".encode("utf-16-le"):
        raise ValueError("no PERF signature")
    total, header, count = struct.unpack_from("<LLL", blob, 20)
    if total > len(blob):
        raise ValueError(f"TotalByteLength {total} beyond the {len(blob)} bytes received")
    found, at = {}, header
    for _ in range(count):
        length, = struct.unpack_from("<L", blob, at)
        index, = struct.unpack_from("<L", blob, at + 12)
        instances, = struct.unpack_from("<l", blob, at + 40)
        if length == 0 or at + length > total:
            raise ValueError(f"object {index}: TotalByteLength {length} out of the block")
        found[index] = instances
        at += length
    return found


def perfproc_disabled(conn):
    hklm = conn.OpenHKLM(None, MAXIMUM_ALLOWED)
    try:
        key = conn.OpenKey(hklm, wstring(PERFPROC), 0, MAXIMUM_ALLOWED)
        try:
            vtype, raw = query(conn, key, "Disable Performance Counters", 64)
            return vtype == REG_DWORD and struct.unpack("<L", raw[:4])[0] == 1
        finally:
            conn.CloseKey(key)
    except WERRORError:
        return False
    finally:
        conn.CloseKey(hklm)


def poll(conn):
    hkpd = conn.OpenHKPD(None, MAXIMUM_ALLOWED)
    try:
        names = names_of(query(conn, hkpd, "Counter 009")[1])
        objects = objects_of(query(conn, hkpd, "Global")[1])
    finally:
        conn.CloseKey(hkpd)
    print(f"{len(objects)} objects, {len(names)} names")
    for name in ("Process", "Process V2"):
        if names.get(name) in objects:
            print(f"{name}: {objects[names[name]]} instances")
            return
    if perfproc_disabled(conn):
        print("Process: missing: PerfProc is disabled (Disable Performance Counters = 1)")
    else:
        print("Process: missing from the answer")


def login():
    lp = param.LoadParm()
    creds = credentials.Credentials()
    creds.guess(lp)
    if os.environ.get("PERFSIM_USER"):
        creds.set_username(os.environ["PERFSIM_USER"])
        creds.set_password(os.environ.get("PERFSIM_PASSWORD", ""))
    else:
        creds.set_anonymous()
    return lp, creds


def connect(addr, port):
    lp, creds = login()
    return winreg.winreg(f"ncacn_ip_tcp:{addr}[{port}]", lp, creds)


def connect_smb(addr, smb_port):
    """\\PIPE\\winreg on ADDR, opened again while the pipe is not available yet (python3-samba
    raises a plain RuntimeError with an NTSTATUS when the open or bind fails)."""
    lp, creds = login()
    lp.set("smb ports", str(smb_port))
    for attempt in range(1, PIPE_OPENS + 1):
        try:
            return winreg.winreg(f"ncacn_np:{addr}[\\pipe\\winreg]", lp, creds)
        except RuntimeError as e:
            if attempt == PIPE_OPENS:
                raise
            print(f"{addr}: pipe open {attempt} failed ({e}), Remote Registry may be starting", file=sys.stderr)
            time.sleep(PIPE_WAIT_S * attempt)


def read_host(conn, addr):
    """Exit status for one host: 0 a result (data, busy, or a refusal named), 1 unreadable."""
    try:
        poll(conn)
    except HostBusy as e:
        print(f"{addr}: host busy, poll given up: {e}")
    except WERRORError as e:
        if e.args[0] != ERROR_ACCESS_DENIED:
            print(f"{addr}: cannot read the host: {e}", file=sys.stderr)
            return 1
        account = os.environ.get("PERFSIM_USER") or "anonymous"
        print(f"{addr}: Access is denied to {account}: it needs to be an administrator or in "
              "Performance Monitor Users / Performance Log Users")
    except ValueError as e:
        print(f"{addr}: cannot read the host: {e}", file=sys.stderr)
        return 1
    return 0


def main():
    smb_port = os.environ.get("PERFSIM_SMB_PORT")
    if smb_port:
        failed = 0
        for endpoint in os.environ.get("PERFSIM_ENDPOINTS", "").split():
            addr = endpoint.rsplit(":", 1)[0]
            try:
                conn = connect_smb(addr, smb_port)
            except RuntimeError as e:
                print(f"{addr}: cannot open \\PIPE\\winreg: {e}", file=sys.stderr)
                failed = 1
                continue
            failed |= read_host(conn, addr)
        return failed
    args, poll_for, interval = sys.argv[1:], 0.0, 1.0
    while args and args[0] in ("--poll-for", "--interval"):
        opt, value = args.pop(0), float(args.pop(0))
        poll_for, interval = (value, interval) if opt == "--poll-for" else (poll_for, value)
    addr = args[0] if len(args) > 1 else os.environ.get("PERFSIM_ADDR", "127.0.0.1")
    port = args[1] if len(args) > 1 else os.environ["PERFSIM_PORT"]
    if not poll_for:
        return read_host(connect(addr, port), addr)
    end, conn, failed = time.monotonic() + poll_for, None, 0
    while time.monotonic() < end:
        try:
            conn = conn or connect(addr, port)
            failed = read_host(conn, addr)
        except Exception as e:  # the host reset the connection (a reboot) or is down: connect again
            print(f"{addr}: connection lost ({e}), connecting again", file=sys.stderr)
            conn, failed = None, 1
        time.sleep(interval)
    return failed


if __name__ == "__main__":
    sys.exit(main())

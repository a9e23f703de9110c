#!/usr/bin/python3
"""bench/fleet_smb: SMB fleets behind one perfsim serve and one smbd (bench/README.md).

Measures, in one run:
 1. set-up time (start to every host's "smb" line) and perfsim's resident memory for fleets of
    1, 1,000 and 10,000 SMB hosts on 127.1.0.0/16 (--sizes), idle: RSS per host;
 2. memory per active SMB session: C sessions held open (impacket, each to its own host), then
    every smbd child's /proc/PID/smaps_rollup: Pss (shared pages divided among sharers) and
    Private (Private_Clean + Private_Dirty), averaged per session;
 3. calls/s and p99 of C concurrent clients, each polling its own host with the small index
    query "238" over its own session, for --seconds, with python3-samba (a process per client,
    one QueryValue per call) and impacket (--procs processes of threads; its hBaseRegQueryValue
    with a 16 KiB buffer, one call, NDR decoded in Python; before 2008+ hosts echoed the size
    offered it made two, size then data); baselines in the same run, same
    clients, same smbd: impacket reads a file of the answer's size from the share (one SMB READ
    per call); python3-samba (whose file client reaches only port 445/139) calls Samba's own
    pipe service, LSA QueryInfoPolicy through rpcd_lsad.
Needs root, samba, python3-impacket. Run under `flock /work/smb.lock` where SMB tests run.

Usage: bench_fleet_smb.py --perfsim EXE [--sizes 1,1000,10000] [--clients 100] [--seconds 10]
"""
import argparse
import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

CAPTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "captures", "default-2016.perfcap")


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def rollup(pid):
    out = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                k, _, v = line.partition(":")
                if v.strip().endswith("kB"):
                    out[k] = int(v.split()[0])
    except OSError:
        pass
    return out


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def addresses(n):
    base = (127 << 24) | (1 << 16)
    return [f"127.1.{(base + 1 + k) >> 8 & 255}.{(base + 1 + k) & 255}" for k in range(n)]


class Serve:
    def __init__(self, perfsim, n, port, work):
        self.dir = os.path.join(work, f"fleet{n}")
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        with open(os.path.join(self.dir, "fleet.toml"), "w") as f:
            f.write(f'[[host]]\naddresses = "127.1.0.0/16"\ncount = {n}\nname = "B-{{n}}"\n'
                    f'timeline = "frozen:2"\ncapture = "{os.path.abspath(CAPTURE)}"\n')
        self.out = open(os.path.join(self.dir, "serve.out"), "w+")
        self.start = time.monotonic()
        self.proc = subprocess.Popen([perfsim, "serve", "--fleet", os.path.join(self.dir, "fleet.toml"),
                                      f"--smb={port}", "--smb-dir", os.path.join(self.dir, "smb"), "--json",
                                      "--smb-anonymous-winreg"],  # anonymous pollers
                                     stdout=self.out, stderr=open(os.path.join(self.dir, "serve.err"), "w"))
        deadline = self.start + 600
        while time.monotonic() < deadline:
            self.out.seek(0)
            if self.out.read().count('"event":"smb"') == n:
                break
            if self.proc.poll() is not None:
                raise RuntimeError(open(os.path.join(self.dir, "serve.err")).read())
            time.sleep(0.05)
        self.ready_s = time.monotonic() - self.start
        self.out.seek(0)
        self.smbd_pid = 0
        for line in open(os.path.join(self.dir, "serve.err")):
            if "event=smbd_ready" in line:
                self.smbd_pid = int(line.split("pid=")[1].split()[0])

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(60)
        shutil.rmtree(self.dir, ignore_errors=True)


def samba_call(address, port, mode, size):
    """A python3-samba session to `address` and the call to repeat: QueryValue "238" with a buffer
    that fits (one round trip), or a READ of the same size from an open file."""
    from samba import credentials, param
    lp = param.LoadParm()
    lp.set("smb ports", str(port))
    creds = credentials.Credentials()
    creds.guess(lp)
    creds.set_anonymous()
    if mode == "pipe":
        from samba.dcerpc import security, winreg
        conn = winreg.winreg(f"ncacn_np:{address}[\\pipe\\winreg]", lp, creds)
        hkpd = conn.OpenHKPD(None, security.SEC_FLAG_MAXIMUM_ALLOWED)
        name = winreg.String()
        name.name = "238"
        return lambda: conn.QueryValue(hkpd, name, 0, [], size + 4096, 0)
    # python3-samba's file client (libsmb) connects to 445/139 only, whatever smb ports says, so
    # its baseline is Samba's own pipe service behind the same smbd: LSA through rpcd_lsad.
    from samba.dcerpc import lsa, security
    conn = lsa.lsarpc(f"ncacn_np:{address}[\\pipe\\lsarpc]", lp, creds)
    attr = lsa.ObjectAttribute()
    handle = conn.OpenPolicy2("", attr, security.SEC_FLAG_MAXIMUM_ALLOWED)
    return lambda: conn.QueryInfoPolicy(handle, lsa.LSA_POLICY_INFO_ACCOUNT_DOMAIN)


def client_proc(job):
    """One process: a thread per host (impacket; python3-samba gets one host per process, its
    calls hold the GIL), each with its own session, polling until the deadline."""
    lib, port, hosts, seconds, mode, size, start_at = job
    lat, errors = [], []

    def run(address):
        try:
            if lib == "samba":
                call = samba_call(address, port, mode, size)
                while time.time() < start_at:
                    time.sleep(0.01)
                end = start_at + seconds
                while time.time() < end:
                    t0 = time.perf_counter()
                    call()
                    lat.append(time.perf_counter() - t0)
                return
            from impacket.dcerpc.v5 import rrp, transport
            from impacket.smbconnection import SMBConnection
            smb = SMBConnection(address, address, sess_port=port, timeout=30)
            smb.login("", "")
            if mode == "pipe":
                t = transport.SMBTransport(address, port, r"\winreg", smb_connection=smb)
                dce = t.get_dce_rpc()
                dce.connect()
                dce.bind(rrp.MSRPC_UUID_RRP)
                hkpd = rrp.hOpenPerformanceData(dce)["phKey"]
                call = lambda: rrp.hBaseRegQueryValue(dce, hkpd, "238", 16384)  # noqa: E731 (holds it: see below)
            else:
                tid = smb.connectTree("perfsim")
                fid = smb.openFile(tid, "answer.bin", desiredAccess=1)  # FILE_READ_DATA: a read-only share
                call = lambda: smb.readFile(tid, fid, 0, size)  # noqa: E731
            while time.time() < start_at:
                time.sleep(0.01)
            end = start_at + seconds
            while time.time() < end:
                t0 = time.perf_counter()
                call()
                lat.append(time.perf_counter() - t0)
        except Exception as e:  # noqa: BLE001 - counted
            errors.append(f"{address}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=run, args=(a,)) for a in hosts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return lat, errors


def load(lib, port, hosts, seconds, mode, size, procs):
    start_at = time.time() + 5 + len(hosts) * 0.05  # every session open before the clock starts
    if lib == "samba":
        procs = len(hosts)
    jobs = [(lib, port, hosts[i::procs], seconds, mode, size, start_at) for i in range(procs)]
    with multiprocessing.Pool(procs) as pool:
        parts = pool.map(client_proc, jobs)
    lat = sorted(x for p in parts for x in p[0])
    errors = [e for p in parts for e in p[1]]
    if not lat:
        return {"calls_per_s": 0, "errors": errors[:3]}
    return {"calls_per_s": round(len(lat) / seconds), "p50_ms": round(lat[len(lat) // 2] * 1e3, 2),
            "p99_ms": round(lat[int(len(lat) * 0.99)] * 1e3, 2), "errors": len(errors)}


def sessions_memory(serve, port, hosts):
    """C sessions held open; smbd's children's smaps_rollup per session."""
    from impacket.smbconnection import SMBConnection
    before = set(children(serve.smbd_pid))
    conns = []
    for a in hosts:
        c = SMBConnection(a, a, sess_port=port, timeout=30)
        c.login("", "")
        conns.append(c)
    time.sleep(1)
    kids = [p for p in children(serve.smbd_pid) if p not in before]
    rolls = [rollup(p) for p in kids]
    n = max(len(rolls), 1)
    out = {"sessions": len(conns), "smbd_children": len(kids),
           "rss_kb": round(sum(r.get("Rss", 0) for r in rolls) / n),
           "pss_kb": round(sum(r.get("Pss", 0) for r in rolls) / n),
           "private_kb": round(sum(r.get("Private_Clean", 0) + r.get("Private_Dirty", 0) for r in rolls) / n)}
    for c in conns:
        c.close()
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--perfsim", required=True)
    p.add_argument("--sizes", default="1,1000,10000")
    p.add_argument("--clients", type=int, default=100)
    p.add_argument("--procs", type=int, default=4)
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--port", type=int, default=14461)
    p.add_argument("--work", default="/tmp/perfsim-bench-fleet-smb")
    args = p.parse_args()
    report = {"setup": []}
    sizes = [int(s) for s in args.sizes.split(",")]
    for n in sizes:
        s = Serve(args.perfsim, n, args.port, args.work)
        time.sleep(2)
        report["setup"].append({"hosts": n, "ready_s": round(s.ready_s, 2), "perfsim_rss_kb": rss_kb(s.proc.pid),
                                "smbd_rss_kb": rss_kb(s.smbd_pid) if s.smbd_pid else 0})
        if n != max(sizes):
            s.stop()
            continue
        hosts = addresses(min(args.clients, n))
        report["session_memory"] = sessions_memory(s, args.port, hosts)
        # Baseline file: the size of the "238" answer (from the perfsim side of the same run).
        from impacket.dcerpc.v5 import rrp, transport
        from impacket.smbconnection import SMBConnection
        c = SMBConnection(hosts[0], hosts[0], sess_port=args.port)
        c.login("", "")
        t = transport.SMBTransport(hosts[0], args.port, r"\winreg", smb_connection=c)
        dce = t.get_dce_rpc()
        dce.connect()
        dce.bind(rrp.MSRPC_UUID_RRP)
        # 16 KiB holds 238: a 2008+ host answers a short buffer with the size offered, on which
        # impacket would ask again forever (windows/README.md "A buffer too small").
        size = len(rrp.hBaseRegQueryValue(dce, rrp.hOpenPerformanceData(dce)["phKey"], "238", 16384)[1])
        c.close()
        with open(os.path.join(s.dir, "smb", "share", "answer.bin"), "wb") as f:
            f.write(os.urandom(size))
        report["answer_bytes"] = size
        report["clients"] = len(hosts)
        for lib in ("samba", "impacket"):
            report[lib] = {"pipe": load(lib, args.port, hosts, args.seconds, "pipe", size, args.procs),
                           "file_baseline": load(lib, args.port, hosts, args.seconds, "file", size, args.procs)}
            if report[lib]["file_baseline"].get("calls_per_s"):
                report[lib]["ratio_pipe_to_file"] = round(
                    report[lib]["pipe"]["calls_per_s"] / report[lib]["file_baseline"]["calls_per_s"], 2)
        s.stop()
    base = report["setup"][0]
    for row in report["setup"][1:]:
        row["perfsim_kb_per_host"] = round((row["perfsim_rss_kb"] - base["perfsim_rss_kb"]) / (row["hosts"] - 1), 2)
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

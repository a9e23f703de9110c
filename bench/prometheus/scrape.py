#!/usr/bin/python3
"""bench/prometheus: a real Prometheus scraping `perfsim serve --fleet --admin` (bench/README.md).

For each fleet size (--sizes, default 1,000 and 10,000 TCP hosts on 127.78.0.0/16, ephemeral
ports, the bundled capture frozen) and each /metrics form, in one run:
  per-host  `--metrics-per-host on`: a host-labelled series set per host (what every fleet got
            before issue 35: the baseline)
  fleet     `--metrics-per-host off`: fleet-wide sums (the default above 50 hosts)
it starts the fleet, opens one impacket session to every host (OpenHKPD, QueryValue "238") and
has `perfsim query` read Global from a few (--readers; a collector's growing buffer), so every
host's counters and histograms have values, reads /metrics once itself (bytes, time,
and `promtool check metrics` of what it got), then starts Debian's prometheus with a scrape
config for the admin endpoint (storage and config in a temp dir, web on 127.0.0.1), waits for
--scrapes scrapes (bounded), and reads Prometheus's own figures back through its HTTP API:
`up`, `scrape_samples_scraped`, `scrape_duration_seconds` (median of the scrapes) and, with
`--enable-feature=extra-scrape-metrics`, `scrape_body_size_bytes` where the version has it.
perfsim's resident memory (VmRSS, VmHWM) is read from /proc after the scrapes.

Usage: scrape.py --perfsim EXE [--sizes 1000,10000] [--scrapes 5] [--interval 10] [--json]
Loopback only; needs prometheus, promtool and python3-impacket (scripts/install-deps.sh).
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

CAPTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "captures", "default-2016.perfcap")
FORMS = (("per-host", "on"), ("fleet", "off"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_kb(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def http_get(port, target, timeout=120):
    t0 = time.perf_counter()
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{target}", timeout=timeout) as r:
        body = r.read()
    return body, time.perf_counter() - t0


def wait_for(what, pred, seconds, poll=0.2):
    """pred() until truthy, at most `seconds`; raises naming `what`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(poll)
    raise TimeoutError(f"{what}: not within {seconds} s")


class Serve:
    """`perfsim serve --json --fleet F --admin 127.0.0.1:0 --metrics-per-host M`, ready at its admin line."""

    def __init__(self, perfsim, work, hosts, per_host):
        with open(os.path.join(work, "fleet.toml"), "w") as f:
            f.write(f'[[host]]\naddresses = "127.78.0.0/16"\ncount = {hosts}\nname = "P-{{n}}"\n'
                    f'timeline = "frozen:2"\ncapture = "{os.path.abspath(CAPTURE)}"\n')
        self.out_path = os.path.join(work, "serve.out")
        self.err_path = os.path.join(work, "serve.err")
        t0 = time.monotonic()
        self.proc = subprocess.Popen([perfsim, "serve", "--json", "--fleet", os.path.join(work, "fleet.toml"),
                                      "--admin", "127.0.0.1:0", "--metrics-per-host", per_host],
                                     stdout=open(self.out_path, "w"), stderr=open(self.err_path, "w"))
        self.admin = wait_for("perfsim serve's admin line", self._admin_port, 300)
        self.ready_s = time.monotonic() - t0

    def _admin_port(self):
        if self.proc.poll() is not None:
            raise RuntimeError("perfsim serve exited: " + open(self.err_path).read()[-2000:])
        with open(self.out_path) as f:
            for line in f:
                if line.endswith("\n") and '"event":"admin"' in line:
                    return json.loads(line)["port"]
        return None

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Prometheus:
    def __init__(self, work, target_port, interval):
        self.port = free_port()
        config = os.path.join(work, "prometheus.yml")
        with open(config, "w") as f:
            f.write(f"global:\n  scrape_interval: {interval}s\n  scrape_timeout: {interval}s\n"
                    "scrape_configs:\n  - job_name: perfsim\n    static_configs:\n"
                    f"      - targets: ['127.0.0.1:{target_port}']\n")
        self.log = open(os.path.join(work, "prometheus.log"), "w")
        self.proc = subprocess.Popen(["prometheus", "--config.file=" + config,
                                      "--storage.tsdb.path=" + os.path.join(work, "data"),
                                      "--web.listen-address=127.0.0.1:" + str(self.port),
                                      "--enable-feature=extra-scrape-metrics"],
                                     stdout=self.log, stderr=subprocess.STDOUT)

    def query(self, q):
        """The result list of an instant query, [] while Prometheus is not answering yet."""
        if self.proc.poll() is not None:
            raise RuntimeError("prometheus exited; see its log")
        try:
            body, _ = http_get(self.port, "/api/v1/query?query=" + urllib.parse.quote(q), timeout=30)
        except OSError:
            return []
        j = json.loads(body)
        return j["data"]["result"] if j.get("status") == "success" else []

    def samples(self, metric, window):
        """Every scraped value of `metric` in the last `window` seconds, oldest first."""
        r = self.query(f"{metric}[{window}s]")
        return [float(v) for _, v in r[0]["values"]] if r else []

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def endpoints(serve):
    """(address, port) of every host, from serve's "listening" lines."""
    out = []
    with open(serve.out_path) as f:
        for line in f:
            j = json.loads(line)
            if j.get("event") == "listening":
                out.append((j["address"], j["port"]))
    return out


def impacket_session(endpoint):
    """One collector session: bind, OpenHKPD, impacket's hBaseRegQueryValue of "238" with a
    buffer that holds it (16 KiB: a 2008+ host answers a short buffer with the size offered, on
    which impacket would ask again forever; windows/README.md "A buffer too small"), close."""
    from impacket.dcerpc.v5 import rrp, transport
    dce = transport.DCERPCTransportFactory(f"ncacn_ip_tcp:{endpoint[0]}[{endpoint[1]}]").get_dce_rpc()
    dce.connect()
    try:
        dce.bind(rrp.MSRPC_UUID_RRP)
        hkpd = rrp.hOpenPerformanceData(dce)["phKey"]
        rrp.hBaseRegQueryValue(dce, hkpd, "238", 16384)
        rrp.hBaseRegCloseKey(dce, hkpd)
    finally:
        dce.disconnect()
    return True


def collector_traffic(perfsim, serve, readers, threads):
    """Every host answers one impacket session (so each has its per-host series, as in a load
    test polling the whole fleet), and `perfsim query ADDR Global --initial 4096` (a growing
    buffer to the ~1 MB answer) reads `readers` hosts spread over the fleet. Returns
    (sessions ok, queries ok, seconds)."""
    t0 = time.monotonic()
    eps = endpoints(serve)
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        sessions = sum(1 for f in [pool.submit(impacket_session, e) for e in eps] if f.exception() is None)
    queries = 0
    for k in range(readers):
        addr, port = eps[k * len(eps) // readers]
        r = subprocess.run([perfsim, "query", f"{addr}:{port}", "Global", "--initial", "4096"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        queries += r.returncode == 0
    return sessions, queries, time.monotonic() - t0


def measure(args, hosts, form, per_host):
    work = tempfile.mkdtemp(prefix=f"perfsim-prom-{hosts}-{form}-")
    row = {"hosts": hosts, "metrics": form, "flag": f"--metrics-per-host {per_host}"}
    serve = Serve(args.perfsim, work, hosts, per_host)
    prom = None
    try:
        row["ready_s"] = round(serve.ready_s, 2)
        sessions, queries, took = collector_traffic(args.perfsim, serve, args.readers, args.threads)
        row["sessions_ok"], row["queries_ok"], row["traffic_s"] = sessions, queries, round(took, 1)
        # One GET of our own: the body Prometheus will get, its time, and promtool's verdict on it.
        body, took = http_get(serve.admin, "/metrics")
        row["get_bytes"] = len(body)
        row["get_lines"] = body.count(b"\n")
        row["get_samples"] = sum(1 for ln in body.split(b"\n") if ln and not ln.startswith(b"#"))
        row["get_ms"] = round(took * 1e3, 1)
        check = subprocess.run(["promtool", "check", "metrics"], input=body, capture_output=True, timeout=300)
        row["promtool_rc"] = check.returncode
        row["promtool_output"] = (check.stdout + check.stderr).decode(errors="replace").strip()[:500]

        prom = Prometheus(work, serve.admin, args.interval)
        t0 = time.monotonic()
        # Bounded: every scrape may take up to the interval, plus Prometheus's start.
        window = (args.scrapes + 3) * args.interval + 60
        wait_for(f"{args.scrapes} scrapes", lambda: len(prom.samples("scrape_duration_seconds", window)) >= args.scrapes,
                 window)
        row["scrapes_wait_s"] = round(time.monotonic() - t0, 1)
        durations = prom.samples("scrape_duration_seconds", window)
        row["scrapes"] = len(durations)
        row["up"] = prom.samples("up", window)
        row["scrape_ms_median"] = round(statistics.median(durations) * 1e3, 1)
        row["scrape_ms_range"] = [round(min(durations) * 1e3, 1), round(max(durations) * 1e3, 1)]
        samples = prom.samples("scrape_samples_scraped", window)
        row["samples_per_scrape"] = sorted(set(int(s) for s in samples))
        size = prom.samples("scrape_body_size_bytes", window)
        row["body_bytes"] = sorted(set(int(s) for s in size)) if size else "not in this prometheus"
        row["series_stored"] = int(float(prom.query('count({job="perfsim"})')[0]["value"][1]))
        row["rss_mb"] = round(proc_kb(serve.proc.pid, "VmRSS") / 1024, 1)
        row["peak_rss_mb"] = round(proc_kb(serve.proc.pid, "VmHWM") / 1024, 1)
        row["prometheus_rss_mb"] = round(proc_kb(prom.proc.pid, "VmRSS") / 1024, 1)
    finally:
        if prom:
            prom.stop()
        serve.stop()
        if args.keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--perfsim", required=True)
    p.add_argument("--sizes", default="1000,10000")
    p.add_argument("--scrapes", type=int, default=5, help="scrapes to wait for per form (default 5)")
    p.add_argument("--interval", type=int, default=10, help="scrape interval and timeout, seconds (default 10)")
    p.add_argument("--readers", type=int, default=10, help="hosts `perfsim query` reads Global from (default 10)")
    p.add_argument("--threads", type=int, default=32, help="concurrent impacket sessions (default 32)")
    p.add_argument("--json", action="store_true", help="one JSON object per row instead of the table")
    p.add_argument("--keep", action="store_true", help="keep the temp dirs (logs, fleet file, TSDB)")
    args = p.parse_args()
    for tool in ("prometheus", "promtool"):
        if not shutil.which(tool):
            sys.exit(f"{tool} not found: apt-get install prometheus (scripts/install-deps.sh)")
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {os.getloadavg()}, "
          f"{os.cpu_count()} CPUs; {subprocess.run(['prometheus', '--version'], capture_output=True, text=True).stdout.splitlines()[0]}",
          flush=True)
    rows = []
    for hosts in (int(s) for s in args.sizes.split(",")):
        for form, per_host in FORMS:
            row = measure(args, hosts, form, per_host)
            row["load_after"] = round(os.getloadavg()[0], 1)
            rows.append(row)
            print(json.dumps(row) if args.json else row, flush=True)
    if not args.json:
        print("\nhosts | /metrics | bytes (GET) | samples/scrape | scrape ms median (min-max) | up | perfsim RSS / peak MB")
        for r in rows:
            print(f"{r['hosts']} | {r['metrics']} | {r['get_bytes']} | {r['samples_per_scrape']} | "
                  f"{r['scrape_ms_median']} {r['scrape_ms_range']} | {r['up']} | {r['rss_mb']} / {r['peak_rss_mb']}")
    for hosts in sorted(set(r["hosts"] for r in rows)):
        before = next(r for r in rows if r["hosts"] == hosts and r["metrics"] == "per-host")
        after = next(r for r in rows if r["hosts"] == hosts and r["metrics"] == "fleet")
        print(f"{hosts} hosts, fleet-wide / per-host: bytes {after['get_bytes'] / before['get_bytes']:.5f}, "
              f"samples {after['samples_per_scrape'][-1] / before['samples_per_scrape'][-1]:.5f}, "
              f"scrape time {after['scrape_ms_median'] / before['scrape_ms_median']:.4f}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Sends perfsim's admin API the requests given as a JSON list, each on its own connection with
python3's http.client (a client other than perfsim's own), and prints one JSON line per answer:
{"status": N, "body": "..."}.

A request is {"method": M, "target": T, "headers": H, "body": B}, H either {NAME: VALUE} or a list
of [NAME, VALUE] (a name may repeat). Without "Host" in H, http.client writes Host 127.0.0.1:PORT
itself; a Host of null sends no Host at all.

usage: admin_requests.py --port PORT REQUESTS_JSON
"""
import argparse
import http.client
import json
import sys


def send(port, req):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = req.get("headers", [])
    pairs = list(headers.items()) if isinstance(headers, dict) else headers
    body = req.get("body", "").encode()
    skip_host = any(name == "Host" for name, _ in pairs)
    conn.putrequest(req["method"], req["target"], skip_host=skip_host, skip_accept_encoding=True)
    for name, value in pairs:
        if value is not None:
            conn.putheader(name, value)
    if req["method"] not in ("GET", "HEAD"):
        conn.putheader("Content-Length", str(len(body)))
    conn.endheaders(body or None)
    res = conn.getresponse()
    out = {"status": res.status, "body": res.read().decode("utf-8", "replace")}
    conn.close()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("requests")
    args = ap.parse_args()
    for req in json.loads(args.requests):
        print(json.dumps(send(args.port, req)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

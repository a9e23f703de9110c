#!/usr/bin/env python3
"""A hostile ncacn_ip_tcp server for perfsim's client tests (tests/recorder/hostile_server_test.cpp).

usage: hostile_server.py PORT MODE

Listens on 127.0.0.1:PORT and answers each connection's bind (and, past the bind, its first
call) in MODE:
  truncated-bind-ack   a bind_ack whose result list claims 200 results the PDU does not hold
  short-frag-length    a header whose frag_length (8) is shorter than a header
  oversized-response   an accepted bind, then response fragments of 65,528 bytes without a
                       last one (past the client's 64 MiB bound)
  endless-fragments    an accepted bind, then empty response fragments without a last one
Bounded: it stops after 60 s, after 8 connections, and stops sending on a connection after
256 MiB or 200,000 fragments, or when the client closes it. A connection that sends nothing
(a readiness probe) is skipped.
"""
import socket
import struct
import sys
import time

DEADLINE = time.monotonic() + 60
NDR20 = bytes.fromhex("045d888aeb1cc9119fe808002b104860") + struct.pack("<HH", 2, 0)


def read_exact(conn, n):
    buf = b""
    while len(buf) < n:
        chunk = conn.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def read_pdu(conn):
    head = read_exact(conn, 16)
    if head is None:
        return None
    frag_length = struct.unpack_from("<H", head, 8)[0]
    rest = read_exact(conn, frag_length - 16)
    return None if rest is None else head + rest


def header(ptype, flags, call_id, body, frag_length=None):
    length = 16 + len(body) if frag_length is None else frag_length
    return struct.pack("<BBBB4sHHI", 5, 0, ptype, flags, b"\x10\0\0\0", length, 0, call_id) + body


def bind_ack(call_id, results=1, truncated=False):
    addr = b"49152\0"
    body = struct.pack("<HHIH", 5840, 5840, 0x1234, len(addr)) + addr
    body += b"\0" * ((4 - (16 + len(body)) % 4) % 4)
    body += struct.pack("<B3x", results)
    if not truncated:
        body += struct.pack("<HH", 0, 0) + NDR20
    return header(12, 3, call_id, body)


def response(call_id, stub, last):
    return header(2, 2 if last else 0, call_id, struct.pack("<IHBx", len(stub), 0, 0) + stub)


def first_call_id(conn):
    """The call_id of the first request, read to its last fragment."""
    while True:
        pdu = read_pdu(conn)
        if pdu is None:
            return None
        if pdu[2] == 0 and pdu[3] & 2:
            return struct.unpack_from("<I", pdu, 12)[0]


def flood(conn, call_id, stub):
    fragment = response(call_id, stub, last=False)
    sent = 0
    for _ in range(200_000):
        if sent > 256 * 1024 * 1024 or time.monotonic() > DEADLINE:
            break
        conn.sendall(fragment)
        sent += len(fragment)


def serve(conn, mode):
    bind = read_pdu(conn)
    if bind is None:
        return
    call_id = struct.unpack_from("<I", bind, 12)[0]
    if mode == "truncated-bind-ack":
        conn.sendall(bind_ack(call_id, results=200, truncated=True))
    elif mode == "short-frag-length":
        conn.sendall(header(12, 3, call_id, b"\0" * 16, frag_length=8))
    else:
        conn.sendall(bind_ack(call_id))
        call = first_call_id(conn)
        if call is not None:
            flood(conn, call, b"\x5a" * 65504 if mode == "oversized-response" else b"")
    # Keep the connection open until the client closes it: its error must not be a time-out.
    conn.settimeout(max(0.1, DEADLINE - time.monotonic()))
    while conn.recv(65536):
        pass


def main():
    port, mode = int(sys.argv[1]), sys.argv[2]
    if mode not in ("truncated-bind-ack", "short-frag-length", "oversized-response", "endless-fragments"):
        sys.exit("unknown mode " + mode)
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", port))
    srv.listen(4)
    print("listening", flush=True)
    for _ in range(8):
        srv.settimeout(max(0.1, DEADLINE - time.monotonic()))
        try:
            conn, _ = srv.accept()
        except socket.timeout:
            break
        with conn:
            try:
                serve(conn, mode)
            except (OSError, socket.timeout):
                pass


if __name__ == "__main__":
    main()

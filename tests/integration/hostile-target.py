#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""hostile-target.py MODE PORTFILE - a tiny iSCSI target (RFC 7143) on
127.0.0.1 that logs an initiator in and then misbehaves in one way, for the
client-side hardening tests of `faultlun send` (test-send-hostile.sh). It
writes its port number to PORTFILE and serves connections one at a time for
60 seconds at most.

MODE:
  bs-1g       READ CAPACITY(10) says the block size is 1 GiB
  bs-odd      READ CAPACITY(10) says 0xfffffe00
  overrun     INQUIRY answered with 256 KiB of data-in, whatever was asked
  short-vpd   INQUIRY VPD 83h whose page and designator lengths say more
              than the 12 bytes sent
  no-logout   every command GOOD; a Logout Request is never answered
  vanish      closes the connection at the first INQUIRY and stops
              listening (the session fails; a reconnect is refused)
  mrdsl0      declares MaxRecvDataSegmentLength=0 at login and asks for a
              write's data with one R2T (and never answers the write)
"""
import os
import socket
import struct
import sys
import time

MODE = sys.argv[1]
stat_sn = 1


def recv_exact(conn, n):
    buf = b""
    while len(buf) < n:
        chunk = conn.recv(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


def read_pdu(conn):
    """One PDU: (BHS, data segment); no digests are negotiated."""
    bhs = recv_exact(conn, 48)
    ahs = bhs[4] * 4
    dsl = int.from_bytes(bhs[5:8], "big")
    rest = recv_exact(conn, ahs + ((dsl + 3) & ~3))
    return bhs, rest[ahs:ahs + dsl]


def pdu(bhs, data=b""):
    bhs = bytearray(bhs)
    bhs[5:8] = len(data).to_bytes(3, "big")
    return bytes(bhs) + data + b"\0" * ((4 - len(data) % 4) % 4)


def login_reply(req, data):
    """Login Response: the stage asked for, keys that a plain target answers."""
    global stat_sn
    flags = req[1]
    csg, nsg, transit = (flags >> 2) & 3, flags & 3, flags & 0x80
    keys = dict(kv.split("=", 1) for kv in data.decode(errors="replace").split("\0") if "=" in kv)
    out = {}
    if csg == 0:
        out["AuthMethod"] = "None"
        out["TargetPortalGroupTag"] = "1"
    else:
        out.update({"HeaderDigest": "None", "DataDigest": "None", "ErrorRecoveryLevel": "0",
                    "InitialR2T": "Yes", "ImmediateData": "No", "MaxBurstLength": "262144",
                    "FirstBurstLength": "65536", "MaxConnections": "1",
                    "DataPDUInOrder": "Yes", "DataSequenceInOrder": "Yes",
                    "DefaultTime2Wait": "2", "DefaultTime2Retain": "0",
                    "MaxOutstandingR2T": "1",
                    "MaxRecvDataSegmentLength": "0" if MODE == "mrdsl0" else "262144"})
        out = {k: v for k, v in out.items() if k in keys or k == "MaxRecvDataSegmentLength"}
    body = "".join(f"{k}={v}\0" for k, v in out.items()).encode()
    rsp = bytearray(48)
    rsp[0] = 0x23
    rsp[1] = (transit | (csg << 2) | nsg) if transit else (csg << 2)
    rsp[8:14] = req[8:14]  # ISID
    rsp[14:16] = (b"\0\x01" if transit and nsg == 3 else b"\0\0")
    rsp[16:20] = req[16:20]  # ITT
    cmd_sn = int.from_bytes(req[24:28], "big")
    rsp[24:28] = stat_sn.to_bytes(4, "big")
    rsp[28:32] = cmd_sn.to_bytes(4, "big")
    rsp[32:36] = (cmd_sn + 16).to_bytes(4, "big")
    stat_sn += 1
    return pdu(rsp, body)


def scsi_reply(req, exp_cmd_sn, data=None, status=0):
    """Data-In PDUs (the last with the status) or a SCSI Response."""
    global stat_sn
    out = b""
    itt = req[16:20]
    edtl = int.from_bytes(req[20:24], "big")
    if data is not None:
        off, sn = 0, 0
        while True:
            chunk = data[off:off + 8192]
            last = off + len(chunk) >= len(data)
            h = bytearray(48)
            h[0] = 0x25
            h[1] = 0x80 | 0x01 if last else 0
            h[8:16] = req[8:16]
            h[16:20] = itt
            h[20:24] = b"\xff\xff\xff\xff"
            if last:
                h[24:28] = stat_sn.to_bytes(4, "big")
                stat_sn += 1
                if edtl > len(data):
                    h[1] |= 0x02  # underflow
                    h[44:48] = (edtl - len(data)).to_bytes(4, "big")
            h[28:32] = exp_cmd_sn.to_bytes(4, "big")
            h[32:36] = (exp_cmd_sn + 16).to_bytes(4, "big")
            h[36:40] = sn.to_bytes(4, "big")
            h[40:44] = off.to_bytes(4, "big")
            out += pdu(h, chunk)
            off += len(chunk)
            sn += 1
            if last:
                return out
    h = bytearray(48)
    h[0] = 0x21
    h[1] = 0x80
    h[3] = status
    h[16:20] = itt
    h[24:28] = stat_sn.to_bytes(4, "big")
    h[28:32] = exp_cmd_sn.to_bytes(4, "big")
    h[32:36] = (exp_cmd_sn + 16).to_bytes(4, "big")
    stat_sn += 1
    return pdu(h)


def command(req, exp_cmd_sn):
    cdb = req[32:48]
    op = cdb[0]
    if op == 0x25:
        bs = {"bs-1g": 1 << 30, "bs-odd": 0xfffffe00}.get(MODE, 512)
        return scsi_reply(req, exp_cmd_sn, struct.pack(">II", 0xfff, bs))
    if op == 0x12 and MODE == "overrun":
        return scsi_reply(req, exp_cmd_sn, bytes([0, 0, 6, 2, 251]) + b"\x41" * (256 * 1024 - 5))
    if op == 0x12 and MODE == "short-vpd" and cdb[1] & 1:
        # page length 0x200, a designator of 200 bytes: 12 bytes are sent
        return scsi_reply(req, exp_cmd_sn, bytes([0, 0x83, 2, 0, 1, 3, 0, 200, 1, 2, 3, 4]))
    if op == 0x12:
        std = bytearray(36)
        std[2], std[3], std[4] = 6, 2, 31
        std[8:16] = b"HOSTILE "
        return scsi_reply(req, exp_cmd_sn, bytes(std))
    return scsi_reply(req, exp_cmd_sn)


def serve(conn):
    global stat_sn
    stat_sn = 1
    exp_cmd_sn = 0
    while True:
        req, data = read_pdu(conn)
        op = req[0] & 0x3f
        cmd_sn = int.from_bytes(req[24:28], "big")
        if op == 0x03:
            conn.sendall(login_reply(req, data))
            exp_cmd_sn = cmd_sn
        elif op == 0x01:
            if MODE == "vanish" and req[32] == 0x12:
                conn.close()
                os._exit(0)
            if not req[0] & 0x40:
                exp_cmd_sn = cmd_sn + 1
            if req[1] & 0x20 and not req[1] & 0x40:
                # a write: one R2T for all of it (mrdsl0), never answered
                if MODE == "mrdsl0":
                    h = bytearray(48)
                    h[0] = 0x31
                    h[1] = 0x80
                    h[8:16] = req[8:16]
                    h[16:20] = req[16:20]
                    h[20:24] = (1).to_bytes(4, "big")
                    h[24:28] = stat_sn.to_bytes(4, "big")
                    h[28:32] = exp_cmd_sn.to_bytes(4, "big")
                    h[32:36] = (exp_cmd_sn + 16).to_bytes(4, "big")
                    h[44:48] = req[20:24]
                    conn.sendall(pdu(h))
                continue
            conn.sendall(command(req, exp_cmd_sn))
        elif op == 0x00 and req[16:20] != b"\xff\xff\xff\xff":
            h = bytearray(48)
            h[0] = 0x20
            h[1] = 0x80
            h[8:16] = req[8:16]
            h[16:20] = req[16:20]
            h[20:24] = b"\xff\xff\xff\xff"
            h[24:28] = stat_sn.to_bytes(4, "big")
            h[28:32] = exp_cmd_sn.to_bytes(4, "big")
            h[32:36] = (exp_cmd_sn + 16).to_bytes(4, "big")
            conn.sendall(pdu(h))
        elif op == 0x06:
            if MODE == "no-logout":
                continue
            h = bytearray(48)
            h[0] = 0x26
            h[1] = 0x80
            h[16:20] = req[16:20]
            h[24:28] = stat_sn.to_bytes(4, "big")
            h[28:32] = exp_cmd_sn.to_bytes(4, "big")
            h[32:36] = (exp_cmd_sn + 16).to_bytes(4, "big")
            conn.sendall(pdu(h))


def main():
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    with open(sys.argv[2] + ".tmp", "w") as f:
        f.write(str(srv.getsockname()[1]))
    os.rename(sys.argv[2] + ".tmp", sys.argv[2])
    end = time.time() + 60
    while time.time() < end:
        srv.settimeout(max(0.1, end - time.time()))
        try:
            conn, _ = srv.accept()
        except socket.timeout:
            break
        conn.settimeout(max(0.1, end - time.time()))
        try:
            serve(conn)
        except (EOFError, OSError):
            pass
        conn.close()


main()

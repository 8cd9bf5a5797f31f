#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# import-pcap.py OUT.pcap: writes a small hand-made capture for
# `faultlun import`: a UDP datagram, an HTTP connection, and an iSCSI
# connection the capture joins mid-session (no SYN, no login, garbage before
# the first PDU) carrying an INQUIRY answered by Data-In with status
# (vendor ACME, product TESTDISK), a READ(10) of LBA 100, 8 blocks, sent
# twice (a retransmission) and answered with MEDIUM ERROR 11/00,
# INFORMATION 104 in two segments that arrive out of order, a WRITE(10)
# never answered before the connection closes, and a PERSISTENT RESERVE OUT
# REGISTER then RESERVE with key 0x1234, their parameter lists as immediate
# data, both GOOD (replayed without their parameter lists, the RESERVE would
# be a RESERVATION CONFLICT: `faultlun import --verify` tells).
# import-pcap.py OUT.pcap gap: the same, then a READ(10) of LBA 300 whose
# SCSI Response the capture lost (the target's sequence numbers skip it) and
# two TEST UNIT READYs answered GOOD after the hole (then a NOP-In), which
# never fills before the connection ends: the read and the write still
# outstanding then are no holds, the TEST UNIT READYs are answered.
import struct
import sys


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ip_frame(proto, src, dst, l4):
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 1, 0, 64, proto, 0,
                     bytes(src), bytes(dst))
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    eth = b"\x02\0\0\0\0\x01" + b"\x02\0\0\0\0\x02" + b"\x08\x00"
    return eth + ip + l4


def tcp(src, sport, dst, dport, seq, payload, flags=0x18):
    hdr = struct.pack("!HHIIBBHHH", sport, dport, seq, 1, 5 << 4, flags, 65535, 0, 0)
    return ip_frame(6, src, dst, hdr + payload)


def bhs(op, flags, dsl, lun, itt, rest):
    b = struct.pack("!BBBBB", op, flags, 0, 0, 0) + dsl.to_bytes(3, "big")
    b += lun + struct.pack("!I", itt) + rest
    assert len(b) == 48, len(b)
    return b


def pad(d):
    return d + b"\0" * (-len(d) % 4)


I = [10, 0, 0, 1]
T = [10, 0, 0, 2]
LUN0 = b"\0" * 8
frames = []
frames.append(ip_frame(17, I, T, struct.pack("!HHHH", 5000, 53, 12, 0) + b"abcd"))
frames.append(tcp(I, 40000, T, 80, 1000, b"GET / HTTP/1.0\r\n\r\n"))

iseq, tseq = 5000, 9000
def cmd(itt, cdb, edtl, flags=0xC0):
    return bhs(0x01, flags, 0, LUN0, itt, struct.pack("!III", edtl, 1, 1) + cdb.ljust(16, b"\0"))

inq = cmd(1, bytes([0x12, 0, 0, 0, 96, 0]), 96)
read = cmd(2, bytes([0x28, 0, 0, 0, 0, 100, 0, 0, 8, 0]), 4096)
write = cmd(3, bytes([0x2A, 0, 0, 0, 0, 200, 0, 0, 1, 0]), 512, flags=0xA0)
inqdata = bytes([0, 0, 5, 2, 91, 0, 0, 2]) + b"ACME    " + b"TESTDISK        " + b"1.0 "
inqdata = inqdata.ljust(96, b"\0")
datain = bhs(0x25, 0x81, len(inqdata), LUN0, 1,
             struct.pack("!IIIIIII", 0xFFFFFFFF, 1, 2, 9, 0, 0, 0)) + pad(inqdata)
sense = bytes([0xF0, 0, 0x03, 0, 0, 0, 104, 10, 0, 0, 0, 0, 0x11, 0, 0, 0, 0, 0])
resp = bhs(0x21, 0x80, 2 + len(sense), b"\0" * 8, 2,
           struct.pack("!IIIIIII", 0, 2, 3, 10, 0, 0, 0)) + pad(struct.pack("!H", len(sense)) + sense)
resp = resp[:3] + b"\x02" + resp[4:]  # CHECK CONDITION
# joined mid-session: the tail of some earlier PDU first
garbage = b"\x55" * 37
frames.append(tcp(I, 40001, T, 3260, iseq, garbage + inq)); iseq += len(garbage) + len(inq)
frames.append(tcp(T, 3260, I, 40001, tseq, datain)); tseq += len(datain)
frames.append(tcp(I, 40001, T, 3260, iseq, read))
frames.append(tcp(I, 40001, T, 3260, iseq, read)); iseq += len(read)  # retransmitted
half = 30
frames.append(tcp(T, 3260, I, 40001, tseq + half, resp[half:]))  # out of order
frames.append(tcp(T, 3260, I, 40001, tseq, resp[:half])); tseq += len(resp)
frames.append(tcp(I, 40001, T, 3260, iseq, write)); iseq += len(write)
KEY = (0x1234).to_bytes(8, "big")
for itt, sa, typ, params in ((4, 0, 0, b"\0" * 8 + KEY + b"\0" * 8),
                             (5, 1, 1, KEY + b"\0" * 16)):
    pr = bhs(0x01, 0xA0, len(params), LUN0, itt,
             struct.pack("!III", len(params), itt - 2, 1) +
             bytes([0x5F, sa, typ, 0, 0, 0, 0, 0, len(params), 0]).ljust(16, b"\0")) + params
    frames.append(tcp(I, 40001, T, 3260, iseq, pr)); iseq += len(pr)
    good = bhs(0x21, 0x80, 0, b"\0" * 8, itt, struct.pack("!IIIIIII", 0, itt, itt + 1, itt + 8, 0, 0, 0))
    frames.append(tcp(T, 3260, I, 40001, tseq, good)); tseq += len(good)
if len(sys.argv) > 2 and sys.argv[2] == "gap":
    for itt, cdb, edtl in ((6, bytes([0x28, 0, 0, 0, 1, 44, 0, 0, 1, 0]), 512), (7, bytes(6), 0),
                           (8, bytes(6), 0)):
        c = cmd(itt, cdb, edtl, flags=0xC0 if edtl else 0x80)
        frames.append(tcp(I, 40001, T, 3260, iseq, c)); iseq += len(c)
        good = bhs(0x21, 0x80, 0, b"\0" * 8, itt, struct.pack("!IIIIIII", 0, itt, itt + 1, itt + 8, 0, 0, 0))
        if itt != 6:
            frames.append(tcp(T, 3260, I, 40001, tseq, good))
        tseq += len(good)  # itt 6: the capture lost it
    nop = bhs(0x20, 0x80, 0, LUN0, 0xFFFFFFFF, struct.pack("!IIIIIII", 0xFFFFFFFF, 9, 10, 17, 0, 0, 0))
    frames.append(tcp(T, 3260, I, 40001, tseq, nop)); tseq += len(nop)
frames.append(tcp(I, 40001, T, 3260, iseq, b"", flags=0x11))  # FIN

with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    for n, fr in enumerate(frames):
        f.write(struct.pack("<IIII", 1700000000 + n, 0, len(fr), len(fr)) + fr)

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Writes the seed corpus of fuzz_cdb (corpus/cdb/): the commands an initiator
# sends when it scans, reads, writes, reserves and unmaps a disk (SPC-4,
# SBC-3), in fuzz_cdb's input format (see fuzz_cdb.c).
import os
import struct


def cmd(cdb, nexus=0, lun=0, dout=b"", din=0xFFFF):
    flags = nexus | (lun << 1) | ((len(cdb) - 1) << 2)
    return bytes([flags]) + bytes(cdb) + struct.pack(">H", len(dout)) + dout + struct.pack(">H", din)


def be(n, v):
    return list(v.to_bytes(n, "big"))


blk = bytes(range(256)) * 2
pr_key = lambda k: bytes(be(8, k))
seeds = {
    "tur": cmd([0x00, 0, 0, 0, 0, 0]),
    "inquiry": cmd([0x12, 0, 0, 0, 96, 0]),
    "inquiry-vpd": b"".join(cmd([0x12, 1, p, 0, 255, 0]) for p in (0x00, 0x80, 0x83, 0xB0, 0xB1, 0xB2)),
    "inquiry-lun1": cmd([0x12, 0, 0, 0, 96, 0], lun=1),
    "readcap": cmd([0x25] + [0] * 9) + cmd([0x9E, 0x10] + [0] * 8 + be(4, 32) + [0, 0]),
    "report-luns": cmd([0xA0, 0, 0, 0, 0, 0] + be(4, 4096) + [0, 0]),
    "read10": cmd([0x28, 0] + be(4, 8) + [0, 0, 2, 0]),
    "write-read": cmd([0x2A, 0] + be(4, 8) + [0, 0, 1, 0], dout=blk)
    + cmd([0x28, 0] + be(4, 8) + [0, 0, 1, 0], nexus=1),
    "read16": cmd([0x88, 0] + be(8, 2040) + be(4, 16) + [0, 0]),
    "write16-fua": cmd([0x8A, 0x08] + be(8, 2047) + be(4, 1) + [0, 0], dout=blk),
    "read6": cmd([0x08, 0, 0, 4, 1, 0]),
    "mode-sense": cmd([0x1A, 0, 0x3F, 0, 255, 0]) + cmd([0x5A, 0, 0x3F, 0, 0, 0, 0, 0x10, 0, 0]),
    "mode-select-caching": cmd([0x15, 0x10, 0, 0, 24, 0],
                               dout=bytes([0, 0, 0, 0, 0x08, 0x12, 0x04] + [0] * 17)),
    "request-sense": cmd([0x03, 0, 0, 0, 252, 0]),
    "sync-cache": cmd([0x35] + [0] * 9) + cmd([0x91] + [0] * 15),
    "write-same-unmap": cmd([0x93, 0x08] + be(8, 0) + be(4, 64) + [0, 0], dout=bytes(512)),
    "unmap": cmd([0x42, 0, 0, 0, 0, 0, 0, 0, 24, 0],
                 dout=bytes(be(2, 22) + be(2, 16) + [0] * 4 + be(8, 16) + be(4, 32) + [0] * 4)),
    "get-lba-status": cmd([0x9E, 0x12] + be(8, 0) + be(4, 64) + [0, 0]),
    "compare-and-write": cmd([0x89, 0] + be(8, 3) + [0, 0, 0, 1, 0, 0], dout=bytes(1024)),
    "verify": cmd([0x2F, 0] + be(4, 0) + [0, 0, 8, 0]),
    "prefetch": cmd([0x34, 0] + be(4, 0) + [0, 0, 8, 0]),
    "start-stop": cmd([0x1B, 0, 0, 0, 0, 0]) + cmd([0x00] * 6) + cmd([0x1B, 0, 0, 0, 1, 0]),
    "reserve6": cmd([0x16, 0, 0, 0, 0, 0]) + cmd([0x2A, 0, 0, 0, 0, 0, 0, 0, 1, 0], nexus=1, dout=blk)
    + cmd([0x17, 0, 0, 0, 0, 0]),
    "pr": cmd([0x5F, 0x00, 0, 0, 0, 0, 0, 0, 24, 0], dout=pr_key(0) + pr_key(0xA) + bytes(8))
    + cmd([0x5F, 0x00, 0, 0, 0, 0, 0, 0, 24, 0], nexus=1, dout=pr_key(0) + pr_key(0xB) + bytes(8))
    + cmd([0x5F, 0x01, 0x05, 0, 0, 0, 0, 0, 24, 0], dout=pr_key(0xA) + bytes(16))
    + cmd([0x5E, 0x00, 0, 0, 0, 0, 0, 0x10, 0, 0]) + cmd([0x5E, 0x01, 0, 0, 0, 0, 0, 0x10, 0, 0])
    + cmd([0x5E, 0x03, 0, 0, 0, 0, 0, 0x10, 0, 0], nexus=1)
    + cmd([0x2A, 0, 0, 0, 0, 0, 0, 0, 1, 0], nexus=1, dout=blk)
    + cmd([0x5F, 0x04, 0x05, 0, 0, 0, 0, 0, 24, 0], nexus=1, dout=pr_key(0xB) + pr_key(0xA) + bytes(8)),
    "report-tpgs": cmd([0xA3, 0x0A, 0, 0, 0, 0] + be(4, 1024) + [0, 0]),
    "report-opcodes": cmd([0xA3, 0x0C, 0, 0, 0, 0] + be(4, 8192) + [0, 0]),
    "log-sense": cmd([0x4D, 0, 0x40, 0, 0, 0, 0, 0x10, 0, 0]),
    "write-verify": cmd([0x2E, 0] + be(4, 100) + [0, 0, 1, 0], dout=blk),
    "xdwrite-var": cmd([0x7F, 0, 0, 0, 0, 0, 0, 24] + [0] * 24),
}
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "cdb")
os.makedirs(out, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)

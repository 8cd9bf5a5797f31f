#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Seeds for fuzz_client and fuzz_decode from a real target: run under
# `faultlun serve SCENARIO --listen 127.0.0.1:0 --run '...'` (the target's
# URL in $FAULTLUN_URL), it relays `faultlun send` runs to it through a
# loopback relay that records each PDU the target sends, and writes
#   OUTDIR/client/<name>: fuzz_client's input (items byte, flags byte, then
#     each target PDU as an answer with its ITT and sequence numbers patched)
#   OUTDIR/decode/<name>: fuzz_decode's input (CDB length, CDB, data-in) for
#     each command send decodes, from `send --json -x`
#   faultlun serve SCENARIO --listen 127.0.0.1:0 --run 'client-seeds.py FAULTLUN OUTDIR'
import json
import os
import socket
import subprocess
import sys
import threading
import time

fl, outdir = sys.argv[1:3]
A_LOGIN, A_ITT, A_SEQ, A_LEN = 1, 2, 4, 8
# fuzz_client's items, by bit of byte 0 (bits 2-7), and byte 1 bit 0
ITEMS = ["inquiry", "inquiry:vpd=0x83", "readcap", "read:lba=0,blocks=2",
         "write:lba=1,blocks=2,pattern=7", "report-luns"]
RUNS = {"inquiry": 1 << 2, "vpd83": 1 << 3, "readcap": 1 << 4, "read": 1 << 5,
        "write": 1 << 6, "report-luns": 1 << 7, "all": 0xfc, "json-hex": 0xff}
DECODE = ["inquiry", "inquiry:vpd=0x00", "inquiry:vpd=0x80", "inquiry:vpd=0x83",
          "inquiry:vpd=0x86", "inquiry:vpd=0xb0", "inquiry:vpd=0xb1", "inquiry:vpd=0xb2",
          "readcap", "report-luns", "request-sense",
          "raw:'9e 10 00 00 00 00 00 00 00 00 00 00 00 20 00 00',in=32",
          "raw:'a3 0a 00 00 00 00 00 00 01 00 00 00',in=256",
          "raw:'1a 00 3f 00 ff 00',in=255", "raw:'5a 00 3f 00 00 00 00 01 00 00',in=256"]


def pdus(stream):
    """Splits a target-to-initiator byte stream into PDUs (no digests)."""
    off, out = 0, []
    while off + 48 <= len(stream):
        dsl = int.from_bytes(stream[off + 5:off + 8], "big")
        end = off + 48 + stream[off + 4] * 4 + ((dsl + 3) & ~3)
        out.append(stream[off:end])
        off = end
    return out


def relay(lsock, tport, rec):
    """One connection: relays both ways, records the target's bytes."""
    c, _ = lsock.accept()
    s = socket.create_connection(("127.0.0.1", tport))

    def pipe(a, b, keep):
        while True:
            try:
                d = a.recv(65536)
            except OSError:
                break
            if not d:
                break
            if keep:
                rec.append(d)
            b.sendall(d)
        try:
            b.shutdown(socket.SHUT_WR)
        except OSError:
            pass
    t = threading.Thread(target=pipe, args=(s, c, True))
    t.start()
    pipe(c, s, False)
    t.join()


def main():
    os.makedirs(os.path.join(outdir, "client"), exist_ok=True)
    os.makedirs(os.path.join(outdir, "decode"), exist_ok=True)
    target = os.environ["FAULTLUN_URL"]  # iscsi://HOST:PORT/IQN/LUN
    hostport, iqn = target[len("iscsi://"):].split("/")[:2]
    tport = int(hostport.rsplit(":", 1)[1])
    if True:
        for name, bits in RUNS.items():
            ls = socket.socket()
            ls.bind(("127.0.0.1", 0))
            ls.listen(1)
            rec = []
            th = threading.Thread(target=relay, args=(ls, tport, rec))
            th.start()
            items = [ITEMS[i] for i in range(6) if bits & (4 << i)] or ["tur"]
            opts = (["--json"] if bits & 1 else []) + (["-x"] if bits & 2 else [])
            url = "iscsi://127.0.0.1:%d/%s/0" % (ls.getsockname()[1], iqn)
            subprocess.run([fl, "send", "-t", "5"] + opts + [url] + items,
                           capture_output=True, timeout=30)
            th.join()
            seed = bytes([bits, 0])
            for p in pdus(b"".join(rec)):
                p = p[:4096]
                seed += bytes([A_ITT | A_SEQ, len(p) >> 8, len(p) & 255]) + p
            open(os.path.join(outdir, "client", name), "wb").write(seed[:8192])
        url = "iscsi://127.0.0.1:%d/%s/0" % (tport, iqn)
        for i, item in enumerate(DECODE):
            r = subprocess.run([fl, "send", "-t", "5", "--json", "-x", "-i", url, item],
                               capture_output=True, text=True, timeout=30)
            for line in r.stdout.splitlines():
                j = json.loads(line)
                cdb = bytes.fromhex(j["cdb"].replace(" ", ""))
                lens = {6: 0, 10: 1, 12: 2, 16: 3}
                seed = bytes([lens.get(len(cdb), 3)]) + cdb.ljust(16, b"\0")
                seed += bytes.fromhex(j.get("data", ""))
                open(os.path.join(outdir, "decode", "seed-%02d" % i), "wb").write(seed)


main()

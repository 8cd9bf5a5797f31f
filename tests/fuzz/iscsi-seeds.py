#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Turns captured initiator streams (capture-proxy.py) into fuzz_iscsi seeds:
# "\0" + the stream (it logs in itself) and "\1" + the stream after its login
# PDUs (fuzz_iscsi logs in first). Capped at 8 KiB, fuzz_iscsi's -max_len.
#   iscsi-seeds.py OUTDIR CAPTURE...
import os
import sys

out = sys.argv[1]
for path in sys.argv[2:]:
    s = open(path, "rb").read()
    off = 0
    while off + 48 <= len(s) and (s[off] & 0x3F) == 0x03:
        dsl = int.from_bytes(s[off + 5:off + 8], "big")
        off += 48 + s[off + 4] * 4 + ((dsl + 3) & ~3)
    name = os.path.basename(path)
    with open(os.path.join(out, name + "-full"), "wb") as f:
        f.write((b"\0" + s)[:8192])
    if off < len(s):
        with open(os.path.join(out, name + "-ffp"), "wb") as f:
            f.write((b"\1" + s[off:])[:8192])

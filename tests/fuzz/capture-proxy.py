#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A loopback TCP relay that records what initiators send (client to target),
# one file per connection: the raw material of corpus/iscsi (see iscsi-seeds.py).
#   capture-proxy.py LISTEN_PORT TARGET_PORT OUT_PREFIX
import socket, sys, threading, os
lport, rport, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", lport)); ls.listen(16)
n = 0
def pipe(a, b, f):
    while True:
        d = a.recv(65536)
        if not d: break
        if f: f.write(d); f.flush()
        b.sendall(d)
    try: b.shutdown(socket.SHUT_WR)
    except OSError: pass
while True:
    c, _ = ls.accept(); n += 1
    s = socket.create_connection(("127.0.0.1", rport))
    f = open("%s-%d" % (out, n), "wb")
    threading.Thread(target=pipe, args=(c, s, f), daemon=True).start()
    threading.Thread(target=pipe, args=(s, c, None), daemon=True).start()

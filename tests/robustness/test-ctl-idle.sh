#!/bin/sh
# SPDX-License-Identifier: MIT
# test-ctl-idle.sh - the control socket against clients that connect and
# say nothing: with all 32 places taken by idle clients, the owner's `ping`
# is still answered within 1 s (the client idle longest is closed for it, and
# told why); a client silent for 30 s is closed and told why; `act 0
# '{"owner": 99}'` on a LUN without a vendor personality answers an error
# naming why, not ok.
#   test-ctl-idle.sh FAULTLUN OUTDIR
set -u
fl=$1 out=$2
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
rm -rf "$out"
mkdir -p "$out"
sock=$out/ctl.sock
"$fl" serve -q --listen 127.0.0.1:0 --size 16MiB --ctl "$sock" --run "
	python3 - '$sock' '$fl' <<'EOF'
import socket, subprocess, sys, time
path, fl = sys.argv[1], sys.argv[2]
idle = []
for i in range(32):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    idle.append(s)
time.sleep(0.3)
t0 = time.monotonic()
p = subprocess.run([fl, 'ctl', path, 'ping'], capture_output=True, text=True, timeout=10)
dt = time.monotonic() - t0
print(f'ping with 32 idle clients: exit {p.returncode} in {dt:.3f} s: {p.stdout.strip()} {p.stderr.strip()}')
if p.returncode != 0 or dt > 1.0:
    sys.exit('FAIL: the owner was not answered within 1 s')
# the first idle client was closed, and told why
idle[0].settimeout(2)
said = idle[0].recv(4096).decode()
print('the idle client got:', said.strip())
if 'idle' not in said:
    sys.exit('FAIL: no idle client was closed for the newcomer')
late = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
late.connect(path)
t_late = time.monotonic()
p = subprocess.run([fl, 'ctl', path, 'act', '0', '{\"owner\": 99}'], capture_output=True,
                   text=True, timeout=10)
print(f'act owner 99: exit {p.returncode}: {p.stdout.strip()} {p.stderr.strip()}')
if p.returncode == 0 or 'no vendor personality' not in p.stdout + p.stderr:
    sys.exit('FAIL: act owner on a LUN without the personality did not say why')
late.settimeout(40)
said = late.recv(4096).decode()
dt = time.monotonic() - t_late
print(f'a silent client after {dt:.1f} s got: {said.strip()}')
if 'idle for 30 s' not in said or not 29.5 < dt < 33:
    sys.exit('FAIL: a silent client was not closed after 30 s')
EOF
" >"$out/log" 2>&1
rc=$?
cat "$out/log"
[ $rc -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
echo "ok"

#!/bin/sh
# SPDX-License-Identifier: MIT
# Sets everything up (Debian packages as root), builds faultlun, and serves the
# demo scenario on 127.0.0.1 while real libiscsi clients talk to it.
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh test
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release -j "$(nproc)"
fl=build/release/cli/faultlun
$fl lint scenarios/*.json
# The port is chosen by the target (0 = any free one) and handed to the
# client commands as FAULTLUN_URL, so the demo never clashes with a running target.
exec $fl serve scenarios/demo.json --listen 127.0.0.1:0 --run '
	set -e
	echo "== iscsi-ls"; iscsi-ls -s "iscsi://127.0.0.1:$FAULTLUN_PORT"
	echo "== iscsi-inq"; iscsi-inq "$FAULTLUN_URL"
	echo "== iscsi-readcapacity16"; iscsi-readcapacity16 "$FAULTLUN_URL"
	echo "== iscsi-perf (3 s of 4 KiB random reads)"; timeout 3 iscsi-perf -b 8 "$FAULTLUN_URL" || true
'

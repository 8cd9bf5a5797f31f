#!/bin/sh
# SPDX-License-Identifier: MIT
# Sets everything up (Debian packages as root), builds faultlun, and serves the
# demo scenario (scenarios/demo.json) on 127.0.0.1 while real libiscsi clients
# talk to it: discovery, INQUIRY, READ CAPACITY, a burst of reads, then the
# scenario's own check (a medium error on LBAs 4096-4103, healed by a rewrite).
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh test
# FAULTLUN_WERROR=ON (as CI sets it) makes warnings errors; off by default.
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DFAULTLUN_WERROR="${FAULTLUN_WERROR:-OFF}" >/dev/null
cmake --build build/release -j "$(nproc)"
b=build/release
echo "== faultlun lint: every shipped scenario"
$b/cli/faultlun lint $(ls scenarios/*.json | grep -v '\.schema\.json$')
# The target picks a free port (0) and hands it to the client commands as
# FAULTLUN_PORT / FAULTLUN_URL, so the demo never clashes with a running target.
exec $b/cli/faultlun serve scenarios/demo.json --listen 127.0.0.1:0 --run "
	set -e
	echo '== iscsi-ls (SendTargets discovery)'; iscsi-ls -s \"iscsi://127.0.0.1:\$FAULTLUN_PORT\"
	echo '== iscsi-inq'; iscsi-inq \"\$FAULTLUN_URL\"
	echo '== iscsi-readcapacity16'; iscsi-readcapacity16 \"\$FAULTLUN_URL\"
	echo '== iscsi-perf on LUN 1: 3 s of 4 KiB random reads at queue depth 32'
	timeout -s INT 3 iscsi-perf -m 32 -b 8 -r \"\${FAULTLUN_URL%/0}/1\" || true
	echo '== the scenario check: medium error on LBA 4096, healed by a rewrite'
	$b/cli/faultlun check --url \"\$FAULTLUN_URL\" scenarios/demo.json
"

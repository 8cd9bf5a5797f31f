#!/bin/sh
# SPDX-License-Identifier: MIT
# `faultlun serve` under valgrind memcheck while real libiscsi clients run the
# integration checks (login, INQUIRY, reads and writes, TMFs, a hostile peer,
# the demo scenario's check). Fails on any invalid access or definite leak.
#   test-valgrind.sh FAULTLUN ISCSI_CLIENT SCENARIO WORKDIR
set -eu
fl=$1 client=$2 scenario=$3 dir=$4
command -v valgrind >/dev/null || { echo "SKIP: valgrind not installed"; exit 77; }
command -v iscsi-inq >/dev/null || { echo "SKIP: libiscsi-bin not installed"; exit 77; }
mkdir -p "$dir"
trace=$dir/trace.jsonl
rm -f "$trace"
exec valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
	--show-leak-kinds=definite --trace-children=no \
	"$fl" serve -q --listen 127.0.0.1:0 --login-timeout 2 --trace "$trace" "$scenario" --run "
	set -e
	$fl check -q --url \"\$FAULTLUN_URL\" --trace $trace $scenario
	iscsi-inq \"\$FAULTLUN_URL\" >/dev/null
	iscsi-readcapacity16 \"\$FAULTLUN_URL\" >/dev/null
	for c in inquiry readwrite nop tmf reconnect hostile discovery; do
		$client \"\$FAULTLUN_URL\" \$c
	done
"

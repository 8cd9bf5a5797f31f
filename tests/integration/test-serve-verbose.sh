#!/bin/sh
# SPDX-License-Identifier: MIT
# test-serve-verbose.sh FAULTLUN SCENARIO - serve's banner names each LUN as a
# host sees it (size, block size, serial, NAA / wwn) and the armed rules, and
# -v prints the injected fault with a timestamp while --trace FILE still gets
# the trace; -vv logs every PDU received and sent, decoded. SCENARIO: one 1 MiB LUN, serial FLVERBOSE0, rule rc-busy (BUSY
# for READ CAPACITY(16)).
set -u
fl=$1
scen=$2
command -v iscsi-readcapacity16 >/dev/null 2>&1 || { echo "SKIP: iscsi-readcapacity16 (libiscsi-bin) missing"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; sed 's/^/  /' "$tmp/err"; exit 1; }
"$fl" serve -v --listen 127.0.0.1:0 --trace "$tmp/trace" "$scen" \
	--run 'iscsi-readcapacity16 "$FAULTLUN_URL" >/dev/null 2>&1; true' 2>"$tmp/err" ||
	fail "serve exited $?"
grep -Eq '^faultlun serve:   LUN 0: 1048576 bytes \(2048 blocks of 512\), serial FLVERBOSE0, NAA 0x[0-9a-f]{16} \(wwn-0x[0-9a-f]{16}\)$' "$tmp/err" ||
	fail "no LUN line with size, block size, serial and NAA"
grep -q '^faultlun serve:   rc-busy: status$' "$tmp/err" || fail "the armed rule is not listed"
grep -Eq '^faultlun serve: [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} inject .*rule=rc-busy' "$tmp/err" ||
	fail "-v printed no timestamped inject line"
grep -q '"event":"inject".*"rule":"rc-busy"' "$tmp/trace" || fail "--trace FILE lacks the inject line under -v"
"$fl" serve -vv -q --listen 127.0.0.1:0 "$scen" \
	--run 'iscsi-readcapacity16 "$FAULTLUN_URL" >/dev/null 2>&1; true' 2>"$tmp/err" ||
	fail "serve -vv exited $?"
grep -Eq ': rx Login Request itt 0x[0-9a-f]{8} cmdsn [0-9]+ expstatsn [0-9]+ dsl [0-9]+$' "$tmp/err" ||
	fail "-vv: no decoded Login Request"
grep -Eq ': rx SCSI Command itt .* lun 0 cdb 0x9e READ CAPACITY\(16\) R edtl 32$' "$tmp/err" ||
	fail "-vv: no decoded READ CAPACITY(16) command"
grep -Eq ': tx SCSI Response itt .* status 0x08 ' "$tmp/err" ||
	fail "-vv: no decoded BUSY response"
echo "serve banner, -v and -vv: ok"

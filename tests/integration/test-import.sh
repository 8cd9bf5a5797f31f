#!/bin/sh
# SPDX-License-Identifier: MIT
# test-import.sh FAULTLUN MODE [SCENARIO]: captures (tcpdump on lo) libiscsi's
# tools and `faultlun send` talking to a real target, imports the capture,
# lints the scenario, serves it and checks that the same identity, capacity
# and error come back (docs/import.md).
#   MODE faultlun: the target is `faultlun serve SCENARIO` (a medium error at
#                  LBA 65535 of LUN 0: eod-partscan-medium-error.json)
#   MODE tgtd:     the target is tgtd with a 32 MiB file LUN; the error is
#                  the read past its end (ILLEGAL REQUEST 21/00)
# Exit 77 when tcpdump, tgtd or the libiscsi tools are missing or capturing
# on lo is not permitted.
set -u
. "$(dirname "$0")/../lib/common.sh"
fl=$1
mode=$2
scen=${3:-}
PATH=$PATH:/usr/sbin
for t in tcpdump iscsi-inq iscsi-readcapacity16 iscsi-ls; do
	command -v $t >/dev/null 2>&1 || { echo "$t not installed: skipped"; exit 77; }
done
tmp=$(mktemp -d)
tdpid=""
tgtpid=""
ctl=""
# Ends what this script started (by pid) and removes the scratch directory.
cleanup() {
	[ -n "$tdpid" ] && { kill "$tdpid" 2>/dev/null; wait "$tdpid" 2>/dev/null; }
	fl_tgtd_stop
	rm -rf "$tmp"
}
trap 'rc=$?; cleanup; exit $rc' EXIT
trap 'exit 1' INT TERM
fail() { echo "FAIL: $*" >&2; for f in "$tmp"/*.out "$tmp"/*.err "$tmp"/imported.json; do [ -f "$f" ] && { echo "== $f" >&2; cat "$f" >&2; }; done; exit 1; }
port=$(fl_freeport) || fail "no free port"

# The clients, against URL $1 (a LUN), the portal $2; what they print goes to $3.
clients() {
	{
		iscsi-inq "$1"
		iscsi-readcapacity16 "$1"
		iscsi-ls -s "iscsi://$2"
		"$fl" send -u "$1" inquiry:vpd=0x80 inquiry:vpd=0x83 "read:lba=$4"
	} >"$3" 2>&1
	return 0
}

fl_capture "$port" "$tmp/cap.pcap"

case $mode in
faultlun)
	iqn=iqn.2026-12.org.faultlun:eod-partscan-medium-error
	url="iscsi://127.0.0.1:$port/$iqn/0"
	bad=65535
	fl_serve_bg "$fl" "$scen" "$port" "$tmp/serve1.err"
	clients "$url" "127.0.0.1:$port" "$tmp/orig.out" $bad
	kill "$spid"
	wait "$spid" 2>/dev/null
	;;
tgtd)
	iqn=iqn.2026-12.org.faultlun:import-tgtd
	truncate -s 32M "$tmp/lun1.img"
	fl_tgtd "$port" "$iqn" "$tmp/lun1.img"
	url="iscsi://127.0.0.1:$port/$iqn/1"
	bad=65536 # one past the last LBA
	clients "$url" "127.0.0.1:$port" "$tmp/orig.out" $bad
	;;
*)
	echo "unknown mode $mode" >&2
	exit 2
	;;
esac
sleep 1.5
fl_capture_end
grep -q "Vendor:" "$tmp/orig.out" || fail "the clients got no INQUIRY answer from the target"

"$fl" import "$tmp/cap.pcap" -o "$tmp/imported.json" 2>"$tmp/import.err" || fail "import failed"
# Fidelity: the capture's commands replayed against the imported scenario
# answer as the target did (status, sense, data-in length, identity).
"$fl" import "$tmp/cap.pcap" --verify >"$tmp/verify.out" 2>"$tmp/verify.err" ||
	fail "verify found differences (or failed) against the scenario just imported"
grep -Eq '^verify: ([3-9]|[1-9][0-9]+) commands, 0 differences' "$tmp/verify.out" ||
	fail "verify did not replay the clients' commands"
# A scenario altered by hand (the vendor; the sense of the read's rule) is
# told apart: each change is a difference, exit 1.
sed 's/"vendor": "[^"]*"/"vendor": "ALTERED"/' "$tmp/imported.json" >"$tmp/alt-vendor.json"
"$fl" import "$tmp/cap.pcap" --verify-scenario "$tmp/alt-vendor.json" >"$tmp/verify-vendor.out" 2>&1
[ $? = 1 ] || fail "verify of a scenario with another vendor is not exit 1"
grep -q 'INQUIRY: vendor: capture "[^"]*", replay "ALTERED"' "$tmp/verify-vendor.out" ||
	fail "verify does not name the vendor that differs"
if [ "$mode" = faultlun ]; then
	sed 's#"sense": "\([A-Z_]*\)/\([0-9A-F]*\)/[0-9A-F]*"#"sense": "\1/\2/7F"#' "$tmp/imported.json" \
		>"$tmp/alt-sense.json"
	cmp -s "$tmp/imported.json" "$tmp/alt-sense.json" && fail "the imported scenario has no sense to alter"
	"$fl" import "$tmp/cap.pcap" --verify-scenario "$tmp/alt-sense.json" >"$tmp/verify-sense.out" 2>&1
	[ $? = 1 ] || fail "verify of a scenario with another sense is not exit 1"
	grep -q 'READ(16) LBA [0-9+]*: sense: capture CHECK CONDITION [0-9A-F]*/[0-9A-F]*/[0-9A-F]*, replay CHECK CONDITION [0-9A-F]*/[0-9A-F]*/7F' \
		"$tmp/verify-sense.out" || fail "verify does not name the read whose sense differs"
	grep -q 'rule f[0-9]*-lun[0-9]*-op88: CHECK CONDITION' "$tmp/imported.json" ||
		fail "no rule says where the READ(16)'s error came from"
else
	# tgtd's answer to the read past the end is the one faultlun's LUN gives
	# that command itself: no rule, a line saying so
	grep -q '"rules"' "$tmp/imported.json" && fail "a rule was imported where the LUN answers alike"
	grep -q 'no rule: ILLEGAL_REQUEST/21/00 to READ(16) on LUN 1, 1 time(s) (first command frame [0-9]*): faultlun.s LUN gives that command that answer itself' \
		"$tmp/imported.json" || fail "no line says why the READ(16) past the end has no rule"
fi
"$fl" lint "$tmp/imported.json" >"$tmp/lint.out" 2>&1 || fail "the imported scenario does not lint"
grep -q '"iqn": "'"$iqn"'"' "$tmp/imported.json" || fail "the target name was not imported"

# The imported scenario, served on another port: the same answers.
"$fl" serve -q --listen 127.0.0.1:0 "$tmp/imported.json" \
	--run "url=\"\$FAULTLUN_URL\"; url=\"\${url%/*}/${url##*/}\"; \
	       { iscsi-inq \"\$url\"; iscsi-readcapacity16 \"\$url\"; \
	         iscsi-ls -s \"iscsi://\$FAULTLUN_ADDR:\$FAULTLUN_PORT\"; \
	         \"$fl\" send -u \"\$url\" inquiry:vpd=0x80 inquiry:vpd=0x83 read:lba=$bad; } \
	       >\"$tmp/replay.out\" 2>&1; true" >"$tmp/serve2.err" 2>&1 || fail "serving the imported scenario failed"
for key in "Vendor:" "Product:" "Revision:" "Total size:" "LOGICAL BLOCK LENGTH IN BYTES:"; do
	a=$(grep -m1 "^$key" "$tmp/orig.out")
	b=$(grep -m1 "^$key" "$tmp/replay.out")
	[ -n "$a" ] || fail "the original answer has no '$key'"
	[ "$a" = "$b" ] || fail "'$a' from the target, '$b' from the imported scenario"
done
a=$(grep "^#3 read" "$tmp/orig.out" | sed -n 's/.*\(sense [A-Z_]*\/[A-Z_]* ([0-9A-F]*\/[0-9A-F]*)\).*/\1/p')
b=$(grep "^#3 read" "$tmp/replay.out" | sed -n 's/.*\(sense [A-Z_]*\/[A-Z_]* ([0-9A-F]*\/[0-9A-F]*)\).*/\1/p')
[ -n "$a" ] || fail "the original read of LBA $bad got no sense"
[ "$a" = "$b" ] || fail "read of LBA $bad: '$a' from the target, '$b' from the imported scenario"
echo "import ($mode): identity, capacity and '$a' reproduced; $(cat "$tmp/verify.out")"

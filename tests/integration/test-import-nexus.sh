#!/bin/sh
# SPDX-License-Identifier: MIT
# test-import-nexus.sh FAULTLUN ISCSI_RAW: verify replays a command on the I_T
# nexus the iSCSI front end gives it (docs/import.md, "Verify"): the initiator
# port (InitiatorName and ISID) of its login, not its connection. tcpdump on
# lo captures `iscsi_raw pr-relogin` against `faultlun serve`: a port
# registers and reserves (Write Exclusive), logs out, logs in again with the
# same ISID and writes (GOOD: it still holds the reservation), another port's
# write is refused (RESERVATION CONFLICT), the holder unregisters. Imported,
# the capture must verify with 0 differences: replayed on one nexus per
# connection, the holder's write after its new login would be a conflict.
# Exit 77 when tcpdump is missing or capturing on lo is not permitted.
set -u
. "$(dirname "$0")/../lib/common.sh"
fl=$1 raw=$2
fl_capture_tmpdir
fl_capture "$port" "$tmp/cap.pcap"
"$fl" serve -q --listen "127.0.0.1:$port" --run "$raw pr-relogin" >"$tmp/orig.out" 2>&1 ||
	{ cat "$tmp/orig.out"; fail "the run against faultlun serve failed"; }
fl_capture_end
grep -q "pr-relogin: ok" "$tmp/orig.out" || { cat "$tmp/orig.out"; fail "pr-relogin did not pass"; }
"$fl" import "$tmp/cap.pcap" --verify >"$tmp/verify.out" 2>&1 ||
	{ cat "$tmp/verify.out"; fail "verify found differences"; }
grep -Eq '^verify: ([8-9]|[1-9][0-9]+) commands, 0 differences' "$tmp/verify.out" ||
	{ cat "$tmp/verify.out"; fail "verify did not replay the run"; }
echo "import: a new login of the same initiator port replayed on its nexus; $(tail -1 "$tmp/verify.out")"

#!/bin/sh
# SPDX-License-Identifier: MIT
# test-store-null.sh FAULTLUN [inq]: `faultlun serve --store null` and the
# scenario's {"kind": "null"} store: the LUN answers like any other (READ
# CAPACITY), a write is GOOD, and reading the same block back returns zeroes,
# where the memory store (the control, same commands) returns the pattern.
# With "inq": only libiscsi's iscsi-inq against it (exit 77, a skip, when
# iscsi-inq is not installed).
set -u
fl=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A libiscsi initiator sees an ordinary disk.
if [ "${2:-}" = inq ]; then
	command -v iscsi-inq >/dev/null 2>&1 || { echo "SKIP: iscsi-inq not installed"; exit 77; }
	timeout 60 "$fl" serve -q --listen 127.0.0.1:0 --store null --run 'iscsi-inq "$FAULTLUN_URL"' \
		>"$tmp/inq" 2>&1 || { cat "$tmp/inq" >&2; fail "iscsi-inq against --store null failed"; }
	grep -q DIRECT_ACCESS "$tmp/inq" || { cat "$tmp/inq" >&2; fail "iscsi-inq: no direct-access device"; }
	echo "store-null iscsi-inq: ok"
	exit 0
fi
export FL="$fl"
rw='"$FL" send -u -x "$FAULTLUN_URL" write:lba=5,pattern=0x5a read:lba=5 readcap'

# serve_rw OUT ARGS...: serves with ARGS, writes 0x5a to block 5, reads it back.
serve_rw() {
	o=$1
	shift
	timeout 60 "$fl" serve -q --listen 127.0.0.1:0 --size 1MiB "$@" --run "$rw" >"$tmp/$o" 2>&1 ||
		{ cat "$tmp/$o" >&2; fail "serve $* with write, read, readcap failed"; }
}
# The distinct data bytes of the read's hexdump (item #2) in file $1, one per line.
read_bytes() {
	sed -n '/^#2 read/,/^#3/{s/^    [0-9a-f]\{4\}  \(.\{47\}\).*/\1/p}' "$tmp/$1" | tr ' ' '\n' | sort -u
}

serve_rw mem --store memory
[ "$(read_bytes mem)" = 5a ] || { cat "$tmp/mem" >&2; fail "memory store: 0x5a not read back"; }

serve_rw null --store null
grep -q '#1 write:lba=5,pattern=0x5a: GOOD' "$tmp/null" || fail "null store: the write was not GOOD"
grep -q '#2 read:lba=5: GOOD, 512 bytes in' "$tmp/null" || fail "null store: not 512 bytes read"
[ "$(read_bytes null)" = 00 ] || { cat "$tmp/null" >&2; fail "null store: read back is not zeroes"; }
grep -q '^  blocks: 2048$' "$tmp/null" || { cat "$tmp/null" >&2; fail "null store: capacity is not 1 MiB"; }

# The scenario's store kind "null".
printf '{"faultlun": 1, "name": "null-store", "frontends": ["iscsi"], "luns": [{"size": "1MiB", "store": {"kind": "null"}}]}\n' >"$tmp/s.json"
serve_rw scen "$tmp/s.json"
[ "$(read_bytes scen)" = 00 ] || { cat "$tmp/scen" >&2; fail "scenario null store: read back is not zeroes"; }

# The command docs/iscsi-target.md shows, as typed (faultlun on PATH).
(PATH=$(dirname "$fl"):$PATH timeout 60 faultlun serve --store null --size 1GiB \
	--run 'faultlun send -u -x "$FAULTLUN_URL" write:lba=5 read:lba=5') >"$tmp/doc" 2>&1 ||
	{ cat "$tmp/doc" >&2; fail "the documented command failed"; }
[ "$(read_bytes doc)" = 00 ] || { cat "$tmp/doc" >&2; fail "documented command: read back is not zeroes"; }

# An unknown kind is refused with the kinds named.
out=$("$fl" serve -q --listen 127.0.0.1:0 --store nul --run true 2>&1) && fail "--store nul accepted"
echo "$out" | grep -q "is not memory, null or file:PATH" || fail "message: $out"
echo "store-null: ok"

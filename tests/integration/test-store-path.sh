#!/bin/sh
# SPDX-License-Identifier: MIT
# test-store-path.sh FAULTLUN: where `faultlun serve` opens a file store. A
# scenario's store path is opened beneath the scenario file's directory (the
# working directory for a scenario read from a pipe); a
# symbolic link in it (to a file or a directory), '..' and a FIFO are refused
# with a message naming the path, before anything outside is created or
# grown. `--store file:PATH` is the operator's: it follows links, and still
# refuses a FIFO.
set -u
fl=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/scen" "$tmp/outside" "$tmp/cwd"

# scen PATH: a scenario in $tmp/scen whose one LUN is a file store at PATH.
scen() {
	printf '{"faultlun": 1, "name": "store-path", "frontends": ["iscsi"], "luns": [{"size": "1MiB", "store": {"kind": "file", "path": "%s"}}]}\n' "$1" >"$tmp/scen/s.json"
}
# serve_out [ARGS...]: serves the scenario from $tmp/cwd for a moment; stdout+stderr.
serve_out() {
	(cd "$tmp/cwd" && timeout 20 "$fl" serve -q --listen 127.0.0.1:0 "$@" --run true \
		"$tmp/scen/s.json" 2>&1)
}

# A regular file: created beneath the scenario's directory, not the working one.
scen disk.img
out=$(serve_out) || fail "a plain store path was refused: $out"
[ "$(stat -c %s "$tmp/scen/disk.img" 2>/dev/null)" = 1048576 ] ||
	fail "disk.img not created (1 MiB) beneath the scenario's directory: $(ls -R "$tmp")"
[ -e "$tmp/cwd/disk.img" ] && fail "disk.img created in the working directory"

# /dev/stdin redirected from the file: beneath the file's directory, not /dev;
# a scenario through a pipe: beneath the working directory.
scen in.img
(cd "$tmp/cwd" && timeout 20 "$fl" serve -q --listen 127.0.0.1:0 --run true /dev/stdin \
	<"$tmp/scen/s.json" >/dev/null 2>&1) || fail "serve /dev/stdin failed"
[ -f "$tmp/scen/in.img" ] || fail "/dev/stdin: in.img not beneath the scenario file's directory"
[ -e /dev/in.img ] && fail "/dev/stdin: in.img created in /dev"
scen piped.img
(cd "$tmp/cwd" && cat "$tmp/scen/s.json" | timeout 20 "$fl" serve -q --listen 127.0.0.1:0 \
	--run true - >/dev/null 2>&1) || fail "serve - from a pipe failed"
[ -f "$tmp/cwd/piped.img" ] || fail "a piped scenario's store not in the working directory"

# A link pointing out of the directory, to a file not there yet, then to one that is.
ln -s "$tmp/outside/victim.img" "$tmp/scen/link.img"
scen link.img
out=$(serve_out) && fail "served a store through a symbolic link"
echo "$out" | grep -q 'store "link.img" beneath .*symbolic link' || fail "message: $out"
[ -e "$tmp/outside/victim.img" ] && fail "the link's target was created"
: >"$tmp/outside/victim.img"
out=$(serve_out) && fail "served a store through a symbolic link to a file"
[ -s "$tmp/outside/victim.img" ] && fail "the link's target was grown"

# A link to a directory as an intermediate component.
ln -s "$tmp/outside" "$tmp/scen/sub"
scen sub/disk.img
out=$(serve_out) && fail "served a store through a linked directory"
echo "$out" | grep -q 'store "sub/disk.img" beneath .*symbolic link' || fail "message: $out"
[ -e "$tmp/outside/disk.img" ] && fail "created a file through the linked directory"

# A FIFO: refused at once, not opened (no hang).
mkfifo "$tmp/scen/fifo"
scen fifo
out=$(serve_out) && fail "served a FIFO"
echo "$out" | grep -q 'store "fifo" beneath .*is a FIFO' || fail "message: $out"

# The operator's --store follows links; a FIFO is refused there too.
scen disk.img
out=$(serve_out --store "file:$tmp/scen/link.img") || fail "--store through a link refused: $out"
[ "$(stat -c %s "$tmp/outside/victim.img")" = 1048576 ] || fail "--store did not size the link's target"
out=$(serve_out --store "file:$tmp/scen/fifo") && fail "--store served a FIFO"
echo "$out" | grep -q "fifo is a FIFO, not a regular file or a block device" || fail "message: $out"
echo "store-path: ok"

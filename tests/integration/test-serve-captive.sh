#!/bin/sh
# SPDX-License-Identifier: MIT
# test-serve-captive.sh FAULTLUN: `serve --run` exits with the command's status,
# exports FAULTLUN_PORT / FAULTLUN_URL, picks a free port for port 0, refuses a
# busy port, and `serve` shuts down cleanly on SIGTERM.
set -u
fl=$1
fail() { echo "FAIL: $*" >&2; exit 1; }

"$fl" serve -q --listen 127.0.0.1:0 --run 'exit 3'
[ $? -eq 3 ] || fail "exit status of the captive command not passed on"

out=$("$fl" serve -q --listen 127.0.0.1:0 --run 'echo "$FAULTLUN_PORT $FAULTLUN_URL"') ||
	fail "captive echo failed"
port=${out%% *}
url=${out#* }
[ "$port" -gt 0 ] 2>/dev/null || fail "FAULTLUN_PORT not a port: '$out'"
case $url in
iscsi://127.0.0.1:$port/iqn.*/0) ;;
*) fail "FAULTLUN_URL looks wrong: $url" ;;
esac

# -q is quiet: with --run the command learns the port, nothing is printed.
quiet=$("$fl" serve -q --listen 127.0.0.1:0 --run 'iscsi-inq "$FAULTLUN_URL" >/dev/null' 2>&1) ||
	fail "quiet captive run failed: $quiet"
[ -z "$quiet" ] || fail "serve -q --run printed: $quiet"

# The banner names the portal and how to connect.
banner=$("$fl" serve --listen 127.0.0.1:0 --run true 2>&1) || fail "banner run failed"
echo "$banner" | grep -q "listening on 127.0.0.1:" || fail "no listening line: $banner"
echo "$banner" | grep -q "iscsiadm -m discovery" || fail "no iscsiadm hint"
echo "$banner" | grep -q "iscsi://127.0.0.1:" || fail "no libiscsi URL"

# --trace writes JSON lines (a login among them); --ctl opens a 0600 socket.
tmpd=$(mktemp -d)
"$fl" serve -q --listen 127.0.0.1:0 --trace "$tmpd/trace.jsonl" --ctl "$tmpd/ctl.sock" \
	--run "ls -l \"$tmpd/ctl.sock\" > \"$tmpd/ls\"" ||
	fail "trace/ctl run failed"
grep -q '^srw-------' "$tmpd/ls" || fail "control socket is not a 0600 socket: $(cat "$tmpd/ls")"
grep -q '"event":"start"' "$tmpd/trace.jsonl" || fail "no start event in the trace"
rm -rf "$tmpd"

# A port in use is an error, not a hang.
"$fl" serve -q --listen 127.0.0.1:0 --run "\"$fl\" serve -q --listen 127.0.0.1:\$FAULTLUN_PORT --run true" &&
	fail "second serve on a busy port succeeded"

# SIGTERM: clean exit with status 0.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$fl" serve --listen 127.0.0.1:0 2>"$log" &
pid=$!
i=0
while ! grep -q "listening on" "$log" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
kill -TERM $pid
wait $pid
[ $? -eq 0 ] || fail "serve did not exit 0 on SIGTERM"
grep -q "shutting down" "$log" || fail "no shutdown line"
echo "captive: ok"

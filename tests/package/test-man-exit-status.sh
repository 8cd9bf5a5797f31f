#!/bin/sh
# SPDX-License-Identifier: MIT
# test-man-exit-status.sh BUILD_DIR - the EXIT STATUS of the installed
# faultlun(1) tells what the installed commands do: each case runs a command
# (against `faultlun serve` on a free loopback port where it needs a
# target), checks its exit status, and checks that the page's entry for that
# command names the status.
set -u
. "$(dirname "$0")/install-root.sh"
fl_install_faultlun1 "$1"
S=$root$prefix/share/faultlun/scenarios
mkdir "$tmp/work"
cd "$tmp/work" || fail "cd $tmp/work"

# The EXIT STATUS entries, one a line: "faultlun CMD: text".
MANWIDTH=200 man -l "$page" 2>/dev/null | awk '
	/^EXIT STATUS/ { on = 1; next }
	on && /^[^ ]/ { exit }
	on && /^       faultlun [a-z]+ *$/ { if (e != "") print e; sub(/^ +/, ""); sub(/ +$/, ""); e = $0 ":"; next }
	on && /^        +[^ ]/ { sub(/^ +/, " "); e = e $0 }
	END { if (e != "") print e }' >"$tmp/exit"
[ -s "$tmp/exit" ] || fail "no EXIT STATUS entries in $page"

# A scenario whose check fails, one whose only expectation no runner here can judge.
cat >fails.json <<'END'
{ "faultlun": 1, "name": "fails",
  "rules": [{ "id": "bad", "match": { "class": ["read"], "lba": { "first": 0, "last": 7 } },
              "action": { "sense": "MEDIUM_ERROR/UNRECOVERED_READ_ERROR" } }],
  "check": { "workload": [{ "op": "read", "lba": 0, "blocks": 8 }],
             "expect": [{ "step": 0, "errno": "OK" }] } }
END
cat >na.json <<'END'
{ "faultlun": 1, "name": "na",
  "check": { "workload": [{ "op": "read", "lba": 0, "blocks": 8 }],
             "expect": [{ "kernel_log": "sd " }] } }
END
echo '{ "faultlun": 1, "bogus": 1 }' >bad.json

fails=0
# case CMD STATUS SHELL-COMMAND: SHELL-COMMAND exits STATUS; faultlun CMD's entry names it.
case_() {
	timeout 60 sh -c "$3" >"$tmp/out" 2>&1
	rc=$?
	if [ "$rc" != "$2" ]; then
		echo "FAIL: '$3' exits $rc, want $2: $(tail -3 "$tmp/out")"
		fails=$((fails + 1))
	fi
	grep "^faultlun $1:" "$tmp/exit" | grep -q -w -- "$2" || {
		echo "FAIL: EXIT STATUS of faultlun $1 does not name $2: $(grep "^faultlun $1:" "$tmp/exit")"
		fails=$((fails + 1))
	}
}
serve="faultlun serve $S/demo.json --listen 127.0.0.1:0 -q"

case_ check 0 "faultlun check -q $S/demo.json"
case_ check 1 "faultlun check -q fails.json"
case_ check 2 "faultlun check -q missing.json"
case_ check 77 "faultlun check -q na.json"
case_ lint 0 "faultlun lint --quiet $S/demo.json"
case_ lint 1 "faultlun lint bad.json"
case_ lint 2 "faultlun lint missing.json"
case_ send 0 "$serve --run 'faultlun send -u \"\$FAULTLUN_URL\" inquiry'"
case_ send 1 "$serve --run 'faultlun send -u \"\$FAULTLUN_URL\" read:lba=4096,blocks=8'"
case_ send 2 "faultlun send not-a-url tur"
case_ ctl 0 "$serve --ctl fl.sock --run 'faultlun ctl fl.sock ping'"
case_ ctl 1 "$serve --ctl fl.sock --run 'faultlun ctl fl.sock arm no-such-rule'"
case_ ctl 2 "faultlun ctl missing.sock ping"
case_ serve 2 "faultlun serve --listen 127.0.0.1:99999"
case_ vm 2 "faultlun vm --no-such-option"
case_ report 2 "faultlun report missing.json"
case_ help 0 "faultlun help"
case_ help 2 "faultlun help no-such-command"
# serve --run passes its command's status on.
timeout 60 sh -c "$serve --run 'exit 5'" >/dev/null 2>&1
rc=$?
[ $rc = 5 ] || { echo "FAIL: serve --run 'exit 5' exits $rc"; fails=$((fails + 1)); }
grep "^faultlun serve:" "$tmp/exit" | grep -q -- "--run, the exit status of the command" ||
	{ echo "FAIL: EXIT STATUS of faultlun serve does not say --run passes the status on"; fails=$((fails + 1)); }
[ "$fails" = 0 ] || exit 1
echo "man exit status: the page's statuses are the commands'"

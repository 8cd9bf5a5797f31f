#!/bin/sh
# SPDX-License-Identifier: MIT
# test-cli-args.sh FAULTLUN SCENARIO_DIR - the command line's argument errors,
# one table row each: the arguments, the exit status wanted and a piece of
# text stderr must hold (empty: anything). Each error names the subcommand,
# the option and the bad value, and lists the valid ones; nothing is silently
# read as 0. The ctl rows run against `faultlun serve --ctl` on a scenario
# with states and rules (captive: the server lives as long as the rows run).
set -u
fl=$1
scen=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
rows=0

# row WANT_STATUS 'STDERR PIECE' ARGS...: runs faultlun ARGS, checks both.
row() {
	want=$1
	text=$2
	shift 2
	rows=$((rows + 1))
	# A value read as 0 would start a server: the time limit ends it.
	timeout -k 2 10 "$fl" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	if [ "$rc" != "$want" ]; then
		echo "FAIL: faultlun $*: exit $rc, want $want"
		sed 's/^/  stderr: /' "$tmp/err" | head -5
		fails=$((fails + 1))
	elif [ -n "$text" ] && ! grep -qF -- "$text" "$tmp/err"; then
		echo "FAIL: faultlun $*: stderr lacks: $text"
		sed 's/^/  stderr: /' "$tmp/err" | head -5
		fails=$((fails + 1))
	fi
}

# The ctl rows, run inside `faultlun serve --run` (the server's socket is $sock).
if [ "${FL_CLI_ARGS_CTL:-}" ]; then
	sock=$FL_CLI_ARGS_CTL
	row 0 '' ctl "$sock" ping
	row 1 "faultlun ctl: state: no such state 'nosuch' (states: steady storm)" \
		ctl "$sock" state nosuch
	row 1 "no rule 'nosuch' (rules: hang-until-reset ua-reset ua-luns-changed ua-mode-changed" \
		ctl "$sock" arm nosuch
	row 2 "faultlun ctl: release TAG: 'x1' is not a number" ctl "$sock" release x1
	row 2 "faultlun ctl: act LUN: 'zero' is not a number (0..255)" \
		ctl "$sock" act zero '{"power_loss": true}'
	row 2 "faultlun ctl: COMMAND: 'nosuch' is not one of ping, status" ctl "$sock" nosuch
	row 2 "faultlun ctl: ping takes no arguments" ctl "$sock" ping extra
	echo "$rows ctl rows, $fails failed"
	[ "$fails" = 0 ]
	exit $?
fi

# status  stderr                                                     arguments
row 2 "faultlun serve: --lun: 'abc' is not a number (0..255)"        serve --lun abc
row 2 "faultlun serve: --lun: '256' is out of range (0..255)"        serve --lun 256
row 2 "faultlun serve: --lun: '-1' is not a number"                  serve --lun -1
row 2 "faultlun serve: --seed: 'banana' is not a number"             serve --seed banana
row 2 "faultlun serve: --seed: '12x' is not a number"                serve --seed 12x
row 2 "faultlun serve: --iqn: 'my target' is not an iSCSI name"     serve --iqn 'my target'
row 2 "faultlun serve: --iqn: 'iqn.2026.x' is not an iSCSI name"    serve --iqn iqn.2026.x
row 2 "faultlun serve: --iqn: 'IQN.2026-12.ORG.X' is not an iSCSI name (iSCSI names are lower case" \
	serve --iqn IQN.2026-12.ORG.X
row 2 "faultlun serve: --block-size: '1000' is not a block size (a power of two: 512" \
	serve --block-size 1000
row 2 "faultlun serve: --size: 'lots' is not a size"                 serve --size lots
row 2 "faultlun serve: --size: '0' is not a size"                    serve --size 0
row 2 "faultlun serve: --size: 1000 bytes is not a whole number of 512-byte blocks" \
	serve --size 1000
row 2 "faultlun serve: --login-timeout: 'soon' is not a number (1..86400)" \
	serve --login-timeout soon
row 2 "faultlun serve: --pdu-timeout: 'nan' is not a number of seconds" serve --pdu-timeout nan
row 2 "faultlun serve: --max-connections: '0' is out of range (1..1000000)" \
	serve --max-connections 0
row 2 "faultlun serve: --store: 'disk' is not memory, null or file:PATH"   serve --store disk
row 2 "faultlun serve: unknown option '--bogus'"                     serve --bogus
row 2 "faultlun serve: --listen needs a value"                       serve --listen
for l in 127.0.0.1:99999 127.0.0.1:65536 127.0.0.1:-1 127.0.0.1: '[::1]:70000' 127.0.0.1:3x; do
	row 2 "faultlun serve: bad listen address '$l': expected ADDR:PORT" serve --listen "$l"
done
row 2 "faultlun serve: one scenario at a time"                       serve a.json b.json
row 2 "faultlun lint: --frontend: 'fc' is not iscsi, tcmu or vm"     lint --frontend fc x.json
row 2 "faultlun lint: unknown option '--nope'"                       lint --nope x.json
row 2 "faultlun lint: no scenario file given"                        lint
row 2 ""                                                             lint "$tmp/missing.json"
row 0 "a JSON Schema, not a scenario: skipped"                       lint "$scen/faultlun-scenario.schema.json"
row 2 "faultlun vm: --path: 'fc' is not one of iscsi, tcmu, both or lio" vm --path fc x.json
row 2 "faultlun vm: --accel: 'xen' is not one of auto, kvm or tcg"   vm --accel xen x.json
row 2 "faultlun vm: --timeout: '10s' is not a number (1..86400)"     vm --timeout 10s x.json
row 2 "faultlun vm: --memory: 'lots' is not a number"                vm --memory lots x.json
row 2 "faultlun vm: --cpus: '0' is out of range (1..64)"                vm --cpus 0 x.json
row 2 "faultlun explore: --cpus: '99' is out of range (1..64)"          explore x.json --budget 1 --cpus 99
row 2 "faultlun vm: --tcg-thread: 'two' is not one of single or multi"   vm --tcg-thread two x.json
row 2 "faultlun explore: --tcg-thread: 'one' is not one of single or multi" explore x.json --budget 1 --tcg-thread one
row 2 "faultlun explore: --memory: 'lots' is not a number"           explore x.json --budget 1 --memory lots
row 2 "faultlun vm: no scenario given"                               vm
row 2 "faultlun report: no RESULT.json given"                        report
row 2 "faultlun report: unknown option '--pdf'"                      report --pdf x.json
row 2 "faultlun ctl: no SOCKET and no COMMAND given"                 ctl
row 2 "faultlun ctl: no COMMAND given"                               ctl /nonexistent.sock
row 2 "faultlun: unknown command 'serv' (commands:"                  serv
row 2 "faultlun: unknown command 'nosuch'"                           help nosuch
row 0 ''                                                             help serve
row 0 ''                                                             help
row 2 "faultlun check: --seed: 'banana' is not a number"             check --seed banana x.json
row 2 "faultlun check: unknown option '--bogus'"                     check --bogus x.json
row 2 "faultlun check: no scenario given"                            check
row 2 "faultlun check: --url: 'http://x' is not an iscsi:// URL"     check --url http://x x.json
row 2 "faultlun send: --timeout: '0' is out of range (1..86400)"     send -t 0 iscsi://127.0.0.1/iqn.x/0 tur
row 2 "faultlun send: unknown item 'reed:lba=1'"                     send iscsi://127.0.0.1/iqn.x/0 reed:lba=1
row 2 "faultlun send: 'read:lba=x': bad option 'lba=x'"              send iscsi://127.0.0.1/iqn.x/0 read:lba=x
row 2 "faultlun send: 'http://x' is not an iscsi://HOST[:PORT]/IQN/LUN URL" send http://x tur
for cmd in serve lint ctl vm report check send import explore; do
	row 0 '' "$cmd" --version
	grep -q "^faultlun [0-9]" "$tmp/out" || { echo "FAIL: $cmd --version: $(cat "$tmp/out")"; fails=$((fails + 1)); }
	row 0 '' help "$cmd"
	grep -q "usage: faultlun $cmd" "$tmp/out" || { echo "FAIL: help $cmd: no usage"; fails=$((fails + 1)); }
done
# help import names what an import reproduces, as docs/import.md does
row 0 '' help import
for what in 'never answered' 'how long' 'connections it cut' 'task management'; do
	tr '\n' ' ' <"$tmp/out" | tr -s ' ' | grep -q "$what" || { echo "FAIL: help import does not say '$what'"; fails=$((fails + 1)); }
done
row 0 '' --version
grep -q "^faultlun [0-9]" "$tmp/out" || { echo "FAIL: --version: $(cat "$tmp/out")"; fails=$((fails + 1)); }
echo "$rows rows, $fails failed"

# The ctl rows against a served scenario with states (steady, storm) and rules.
FL_CLI_ARGS_CTL=$tmp/ctl.sock
export FL_CLI_ARGS_CTL
"$fl" serve -q --listen 127.0.0.1:0 --ctl "$tmp/ctl.sock" "$scen/ua-storm-after-reset.json" \
	--run "sh '$0' '$fl' '$scen'" || fails=$((fails + 1))
[ "$fails" = 0 ]

# SPDX-License-Identifier: MIT
# common.sh - shell functions the shell tests source
# (`. "$(dirname "$0")/../lib/common.sh"`): failing, a scratch directory
# removed at exit with the server the test started, waiting (bounded) for a
# line of a server's banner, the two portals of a two-port target, the VM
# lab's checker run again on a recorded run, a free TCP port (also for
# bench/common.sh), the hostile iSCSI target of the client-side tests,
# `faultlun check` of five kinds of file, the items `faultlun send`
# answered, and a doc page's shell block run in a VM-lab guest. POSIX sh;
# every wait is bounded.

# Says FAIL with the words given and ends the test with status 1.
fail() {
	echo "FAIL: $*"
	exit 1
}

# fl_tmpdir [COMMAND...]: SKIPs (exit 77) unless each COMMAND is installed; makes a scratch
# directory in $tmp; at exit the server whose pid is in $pid (if any) is stopped and $tmp
# removed.
fl_tmpdir() {
	for _c in "$@"; do
		command -v "$_c" > /dev/null || { echo "SKIP: $_c not installed"; exit 77; }
	done
	tmp=$(mktemp -d) || exit 1
	pid=
	trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
}

# fl_wait_for FILE TEXT [TENTHS]: waits until FILE holds TEXT, at most TENTHS tenths of a
# second (default 50); status 1 if it never does.
fl_wait_for() {
	for _i in $(seq "${3:-50}"); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# fl_two_portals BANNER: waits for a two-port `faultlun serve`'s banner and sets iqn, A and B
# (the URLs of LUN 0 through port A and port B); fails without them.
fl_two_portals() {
	fl_wait_for "$1" 'port B: '
	iqn=$(sed -n 's/.*, target \([^ ]*\) .*/\1/p' "$1" | head -1)
	a=$(sed -n 's/.*port A: \([0-9.]*:[0-9]*\),.*/\1/p' "$1")
	b=$(sed -n 's/.*port B: \([0-9.]*:[0-9]*\),.*/\1/p' "$1")
	[ -n "$iqn" ] && [ -n "$a" ] && [ -n "$b" ] || fail "no port A and B: $(cat "$1")"
	A=iscsi://$a/$iqn/0 B=iscsi://$b/$iqn/0
}

# fl_recheck_copies RECORDED OUT NAME...: a copy of the recorded run in OUT/NAME/guest for
# each NAME.
fl_recheck_copies() {
	_rec=$1 _out=$2
	shift 2
	for _d in "$@"; do
		mkdir -p "$_out/$_d"
		cp -r "$_rec" "$_out/$_d/guest"
	done
}

# fl_recheck WANT SCENARIO PATH DIR WHAT: `$faultlun vm SCENARIO --path PATH --recheck DIR`
# into DIR.log; fails (showing the log) unless it exits WANT.
fl_recheck() {
	"$faultlun" vm "$2" --path "$3" --recheck "$4" >"$4.log" 2>&1
	rc=$?
	[ "$rc" -eq "$1" ] || { cat "$4.log"; fail "$5: exit $rc, expected $1"; }
}

# fl_capture_tmpdir: fl_tmpdir for a capture test: the exit also ends the
# capture ($tdpid) and the background process ($pid); $port is a free port.
fl_capture_tmpdir() {
	fl_tmpdir
	tdpid=""
	trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; [ -n "$tdpid" ] && kill "$tdpid" 2>/dev/null; rm -rf "$tmp"' EXIT
	port=$(fl_freeport) || fail "no free port"
}

# fl_capture PORT FILE: tcpdump on lo writes the TCP traffic of PORT to FILE
# (90 s at most) and $tdpid is its process; the test exits 77, a visible
# SKIP, when tcpdump is missing or cannot capture on lo.
fl_capture() {
	PATH=$PATH:/usr/sbin
	command -v tcpdump >/dev/null 2>&1 || { echo "SKIP: tcpdump not installed"; exit 77; }
	# a 256 MiB buffer: on a busy machine a smaller one loses frames
	timeout 90 tcpdump --immediate-mode -B 262144 -i lo -U -w "$2" "tcp port $1" 2>"$2.err" &
	tdpid=$!
	fl_wait_for "$2.err" "listening on" 50 && return 0
	kill -0 "$tdpid" 2>/dev/null || { echo "SKIP: tcpdump cannot capture on lo"; cat "$2.err"; exit 77; }
	echo "SKIP: tcpdump did not start"
	exit 77
}

# fl_serve_bg FAULTLUN SCENARIO PORT ERRFILE: `FAULTLUN serve SCENARIO` on
# 127.0.0.1:PORT in the background (its pid in spid, its messages in
# ERRFILE), waited for until it listens (10 s at most); fails the test when
# it exits or does not listen.
fl_serve_bg() {
	"$1" serve -q --listen "127.0.0.1:$3" "$2" >"$4" 2>&1 &
	spid=$!
	_i=0
	until ss -Hltn "sport = :$3" | grep -q LISTEN; do
		kill -0 "$spid" 2>/dev/null || { cat "$4"; fail "serve did not start"; }
		_i=$((_i + 1))
		[ $_i -lt 100 ] || fail "serve does not listen on port $3 after 10 s"
		sleep 0.1
	done
}

# fl_capture_end: the capture of fl_capture gets its last packets and ends.
fl_capture_end() {
	sleep 1
	kill -INT "$tdpid"
	wait "$tdpid" 2>/dev/null
	tdpid=""
}

# fl_capture_serve FAULTLUN SCENARIO: tcpdump on lo captures `FAULTLUN serve
# SCENARIO` on $port running $tmp/run.sh into $tmp/cap.pcap (its output in
# $tmp/orig.out), then `FAULTLUN import` writes $tmp/imported.json; fails the
# test when either fails.
fl_capture_serve() {
	fl_capture "$port" "$tmp/cap.pcap"
	"$1" serve -q --listen "127.0.0.1:$port" "$2" --run "sh $tmp/run.sh" >"$tmp/orig.out" 2>&1 ||
		{ cat "$tmp/orig.out"; fail "serve failed"; }
	fl_capture_end
	"$1" import "$tmp/cap.pcap" -o "$tmp/imported.json" 2>"$tmp/import.err" ||
		{ cat "$tmp/import.err"; fail "import failed"; }
}

# fl_tgtd PORT IQN IMAGE: starts tgtd (foreground, its own control port) on
# 127.0.0.1:PORT serving IMAGE as LUN 1 of target IQN to any initiator; sets
# $tgtpid and $ctl for fl_tgtd_stop. Exit 77 (a visible SKIP) when tgtd is not
# installed, the test is not root or tgtd does not start in 10 tries.
fl_tgtd() {
	PATH=$PATH:/usr/sbin
	command -v tgtd >/dev/null 2>&1 && command -v tgtadm >/dev/null 2>&1 ||
		{ echo "SKIP: tgtd not installed"; exit 77; }
	[ "$(id -u)" = 0 ] || { echo "SKIP: tgtd needs root"; exit 77; }
	mkdir -p /var/run/tgtd
	_try=0
	while :; do
		_try=$((_try + 1))
		[ $_try -le 10 ] || { echo "SKIP: tgtd did not start"; exit 77; }
		ctl=$((1024 + $(od -An -N2 -tu2 /dev/urandom) % 31744))
		[ -e "/var/run/tgtd/socket.$ctl" ] && continue
		tgtd -f -C "$ctl" --iscsi "portal=127.0.0.1:$1" >"$3.tgtd.err" 2>&1 &
		tgtpid=$!
		_i=0
		while kill -0 "$tgtpid" 2>/dev/null && [ $_i -lt 50 ]; do
			tgtadm -C "$ctl" --lld iscsi --op new --mode target --tid 1 -T "$2" 2>/dev/null && break
			_i=$((_i + 1))
			sleep 0.1
		done
		kill -0 "$tgtpid" 2>/dev/null && [ $_i -lt 50 ] && break
		kill "$tgtpid" 2>/dev/null
		wait "$tgtpid" 2>/dev/null
		tgtpid=""
	done
	tgtadm -C "$ctl" --lld iscsi --op new --mode logicalunit --tid 1 --lun 1 -b "$3" ||
		fail "tgtadm: no LUN"
	tgtadm -C "$ctl" --lld iscsi --op bind --mode target --tid 1 -I ALL || fail "tgtadm: no bind"
}

# fl_tgtd_stop: ends the tgtd of fl_tgtd (asked first, killed after 3 s).
fl_tgtd_stop() {
	[ -n "${tgtpid:-}" ] || return 0
	tgtadm -C "$ctl" --op delete --mode system >/dev/null 2>&1
	_n=0
	while kill -0 "$tgtpid" 2>/dev/null && [ $_n -lt 30 ]; do sleep 0.1; _n=$((_n + 1)); done
	kill -9 "$tgtpid" 2>/dev/null
	wait "$tgtpid" 2>/dev/null
	tgtpid=""
}

# Prints a port in 10000..29999 (below Linux's ephemeral range) that no TCP
# socket of any state uses; returns 1 after 100 tries.
fl_freeport() {
	_n=0
	while [ $_n -lt 100 ]; do
		_p=$((10000 + $(od -An -N2 -tu2 /dev/urandom) % 20000))
		ss -Htan "sport = :$_p" 2>/dev/null | grep -q . || { echo "$_p"; return 0; }
		_n=$((_n + 1))
	done
	return 1
}

# fl_hostile_target MODE: (re)starts tests/integration/hostile-target.py in MODE
# (its pid in $pid, stopped at exit by fl_tmpdir) and sets $url to its LUN 0;
# fails when it does not start within 10 s.
fl_hostile_target() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
	rm -f "$tmp/port"
	python3 "$(dirname "$0")/hostile-target.py" "$1" "$tmp/port" 2>"$tmp/target.err" &
	pid=$!
	_n=0
	while [ ! -s "$tmp/port" ] && [ $_n -lt 100 ]; do
		sleep 0.1
		_n=$((_n + 1))
	done
	[ -s "$tmp/port" ] || fail "the hostile target ($1) did not start: $(cat "$tmp/target.err")"
	url="iscsi://127.0.0.1:$(cat "$tmp/port")/iqn.2026-12.org.faultlun:hostile/0"
}

# fl_check_five FORMAT REPORT: `$fl check -q --FORMAT REPORT` of five files from $dir:
# a passing scenario (demo.json), one with not-applicable expectations, one with a failing
# expectation (demo.json with a wrong errno), one the loader refuses and the scenario
# schema; its output in $tmp/check.out; fails unless it exits 2.
fl_check_five() {
	sed 's/"errno": "ENODATA"/"errno": "EIO"/' "$dir/demo.json" > "$tmp/broken.json"
	echo '{"faultlun": 1, "rules": [{"id": 3}]}' > "$tmp/lint.json"
	"$fl" check -q "--$1" "$2" "$dir/demo.json" "$dir/medium-error-heal.json" \
		"$tmp/broken.json" "$tmp/lint.json" "$dir/faultlun-scenario.schema.json" \
		> "$tmp/check.out" 2>&1
	rc=$?
	[ "$rc" = 2 ] || { cat "$tmp/check.out"; fail "check of five files: exit $rc, want 2"; }
}

# fl_send_check A_JSON B_JSON < SCRIPT: runs the Python SCRIPT on stdin with a and b, the items
# (JSON objects) of the `faultlun send --json` outputs A_JSON and B_JSON, and
# std_no_tpgs(item, vendor, product, why): the standard INQUIRY data of item, checked to
# name vendor (8 bytes) and product and to have TPGS 00b (`why` says what else happens).
fl_send_check() {
	python3 -c '
import json, sys

def items(path):
    return [json.loads(l) for l in open(path) if l.startswith("{")]

def std_no_tpgs(item, vendor, product, why):
    std = bytes.fromhex(item["data"])
    assert std[8:16] == vendor and std[16:16 + len(product)] == product, std[8:32]
    assert std[5] & 0x30 == 0, f"TPGS {std[5] >> 4 & 3}: {why}"
    return std

a, b = items(sys.argv[1]), items(sys.argv[2])
exec(sys.stdin.read())
' "$1" "$2"
}

# fl_page_block PAGE MARKER WORDS: writes to $out/page.sh the ```sh fence between PAGE's
# <!-- MARKER:begin --> and <!-- MARKER:end --> lines, as it is; fails unless it holds WORDS.
fl_page_block() {
	awk -v b="<!-- $2:begin -->" -v e="<!-- $2:end -->" '
	    index($0, b) { on = 1; next }
	    index($0, e) { on = 0 }
	    on && /^```sh$/ { fence = 1; next }
	    on && fence && /^```$/ { fence = 0; next }
	    on && fence { print }' "$1" >"$out/page.sh"
	grep -q "$3" "$out/page.sh" || fail "no $2 block between the markers of $1"
}

# fl_page_lab NAME TIMEOUT_S COMMAND DESCRIPTION: writes $out/NAME.json, a scenario whose
# one tiny LIO LUN gives the lab's lio path a disk (the page's LUN is its own) and whose one
# `shell` step runs COMMAND in the guest (at most TIMEOUT_S s), expected to exit 0.
fl_page_lab() {
	cat >"$out/$1.json" <<JSON
{
  "faultlun": 1,
  "name": "$1",
  "description": "$4",
  "luns": [{"lun": 0, "size": "1MiB"}],
  "check": {
    "paths": ["lio"],
    "workload": [
      {"op": "shell", "timeout_s": $2,
       "command": "$3"}
    ],
    "expect": [{"step": 0, "errno": "OK"}]
  }
}
JSON
}

# fl_page_run NAME TIMEOUT_S DIR FILE...: runs the VM lab on $out/NAME.json (fl_page_lab; at
# most TIMEOUT_S s, into $out/run), shows its log, then the exit status and output of the
# page's block and the FILEs the guest script left in its results folder DIR (g is set to
# that folder on the host); SKIPs when the lab does; fails unless the block ran and
# exited 0 and the lab exited 0.
fl_page_run() {
	"$faultlun" vm "$out/$1.json" --path lio --quiet --out "$out/run" --timeout "$2" \
		>"$out/log" 2>&1
	_rc=$?
	cat "$out/log"
	[ "$_rc" -eq 77 ] && exit 77
	g=$out/run/$1-lio/guest/$3
	shift 3
	echo "== the page's block in the guest (exit status $(cat "$g/page.rc" 2>/dev/null))"
	cat "$g/page.out" 2>/dev/null
	for _f in "$@"; do
		echo "== $_f"
		cat "$g/$_f" 2>/dev/null
	done
	[ -f "$g/page.rc" ] || fail "the block did not run (see $out/run)"
	[ "$(cat "$g/page.rc")" = 0 ] || fail "the page's block failed (exit status $(cat "$g/page.rc"))"
	[ "$_rc" -eq 0 ] || fail "faultlun vm exited $_rc"
}

# fl_expect FILE: fails (showing FILE) unless FILE has a line matching each basic regular
# expression given on stdin, one a line as "REGEX => WHY" (WHY: the failure's words).
fl_expect() {
	while IFS= read -r _l; do
		[ -n "$_l" ] || continue
		grep -q -- "${_l% => *}" "$1" && continue
		cat "$1"
		fail "${_l##* => }"
	done
}

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# RLIMIT_ITRACE end to end: crashing programs with known paths dump core
# with their trace in NT_ITRACE notes, and `itrace core` must show the path.
#
#   coredump.sh OUTDIR          in the guest (busybox sh): run the programs
#                               of $ITRACE_BUILD/tools/itrace/crash, decode
#                               each core, compare with <prog>.core-expect;
#                               TAP in OUTDIR/coredump.tap, the reports in
#                               OUTDIR/<test>.txt, some cores in OUTDIR/cores
#   coredump.sh --host OUTDIR   on the host, over what came back: readelf -n
#                               lists the notes, gdb opens a core, the host's
#                               `itrace core` agrees; TAP on stdout
#   coredump.sh --match EXPECT REPORT
#                               compare one report with an expectation
#                               (format below); prints why not, exit 1
#
# Expectation format (tools/testing/itrace/progs/crash*.core-expect): "#"
# comments; every other line is an extended regular expression that a later
# line of the report must match, in this order; a line "> RE" must match the
# line right after the previous match (a run of them is searched for as a
# block of consecutive lines).

match() {	# EXPECT REPORT
	awk -v expect="$1" '
	{ line[NR] = $0 }
	END {
		n = 0
		while ((getline l < expect) > 0) {
			if (l ~ /^#/ || l == "")
				continue
			n++
			head[n] = n
			if (substr(l, 1, 2) == "> ") {
				head[n] = head[n - 1]
				l = substr(l, 3)
			}
			pat[n] = l
		}
		if (n == 0) {
			print "no patterns in " expect
			exit 1
		}
		pos = 1
		for (k = 1; k <= n; k = e + 1) {
			# a block: pattern k and the "> " lines after it
			for (e = k; e < n && head[e + 1] == k; e++)
				;
			best = -1
			for (s = pos; s <= NR; s++) {
				for (j = 0; k + j <= e && s + j <= NR && line[s + j] ~ pat[k + j]; j++)
					;
				if (k + j > e)
					break
				if (j > best) {
					best = j
					at = s + j
				}
			}
			if (s > NR) {
				if (best <= 0)
					print "no line matches " pat[k]
				else
					print "line " at " \"" line[at] "\" does not match " pat[k + best]
				exit 1
			}
			pos = s + e - k + 1
		}
	}' "$2"
}

if [ "${1:-}" = --match ] && [ $# -eq 3 ]; then
	match "$2" "$3"
	exit
fi

n=0
fails=0
tap() {		# tap 0|1 NAME [REASON]
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2${3:+ # $3}"
		fails=$((fails + 1))
	fi
}
first() { printf '%s' "$1" | head -n 1 | cut -c1-200; }

if [ "${1:-}" = --host ] && [ $# -eq 2 ]; then
	# The guest left cores/<test>.core and <test>.txt; the ELF files are
	# at the same paths on the host.
	dir=$2
	here=$(cd "$(dirname "$0")" && pwd)
	itrace=${ITRACE:-$here/../../../../build/tools/itrace/itrace}
	for t in crashnull:1 crashthread:3 limit0:0; do
		name=${t%:*} want=${t#*:}
		core=$dir/cores/$name.core
		if [ ! -f "$core" ]; then
			tap 1 "coredump-host/$name: readelf -n" "no core $core came back"
			continue
		fi
		if command -v readelf >/dev/null; then
			notes=$(readelf -n "$core" 2>&1)
			got=$(printf '%s\n' "$notes" | grep -c '^ *ITRACE ')
			prs=$(printf '%s\n' "$notes" | grep -c 'NT_PRSTATUS')
			[ "$got" = "$want" ] && [ "$prs" -ge 1 ]
			tap $? "coredump-host/$name: readelf -n lists $want ITRACE note(s)" \
				"$got ITRACE, $prs NT_PRSTATUS"
		else
			echo "ok $((n += 1)) coredump-host/$name: readelf -n # SKIP no readelf"
		fi
	done
	core=$dir/cores/crashnull.core
	exe=$(sed -n 's/^exe //p' "$dir/crashnull.exe" 2>/dev/null)
	if ! command -v gdb >/dev/null; then
		echo "ok $((n += 1)) coredump-host/crashnull: gdb backtrace # SKIP no gdb"
	elif [ -f "$core" ] && [ -n "$exe" ]; then
		bt=$(gdb -nx -batch -ex bt "$exe" "$core" 2>&1)
		printf '%s\n' "$bt" > "$dir/crashnull.gdb.txt"
		printf '%s\n' "$bt" | grep -q 'level3' &&
			printf '%s\n' "$bt" | grep -q 'level2' &&
			printf '%s\n' "$bt" | grep -q 'main'
		tap $? "coredump-host/crashnull: gdb opens the core, backtrace level3 level2 level1 main" \
			"$(first "$(printf '%s\n' "$bt" | grep -v '^\[' | tail -n 3)")"
	else
		tap 1 "coredump-host/crashnull: gdb backtrace" "no core or exe name"
	fi
	if [ -f "$core" ] && [ -x "$itrace" ]; then
		"$itrace" core -n 64 "$core" > "$dir/crashnull.host.txt" 2>&1
		why=$(match "$(dirname "$exe")/crashnull.core-expect" "$dir/crashnull.host.txt")
		tap $? "coredump-host/crashnull: itrace core on the host shows the path" "$why"
	else
		tap 1 "coredump-host/crashnull: itrace core on the host" "no core or no $itrace"
	fi
	echo "1..$n"
	exit $((fails ? 1 : 0))
fi

if [ $# -ne 1 ] || [ -z "${ITRACE_BUILD:-}" ]; then
	echo "usage: ITRACE_BUILD=/abs/build $0 OUTDIR | --host OUTDIR | --match EXPECT REPORT" >&2
	exit 2
fi
out=$1
itrace=$ITRACE_BUILD/tools/itrace/itrace
crash=$ITRACE_BUILD/tools/itrace/crash
cores=/tmp/itrace-cores
mkdir -p "$out/cores" "$cores" || exit 1
exec 3>&1 > "$out/coredump.tap"
ulimit -c unlimited
echo "$cores/core.%p" > /proc/sys/kernel/core_pattern
echo "exe $crash/crashnull" > "$out/crashnull.exe"

# run NAME CMD...: run a program that must dump core; $core is the core
run() {
	name=$1
	shift
	rm -f "$cores"/core.*
	"$@" > "$out/$name.out" 2>&1
	rc=$?
	core=$(ls "$cores"/core.* 2>/dev/null | head -n 1)
	if [ -z "$core" ]; then
		tap 1 "coredump/$name" "no core dump (exit status $rc: $(first "$(cat "$out/$name.out")"))"
		return 1
	fi
	return 0
}

# check NAME EXPECT: decode $core and compare
check() {
	"$itrace" core -n 64 "$core" > "$out/$1.txt" 2> "$out/$1.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		tap 1 "coredump/$1" "itrace core exit $rc: $(first "$(cat "$out/$1.err")")"
		return
	fi
	why=$(match "$2" "$out/$1.txt")
	tap $? "coredump/$1: the tail of the trace is the known path" "$why"
}

for p in crashnull crashabort crashstack crashplt crashthread crashfork; do
	run "$p" "$crash/$p" && check "$p" "$crash/$p.core-expect"
	case $p in crashnull|crashthread)
		[ -n "$core" ] && cp "$core" "$out/cores/$p.core" ;;
	esac
done

# a buffer of one page that wraps: the trace starts mid-stream, WRAPPED
if run crashstack-wrapped env CRASH_ITRACE=4096 "$crash/crashstack"; then
	check crashstack-wrapped "$crash/crashstack.core-expect"
	grep -q '^  trace: [0-9]* bytes (buffer 4096), flags wrapped,' "$out/crashstack-wrapped.txt"
	tap $? "coredump/crashstack-wrapped: a 4096-byte limit, the note says wrapped" \
		"$(first "$(grep '^  trace:' "$out/crashstack-wrapped.txt")")"
fi

# the limit set by another program, inherited across execve
if run crashexec "$crash/crashexec" 65536 "$crash/crashnull"; then
	check crashexec "$crash/crashexec.core-expect"
fi

# --json and --insn on the crashnull core
if run crashnull-again "$crash/crashnull"; then
	"$itrace" core --json "$core" > "$out/crashnull.json" 2>&1
	rc=$?
	# (json-c's indented output, compacted: busybox has no JSON tool)
	j=$(tr -d ' \n' < "$out/crashnull.json")
	echo "$j" | grep -q '^{"format":"itrace-core","version":1,"core":' &&
		echo "$j" | grep -q '"threads":\[' &&
		echo "$j" | grep -q '"end":{"how":"fault","at":{"ip":"0x[0-9a-f]*","symbol":"level3","offset":0,' &&
		echo "$j" | grep -q '"matches_rip":true' &&
		echo "$j" | grep -q '"stack":\[{"ip":"0x[0-9a-f]*","symbol":"level2",'
	tap $(( $? || rc )) "coredump/crashnull --json: one document, the thread, end at level3 = rip, the stack from level2" \
		"exit $rc"
	"$itrace" core --insn -n 4 "$core" > "$out/crashnull.insn.txt" 2>&1
	rc=$?
	ins=$(grep -c '^    [a-z ]\{7\} 0x[0-9a-f][0-9a-f]* .*  [0-9a-f][0-9a-f]*$' "$out/crashnull.insn.txt")
	[ $rc -eq 0 ] && [ "$ins" -eq 4 ] &&
		grep -q '^  last 4 instructions, oldest first:$' "$out/crashnull.insn.txt" &&
		grep -q '^  crash: 0x[0-9a-f]* level3 (crashnull.c:7)  = NT_PRSTATUS rip$' \
			"$out/crashnull.insn.txt"
	tap $? "coredump/crashnull --insn -n 4: 4 instructions, then the crash at level3" \
		"exit $rc, $ins instruction lines"
fi

# limit 0: a core without NT_ITRACE note, and itrace core says so
if run limit0 env CRASH_ITRACE=0 "$crash/crashnull"; then
	cp "$core" "$out/cores/limit0.core"
	"$itrace" core "$core" > "$out/limit0.txt" 2>&1
	rc=$?
	[ $rc -eq 0 ] && grep -q '^  trace: none (no NT_ITRACE note' "$out/limit0.txt" &&
		grep -q ', 0 with trace$' "$out/limit0.txt"
	tap $? "coredump/limit0: no NT_ITRACE note" "exit $rc: $(first "$(sed -n 2,3p "$out/limit0.txt")")"
fi
rm -f "$cores"/core.*
echo "1..$n"
echo "coredump: $((n - fails)) passed, $fails failed (TAP: $out/coredump.tap)" >&3
exit $((fails ? 1 : 0))

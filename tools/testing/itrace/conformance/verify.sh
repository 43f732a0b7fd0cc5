#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# verify.sh CORPUS RESULTS: host half of the conformance suite.  For each
# program of CORPUS/corpus.list, with the guest's files in RESULTS (see
# guest.sh), TAP lines:
#   NAME: recorded        itrace record and sstep ran the program to the
#                         same exit status
#   NAME: libipt decode   `itrace decode` exits 0, no decode error, no gap
#   NAME: insns           the decoded instruction addresses equal sstep's,
#                         one by one, from START (main, or the first
#                         instruction) to the exit_group system call
#   NAME: perf record     perf record -e intel_pt//u ran it, same output
#   NAME: perf decode     perf script --itrace=e reports no error
#   NAME: perf insns      perf script --itrace=i1i's addresses (the
#                         program's thread) equal sstep's, as above
#   NAME: convert         itrace convert of the recording (NAME.itrace):
#                         perf script --itrace=i0nse of the perf.data
#                         exits 0 with no error and as many instructions
#                         as itrace decode --stats (every thread), exactly
#   NAME: -k recorded     itrace record -k (user and kernel) ran it, same
#                         output, and its trace holds kernel instructions
#   NAME: -k libipt decode through the kernel  itrace decode --stats
#                         --kernel KCORE (the live kernel text perf record
#                         --kcore copied in the same boot,
#                         all.kperf.data/kcore_dir/kcore) of that trace:
#                         exit 0, no error, no gap, kernel instructions > 0
#   NAME: -k convert --kernel  (KCONV_PROGS, by default all) itrace
#                         convert --kernel KCORE of that trace
#                         (a perf.data directory: data, kcore_dir/ with
#                         KCORE's kcore, kallsyms, modules): perf script
#                         --itrace=i0nse through the kernel exits 0 with no
#                         error, and its user-mode and kernel instructions
#                         are as many as itrace decode's above, exactly
#                         (every instruction walked: ~20 s of perf a
#                         program, run in the background, kconv())
#   NAME: kcut of the user-only recording  kcut (below) changes nothing
#                         libipt decodes in a trace without kernel packets;
#                         the MODE.Exec packets it counts: a 32-bit program
#                         (compat mode) must have 32-bit ones
#   NAME: -k decode without --kernel  itrace decode of that trace without
#                         the kernel's code decodes its user-mode part
#                         (the kernel's packets cut out, its entries and
#                         exits made TIP.PGD/TIP.PGE: ucut.c): no error,
#                         no gap, as many instructions as kcut's copy
#                         (kcut.c, the same rules) decodes to, and as the
#                         decode through the kernel has in user mode
#   NAME: -k insns        and its addresses equal sstep's, as above
#   NAME: perf -e intel_pt// (PERF_KERNEL_PROGS, by default all) perf
#                         record of user and kernel mode, all the programs
#                         in one run (guest.sh): exit 0, same output
#   NAME: perf user+kernel insns  perf script with the kernel text perf
#                         record --kcore copied: no error in the program's
#                         thread, kernel instructions decoded there; and
#                         the user-mode addresses (perf script of the
#                         perf.data file alone, below) equal sstep's
#   NAME: perf stat instructions:u,branches:u  the emulated CPU's counters
#                         (Debian's perf stat) over the window sstep
#                         steps, counted at full speed (sstep -c): equal
#                         to sstep's instructions and branches, exactly
#   NAME: intel_bts ...   seven lines of Branch Trace Store runs of the
#                         same program (bts(), below)
# and at the end: that whole recording, no error and kernel instructions
# decoded; the checks of -k refused by perf_event_paranoid.
# Consecutive equal addresses count once on both sides (a REP string
# instruction is one PT instruction, one single-step trap per iteration).
set -u
ITRACE=${ITRACE:?}
KCUT=${KCUT:-$1/kcut}
PERF=${PERF:-/usr/bin/perf}
PERF_KERNEL_PROGS=" ${PERF_KERNEL_PROGS:-} "
# the programs whose -k recording goes through convert --kernel and perf
# script (~20 s of perf each): "all" or a list
KCONV_PROGS=" ${KCONV_PROGS:-all} "
corpus=$1 res=$(cd "$2" && pwd)
# the programs: CORPUS_LIST (check.sh's CONFORMANCE_PROGS), or all
list=${CORPUS_LIST:-$corpus/corpus.list}
# the live kernel text for libipt: perf record --kcore's copy (guest.sh)
KCORE=${KCORE:-$res/all.kperf.data/kcore_dir/kcore}
n=0
tap() {	# tap OK|FAIL DESCRIPTION
	n=$((n + 1))
	if [ "$1" = ok ]; then echo "ok $n $2"; else echo "not ok $n $2"; fi
}
# stdin: hex addresses, one a line (leading zeros allowed); stdout: from the
# first START on, consecutive equal addresses once
window() {
	awk -v start="$1" '{ ip = $1; sub(/^0+/, "", ip)
		if (!on && ip != start) next
		on = 1
		if (ip != last) print ip
		last = ip }'
}
# compare NAME KIND FILE END [REF [WHAT]]: FILE (the window of a decode)
# against REF (default NAME.ss, WHAT "single-stepped")
compare() {
	local name=$1 kind=$2 f=$3 end=$4 ref=${5:-$res/$1.ss} what=${6:-single-stepped}
	local want all got first mism
	want=$(wc -l < "$ref" 2>/dev/null || echo 0)
	# the window is the ground truth's: main to its return, or to the exit
	all=$(wc -l < "$f")
	head -n "$want" "$f" > "$f.window"
	mv "$f.window" "$f"
	got=$(wc -l < "$f")
	if [ "$end" = exit ] && [ "$all" != "$want" ]; then
		tap FAIL "$name: $kind # decoded $all from the start (main, or _start) to the exit, $what $want"
	elif [ "$want" -gt 0 ] && cmp -s "$f" "$ref"; then
		tap ok "$name: $kind: $got decoded = $want $what, 0 mismatches (from the start, main or _start, to its ${end/ret/return})"
	else
		first=$(cmp "$f" "$ref" 2>&1 | sed -n 's/.*line \([0-9]*\).*/\1/p')
		mism=$(diff "$f" "$ref" | grep -c '^[<>]')
		tap FAIL "$name: $kind # decoded $got, $what $want, $mism differing lines, first at line ${first:-?}: decoded $(sed -n "${first:-1}p" "$f") expected $(sed -n "${first:-1}p" "$ref")"
	fi
}
# Branch Trace Store: the same program run again on the same CPU (+ds,
# check.sh), recorded by itrace record --pmu intel_bts and by perf record
# -e intel_bts//u --per-thread (guest.sh).  bts NAME START END:
#   NAME: intel_bts recorded   both exit 0, the program's output as under
#                         intel_pt
#   NAME: intel_bts decode     itrace decode --stats: exit 0, no error, no
#                         gap (no record lost), system calls seen
#   NAME: intel_bts insns      the flow itrace decode rebuilds from the
#                         records and the ELF code equals sstep's, but
#                         for its "[resumed]" holes (bts_holes(), below)
#   NAME: intel_bts and intel_pt decodes agree  the same, against the PT
#                         decode of the first run
#   NAME: perf intel_bts decode  perf script --itrace=be: exit 0, no error
#                         (perf reports lost data as one) over the whole
#                         recording, every thread
#   NAME: intel_bts branches   the records themselves, as perf script
#                         --itrace=b gives them (one branch a record, its
#                         from and to as the CPU stored them), those from
#                         user to user mode in the program's thread:
#                         equal, one by one, the taken branches of sstep's
#                         flow: consecutive addresses A B where A is a
#                         jmp, call, ret, far jmp or far ret, or a jcc and
#                         B is not the instruction after A; the record is
#                         A B, or A and the target of a direct branch
#                         that is not B (the target faulted before it
#                         retired: B is a signal handler's entry) (the
#                         lengths, classes, direct targets of the
#                         instructions from the ELF code,
#                         by itrace decode --insn --json of the PT
#                         recording, which has them all).  A system call
#                         or a fault goes to the kernel: no user-to-user
#                         record, and none expected (a far call here is
#                         SYSCALL or INT n; the corpus has no lcall).
#   NAME: itrace decode of perf's intel_bts perf.data  exit 0, no error,
#                         no gap; its flow equals sstep's
# the first decoded line of each program instruction, "IP LENGTH CLASS
# TARGET" (class as itrace decode --insn --json gives it: "", jcc, call...;
# TARGET: a direct branch's, from its disassembly, else empty)
lengths() {
	jq -r 'select(.kind == "insn") | [.at.ip, (.bytes | length / 2), .class, .asm] | @tsv' |
		awk -F'\t' '{ sub(/^0x0*/, "", $1) } !seen[$1]++ { t = ""
			if ($3 != "" && $4 ~ /^[a-z]+ 0x[0-9a-f]+$/) { t = $4; sub(/^[a-z]+ 0x0*/, "", t) }
			print $1 "\t" $2 "\t" $3 "\t" t }'
}
# bts_holes NAME KIND FLOW REF WHAT END: FLOW (a BTS decode's window, its
# "[resumed]" lines as "resume") against REF (sstep's window or the PT
# decode's), address for address, but that after a "resume" line FLOW
# goes on at a later instruction of REF: the kernel returned where user
# mode BTS does not record.  Each such hole must be one in REF too: the
# instruction before it in REF followed by one that is not the next in
# memory, and no branch that went there (whose record would have been
# there; a direct branch to elsewhere may come before a hole: its target
# faulted before it retired, as a signal's entry shows).
# NAME.lengths: the instructions' lengths and classes.
bts_holes() {
	local name=$1 kind=$2 f=$3 ref=$4 what=$5 end=$6 out
	out=$(awk -F'\t' -v end="$end" 'function hex(s,   v, i) { v = 0
			for (i = 1; i <= length(s); i++)
				v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v }
		FILENAME == ARGV[1] { len[$1] = $2; cls[$1] = $3; tgt[$1] = $4; next }
		FILENAME == ARGV[2] { r[++n] = $1; next }
		done { extra++; next }
		$1 == "resume" { resync = 1; holes++; next }
		{ got++
		  if (resync) {
			for (j = i + 1; j <= n && r[j] != $1; j++)
				;
			if (j > n) { why = "after a resume, " $1 " is not in the rest"; exit }
			p = r[i]; q = r[i + 1]
			if (!(p in len) || hex(q) == hex(p) + len[p] ||
			    (cls[p] ~ /^(jcc|jmp|call|ret|far-jmp|far-ret)$/ &&
			     (tgt[p] == "" || tgt[p] == q))) {
				why = "a resume after " p " (" cls[p] "), where the flow goes on to " q " with no kernel between"
				exit
			}
			skipped += j - i - 1; i = j; resync = 0
		  } else if (r[++i] != $1) {
			why = "line " i ": decoded " $1 " expected " r[i]; exit
		  }
		  if (i == n) done = 1 }
		END { if (why == "" && !done) why = "decoded to line " i " of " n
		      if (why == "" && end == "exit" && extra) why = extra " lines after the end"
		      printf "%s|%d|%d|%d|%d\n", why, got, n, holes, skipped }' \
		"$res/$name.lengths" "$ref" "$f")
	IFS='|' read -r why got want holes skipped <<<"$out"
	if [ -z "$why" ] && [ "$want" -gt 0 ]; then
		tap ok "$name: $kind: $got decoded = $want $what less $skipped in $holes holes (returns from the kernel that user-mode BTS does not record), 0 mismatches (from the start, main or _start, to its ${end/ret/return})"
	else
		tap FAIL "$name: $kind # $got decoded, $want $what, $holes holes: ${why:-nothing compared}"
	fi
}

# total KEY STATS: the "total KEY N" line's N of itrace decode --stats output
total() { awk -v k="$1" '$1 == "total" && $2 == k { print $3 }' <<<"$2"; }

bts() {
	local name=$1 start=$2 end=$3 st drc errs gaps total nsys tid nb
	if [ "$brec" = 0 ] && [ "$bprec" = 0 ] && [ -s "$res/$name.bts" ] &&
		[ -s "$res/$name.bts.perf.data" ] && cmp -s "$res/$name.bts-out" "$res/$name.out" &&
		cmp -s "$res/$name.bts-perf-out" "$res/$name.out"; then
		tap ok "$name: intel_bts recorded: itrace record --pmu intel_bts and perf record -e intel_bts//u --per-thread exit 0, the program's output as under intel_pt"
	else
		tap FAIL "$name: intel_bts recorded # itrace record exit $brec, perf record exit $bprec: $(tail -n1 "$res/$name.bts-log" 2>/dev/null) $(grep -v '^\[ perf record' "$res/$name.bts-perf-log" 2>/dev/null | tail -n1)"
	fi

	st=$("$ITRACE" decode --stats "$res/$name.bts" 2>"$res/$name.bts-decode-err")
	drc=$?
	errs=$(total errors "$st") gaps=$(total gaps "$st")
	total=$(total insns "$st") nsys=$(total syscalls "$st")
	if [ $drc = 0 ] && [ "${errs:-x}" = 0 ] && [ "${gaps:-x}" = 0 ] && [ "${nsys:-0}" -gt 0 ]; then
		tap ok "$name: intel_bts decode: $total instructions, $nsys system calls, 0 errors, 0 gaps"
	else
		tap FAIL "$name: intel_bts decode # exit $drc, errors ${errs:-?}, gaps ${gaps:-?}, system calls ${nsys:-?}: $(head -n1 "$res/$name.bts-decode-err")"
	fi
	tid=$(awk '$1 == "thread" && $3 == "pid" && $2 == $4 { print $2; exit }' <<<"$st")
	"$ITRACE" decode --insn ${tid:+--tid "$tid"} "$res/$name.bts" 2>/dev/null |
		awk '/^ *\[resumed by the kernel/ { print "resume"; next }
			$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9a-f]+$/ && length($2) == 16 { print $2 }' |
		window "$start" > "$res/$name.bts-insns"
	# lengths and classes of the instructions: the PT decode has them all
	"$ITRACE" decode --insn --json "$res/$name.itrace" 2>/dev/null | lengths > "$res/$name.lengths"
	bts_holes "$name" "intel_bts insns" "$res/$name.bts-insns" "$res/$name.ss" single-stepped "$end"
	bts_holes "$name" "intel_bts and intel_pt decodes agree" "$res/$name.bts-insns" \
		"$res/$name.pt" "decoded from intel_pt" "$end"

	# perf's decode: branches and errors in one pass, "TID FROM => TO"
	"$PERF" --buildid-dir "$res/perf-buildid" script -i "$res/$name.bts.perf.data" \
		--itrace=be -F tid,ip,addr > "$res/$name.bts-perf-branches" 2> "$res/$name.bts-perf-stderr"
	drc=$?
	errs=$(grep -c 'instruction trace error' "$res/$name.bts-perf-branches")
	nb=$(grep -c '=>' "$res/$name.bts-perf-branches")
	if [ $drc = 0 ] && [ "$errs" = 0 ] && [ "$nb" -gt 0 ]; then
		tap ok "$name: perf intel_bts decode: perf script --itrace=be: $nb branches, 0 errors"
	else
		tap FAIL "$name: perf intel_bts decode # exit $drc, $errs errors, $nb branches: $(grep -m1 'instruction trace error' "$res/$name.bts-perf-branches") $(head -n1 "$res/$name.bts-perf-stderr")"
	fi
	# the program's thread (the first perf shows), user to user mode,
	# from the first branch to START (none if START is where the program
	# begins: main is called, _start is not)
	awk '!/instruction trace error/ { for (i = 2; i < NF; i++) if ($i == "=>") {
			if (!t) t = $1
			f = $(i - 1); g = $(i + 1); sub(/^0+/, "", f); sub(/^0+/, "", g)
			if ($1 == t && f != "" && g != "" && length(f) <= 12 && length(g) <= 12)
				print f, g } }' "$res/$name.bts-perf-branches" > "$res/$name.bts-records"
	awk -v s="$start" 'FNR == NR { if (!at && $2 == s) at = FNR; next }
		FNR > at' "$res/$name.bts-records" "$res/$name.bts-records" > "$res/$name.bts-records.window"
	mv "$res/$name.bts-records.window" "$res/$name.bts-records"
	awk -F'\t' 'function hex(s,   v, i) { v = 0; s = tolower(s)
			for (i = 1; i <= length(s); i++)
				v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v }
		FNR == NR { len[$1] = $2; cls[$1] = $3; tgt[$1] = $4; next }
		{ ip = $1; sub(/^0+/, "", ip) }
		p != "" && (p in len) && (cls[p] ~ /^(jmp|call|ret|far-jmp|far-ret)$/ ||
			(cls[p] == "jcc" && hex(ip) != hex(p) + len[p])) {
			print p, tgt[p] != "" && tgt[p] != ip ? tgt[p] : ip }
		p != "" && !(p in len) { print p, "(not decoded)" }
		{ p = ip }' "$res/$name.lengths" "$res/$name.ss" > "$res/$name.ss-taken"
	compare "$name" "intel_bts branches (perf's records, user to user)" "$res/$name.bts-records" \
		"$end" "$res/$name.ss-taken" "taken in sstep's flow"

	st=$("$ITRACE" decode --stats --buildid-dir "$res/perf-buildid" "$res/$name.bts.perf.data" \
		2>"$res/$name.bts-pdecode-err")
	drc=$?
	errs=$(total errors "$st") gaps=$(total gaps "$st")
	tid=$(awk '$1 == "thread" && $3 == "pid" && $2 == $4 { print $2; exit }' <<<"$st")
	"$ITRACE" decode --insn --buildid-dir "$res/perf-buildid" ${tid:+--tid "$tid"} \
		"$res/$name.bts.perf.data" 2>/dev/null |
		awk '/^ *\[resumed by the kernel/ { print "resume"; next }
			$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9a-f]+$/ && length($2) == 16 { print $2 }' |
		window "$start" > "$res/$name.bts-pinsns"
	if [ $drc = 0 ] && [ "${errs:-x}" = 0 ] && [ "${gaps:-x}" = 0 ]; then
		bts_holes "$name" "itrace decode of perf's intel_bts perf.data (0 errors, 0 gaps)" \
			"$res/$name.bts-pinsns" "$res/$name.ss" single-stepped "$end"
	else
		tap FAIL "$name: itrace decode of perf's intel_bts perf.data # exit $drc, errors ${errs:-?}, gaps ${gaps:-?}: $(grep -m1 -v warning "$res/$name.bts-pdecode-err")"
	fi
}
# perf script --itrace=i0nse -F ip of a perf.data (file or directory) on
# stdin: "USER KERNEL ERRORS", the instructions at user and kernel
# addresses and the "instruction trace error" lines
pcount() {
	awk '/instruction trace error/ { e++; next } $1 ~ /^ffff/ { k++; next } { u++ }
		END { print u + 0, k + 0, e + 0 }'
}
# kconv NAME: NAME.kitrace converted with the kernel text KCORE into the
# perf.data directory NAME.kconv.data (removed after: a copy of the 10 MB
# kcore) and walked by perf script: NAME.kconv-counts "CONVERT_EXIT
# PERF_EXIT USER KERNEL ERRORS", their messages in NAME.kconv-err
kconv() {
	local name=$1 d=$res/$1.kconv.data crc prc counts
	rm -rf "$d"
	"$ITRACE" convert --kernel "$KCORE" --buildid-dir "$res/perf-buildid" -o "$d" \
		"$res/$name.kitrace" 2> "$res/$name.kconv-err"
	crc=$?
	if [ $crc = 0 ]; then
		counts=$("$PERF" --buildid-dir "$res/perf-buildid" script -i "$d" --itrace=i0nse \
			-F ip 2>> "$res/$name.kconv-err" | pcount; exit "${PIPESTATUS[0]}")
		prc=$?
	fi
	echo "$crc ${prc:-none} ${counts:-? ? ?}" > "$res/$name.kconv-counts"
	rm -rf "$d"
}
have_perf=false
[ -x "$PERF" ] && [ -n "$(ls "$res"/*.perf.data 2>/dev/null)" ] && have_perf=true
nk=0
for k in $PERF_KERNEL_PROGS; do nk=$((nk + 1)); done
# kconv_wanted NAME: whether KCONV_PROGS has NAME
kconv_wanted() {
	case $KCONV_PROGS in " all "|*" $1 "*) return 0 ;; esac
	return 1
}
nkc=0
while read -r name _; do
	kconv_wanted "$name" && nkc=$((nkc + 1))
done < "$list"
nall=0
[ "$nk" -gt 0 ] && nall=2
# per program: 7 intel_pt (convert too), 6 -k (and convert --kernel if
# in KCONV_PROGS), perf stat, 7 intel_bts
echo "1..$(($(wc -l < "$list") * 21 + nkc + nk * 2 + nall + 2))"
# perf record --kcore -e intel_pt// of PERF_KERNEL_PROGS, all in one
# recording (a directory: perf.data and kcore_dir/), decoded twice:
#  - with the kernel text perf copied (perf script takes kcore_dir/ by
#    itself): every instruction walked, kernel code included; errors, and
#    an instruction sample every KPERIOD instructions (all.kperf-ksamples:
#    "TID IP"), the kernel ones counted per thread (all.kperf-kcount: "TID
#    N"): a sample of each is enough to show that kernel code decodes,
#    every instruction would cost minutes (~10^9 of them, most in the
#    KASAN and lockdep kernel);
#  - the perf.data file alone, without kernel code: perf loses its way at
#    each kernel entry and resumes at the return to user mode, so its
#    user-mode instructions come cheaply (all.kperf-insns: "COMM TID IP"),
#    compared with sstep's below; they are the same in the decode through
#    the kernel, which has no error to leave them.
KPERIOD=${KPERIOD:-10000}
kirc=$(cat "$res/all.kperf.rc" 2>/dev/null) ksrc=none usrc=none
: > "$res/all.kperf-errors"
: > "$res/all.kperf-insns"
: > "$res/all.kperf-kcount"
if [ "$nk" -gt 0 ] && [ -d "$res/all.kperf.data" ]; then
	(cd "$res" && "$PERF" --buildid-dir "$res/perf-buildid" script -i "$res/all.kperf.data" \
		--itrace=i${KPERIOD}ie -F tid,ip 2> "$res/all.kperf-stderr" |
		awk -v err="$res/all.kperf-errors" -v kc="$res/all.kperf-kcount" '
			/instruction trace error/ { print > err; next }
			{ print }
			$2 ~ /^ffff/ { k[$1]++ }
			END { for (t in k) print t, k[t] > kc }' > "$res/all.kperf-ksamples"
		exit "${PIPESTATUS[0]}")
	ksrc=$?
	(cd "$res" && "$PERF" --buildid-dir "$res/perf-buildid" script -i "$res/all.kperf.data/data" \
		--itrace=i1ie -F tid,comm,ip 2> "$res/all.kperf-ustderr" |
		awk '!/instruction trace error/ && $3 !~ /^ffff/' > "$res/all.kperf-insns"
		exit "${PIPESTATUS[0]}")
	usrc=$?
fi
# perf's word that its AUX area filled ("AUX data lost N times out of M!"):
# errors where the trace was cut, a reader starved by the host, not a decode
klost=$(grep -ho 'AUX data lost [0-9]* times out of [0-9]*' "$res/all.kperf-stderr" \
	"$res/all.kperf-ustderr" 2>/dev/null | head -n1)
while read -r name start end; do
	# the -k recording through perf's decoder (kconv(), checked below)
	# while the rest runs
	rm -f "$res/$name.kconv-counts"
	kconv_pid=
	if [ -x "$PERF" ] && [ -f "$KCORE" ] && kconv_wanted "$name"; then
		kconv "$name" < /dev/null &
		kconv_pid=$!
	fi
	set -- $(cat "$res/$name.rc" 2>/dev/null)
	rec=${1:-none} ss=${2:-none} krec=${3:-none} prec=${4:-none}
	brec=${5:-none} bprec=${6:-none}
	if [ "$rec" = 0 ] && [ "$ss" = 0 ] && [ -s "$res/$name.itrace" ] && [ -s "$res/$name.ss" ]; then
		tap ok "$name: recorded (itrace record and sstep: exit 0)"
	else
		tap FAIL "$name: recorded # itrace record exit $rec, sstep exit $ss: $(tail -n1 "$res/$name.log" 2>/dev/null) $(tail -n1 "$res/$name.ss-log" 2>/dev/null)"
	fi

	stats=$("$ITRACE" decode --stats "$res/$name.itrace" 2>"$res/$name.decode-err")
	drc=$?
	errs=$(awk '$1 == "total" && $2 == "errors" { print $3 }' <<<"$stats")
	gaps=$(awk '$1 == "total" && $2 == "gaps" { print $3 }' <<<"$stats")
	total=$(awk '$1 == "total" && $2 == "insns" { print $3 }' <<<"$stats")
	# (every program makes system calls: syscall, or int $0x80 in compat32)
	nsys=$(awk '$1 == "total" && $2 == "syscalls" { print $3 }' <<<"$stats")
	if [ $drc = 0 ] && [ "${errs:-x}" = 0 ] && [ "${gaps:-x}" = 0 ] && [ "${nsys:-0}" -gt 0 ]; then
		tap ok "$name: libipt decode: $total instructions, $nsys system calls, 0 errors, 0 gaps"
	else
		tap FAIL "$name: libipt decode # exit $drc, errors ${errs:-?}, gaps ${gaps:-?}, system calls ${nsys:-?}: $(head -n1 "$res/$name.decode-err")"
	fi
	# sstep follows the program's first thread; itrace record traced
	# every thread and child: decode that one's (tid = pid, listed first)
	tid=$(awk '$1 == "thread" && $3 == "pid" && $2 == $4 { print $2; exit }' <<<"$stats")
	"$ITRACE" decode --insn ${tid:+--tid "$tid"} "$res/$name.itrace" 2>/dev/null |
		awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9a-f]+$/ && length($2) == 16 { print $2 }' |
		window "$start" > "$res/$name.pt"
	compare "$name" insns "$res/$name.pt" "$end"

	# itrace convert of the recording: perf script decodes the perf.data
	# into as many instructions as itrace decode (every thread), no error
	"$ITRACE" convert --buildid-dir "$res/perf-buildid" -o "$res/$name.conv.data" \
		"$res/$name.itrace" 2> "$res/$name.conv-err"
	crc=$?
	prc=none counts=
	if [ $crc = 0 ] && [ -x "$PERF" ]; then
		counts=$("$PERF" --buildid-dir "$res/perf-buildid" script \
			-i "$res/$name.conv.data" --itrace=i0nse -F ip \
			2>> "$res/$name.conv-err" | pcount; exit "${PIPESTATUS[0]}")
		prc=$?
	fi
	read -r cu ck cerrs <<<"${counts:-? ? ?}"
	desc="$name: convert: perf script --itrace=i0nse of itrace convert's perf.data"
	if [ $crc = 0 ] && [ "$prc" = 0 ] && [ "$cerrs" = 0 ] && [ "$ck" = 0 ] &&
		[ "${total:-0}" -gt 0 ] && [ "$cu" = "$total" ]; then
		tap ok "$desc: $cu instructions = itrace decode's, 0 errors"
	else
		why=$(grep -m1 -v warning "$res/$name.conv-err")
		tap FAIL "$desc # convert exit $crc, perf exit $prc: $cu user + $ck kernel \
instructions, $cerrs errors; itrace decode ${total:-?}: $why"
	fi

	# upstream perf: recorded by perf record -e intel_pt//u, decoded by
	# perf script on the host (the guest's [vdso] from its build-id cache)
	if ! $have_perf; then
		tap FAIL "$name: perf record # no perf.data from the guest (perf missing?)"
		tap FAIL "$name: perf decode # no perf.data"
		tap FAIL "$name: perf insns # no perf.data"
		tap FAIL "$name: itrace decode of perf's perf.data # no perf.data"
	else
		if [ "$prec" = 0 ] && [ -s "$res/$name.perf.data" ] &&
			cmp -s "$res/$name.perf-out" "$res/$name.out"; then
			tap ok "$name: perf record -e intel_pt//u: exit 0, the program's output as under itrace record"
		else
			tap FAIL "$name: perf record # exit $prec: $(grep -v '^\[ perf record' "$res/$name.perf-log" 2>/dev/null | tail -n1)"
		fi
		# instructions and errors in one pass; errors are lines of their own
		"$PERF" --buildid-dir "$res/perf-buildid" script -i "$res/$name.perf.data" \
			--itrace=i1ie -F tid,ip > "$res/$name.perf-insns" 2> "$res/$name.perf-stderr"
		pirc=$?
		grep 'instruction trace error' "$res/$name.perf-insns" > "$res/$name.perf-errors"
		perrs=$(wc -l < "$res/$name.perf-errors")
		sed -i '/instruction trace error/d' "$res/$name.perf-insns"
		ptotal=$(wc -l < "$res/$name.perf-insns")
		if [ $pirc = 0 ] && [ "$perrs" = 0 ] && [ "$ptotal" -gt 0 ]; then
			tap ok "$name: perf decode: perf script --itrace=i1ie: $ptotal instructions, 0 errors"
		else
			tap FAIL "$name: perf decode # exit $pirc, $perrs errors, $ptotal instructions: $(head -n1 "$res/$name.perf-errors")"
		fi
		# itrace decode reads perf's perf.data too: the same instructions
		# as perf script over the whole recording (every thread, in the
		# order of the one CPU's buffer)
		pstats=$("$ITRACE" decode --stats --buildid-dir "$res/perf-buildid" \
			"$res/$name.perf.data" 2>"$res/$name.pdecode-err")
		pdrc=$?
		pdtotal=$(awk '$1 == "total" && $2 == "insns" { print $3 }' <<<"$pstats")
		pderrs=$(awk '$1 == "total" && $2 == "errors" { print $3 }' <<<"$pstats")
		if [ $pdrc = 0 ] && [ "${pderrs:-x}" = 0 ] && [ "${pdtotal:-x}" = "$ptotal" ]; then
			tap ok "$name: itrace decode of perf's perf.data: $pdtotal instructions, 0 errors, as perf script"
		else
			tap FAIL "$name: itrace decode of perf's perf.data # exit $pdrc, errors ${pderrs:-?}, ${pdtotal:-?} instructions, perf script $ptotal: $(grep -m1 -v warning "$res/$name.pdecode-err")"
		fi
		# the program's own thread: the first one perf saw (threads and
		# fork children are traced too, perf record inherits)
		awk 'NR == 1 { tid = $1 } $1 == tid { print $2 }' "$res/$name.perf-insns" |
			window "$start" > "$res/$name.perf-pt"
		compare "$name" "perf insns" "$res/$name.perf-pt" "$end"
	fi

	bts "$name" "$start" "$end"

	# user and kernel mode: itrace record -k, decoded through the kernel
	# from the live kernel text (KCORE): every instruction walked, ~5*10^7
	# of them, counted (--stats; printing them would take minutes).  Its
	# user-mode part is compared with sstep's below (kcut).
	if [ -f "$KCORE" ]; then
		kstats=$("$ITRACE" decode --stats --kernel "$KCORE" "$res/$name.kitrace" \
			2>"$res/$name.kdecode-err")
		kdrc=$?
	else
		echo "no kernel text: $KCORE missing (perf record --kcore did not run?)" > "$res/$name.kdecode-err"
		kstats= kdrc=none
	fi
	kerrs=$(awk '$1 == "total" && $2 == "errors" { print $3 }' <<<"$kstats")
	kgaps=$(awk '$1 == "total" && $2 == "gaps" { print $3 }' <<<"$kstats")
	kall=$(awk '$1 == "total" && $2 == "insns" { print $3 }' <<<"$kstats")
	kk=$(awk '$1 == "total" && $2 == "kernel_insns" { print $3 }' <<<"$kstats")
	kk=${kk:-0}
	ku=$((${kall:-0} - kk))
	if [ "$krec" = 0 ] && [ -s "$res/$name.kitrace" ] && cmp -s "$res/$name.kout" "$res/$name.out" &&
		[ "$kk" -gt 0 ]; then
		tap ok "$name: -k recorded: itrace record -k exit 0, the program's output as without -k; kernel code in the trace"
	else
		tap FAIL "$name: -k recorded # itrace record -k exit $krec, $ku user + $kk kernel instructions decoded: $(tail -n1 "$res/$name.klog" 2>/dev/null)"
	fi
	if [ "$kdrc" = 0 ] && [ "${kerrs:-x}" = 0 ] && [ "${kgaps:-x}" = 0 ] && [ "$kk" -gt 0 ]; then
		tap ok "$name: -k libipt decode through the kernel (kcore): $ku user + $kk kernel instructions, 0 errors, 0 gaps"
	else
		tap FAIL "$name: -k libipt decode through the kernel (kcore) # exit $kdrc, errors ${kerrs:-?}, gaps ${kgaps:-?}, $ku user + $kk kernel instructions: $(grep -m1 -v 'warning' "$res/$name.kdecode-err")"
	fi
	# the same trace converted with the kernel text, through perf (kconv)
	if kconv_wanted "$name"; then
		why="not run: no $PERF or no $KCORE"
		crc=none prc=none cu='?' ck='?' cerrs='?'
		if [ -n "$kconv_pid" ]; then
			wait "$kconv_pid"
			read -r crc prc cu ck cerrs < "$res/$name.kconv-counts"
			why=$(grep -m1 -v warning "$res/$name.kconv-err")
		fi
		desc="$name: -k convert --kernel: perf script --itrace=i0nse of the perf.data directory"
		desc="$desc (kcore_dir/: the kernel text)"
		if [ "$crc" = 0 ] && [ "$prc" = 0 ] && [ "$cerrs" = 0 ] && [ "$kk" -gt 0 ] &&
			[ "$cu" = "$ku" ] && [ "$ck" = "$kk" ]; then
			tap ok "$desc: $cu user + $ck kernel instructions = itrace decode's, 0 errors"
		else
			tap FAIL "$desc # convert exit $crc, perf exit $prc: $cu user + $ck kernel \
instructions, $cerrs errors; itrace decode --kernel $ku + $kk: $why"
		fi
	fi
	# kcut itself: on the user-only recording (no kernel packets) it must
	# change nothing that libipt decodes (but for the "[thread ...]"
	# context lines: kcut's copy has no sample ids, so no threads)
	"$KCUT" "$res/$name.itrace" "$res/$name.ucut" 2>"$res/$name.ucut-log"
	"$ITRACE" decode --insn "$res/$name.ucut" 2>/dev/null | awk '!/^\[/ { print $2 }' > "$res/$name.ucut-insn"
	"$ITRACE" decode --insn "$res/$name.itrace" 2>/dev/null | awk '!/^\[/ { print $2 }' |
		cmp -s - "$res/$name.ucut-insn"
	crc=$?
	# a 32-bit program (ELF class 1) runs in compat mode: its trace must
	# say so (MODE.Exec with CS.D=1, CS.L=0)
	modes=$(sed -n 's/.*MODE.Exec read: \([0-9]*\) 64-bit, \([0-9]*\) 32-bit, \([0-9]*\) 16-bit.*/\1 \2 \3/p' \
		"$res/$name.ucut-log")
	set -- $modes
	m32=${2:-0}
	elf32=false
	[ "$(od -An -tu1 -j4 -N1 "$corpus/$name" | tr -d ' ')" = 1 ] && elf32=true
	if [ $crc = 0 ] && [ "$(wc -l < "$res/$name.ucut-insn")" -gt 1000 ] &&
		{ ! $elf32 || [ "$m32" -gt 0 ]; }; then
		tap ok "$name: kcut of the user-only recording decodes to the same $(wc -l < "$res/$name.ucut-insn") lines; MODE.Exec: ${1:-?} 64-bit, ${2:-?} 32-bit, ${3:-?} 16-bit"
	elif [ $crc = 0 ]; then
		tap FAIL "$name: kcut of the user-only recording # a 32-bit program, but MODE.Exec: ${modes:-none}"
	else
		tap FAIL "$name: kcut of the user-only recording # decodes differently"
	fi
	rm -f "$res/$name.ucut" "$res/$name.ucut-insn" "$res/$name.ucut-log"
	"$KCUT" "$res/$name.kitrace" "$res/$name.kcut" 2> "$res/$name.kcut-log"
	crc=$?
	cut=$("$ITRACE" decode --stats "$res/$name.kcut" 2>/dev/null |
		awk '$1 == "total" && $2 == "insns" { print $3 }')
	stats=$("$ITRACE" decode --stats "$res/$name.kitrace" 2>"$res/$name.kcut-err")
	drc=$?
	errs=$(awk '$1 == "total" && $2 == "errors" { print $3 }' <<<"$stats")
	gaps=$(awk '$1 == "total" && $2 == "gaps" { print $3 }' <<<"$stats")
	ktotal=$(awk '$1 == "total" && $2 == "insns" { print $3 }' <<<"$stats")
	if [ $crc = 0 ] && [ $drc = 0 ] && [ "${errs:-x}" = 0 ] && [ "${gaps:-x}" = 0 ] &&
		[ "${ktotal:-x}" = "${cut:-y}" ] && { [ "$kdrc" != 0 ] || [ "$ktotal" = "$ku" ]; } &&
		grep -q "its user-mode part is" "$res/$name.kcut-err"; then
		tap ok "$name: -k decode without --kernel: $ktotal user-mode instructions ($total without -k) = kcut's${kdrc/#0/ = those of the decode through the kernel}, 0 errors, 0 gaps; $(sed -n 's/.*[,;] \([0-9]* entries to and [0-9]* returns from the kernel\)$/\1/p' "$res/$name.kcut-log")"
	else
		tap FAIL "$name: -k decode without --kernel # kcut exit $crc, decode exit $drc, errors ${errs:-?}, gaps ${gaps:-?}, $ktotal instructions, kcut's ${cut:-?}, through the kernel $ku: $(head -n1 "$res/$name.kcut-log") $(grep -m1 -v 'warning' "$res/$name.kcut-err")"
	fi
	"$ITRACE" decode --insn "$res/$name.kitrace" 2>/dev/null |
		awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9a-f]+$/ && length($2) == 16 { print $2 }' |
		window "$start" > "$res/$name.kpt"
	compare "$name" "-k insns (user mode)" "$res/$name.kpt" "$end"

	# upstream perf, user and kernel mode (all.kperf.data: the programs run
	# one after the other under one perf record, decoded above with the
	# kernel text perf copied): no error in the program's thread, kernel
	# code decoded in it, the user-mode instructions exactly those of
	# sstep.  The program's thread: the first with its name.
	# perf stat of the same window run at full speed (guest.sh, sstep -c):
	# the emulated CPU's counters against the single-step counts
	if [ -f "$res/$name.pmu-rc" ]; then
		read -r sinsns sbr < <(sed -n 's/.*: \([0-9]*\) instructions, \([0-9]*\) branches,.*/\1 \2/p' \
			"$res/$name.ss-log" | tail -n1)
		tid=$(cat "$res/$name.pmu-tid" 2>/dev/null)
		# --per-thread -x,: COMM-TID,COUNT,UNIT,EVENT,RUN TIME,RUN %,...
		pstat() {
			awk -F, -v t="-${tid:-none}" -v e="$1" -v f="$2" '$4 == e &&
				substr($1, length($1) - length(t) + 1) == t { print $f }' "$res/pmu.stat" 2>/dev/null
		}
		pinsns=$(pstat instructions:u 2) pbr=$(pstat branches:u 2)
		prun="$(pstat instructions:u 6) $(pstat branches:u 6)"
		prc=$(cat "$res/$name.pmu-rc")
		desc="$name: perf stat instructions:u,branches:u of the stepped window, at full speed: $pinsns instructions, $pbr branches; sstep $sinsns, $sbr"
		if [ "$prc" = "0 0" ] && [ -n "$pinsns" ] && [ "$pinsns" = "${sinsns:-x}" ] &&
		   [ "$pbr" = "${sbr:-x}" ] && [ "$prun" = "100.00 100.00" ]; then
			tap ok "$desc"
		else
			tap FAIL "$desc # sstep -c and perf stat exit $prc, counted $prun%: $(tail -n1 "$res/$name.pmu-log" 2>/dev/null) $(grep -v '^#' "$res/pmu-perf.log" 2>/dev/null | head -2 | tr '\n' ' ')"
		fi
	fi
	case $PERF_KERNEL_PROGS in *" $name "*) ;; *) continue ;; esac
	kprc=$(cat "$res/kperf/$name.rc" 2>/dev/null)
	if [ "$kprc" = 0 ] && [ "${kirc:-}" = 0 ] && cmp -s "$res/kperf/$name.out" "$res/$name.out"; then
		tap ok "$name: perf record -e intel_pt// (user and kernel): exit 0, the program's output as under itrace record"
	else
		tap FAIL "$name: perf record -e intel_pt// # perf record exit ${kirc:-?}, program exit ${kprc:-?}: $(tail -n1 "$res/kperf/$name.err" 2>/dev/null)"
	fi
	ktid=$(awk -v c="$name" '$1 == c { print $2; exit }' "$res/all.kperf-insns")
	kerrs=$(grep -c " tid ${ktid:-none} " "$res/all.kperf-errors")
	ku=$(awk -v t="${ktid:-none}" '$2 == t { u++ } END { print u + 0 }' "$res/all.kperf-insns")
	kk=$(awk -v t="${ktid:-none}" '$1 == t { print $2 }' "$res/all.kperf-kcount")
	kk=${kk:-0}	# samples: one every KPERIOD instructions
	awk -v t="${ktid:-none}" '$2 == t { print $3 }' "$res/all.kperf-insns" |
		window "$start" > "$res/$name.kperf-pt"
	if [ -n "$ktid" ] && [ "$kerrs" = 0 ] && [ "$ku" -gt 0 ] && [ "$kk" -gt 0 ]; then
		compare "$name" "perf user+kernel insns (user mode; its thread: $ku user instructions, sstep -m's before the exec included, $ptotal with //u; ~$((kk * KPERIOD)) kernel instructions, 0 errors through the kernel)" \
			"$res/$name.kperf-pt" "$end"
	else
		tap FAIL "$name: perf user+kernel insns # thread ${ktid:-not found}${klost:+ (perf lost trace: $klost)}, $kerrs errors, $ku user instructions, $kk samples of kernel ones (1 in $KPERIOD): $(grep -m1 " tid ${ktid:-none} " "$res/all.kperf-errors")"
	fi
done < "$list"

# the whole perf user+kernel recording (sstep -m's own code and every
# other thread included): no error, kernel code decoded
if [ "$nk" -gt 0 ]; then
	kerrs=$(wc -l < "$res/all.kperf-errors")
	nsamp=$(wc -l < "$res/all.kperf-ksamples")
	kk=$(awk '{ k += $2 } END { print k + 0 }' "$res/all.kperf-kcount")
	if [ "$kirc" = 0 ] && [ "$ksrc" = 0 ] && [ "$usrc" = 0 ] && [ "$kerrs" = 0 ] && [ "$kk" -gt 0 ]; then
		tap ok "perf record --kcore -e intel_pt// of$PERF_KERNEL_PROGS in one run: exit 0; perf script through the kernel: ~$((nsamp * KPERIOD)) instructions, ~$((kk * KPERIOD)) of them kernel (samples 1 in $KPERIOD), 0 errors"
	else
		tap FAIL "perf record --kcore -e intel_pt// of$PERF_KERNEL_PROGS # perf record exit ${kirc:-?}, perf script exit $ksrc and $usrc (without the kernel), $nsamp samples, $kk of them kernel, $kerrs errors${klost:+, perf lost trace: $klost}: $(head -n1 "$res/all.kperf-errors"; tail -n1 "$res/all.kperf-log")"
	fi
fi

# sw.kperf.data (guest.sh): perf record -e intel_pt// of threads and fork
# alone.  The events of a process's threads, and of a parent and its
# children, are clones: their trace goes on through a context switch from
# one to the other, with no PERF_RECORD_AUX there.  perf changes the thread
# where the kernel's trace enters __switch_to (its "sync_switch"), and so
# does itrace decode (timeline.c): each thread's instructions, user and
# kernel, counted by both over the whole recording (perf script
# --itrace=i1i: every instruction a sample) are the same.
if [ "$nk" -gt 0 ]; then
	swd=$res/sw.kperf.data
	swrc=$(cat "$res/sw.kperf.rc" 2>/dev/null)
	(cd "$res" && "$PERF" --buildid-dir "$res/perf-buildid" script -i "$swd" --itrace=i1ie \
		-F tid 2> "$res/sw.kperf-stderr" | uniq -c |
		awk '/instruction trace error/ { e++; next }
		     { c[$2] += $1 }
		     END { for (t in c) print t, c[t]; if (e) print "errors", e }' |
		sort -n > "$res/sw.perf-counts"
		exit "${PIPESTATUS[0]}")
	pswrc=$?
	"$ITRACE" decode --stats --kernel "$swd" --buildid-dir "$res/perf-buildid" "$swd" \
		> "$res/sw.itrace-stats" 2> "$res/sw.itrace-err"
	iswrc=$?
	awk '$1 == "thread" && $3 == "total" && $4 == "insns" { print $2, $5 }' \
		"$res/sw.itrace-stats" | sort -n > "$res/sw.itrace-counts"
	nswt=$(wc -l < "$res/sw.perf-counts")
	swinsns=$(awk '{ n += $2 } END { print n + 0 }' "$res/sw.perf-counts")
	# threads of threads (its pid's) and fork's children beside sstep
	if [ "${swrc:-}" = 0 ] && [ "$pswrc" = 0 ] && [ "$iswrc" = 0 ] && [ "$nswt" -ge 5 ] &&
	   cmp -s "$res/sw.perf-counts" "$res/sw.itrace-counts"; then
		tap ok "perf record --kcore -e intel_pt// of threads and fork: each of $nswt threads' instructions (user and kernel, $swinsns in all) as perf script --itrace=i1i counts them"
	else
		tap FAIL "threads and fork, per-thread instructions against perf # perf record exit ${swrc:-?}, perf script $pswrc, itrace decode $iswrc, $nswt threads; TID PERF ITRACE: $(awk 'NR == FNR { p[$1] = $2; next } { i[$1] = $2 }
		END { for (t in p) if (p[t] != i[t]) print t, p[t], (t in i) ? i[t] : "-"
		      for (t in i) if (!(t in p)) print t, "-", i[t] }' \
		"$res/sw.perf-counts" "$res/sw.itrace-counts" | head -n6 | tr '\n' ';')"
	fi
fi

# -k where perf_event_paranoid forbids kernel tracing: user nobody, 2
drc=$(cat "$res/denied.rc" 2>/dev/null)
if [ "$drc" = 1 ] && grep -q 'perf_event_paranoid is 2: kernel tracing needs <= 1' "$res/denied.log"; then
	tap ok "-k refused for an unprivileged user with perf_event_paranoid 2: exit 1, says why"
else
	tap FAIL "-k refused # exit ${drc:-?}: $(head -n2 "$res/denied.log" 2>/dev/null | tr '\n' ' ')"
fi
urc=$(cat "$res/undenied.rc" 2>/dev/null)
if [ "$urc" = 0 ]; then
	tap ok "the same user without -k: recorded (exit 0)"
else
	tap FAIL "the same user without -k # exit ${urc:-?}: $(tail -n1 "$res/undenied.log" 2>/dev/null)"
fi

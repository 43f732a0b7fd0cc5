#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# verify.sh CORPUS RESULTS: host half of the conformance suite.  For each
# program of CORPUS/corpus.list, with the guest's files in RESULTS (see
# guest.sh), three TAP lines:
#   NAME: recorded        itrace record and sstep ran the program to the
#                         same exit status
#   NAME: libipt decode   `itrace decode` exits 0, no decode error, no gap
#   NAME: insns           the decoded instruction addresses equal sstep's,
#                         one by one, from START (main, or the first
#                         instruction) to the exit_group system call
# Consecutive equal addresses count once on both sides (a REP string
# instruction is one PT instruction, one single-step trap per iteration).
set -u
ITRACE=${ITRACE:?}
corpus=$1 res=$2
n=0
tap() {	# tap OK|FAIL DESCRIPTION
	n=$((n + 1))
	if [ "$1" = ok ]; then echo "ok $n $2"; else echo "not ok $n $2"; fi
}
plan=$(($(wc -l < "$corpus/corpus.list") * 3))
echo "1..$plan"
while read -r name start end; do
	set -- $(cat "$res/$name.rc" 2>/dev/null)
	rec=${1:-none} ss=${2:-none}
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
	if [ $drc = 0 ] && [ "${errs:-x}" = 0 ] && [ "${gaps:-x}" = 0 ]; then
		tap ok "$name: libipt decode: $total instructions, 0 errors, 0 gaps"
	else
		tap FAIL "$name: libipt decode # exit $drc, errors ${errs:-?}, gaps ${gaps:-?}: $(head -n1 "$res/$name.decode-err")"
	fi

	"$ITRACE" decode --insn "$res/$name.itrace" 2>/dev/null |
		awk -v start="$start" '
		$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9a-f]+$/ && length($2) == 16 {
			ip = $2
			sub(/^0+/, "", ip)
			if (!on && ip != start) next
			on = 1
			if (ip != last) print ip
			last = ip
		}' > "$res/$name.pt"
	want=$(wc -l < "$res/$name.ss" 2>/dev/null || echo 0)
	# the window is the ground truth's: main to its return, or to the exit
	all=$(wc -l < "$res/$name.pt")
	head -n "$want" "$res/$name.pt" > "$res/$name.pt-window"
	mv "$res/$name.pt-window" "$res/$name.pt"
	got=$(wc -l < "$res/$name.pt")
	if [ "$end" = exit ] && [ "$all" != "$want" ]; then
		tap FAIL "$name: insns # decoded $all from main to the exit, single-stepped $want"
	elif [ "$want" -gt 0 ] && cmp -s "$res/$name.pt" "$res/$name.ss"; then
		tap ok "$name: insns: $got decoded = $want single-stepped, 0 mismatches (from main to its ${end/ret/return})"
	else
		first=$(cmp "$res/$name.pt" "$res/$name.ss" 2>&1 | sed -n 's/.*line \([0-9]*\).*/\1/p')
		mism=$(diff "$res/$name.pt" "$res/$name.ss" | grep -c '^[<>]')
		tap FAIL "$name: insns # decoded $got, single-stepped $want, $mism differing lines, first at line ${first:-?}: pt $(sed -n "${first:-1}p" "$res/$name.pt") ss $(sed -n "${first:-1}p" "$res/$name.ss")"
	fi
done < "$corpus/corpus.list"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# e2e-verify.sh DIR: decode each program's recording DIR/<prog>.itrace
# (made in the guest by tools/testing/itrace/guest/e2e-record.sh) on the
# host and compare it with the program's expectation,
# tools/testing/itrace/progs/<prog>.expect.  One TAP line per program.
#
# Expectation format: '#' comments and lines "KEY FUNCTION VALUE" where KEY
# is one of calls, cond, taken, not_taken, syscalls, insns, matched against
# the line "KEY FUNCTION N" of `itrace decode --stats` (absent = 0).
# FUNCTION is a symbol of the program, or MODULE:SYMBOL elsewhere.
# Every recording must also decode with exit 0, no gap and no error.
#
# Environment: ITRACE (the itrace binary, default build/tools/itrace/itrace),
# PROGS_SRC (directory of the .expect files; every one of them needs its
# recording, so to check one program point PROGS_SRC at a directory that
# holds only its .expect).

set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
ITRACE=${ITRACE:-$top/build/tools/itrace/itrace}
PROGS_SRC=${PROGS_SRC:-$here/../progs}

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
	echo "usage: $0 DIR   (DIR holds <prog>.itrace recordings)" >&2
	exit 2
fi
dir=$1
if [ ! -x "$ITRACE" ]; then
	echo "Bail out! no itrace binary at $ITRACE" >&2
	exit 2
fi

n=0
failed=0
expects=("$PROGS_SRC"/*.expect)
echo "1..${#expects[@]}"
for exp in "${expects[@]}"; do
	prog=$(basename "$exp" .expect)
	n=$((n + 1))
	rec=$dir/$prog.itrace
	reason=
	if [ ! -f "$rec" ]; then
		reason="no recording $rec"
		[ -f "$dir/$prog.log" ] && reason="$reason: $(tail -n1 "$dir/$prog.log")"
	else
		stats=$("$ITRACE" decode --stats "$rec" 2>"$dir/$prog.decode.err")
		rc=$?
		if [ $rc -ne 0 ]; then
			reason="itrace decode exit $rc: $(grep -m1 -i 'error\|lost\|gap' "$dir/$prog.decode.err")"
		fi
		for key in gaps errors; do
			got=$(awk -v k="$key" '$1 == "total" && $2 == k { print $3 }' <<<"$stats")
			if [ -z "$reason" ] && [ "${got:-x}" != 0 ]; then
				reason="total $key: expected 0, got ${got:-nothing}"
			fi
		done
		while read -r key fn want rest; do
			case $key in ''|'#'*) continue ;; esac
			[ -n "$reason" ] && break
			if [ -z "$want" ] || [ -n "$rest" ]; then
				reason="bad expectation line: $key $fn $want $rest"
				break
			fi
			got=$(awk -v k="$key" -v f="$fn" '$1 == k && $2 == f { print $3 }' <<<"$stats")
			got=${got:-0}
			if [ "$got" != "$want" ]; then
				reason="$key $fn: expected $want, got $got"
			fi
		done <"$exp"
	fi
	if [ -z "$reason" ]; then
		echo "ok $n e2e/$prog"
	else
		echo "not ok $n e2e/$prog # $reason"
		failed=$((failed + 1))
	fi
done
exit $((failed ? 1 : 0))

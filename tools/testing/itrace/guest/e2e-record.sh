#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# e2e-record.sh OUTDIR: in the guest (busybox sh), record every test
# program with itrace: OUTDIR/<prog>.itrace, its output OUTDIR/<prog>.out
# and itrace's messages OUTDIR/<prog>.log.  The host then checks them with
# tools/testing/itrace/scripts/e2e-verify.sh OUTDIR.
#
# ITRACE_BUILD: absolute build directory, as on the host (the guest sees
# the host's files at the same paths): $ITRACE_BUILD/tools/itrace/itrace,
# $ITRACE_BUILD/progs/<prog> and <prog>.expect (the list of programs).

if [ $# -ne 1 ] || [ -z "${ITRACE_BUILD:-}" ]; then
	echo "usage: ITRACE_BUILD=/abs/build $0 OUTDIR" >&2
	exit 2
fi
out=$1
itrace=$ITRACE_BUILD/tools/itrace/itrace
mkdir -p "$out" || exit 1
rc=0
for exp in "$ITRACE_BUILD"/progs/*.expect; do
	[ -f "$exp" ] || { echo "e2e-record: no programs in $ITRACE_BUILD/progs" >&2; exit 1; }
	prog=$(basename "$exp" .expect)
	if "$itrace" record -o "$out/$prog.itrace" -- "$ITRACE_BUILD/progs/$prog" \
		>"$out/$prog.out" 2>"$out/$prog.log"; then
		echo "e2e-record: $prog: $(tail -n 1 "$out/$prog.log")"
	else
		echo "e2e-record: $prog: FAILED: $(cat "$out/$prog.log")"
		rm -f "$out/$prog.itrace"
		rc=1
	fi
done
sync
exit $rc

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# In the guest (busybox sh), for `make bench`: run the workload REPS times
# untraced, REPS times traced by `itrace record` (user mode) into a file,
# and REPS times traced with the trace discarded (-o /dev/null: the reader
# drains the buffer but writes nothing), interleaved and the order
# rotating; one line "off NS", "on NS" or "null NS" per run into
# $OUT/onoff.txt, the last trace kept as $OUT/work.itrace.
# /in/params: ROUNDS, REPS, PAGES (trace buffer, large enough to lose
# nothing), WORK (the host path the workload is copied to,
# so the host decodes the trace against the same file).
. /in/params
mkdir -p "$(dirname "$WORK")" && cp /in/work "$WORK" || exit 1
it=$ITRACE_BUILD/tools/itrace/itrace
ns() { sed -n 's/.* ns=\([0-9]*\).*/\1/p'; }
off() { echo "off $("$WORK" "$ROUNDS" | ns)" >> "$OUT/onoff.txt"; }
on() {
	rm -f /tmp/work.itrace
	"$it" record -m "$PAGES" -o /tmp/work.itrace -- "$WORK" "$ROUNDS" > /tmp/on.out 2> /tmp/on.log || {
		cat /tmp/on.log; exit 1; }
	echo "on $(ns < /tmp/on.out)" >> "$OUT/onoff.txt"
	cat /tmp/on.log
}
null() {
	"$it" record -m "$PAGES" -o /dev/null -- "$WORK" "$ROUNDS" > /tmp/null.out 2> /tmp/null.log || {
		cat /tmp/null.log; exit 1; }
	echo "null $(ns < /tmp/null.out)" >> "$OUT/onoff.txt"
}
"$WORK" "$ROUNDS"	# warm up: page cache, first-touch faults
i=0
while [ "$i" -lt "$REPS" ]; do
	case $((i % 3)) in
	0) off; on; null ;;
	1) on; null; off ;;
	*) null; off; on ;;
	esac
	i=$((i + 1))
done
cp /tmp/work.itrace "$OUT/work.itrace"
cat "$OUT/onoff.txt"

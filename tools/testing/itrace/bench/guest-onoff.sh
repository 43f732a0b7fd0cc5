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
# so the host decodes the trace against the same file), CPUS (1, or 2:
# the workload then runs on CPU 0 alone and the reader on CPU 1, as perf
# runs beside a traced thread on hardware).
. /in/params
mkdir -p "$(dirname "$WORK")" && cp /in/work "$WORK" || exit 1
it=$ITRACE_BUILD/tools/itrace/itrace
ns() { sed -n 's/.* ns=\([0-9]*\).*/\1/p'; }
wcpu= reader=
if [ "${CPUS:-1}" -gt 1 ]; then
	[ "$(nproc)" -ge 2 ] || { echo "guest-onoff: CPUS=$CPUS but the guest has $(nproc) CPU"; exit 1; }
	wcpu=0 reader="taskset 2"
fi
off() { echo "off $("$WORK" "$ROUNDS" $wcpu | ns)" >> "$OUT/onoff.txt"; }
on() {
	rm -f /tmp/work.itrace
	$reader "$it" record -m "$PAGES" -o /tmp/work.itrace -- "$WORK" "$ROUNDS" $wcpu > /tmp/on.out 2> /tmp/on.log || {
		cat /tmp/on.log; exit 1; }
	echo "on $(ns < /tmp/on.out)" >> "$OUT/onoff.txt"
	cat /tmp/on.log
}
null() {
	$reader "$it" record -m "$PAGES" -o /dev/null -- "$WORK" "$ROUNDS" $wcpu > /tmp/null.out 2> /tmp/null.log || {
		cat /tmp/null.log; exit 1; }
	echo "null $(ns < /tmp/null.out)" >> "$OUT/onoff.txt"
}
"$WORK" "$ROUNDS" $wcpu > /dev/null || exit 1	# warm up: page cache, first-touch faults
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

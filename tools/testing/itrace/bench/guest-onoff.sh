#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# In the guest (busybox sh), for `make bench`: run the workload REPS times
# untraced and REPS times traced by `itrace record` (user mode), the two
# interleaved and the order alternating; one line "off NS" or "on NS" per
# run into $OUT/onoff.txt, the last trace kept as $OUT/work.itrace.
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
"$WORK" "$ROUNDS"	# warm up: page cache, first-touch faults
i=0
while [ "$i" -lt "$REPS" ]; do
	if [ $((i % 2)) -eq 0 ]; then off; on; else on; off; fi
	i=$((i + 1))
done
cp /tmp/work.itrace "$OUT/work.itrace"
cat "$OUT/onoff.txt"

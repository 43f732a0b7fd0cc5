#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# In the guest (busybox sh), for `make bench` (bench/pmu.sh): the workload
# REPS times without counters and REPS times counted by pmucount
# (instructions, branches, cycles, ref-cycles, user and kernel),
# interleaved, the order alternating; lines "off NS" and "on NS" into
# $OUT/pmu.txt, pmucount's counts into $OUT/pmucount.txt.
. /in/params
ns() { sed -n 's/.* ns=\([0-9]*\).*/\1/p'; }
off() { echo "off $(/in/work "$ROUNDS" | ns)" >> "$OUT/pmu.txt"; }
on() {
	/in/pmucount /in/work "$ROUNDS" > /tmp/on.out 2>> "$OUT/pmucount.txt" || exit 1
	echo "on $(ns < /tmp/on.out)" >> "$OUT/pmu.txt"
}
/in/work "$ROUNDS" > /dev/null || exit 1	# warm up
i=0
while [ "$i" -lt "$REPS" ]; do
	if [ $((i % 2)) -eq 0 ]; then off; on; else on; off; fi
	i=$((i + 1))
done
cat "$OUT/pmu.txt" "$OUT/pmucount.txt"
